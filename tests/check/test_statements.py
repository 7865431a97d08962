"""check/statements.py: the rules for declarations (here: a param's checks that name the
param itself, which AMPL tests per entry once the data is in)."""

from __future__ import annotations

import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.errors import DataError, DflError

RISING = """
set P := 1..4;
param step{p in P} >= if p = 1 then 0 else step[p-1];
param cap{p in 1..3} > if p = 1 then 0 else cap[p-1], default 5 * p;
var x{P} >= 0, <= 1;
maximize gain: sum{p in P} step[p] * x[p] + cap[2];
"""


def test_a_bound_may_name_its_own_param():
    """Each entry is checked against the entries before it, after the data (AMPL's reading)."""
    inst = bind(RISING, {"step": [1, 2, 2, 5]})
    assert inst.entity("cap").array().tolist() == [5, 10, 15]
    assert inst.solve().objective == pytest.approx(1 + 2 + 2 + 5 + 10)


def test_an_entry_that_breaks_its_own_bound_is_named():
    with pytest.raises(DataError, match=r"param `step`\[3\]: value 2 breaks `>= 3`"):
        bind(RISING, {"step": [1, 3, 2, 5]})


@pytest.mark.parametrize("text", [
    "set P := 1..3; param q{p in P} = if p = 1 then 1 else 2 * q[p-1];",  # a value: refused
    "set P := 1..3; param q{p in P} default q[1];",
    "set P := 1..3; param q{p in P} : predicted >= if p = 1 then 0 else q[p-1];",
])
def test_a_value_or_a_predicted_param_still_may_not_name_itself(text):
    with pytest.raises(DflError, match="`q` refers to itself"):
        dfl.parse(text)
