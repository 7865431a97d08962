"""did_you_mean: the hint naming the closest known name."""

from __future__ import annotations

import pytest

from dfl_dsl.ast import Pos
from dfl_dsl.errors import WINDOW, DflError, did_you_mean


def test_a_case_slip_is_the_closest_name_even_for_one_letter():
    # difflib alone scores `m` against `M` as unlike as any two letters
    assert did_you_mean("m", ["M", "n"]) == "did you mean `M`?"
    assert did_you_mean("Demand", ["supply", "demand"]) == "did you mean `demand`?"


def test_close_spellings_are_hinted_and_far_ones_are_not():
    assert did_you_mean("weight", ["wieght", "cost"]) == "did you mean `wieght`?"
    assert did_you_mean("x", ["supply", "demand"]) is None


def _shown(source: str, column: int, width: int = 3) -> tuple[str, str]:
    error = DflError("bad", Pos(2, column, 2, column + width), filename="f", source=source)
    return tuple(error.format().splitlines()[1:3])


def test_a_short_line_is_shown_whole():
    assert _shown("a\nvar x = yyy;\nb", 9) == ("    var x = yyy;", "            ^^^")


@pytest.mark.parametrize("column", [1, 5000, 9998])
def test_a_long_line_is_shown_in_a_window_around_the_column(column):
    # a minified 32 KB JSON file or a 1 MB model line was printed whole on stderr
    line = "".join(chr(ord("a") + k % 26) for k in range(10_000))
    text, caret = _shown("first\n" + line + "\nlast", column)
    assert len(text) <= 4 + WINDOW + 6
    at = caret.index("^")
    assert text[at:at + 3] == line[column - 1:column + 2] and caret.count("^") <= 3
    assert text.startswith("    ...") == (column > WINDOW // 3)
    assert text.endswith("...") == (column < 10_000 - WINDOW)
