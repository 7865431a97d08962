"""The scenario layer: the lifted form agrees with the bridge at any scenario set, the oracle's
decisions reach the spec's reference CVaR, the torch objective equals the LP's optimum, and the
losses pass gradients to the generator."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind, expected, spec_dir
from _learn_helpers import MIXED, portfolio

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.learn.gen_dfl import (
    GenDFLLoss,
    PointSPOPlus,
    ScenarioObjective,
    empirical_cvar,
    relative_risk_regret,
)
from dfl_dsl.learn.generative import ConditionalFlow
from dfl_dsl.learn.scenario_oracle import ScenarioOracle


def test_energy_spec_scenarios_reach_the_reference_objective():
    spec = spec_dir()
    inst = dfl.load(spec / "energy_schedule.opt").bind(spec / "energy_schedule.json")
    xi = inst.uncertain[0].extra["scenarios"]
    x = ScenarioOracle(inst, len(xi)).solve(xi[None])
    value = ScenarioObjective(inst).value(torch.as_tensor(x), torch.as_tensor(xi[None]))
    want = expected()["energy_schedule"]
    assert value.item() == pytest.approx(want["objective"], abs=want["tol"])


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
    inst = portfolio()
    xi = np.random.default_rng(2).normal(0.1, 0.2, (3, 16, 4))
    x = ScenarioOracle(inst, 16).solve(xi)
    assert np.allclose(x.sum(1), 1) and (x >= -1e-9).all()
    objective = ScenarioObjective(inst)
    best = objective.value(torch.as_tensor(x), torch.as_tensor(xi))
    uniform = objective.value(torch.full((3, 4), 0.25, dtype=torch.float64), torch.as_tensor(xi))
    assert (best <= uniform + 1e-9).all()  # canonical = -CVaR of the lower tail
    assert relative_risk_regret(objective, x, x, xi) == pytest.approx(0.0, abs=1e-12)
    assert relative_risk_regret(objective, np.full((3, 4), 0.25), x, xi) > 0


def test_gen_dfl_loss_gradient_reaches_the_flow():
    inst = portfolio()
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
    inst = portfolio()
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
