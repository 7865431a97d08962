"""Slices and subscripts (evaluate/subscripts.py): an empty slice `lo..lo-1` is empty, as the
range it is; slices that run backwards or leave the axis are located errors."""

from __future__ import annotations

import pytest
from _helpers import bind

from dfl_dsl import DflError

HEAD = "param k; param v[3]; var y[3] >= 0; "


@pytest.mark.parametrize(("text", "k", "objective"), [
    # `v[0..k-1]` with k = 0 was "slice 0..-1 is outside 0..2": the range 0..-1 is empty
    ("minimize f: sum(y) + sum(v[0..k-1]);", 0, 0.0),
    ("minimize f: sum(y) + sum(v[0..k-1]);", 2, 3.0),
    ("minimize f: sum(y) + sum(v[k..2]);", 3, 0.0),  # the empty slice at the far end
    ("minimize f: sum(y) + v[0..k-1] @ y[0..k-1];", 0, 0.0),
    ("minimize f: sum(y) + norm1(y[0..k-1]);", 0, 0.0),
    ("minimize f: sum(y); subject to c: y[0..k-1] >= 1;", 0, 0.0),  # no rows
    ("minimize f: sum(y); subject to c: y[0..k-1] >= 1;", 2, 2.0),
])
def test_an_empty_slice_is_empty(text, k, objective):
    sol = bind(HEAD + text, {"k": k, "v": [1, 2, 3]}).solve("highs")
    assert sol.status == "optimal" and sol.objective == pytest.approx(objective)


def test_a_sum_over_an_empty_slice_is_zero_in_a_row():
    sol = bind(HEAD + "minimize f: sum(y); subject to c: sum(y[0..k-1]) >= 1;",
               {"k": 0, "v": [1, 2, 3]}).solve("highs")
    assert sol.status == "infeasible"


@pytest.mark.parametrize(("k", "message"), [
    (-1, r"slice -1\.\.-2 is outside 0\.\.2"),  # empty, but before the axis
    (5, r"slice 5\.\.4 is outside 0\.\.2"),  # empty, but past it
])
def test_an_empty_slice_must_touch_the_axis(k, message):
    with pytest.raises(DflError, match=message) as info:
        bind(HEAD + "minimize f: sum(y) + sum(v[k..k-1]);", {"k": k, "v": [1, 2, 3]}).compile()
    assert info.value.pos is not None


def test_a_slice_that_runs_backwards_is_an_error():
    text = HEAD + "minimize f: sum(y) + sum(v[2..0]);"
    with pytest.raises(DflError, match=r"slice 2\.\.0 runs backwards") as info:
        bind(text, {"k": 0, "v": [1, 2, 3]}).compile()
    assert info.value.pos.column == text.index("2..0") + 1
    assert "`lo..lo-1`" in info.value.hint
