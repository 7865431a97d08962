"""Instance.solve: what a backend claims as a solution must be finite."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.solution import Solution


@pytest.mark.parametrize(("objective", "x"), [(np.inf, [1.0]), (1.0, [np.nan]), (2.0, [1.0])])
def test_a_non_finite_answer_is_an_error_not_a_solution(monkeypatch, objective, x):
    inst = bind("var x >= 0; minimize f: x;")

    def solve_instance(inst, *, time_limit=None, seed=None):
        return Solution("optimal", objective, np.array(x), "fake", 0.0, inst, message="Optimal")

    monkeypatch.setattr("dfl_dsl.backends.load_backend",
                        lambda name: SimpleNamespace(solve_instance=solve_instance))
    sol = inst.solve("highs")
    if np.isfinite(objective) and np.isfinite(x).all():
        assert sol.status == "optimal" and sol.objective == objective
        return
    assert sol.status == "error" and sol.objective is None and sol.x is None
    assert sol.message.startswith("the solver's answer is not finite")
    assert sol.message.endswith("it said: Optimal")
