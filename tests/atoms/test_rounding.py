"""`floor` and `ceil` of data (AMPL's, as in `<= floor(card(S) / k)`); of a variable, refused."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl

MODEL = """set S; param k > 0;
var x{S} >= 0, <= 1;
var most <= floor(card(S) / k);
var least >= ceil(card {i in S: i > 1} / k);
maximize o: sum{i in S} x[i] + most - least;
subject to cap: sum{i in S} x[i] <= most;
"""


def test_floor_and_ceil_of_data_bound_a_variable():
    sol = dfl.parse(MODEL).bind({"S": [1, 2, 3, 4, 5], "k": 2}).solve(backend="highs")
    # most <= floor(5 / 2) = 2, least >= ceil(4 / 2) = 2: 2 + 2 - 2
    assert sol.objective == pytest.approx(2.0)


def test_floor_of_a_variable_is_refused_at_its_position():
    with pytest.raises(dfl.DflError, match="`floor` of an affine .* no DCP curvature") as info:
        dfl.parse("var y >= 0, <= 3;\nmaximize o: floor(y);")
    assert info.value.pos.line == 2
