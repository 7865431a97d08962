"""SymbolicBounds: bounds holding variables or params move into the body; the rows keep the
constraint's name, and its duals are the stacked rows'."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.compile.problem import Problem
from dfl_dsl.compile.reductions.bounds import SymbolicBounds


def _problem(text, data=None):
    inst = bind(text, data or {})
    return inst, Problem.of(inst.compile(), inst)


def test_a_predicted_bound_becomes_body_minus_bound():
    inst, problem = _problem("param t : predicted; var x; minimize o: x;\n"
                             "subject to c: t <= x <= 5;", {"t": 2.0})
    step = SymbolicBounds()
    assert step.accepts(problem)
    out, inverse = step.apply(problem)
    (block,) = out.rows
    assert block.name == "c" and block.origin is None
    # x - t >= 0, then x <= 5: one stacked row per side
    assert block.body.rows == 2
    assert np.isfinite(block.lo).tolist() == [True, False]
    assert np.isfinite(block.hi).tolist() == [False, True]
    assert inverse.sources == [0] and inverse.columns == problem.width
    assert inst.solve("highs").objective == pytest.approx(2.0)


def test_numeric_bounds_are_left_alone():
    _, problem = _problem("var x; minimize o: x; subject to c: x >= 2;")
    assert not SymbolicBounds().accepts(problem)


def test_a_bound_holding_an_uncertain_param_holds_per_scenario():
    inst = bind("param d : uncertain; var x; minimize o: x; subject to c: d <= x <= 10;",
                {"d": [1.0, 3.0, 2.0]})
    assert inst.solve("highs").objective == pytest.approx(3.0)
    assert inst.solve("cvxpy").objective == pytest.approx(3.0, abs=1e-7)
