"""The reduction protocol: a chain applies the steps that accept a problem, and `invert`
maps duals back to the model's constraints (and points back to the model's columns)."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.compile.bridges import LINEAR, reduce_model
from dfl_dsl.compile.reductions.base import BlockSolution, Inverse, Reduction
from dfl_dsl.compile.reductions.epigraphs import Epigraphs


def test_invert_drops_the_steps_columns_and_blocks():
    inverse = Inverse(columns=3, blocks=2, sources=[0, None, 1, None])
    out = Reduction().invert(BlockSolution(np.arange(6.0), [np.array([1.0]), np.array([2.0]),
                                                            np.array([3.0]), np.array([4.0])]),
                             inverse)
    assert out.x.tolist() == [0.0, 1.0, 2.0]
    assert [d.tolist() for d in out.duals] == [[1.0], [3.0]]


def test_a_chain_takes_only_the_steps_that_accept():
    inst = bind("var x; minimize o: abs(x - 1); subject to c: x <= 3;")
    problem, applied = reduce_model(inst.compile(), inst, LINEAR)
    assert [type(step) for step, _ in applied.steps] == [Epigraphs]
    assert applied.names == ["c"]
    assert problem.width == inst.width + 1  # the epigraph variable


def test_duals_come_back_under_the_constraints_names():
    inst = bind("var x; var y; minimize o: abs(x - 1) + y;\n"
                "subject to c: x + y >= 3; subject to d: abs(y) <= 5;")
    sol = inst.solve("highs")
    assert set(sol.duals) == {"c", "d"}
    assert sol.duals["c"][0] == pytest.approx(1.0)  # a unit more of c's bound costs 1
