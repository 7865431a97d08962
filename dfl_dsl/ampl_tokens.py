"""The tokens of an AMPL data file (.dat), and where each one is in the text.

Reading is split in two so that a big file reads fast: `str.split` (plain text) or
`re.findall` gives the token strings (one C-level pass; a 1,000 x 1,000 table is a million
tokens), and the offsets — which only an error needs, for its `FILE:LINE:COL` — are found by a
second pass on the first error.
"""

from __future__ import annotations

import bisect
import re

from .ast import Pos
from .errors import DataError

# a comment, a quoted string (a quote inside is doubled, as AMPL writes it), punctuation, a bare
# word (AMPL's unquoted strings: letters, digits and _ . + -), or one character of anything else
_TOKEN = re.compile(
    r"#[^\n]*|/\*.*?\*/|/\*.*|'(?:[^'\n]|'')*'|\"(?:[^\"\n]|\"\")*\"|:=|[:;,()\[\]*]"
    r"|[A-Za-z0-9_.+\-]+|\S",
    re.S,
)
# text of bare words, whitespace and punctuation only (no quote, comment or stray character):
# then `str.split` gives the tokens `_TOKEN` would, several times faster
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9_.+\-\s:;,()\[\]*=]")
_SPACED = re.compile(r"(:=|[:;,()\[\]*])")
_WORD = re.compile(r"[A-Za-z0-9_.+\-]+|'(?:[^'\n]|'')*'|\"(?:[^\"\n]|\"\")*\"")
_INT = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_]\w*")
INFINITY = {"Infinity": "inf", "+Infinity": "inf", "-Infinity": "-inf"}  # the JSON reader's texts
MISSING = "."  # an entry without a value in a table or list


class Tokens:
    """The tokens of `text` from offset `start` on (comments left out), with their places."""

    def __init__(self, text: str, filename: str, start: int = 0) -> None:
        self.text = text
        self.filename = filename
        self.start = start
        found = _split(text, start)
        self.plain = found is not None  # every token a bare word or punctuation
        if found is None:
            found = _TOKEN.findall(text, start)
        if "#" in text or "/*" in text:
            if any(t.startswith("/*") and (len(t) < 4 or not t.endswith("*/")) for t in found):
                self._unclosed_comment()
            found = [t for t in found if t[0] != "#" and not t.startswith("/*")]
        self.strings: list[str] = found
        self._offsets: list[int] | None = None
        self._newlines: list[int] | None = None

    def __len__(self) -> int:
        return len(self.strings)

    def _unclosed_comment(self) -> None:
        for match in _TOKEN.finditer(self.text, self.start):
            if match.group().startswith("/*") and not match.group().endswith("*/"):
                raise self.error_at_offset("the comment `/*` is not closed by `*/`", match.start())

    def offset(self, k: int) -> int:
        """Where token `k` starts in the text (the end of the text past the last token)."""
        if self._offsets is None:
            self._offsets = [m.start() for m in _TOKEN.finditer(self.text, self.start)
                             if m.group()[0] != "#" and not m.group().startswith("/*")]
        return self._offsets[k] if k < len(self._offsets) else len(self.text.rstrip())

    def line(self, k: int) -> int:
        """The line of token `k` (1-based)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        return bisect.bisect_right(self._newlines, self.offset(k) - 1) + 1

    def pos(self, k: int) -> Pos:
        start = self.offset(k)
        line = self.text.count("\n", 0, start) + 1
        column = start - (self.text.rfind("\n", 0, start) + 1) + 1
        width = len(self.strings[k]) if k < len(self.strings) else 1
        return Pos(line, column, line, column + width)

    def error(self, message: str, k: int, hint: str | None = None) -> DataError:
        return DataError(message, self.pos(k), hint=hint, filename=self.filename,
                         source=self.text)

    def error_at_offset(self, message: str, offset: int) -> DataError:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return DataError(message, Pos(line, column, line, column + 2), filename=self.filename,
                         source=self.text)


def element(token: str) -> int | float | str:
    """A set element or subscript as the JSON reader has it: a number written as one (an
    integral one as an int: AMPL's 1 and 1.0 are one member), any other word as text."""
    if token[0] in "'\"":
        return unquote(token)
    if _INT.fullmatch(token):
        return int(token)
    if _NUMBER.fullmatch(token):
        number = float(token)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    return token


def value(token: str) -> int | float | str:
    """A param's value: a number, `Infinity` as the text "inf", or an element (a symbolic
    param's value, text)."""
    if token in INFINITY:
        return INFINITY[token]
    if token[0] in "'\"":
        return unquote(token)
    if _INT.fullmatch(token):
        return int(token)
    if _NUMBER.fullmatch(token):
        return float(token)
    return token


def is_number(token: str) -> bool:
    return token in INFINITY or _NUMBER.fullmatch(token) is not None


def unquote(token: str) -> str:
    return token[1:-1].replace(token[0] * 2, token[0])


def is_name(token: str) -> bool:
    return _NAME.fullmatch(token) is not None


def is_word(token: str) -> bool:
    """An element or value token (not punctuation, not a stray character)."""
    return _WORD.fullmatch(token) is not None


def _split(text: str, start: int) -> list[str] | None:
    """The tokens of plain text (None: it has quotes, comments or stray characters)."""
    if _NOT_PLAIN.search(text, start) or text.count("=", start) != text.count(":=", start):
        return None
    return _SPACED.sub(r" \1 ", text[start:]).split()
