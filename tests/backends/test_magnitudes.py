"""Numbers HiGHS reads as infinite (or refuses) are located errors before a solve: each of
these once came back `optimal` with objective inf, an empty x, or an internal IndexError."""

from __future__ import annotations

import highspy
import pytest
from _helpers import bind

from dfl_dsl import DflError
from dfl_dsl.backends.magnitudes import highs_limits


def test_the_limits_are_read_from_highs():
    assert highs_limits(highspy.Highs()) == (1e20, 1e20, 1e15)


@pytest.mark.parametrize(("text", "message", "at"), [
    ("var x; minimize f: x; subject to c: x >= 1e25;", r"row `c` bounds x at 1e\+25", "c:"),
    ("var x; minimize f: x; subject to c: 1e-10 * x >= 1e12;", r"row `c` bounds x at 1e\+22",
     "c:"),
    ("var x >= 0; minimize f: x; subject to c: 1e20 <= 1;", r"row `c` has the bound -1e\+20",
     "c:"),
    ("var x >= 0; var y >= 0; minimize f: x + y; subject to c: 1e16 * x + y >= 1;",
     r"row `c` has the coefficient 1e\+16", "c:"),
    ("var x >= 0; minimize f: 1e20 * x; subject to c: x >= 1;",
     r"the objective.s coefficient of x is 1e\+20", "f:"),
    ("var x{1..2} >= 1e21; minimize f: sum{i in 1..2} x[i];", r"x\[1\] has the bound 1e\+21",
     "x{"),
])
@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])  # (cvxpy: through HiGHS)
def test_numbers_beyond_highs_range_are_located_errors(text, message, at, backend):
    with pytest.raises(DflError, match=message) as info:
        bind(text).solve(backend)
    assert info.value.pos.column == text.index(at) + 1
    assert "takes magnitudes below" in info.value.message


def test_numbers_within_range_solve():
    sol = bind("var x; minimize f: x; subject to c: x >= 1e19;").solve("highs")
    assert sol.status == "optimal" and sol.objective == pytest.approx(1e19)


@pytest.mark.parametrize(("text", "hint"), [
    ("var x; minimize f: x; subject to c: x >= 1e20;", "can't be met"),
    ("var x >= 1e21; minimize f: x;", "can't be met"),
    ("var x <= -1e20; maximize f: x;", "can't be met"),
    ("var x >= 0; minimize f: 1e20 * x;", "rescale the model's units"),  # a cost: no bound
])
def test_the_hint_for_a_huge_bound_that_tightens(text, hint):
    with pytest.raises(DflError) as info:
        bind(text).solve("highs")
    assert hint in info.value.hint


@pytest.mark.parametrize(("text", "status", "objective"), [
    # AMPL models write 1e20 for "no bound" (`param avail{S} default 1e20;`), as HiGHS, CPLEX
    # and MINOS read it: these were refused, "HiGHS takes magnitudes below 1e+20"
    ("var x >= 0; maximize f: -x; subject to c: x <= 1e20;", "optimal", 0.0),
    ("param a{1..2} default 1e20; var x{i in 1..2} >= 0, <= a[i]; minimize f: sum{i in 1..2} "
     "(i - 2) * x[i]; subject to c{i in 1..2}: x[i] <= a[i]; subject to d: x[1] + x[2] = 3;",
     "optimal", -3.0),
    ("var x >= -1e21; minimize f: x; subject to c: -5 <= x <= 1e25;", "optimal", -5.0),
    ("var x <= 1e21; minimize f: -x;", "unbounded", None),
    ("var x; minimize f: x; subject to c: x + 1 >= -2e20;", "unbounded", None),
])
@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
def test_a_bound_of_1e20_or_more_where_it_loosens_is_no_bound(text, status, objective, backend):
    sol = bind(text).solve(backend)
    assert sol.status == status
    if objective is not None:
        assert sol.objective == pytest.approx(objective)
