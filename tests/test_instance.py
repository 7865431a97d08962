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


TWO_GOALS = """set S; param mu{S}; param w{S} >= 0;
var x{S} in [0, 1];
maximize gain: sum{i in S} mu[i] * x[i];
minimize spread: sum{i in S} w[i] * (x[i] - 0.5)^2 - sum{i in S} mu[i] * x[i];
subject to budget: sum{i in S} x[i] <= 1.5;
"""
GOAL_DATA = {"S": ["a", "b", "c"], "mu": [1.0, 2.0, 3.0], "w": [4.0, 4.0, 4.0]}


def test_solve_picks_an_objective_by_name_on_the_same_bound_data():
    inst = bind(TWO_GOALS, GOAL_DATA)
    first = inst.solve()
    assert first.objective_name == "gain" and first.objective == pytest.approx(3 + 2 * 0.5)
    other = inst.solve(objective="spread")
    # minimize 4 (x - 1/2)^2 - mu x per entry: x = 1/2 + mu/8 (inside [0, 1], sum 1.5 + 0.75
    # > 1.5, so the budget binds: x = 1/2 + (mu - lam)/8 with sum (mu - lam) = 0, lam = 2)
    assert other.objective_name == "spread" and other.to_json()["objective_name"] == "spread"
    assert [other.value("x")[k] for k in range(3)] == pytest.approx([0.375, 0.5, 0.625])
    assert inst.solve().objective_name == "gain"  # the instance itself is unchanged


def test_bind_with_an_objective():
    import dfl_dsl as dfl

    inst = dfl.parse(TWO_GOALS).bind(GOAL_DATA, objective="spread")
    assert inst.klass.name == "QP" and inst.model.objective.name == "spread"
    with pytest.raises(dfl.DflError, match="no objective `gains`"):
        inst.solve(objective="gains")


def test_an_objective_picked_at_solve_is_checked_psd_too():
    text = TWO_GOALS.replace("param w{S} >= 0;", "param w{S, S};").replace(
        "sum{i in S} w[i] * (x[i] - 0.5)^2", "sum{i in S, j in S} w[i, j] * x[i] * x[j]")
    import dfl_dsl as dfl

    data = {**GOAL_DATA, "w": [[1, 2, 0], [2, 1, 0], [0, 0, 1]]}
    inst = bind(text, data)
    assert inst.solve().objective_name == "gain"
    with pytest.raises(dfl.DflError, match="objective `spread` is not convex"):
        inst.solve(objective="spread")
    assert inst.for_objective("gain") is inst
