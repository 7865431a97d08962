"""The scenario layer: the lifted form agrees with the bridge at any scenario set, the oracle's
decisions reach the spec's reference CVaR, the torch objective equals the LP's optimum, and the
losses pass gradients to the generator."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind, expected, spec_dir

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import bridge
from dfl_dsl.compile.linear import assemble
from dfl_dsl.errors import DflError
from dfl_dsl.learn.gen_dfl import (
    GenDFLLoss,
    PointSPOPlus,
    ScenarioObjective,
    ScenarioOracle,
    empirical_cvar,
    lift,
    relative_risk_regret,
)
from dfl_dsl.learn.generative import ConditionalFlow

PORTFOLIO = """param n : int; param alpha default 0.8; param ret[n] : uncertain;
var w[n] in [0, 1];
maximize tail: cvar(alpha, ret @ w);
s.t. budget: sum(w) == 1;"""

# a mean term and a worst-case term, with the uncertain param also in a constraint
MIXED = """set I; param c{I} : uncertain; param cap default 3;
var x{I} in [0, 2];
minimize f: sum{i in I} c[i] * x[i] + 0.5 * worst(sum{i in I} c[i] * x[i]);
s.t. need: sum{i in I} x[i] >= 2;
s.t. room{i in I}: c[i] * x[i] <= cap;"""


def _portfolio(n=4):
    return bind(PORTFOLIO, {"n": n, "ret": np.zeros((2, n)).tolist()})


def test_energy_spec_scenarios_reach_the_reference_objective():
    spec = spec_dir()
    inst = dfl.load(spec / "energy_schedule.opt").bind(spec / "energy_schedule.json")
    xi = inst.uncertain[0].extra["scenarios"]
    x = ScenarioOracle(inst, len(xi)).solve(xi[None])
    value = ScenarioObjective(inst).value(torch.as_tensor(x), torch.as_tensor(xi[None]))
    want = expected()["energy_schedule"]
    assert value.item() == pytest.approx(want["objective"], abs=want["tol"])


@pytest.mark.parametrize("text, data", [
    (PORTFOLIO, {"n": 3, "ret": np.zeros((3, 3)).tolist()}),
    (MIXED, {"I": [1, 2, 3], "c": np.ones((3, 3)).tolist()}),
])
def test_lifted_form_agrees_with_the_bridge(text, data):
    inst = bind(text, data)
    s, k = 3, 3
    form = lift(inst, s)
    xi = np.random.default_rng(5).uniform(0.2, 2.0, (s, k))
    inst.uncertain[0].extra["scenarios"] = xi
    direct = assemble(bridge(inst.compile(), inst), inst)
    theta = xi.ravel()
    c, c0 = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    assert np.allclose(c, direct.c) and c0 == pytest.approx(direct.c0)
    assert np.allclose((A - direct.A).toarray(), 0)
    assert np.allclose(rl, direct.rl) and np.allclose(ru, direct.ru)


def test_full_probing_gives_the_same_form(monkeypatch):
    """Where the cheap per-scenario probes don't apply, every (scenario, entry) is probed."""
    import dfl_dsl.learn.gen_dfl as gen_dfl

    inst = bind(MIXED, {"I": [1, 2], "c": np.ones((2, 2)).tolist()})
    fast = lift(inst, 3)
    monkeypatch.setattr(gen_dfl, "_separable_jacobian", lambda *args: None)
    full = lift(inst, 3)
    theta = np.random.default_rng(0).uniform(0.1, 3.0, 6)
    assert np.allclose(fast.objective_at(theta)[0], full.objective_at(theta)[0])
    assert np.allclose((fast.rows_at(theta)[0] - full.rows_at(theta)[0]).toarray(), 0)
    assert np.allclose(fast.rows_at(theta)[2], full.rows_at(theta)[2])


def test_objective_equals_the_lp_optimum_for_mean_and_worst_terms():
    inst = bind(MIXED, {"I": [1, 2, 3], "c": np.ones((4, 3)).tolist()})
    xi = np.random.default_rng(1).uniform(0.5, 2.0, (2, 4, 3))
    x = ScenarioOracle(inst, 4).solve(xi)
    objective = ScenarioObjective(inst)
    for i in range(2):  # a fresh instance per scenario set: an instance caches its form
        sol = bind(MIXED, {"I": [1, 2, 3], "c": xi[i].tolist()}).solve("highs")
        got = objective.value(torch.as_tensor(x[i:i + 1]), torch.as_tensor(xi[i:i + 1]))
        assert got.item() == pytest.approx(sol.objective, rel=1e-7)


def test_empirical_cvar_is_the_tail_mean_with_a_fractional_boundary():
    v = torch.tensor([[4.0, 1.0, 3.0, 2.0, 0.0]])
    assert empirical_cvar(v, 0.6).item() == pytest.approx(3.5)  # the worst 2 of 5
    assert empirical_cvar(v, 0.5).item() == pytest.approx((4 + 3 + 0.5 * 2) / 2.5)
    assert empirical_cvar(v, 0.0).item() == pytest.approx(2.0)  # the mean


def test_portfolio_decisions_maximize_the_lower_tail():
    inst = _portfolio()
    xi = np.random.default_rng(2).normal(0.1, 0.2, (3, 16, 4))
    x = ScenarioOracle(inst, 16).solve(xi)
    assert np.allclose(x.sum(1), 1) and (x >= -1e-9).all()
    objective = ScenarioObjective(inst)
    best = objective.value(torch.as_tensor(x), torch.as_tensor(xi))
    uniform = objective.value(torch.full((3, 4), 0.25, dtype=torch.float64), torch.as_tensor(xi))
    assert (best <= uniform + 1e-9).all()  # canonical = -CVaR of the lower tail
    assert relative_risk_regret(objective, x, x, xi) == pytest.approx(0.0, abs=1e-12)
    assert relative_risk_regret(objective, np.full((3, 4), 0.25), x, xi) > 0


def test_a_cold_solve_depends_on_the_scenarios_alone():
    """A warm basis left by earlier solves changes the decisions' last digits (or a degenerate
    LP's vertex); `cold` ones equal a fresh oracle's, which is what lets a checkpoint replay
    `dfl train`'s regret exactly."""
    inst = _portfolio(6)
    rng = np.random.default_rng(0)
    earlier, xi = rng.normal(0.1, 0.2, (2, 8, 16, 6))
    fresh = ScenarioOracle(inst, 16).solve(xi)
    used = ScenarioOracle(inst, 16)
    used.solve(earlier)  # (a warm solve of xi differs here with highspy 1.x: not asserted)
    np.testing.assert_array_equal(used.solve(xi, cold=True), fresh)


def test_gen_dfl_loss_gradient_reaches_the_flow():
    inst = _portfolio()
    objective, oracle = ScenarioObjective(inst), ScenarioOracle(inst, 8)
    torch.manual_seed(0)
    flow = ConditionalFlow(4, 2, couplings=2, hidden=8).double()
    flow.fit_scaling(torch.randn(20, 4, dtype=torch.float64) * 0.2 + 0.1)
    x = torch.randn(3, 2, dtype=torch.float64)
    target = np.eye(4)[[0, 1, 2]]
    loss_fn = GenDFLLoss(objective, oracle, target)
    loss = loss_fn(flow.sample(x, 8), torch.as_tensor(target))
    assert loss.item() >= -1e-12  # the target is in the pool
    loss.backward()
    assert sum(p.grad.abs().sum() for p in flow.parameters() if p.grad is not None) > 0
    assert len(loss_fn.pool) > 3  # the decisions under the samples joined the pool


def test_point_spo_plus_is_zero_at_the_truth_and_has_a_gradient():
    inst = _portfolio()
    objective, oracle = ScenarioObjective(inst), ScenarioOracle(inst, 1)
    xi = torch.tensor([[0.1, 0.3, 0.2, 0.0]], dtype=torch.float64)
    w_true = torch.as_tensor(oracle.solve(xi[:, None].numpy()))
    spo = PointSPOPlus(objective, oracle)
    assert spo(xi.clone(), xi, w_true).item() == pytest.approx(0.0, abs=1e-12)
    guess = torch.tensor([[0.3, 0.1, 0.2, 0.0]], dtype=torch.float64, requires_grad=True)
    loss = spo(guess, xi, w_true)
    loss.backward()
    assert loss.item() > 0 and guess.grad.abs().sum() > 0


def test_models_the_scenario_layer_refuses():
    with pytest.raises(DflError, match="no `uncertain` param"):
        ScenarioObjective(bind("param c : predicted; var x in [0, 1]; minimize f: c * x;"))
    quad = bind("param c : uncertain; var x in [0, 1]; minimize f: c * x + x^2;",
                {"c": [1.0, 2.0]})
    with pytest.raises(DflError, match="quadratic in the decisions"):
        ScenarioObjective(quad)


def test_a_scenario_problem_without_solution_names_the_model_and_why():
    inst = bind("param d : uncertain; var x in [0, 1]; minimize f: mean(d * x); s.t. r: x <= d;",
                {"d": [0.5]})
    with pytest.raises(DflError, match="status infeasible") as info:
        ScenarioOracle(inst, 1).solve(np.array([[[-1.0]]]))
    assert info.value.filename == "m.opt" and "dfl solve" in info.value.hint
