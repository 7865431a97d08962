"""Small English helpers for messages."""

from __future__ import annotations

# model classes read letter by letter ("an L-P"); the others are read as words ("a Stiefel")
_SPELLED = {"LP", "MILP", "QP", "MIQP", "SOCP", "SCM"}


def article(word: str) -> str:
    """"a" or "an" by the sound of `word`: an LP, an SCM, a QP, a STIEFEL model, an affine."""
    if word in _SPELLED:
        return "an" if word[0] in "AEFHILMNORSX" else "a"  # letter names: "an S-C-M"
    return "an" if word[:1].lower() in "aeiou" else "a"


def counted(count: int, noun: str) -> str:
    """"1 iteration", "37 iterations" (nouns that take an s)."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
