"""AMPL's piecewise-linear term `<<b; s>> x`, written as the `max` of its affine pieces
(grammar/piecewise.py): its values, its zero point, and the data it refuses."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl


def solve(text: str, data: dict | None = None) -> float:
    return dfl.parse(text).bind(data or {}).solve(backend="highs").objective


@pytest.mark.parametrize(("objective", "value"), [
    # slope 1 up to 2, 3 up to 5, 6 past 5; less 4x: the least at the breakpoint 5
    ("minimize o: <<2, 5; 1, 3, 6>> x - 4 * x", 2 + 9 - 20),
    ("minimize o: <<2, 5; 1, 3, 6>> (x, 1) - 4 * x", 2 + 9 - 1 - 20),  # 0 at 1, not at 0
    ("minimize o: <<b[1], b[2]; s[1], s[2], s[3]>> x - 4 * x", 2 + 9 - 20),  # data
    # a breakpoint below 0, still 0 at 0: slope 2 from 0 down to -1, then 1 (x - 3 = -3)
    ("minimize o: <<-1; 1, 2>> (x - 3)", -2 - 2),
    # subtracted from what is maximized: 3x - 10 (x - 4) past 4, the most at x = 4
    ("maximize o: 3 * x - <<4; 0, 10>> x", 12),
])
def test_piecewise_values(objective, value):
    model = f"param b{{1..2}}; param s{{1..3}};\nvar x >= 0, <= 10;\n{objective};"
    assert solve(model, {"b": [2, 5], "s": [1, 3, 6]}) == pytest.approx(value)


INDEXED = """set LINKS; param n{LINKS} integer >= 1;
param limit{l in LINKS, p in 1..n[l] - 1}; param rate{l in LINKS, p in 1..n[l]};
var Ship{LINKS} >= 0, <= 10;
subject to total: sum{l in LINKS} Ship[l] = 12;
minimize cost: sum{l in LINKS}
   <<{p in 1..n[l] - 1} limit[l, p]; {p in 1..n[l]} rate[l, p]>> Ship[l];
"""


def test_indexed_lists_give_each_link_its_own_pieces():
    """a: 1 up to 4, then 5; b: 2 flat (no breakpoint); c: 1 up to 1, 3 up to 2, then 9."""
    data = {"LINKS": ["a", "b", "c"], "n": {"a": 2, "b": 1, "c": 3},
            "limit": {"a": {"1": 4}, "c": {"1": 1, "2": 2}},
            "rate": {"a": {"1": 1, "2": 5}, "b": {"1": 2}, "c": {"1": 1, "2": 3, "3": 9}}}
    # the cheapest 12 units: 4 of a at 1, 1 of c at 1, then 7 of b at 2 (c's next cost 3)
    assert solve(INDEXED, data) == pytest.approx(4 + 1 + 14)


def test_an_indexed_list_beside_a_plain_one_is_refused():
    with pytest.raises(dfl.DflError, match="one indexed item each"):
        dfl.parse("param b{1..2}; var x;\nminimize o: <<{p in 1..2} b[p]; 0, 1, 2>> x;")


def test_falling_slopes_stop_at_the_term():
    with pytest.raises(dfl.DflError, match="slopes fall here") as info:
        solve("var x >= 0, <= 3;\nminimize o:\n  x + <<1; 2, 1>> x;")
    assert (info.value.pos.line, info.value.pos.column) == (3, 7)


def test_one_slope_more_than_breakpoints():
    with pytest.raises(dfl.DflError, match="2 breakpoint.* needs 3 slopes, not 2") as info:
        dfl.parse("var x;\nminimize o: <<1, 2; 0, 1>> x;")
    assert (info.value.pos.line, info.value.pos.column) == (2, 13)
