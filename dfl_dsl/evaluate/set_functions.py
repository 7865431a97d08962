"""The set functions of ordered sets (`card first last next prev nextw prevw ord ord0 member`)
and MathProg's text functions of elements (`length substr str2time time2str`): how many
arguments each takes, of what kind, and what it returns. The checker reads this table
at start-up, so it lives apart from their evaluation (evaluate/ordered.py), which needs numpy
and scipy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SetFunction:
    least: int  # arguments
    most: int
    kinds: tuple[str, ...]  # what each argument is: "set", "elem" or "num"
    result: str  # "elem" or "num"
    signature: str
    text: bool = False  # a function of an element's text (evaluate/conditions.py)


SET_FUNCTIONS = {
    "card": SetFunction(1, 1, ("set",), "num", "a set: `card(S)`"),
    "first": SetFunction(1, 1, ("set",), "elem", "a set: `first(S)`"),
    "last": SetFunction(1, 1, ("set",), "elem", "a set: `last(S)`"),
    "next": SetFunction(1, 3, ("elem", "set", "num"), "elem",
                        "an element, its set and a step: `next(e, S)`, `next(e, S, k)`"),
    "prev": SetFunction(1, 3, ("elem", "set", "num"), "elem",
                        "an element, its set and a step: `prev(e, S)`, `prev(e, S, k)`"),
    "nextw": SetFunction(1, 3, ("elem", "set", "num"), "elem",
                         "an element, its set and a step: `nextw(e, S)` (wraps around)"),
    "prevw": SetFunction(1, 3, ("elem", "set", "num"), "elem",
                         "an element, its set and a step: `prevw(e, S)` (wraps around)"),
    "ord": SetFunction(1, 2, ("elem", "set"), "num", "an element and its set: `ord(e, S)`"),
    "ord0": SetFunction(1, 2, ("elem", "set"), "num",
                        "an element and a set: `ord0(e, S)` (0 when not in it)"),
    "member": SetFunction(2, 2, ("num", "set"), "elem",
                          "a position and a set: `member(k, S)` (k from 1)"),
    "length": SetFunction(1, 1, ("elem",), "num", "an element: `length(s)`", text=True),
    "substr": SetFunction(2, 3, ("elem", "num", "num"), "elem",
                          "an element, a start (from 1) and a length: `substr(s, k, n)`",
                          text=True),
    "str2time": SetFunction(2, 2, ("elem", "elem"), "num",
                            "a text and its format: `str2time(\"2010-03-01\", \"%Y-%m-%d\")`",
                            text=True),
    "time2str": SetFunction(2, 2, ("num", "elem"), "elem",
                            "seconds since 1970 and a format: `time2str(t, \"%w\")`", text=True),
}
