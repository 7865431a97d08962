"""Piecewise-linear atoms in scenario objectives (the newsvendor and its relatives): the torch
objective equals the LP's optimum on every scenario set, matches the newsvendor's closed form,
passes gradients to the scenarios, and the losses that can't use it refuse at the objective."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _helpers import bind

from dfl_dsl.errors import DflError
from dfl_dsl.learn.gen_dfl import (
    GenDFLLoss,
    PointSPOPlus,
    ScenarioObjective,
    ScenarioOracle,
    relative_risk_regret,
)
from dfl_dsl.learn.scenario_trainer import ScenarioTrainer

NEWSVENDOR = """param b >= 0 default 3;
param d : uncertain;
var x in [0, 100];
minimize cost: cvar(0.8, x + b * pos(d - x));"""

# several products: ordering cost, shortage (backorder) and holding costs, one CVaR of the total
MULTI = """set I;
param c{I}; param b{I} >= 0; param h{I} >= 0;
param d{I} : uncertain;
var x{I} in [0, 100];
minimize cost: cvar(0.9, sum{i in I} (c[i] * x[i] + b[i] * pos(d[i] - x[i])
                                      + h[i] * pos(x[i] - d[i])));"""

PRODUCTS = {"I": ["a", "b", "c"], "c": [1.0, 2.0, 0.5], "b": [4.0, 5.0, 3.0],
            "h": [0.5, 0.2, 1.0]}

# the atoms the LP bridge takes, nested and combined with mean, worst and plain terms
VARIANTS = {
    "plain (mean) newsvendor": (
        "param d : uncertain; var x in [0, 100];\n"
        "minimize cost: x + 3 * pos(d - x);", 1),
    "worst plus mean": (
        "set I; param d{I} : uncertain; var x{I} in [0, 100];\n"
        "minimize f: mean(sum{i in I} (x[i] + 4 * pos(d[i] - x[i])))\n"
        "  + 0.5 * worst(max{i in I} abs(d[i] - x[i]));", 3),
    "profit, lower-tail cvar of min": (
        "set I; param d{I} : uncertain; var x{I} in [0, 100];\n"
        "maximize profit: cvar(0.7, sum{i in I} (3 * min(x[i], d[i]) - x[i]));", 3),
    "norms and nested atoms": (
        "param n : int; param d[n] : uncertain; var x[n] in [0, 100];\n"
        "minimize f: cvar(0.75, sum(x) + norm1(x - d) + 2 * norm_inf(d - x)\n"
        "  + max{i in 0..n-1} pos(d[i] - x[i] - 5) + max(d[0] - x[0], 20, x[1] - d[1]));", 3),
    "worst of a pairwise max, data inside": (
        "param n : int; param d[n] : uncertain; param cap default 40; var x[n] in [0, 100];\n"
        "minimize f: sum(x) + worst(sum{i in 0..n-1} 2 * max(d[i] - x[i], x[i] - cap));", 2),
}


def _newsvendor(b=3.0):
    return bind(NEWSVENDOR, {"b": b, "d": [10.0, 20.0]})


def _lp_agrees(text, data, scen_key, scenarios, shape=()):
    """The oracle's decisions, and value() at them vs `dfl solve`'s optimum per scenario set."""
    inst = bind(text, {**data, scen_key: np.ones((scenarios.shape[1],) + shape).tolist()})
    x = ScenarioOracle(inst, scenarios.shape[1]).solve(scenarios)
    objective = ScenarioObjective(inst)  # canonical (minimized) sense: × sign for the model's
    got = objective.sign * objective.value(torch.as_tensor(x), torch.as_tensor(scenarios))
    for i, xi in enumerate(scenarios):  # a fresh instance per set: an instance caches its form
        sol = bind(text, {**data, scen_key: xi.reshape((-1,) + shape).tolist()}).solve("highs")
        assert got[i].item() == pytest.approx(sol.objective, rel=1e-7, abs=1e-7), i
    return x, got


@pytest.mark.parametrize("s", [10, 7])  # 7: a fractional weight on CVaR's boundary scenario
def test_newsvendor_value_equals_the_lp_optimum(s):
    xi = np.random.default_rng(s).uniform(0, 100, (4, s, 1))
    _lp_agrees(NEWSVENDOR, {}, "d", xi)


def test_multi_product_value_equals_the_lp_optimum():
    xi = np.random.default_rng(3).uniform(0, 100, (3, 20, 3))
    x, _ = _lp_agrees(MULTI, PRODUCTS, "d", xi, (3,))
    assert x.shape == (3, 3)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_piecewise_variants_value_equals_the_lp_optimum(name):
    text, k = VARIANTS[name]
    data = {"n": k} if "param n" in text else ({"I": list(range(k))} if k > 1 else {})
    xi = np.random.default_rng(len(name)).uniform(0, 100, (2, 8, k))
    _lp_agrees(text, data, "d", xi, (k,) if k > 1 or "param n" in text else ())


def _closed_form(d, c, b, alpha):
    """The CVaR newsvendor: cost c·x + b·(d - x)₊ grows with d at every x, so its worst
    k = (1-α)·S scenarios are the k largest demands and CVaR(x) = c·x + (b/k) Σ_tail (t - x)₊,
    minimized by the ⌈k(1 - c/b)⌉-th smallest of the tail (a quantile of the scenarios)."""
    k = round((1 - alpha) * len(d))
    tail = np.sort(d)[-k:]
    m = math.ceil(k * (1 - c / b))
    x = tail[m - 1]
    return x, c * x + b / k * np.maximum(tail - x, 0).sum()


@pytest.mark.parametrize("alpha, b", [(0.7, 4.0), (0.0, 3.0), (0.5, 4.5)])
def test_newsvendor_decision_is_the_closed_form_quantile(alpha, b):
    text = NEWSVENDOR.replace("0.8", str(alpha))
    inst = bind(text, {"b": b, "d": [1.0] * 20})
    d = np.random.default_rng(7).permutation(np.linspace(5, 95, 20))[None, :, None]
    want_x, want_value = _closed_form(d.ravel(), 1.0, b, alpha)
    x = ScenarioOracle(inst, 20).solve(d)
    assert x[0, 0] == pytest.approx(want_x, abs=1e-7)
    value = ScenarioObjective(inst).value(torch.as_tensor(x), torch.as_tensor(d))
    assert value.item() == pytest.approx(want_value, rel=1e-9)
    assert relative_risk_regret(ScenarioObjective(inst), x, x, d) == pytest.approx(0, abs=1e-12)
    off = np.array([[want_x + 7.0]])
    assert relative_risk_regret(ScenarioObjective(inst), off, x, d) > 0


def test_value_is_batched_over_pools_and_its_scenario_gradient_is_right():
    inst = bind(MULTI, {**PRODUCTS, "d": np.ones((2, 3)).tolist()})
    objective = ScenarioObjective(inst)
    rng = np.random.default_rng(0)
    xi = torch.tensor(rng.uniform(0, 100, (4, 10, 3))).requires_grad_()
    pool = torch.as_tensor(rng.uniform(0, 100, (5, 3)))
    shared = objective.value(pool, xi, pool=True)
    per = objective.value(pool.expand(4, 5, 3), xi)
    one = torch.stack([objective.value(pool[p].expand(4, 3), xi) for p in range(5)], 1)
    assert shared.shape == (4, 5) and torch.allclose(shared, per) and torch.allclose(shared, one)
    (grad,) = torch.autograd.grad(shared.sum(), xi)
    eps, base = 1e-6, shared.detach().sum()
    for idx in [(0, 3, 1), (2, 9, 0), (3, 0, 2)]:
        bumped = xi.detach().clone()
        bumped[idx] += eps
        numeric = (objective.value(pool, bumped, pool=True).sum() - base) / eps
        assert grad[idx].item() == pytest.approx(numeric.item(), rel=1e-4, abs=1e-6)


def test_gen_dfl_loss_on_the_newsvendor_passes_gradients_to_the_scenarios():
    inst = _newsvendor()
    objective, oracle = ScenarioObjective(inst), ScenarioOracle(inst, 10)
    xi = torch.tensor(np.random.default_rng(1).uniform(0, 100, (3, 10, 1))).requires_grad_()
    target = np.array([[20.0], [50.0], [80.0]])
    loss = GenDFLLoss(objective, oracle, target)(xi, torch.as_tensor(target))
    assert loss.item() > 0
    loss.backward()
    assert xi.grad.abs().sum() > 0


def test_point_spo_plus_is_refused_at_the_atom_for_a_cost_not_linear_in_x():
    inst = _newsvendor()
    objective = ScenarioObjective(inst)
    assert objective.nonlinear == "pos"
    with pytest.raises(DflError, match="linear in the decisions") as info:
        PointSPOPlus(objective, ScenarioOracle(inst, 1))
    assert info.value.filename == "m.opt"
    assert (info.value.pos.line, info.value.pos.column) == (4, 34)  # at `pos(d - x)`
    assert "--loss mse" in info.value.hint
    with pytest.raises(DflError, match="`spo\\+` needs an objective linear"):
        ScenarioTrainer(inst, "spo+")
    for loss in ("mse", "nll", "gen-dfl"):
        ScenarioTrainer(inst, loss)


def test_atoms_of_data_alone_keep_the_cost_linear_for_spo_plus():
    """abs(d) - an atom of the uncertain param only - is a per-scenario constant, not a
    nonlinearity in x: SPO+ applies."""
    inst = bind("set I; param d{I} : uncertain; var x{I} in [0, 1];\n"
                "minimize f: cvar(0.5, sum{i in I} d[i] * x[i] + abs(d[1]) + pos(d[2] - 1));\n"
                "s.t. one: sum{i in I} x[i] == 1;", {"I": [1, 2], "d": [[1.0, 2.0]]})
    objective = ScenarioObjective(inst)
    assert objective.nonlinear is None
    cost = objective.point_cost(torch.tensor([[3.0, -0.5]], dtype=torch.float64))
    assert torch.allclose(cost, torch.tensor([[3.0, -0.5]], dtype=torch.float64))
    PointSPOPlus(objective, ScenarioOracle(inst, 1))


@pytest.mark.parametrize("objective, match, column", [
    ("cvar(0.8, norm2(x - d))", "`norm2` in the objective", 23),
    ("pos(cvar(0.8, d[0] - x[0]))", "`cvar` inside another atom", 17),
    ("mean(d[0] * x[0]) + exp(x[1])", "`exp` in the objective", 33),
    ("cvar(0.8, d[0] * x[0] + x[1]^2)", "quadratic in the decisions", 37),
])
def test_unsupported_objectives_are_refused_at_their_position(objective, match, column):
    text = ("param n : int; param d[n] : uncertain; var x[n] in [0, 10];\n"
            f"minimize f: {objective};")
    inst = bind(text, {"n": 2, "d": [[1.0, 2.0]]})
    with pytest.raises(DflError, match=match) as info:
        ScenarioObjective(inst)
    assert info.value.filename == "m.opt"
    assert (info.value.pos.line, info.value.pos.column) == (2, column)


def test_the_scenario_trainer_trains_the_newsvendor_with_each_scenario_loss():
    from dfl_dsl.learn.dataset import ScenarioData

    inst = _newsvendor()
    rng = np.random.default_rng(0)
    z = rng.standard_normal((48, 2))
    d = np.clip(50 + 15 * z[:, :1] + 5 * rng.standard_normal((48, 8)), 0, None)[..., None]
    train, test = ScenarioData(z[:32], d[:32, :1]), ScenarioData(z[32:], d[32:])
    for loss in ("mse", "nll", "gen-dfl"):
        trainer = ScenarioTrainer(inst, loss, epochs=1, batch_size=16, scenarios=4, hidden=8,
                                  progress=False)
        trainer.init_model(train)
        start = trainer.risk_regret(test)
        trainer.fit(train, test, "test")
        regret = trainer.history.epochs[-1]["test_regret"]
        assert np.isfinite(start) and np.isfinite(regret) and regret >= 0
