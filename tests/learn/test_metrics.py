"""Regret and normalized regret: non-negative, zero at the truth, PyEPO's definition (and
PyEPO's number, on the same predictor and data)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import QP_COST, QP_COST_HAT, QP_MAX, QP_MIN

from dfl_dsl.generators import shortest_path
from dfl_dsl.learn.metrics import normalized_regret, regret, true_objective
from dfl_dsl.learn.oracle import Oracle


@pytest.fixture
def sp(sp_inst, sp_generated):
    theta = sp_generated.targets["cost"][:60].astype(float)
    rng = np.random.default_rng(0)
    noisy = theta * rng.uniform(0.2, 1.8, theta.shape)
    return Oracle(sp_inst), theta, noisy


def test_regret_is_non_negative_and_zero_at_the_truth(sp):
    oracle, theta, noisy = sp
    r = regret(oracle, noisy, theta)
    assert r.shape == (len(theta),)
    assert (r >= 0).all() and r.sum() > 0
    np.testing.assert_allclose(regret(oracle, theta, theta), 0.0, atol=1e-9)
    assert normalized_regret(oracle, theta, theta) == pytest.approx(0.0, abs=1e-9)
    # any positive rescaling of the true costs decides the same
    np.testing.assert_allclose(regret(oracle, 3.0 * theta, theta), 0.0, atol=1e-9)


def test_normalized_regret_is_the_sum_of_regrets_over_the_sum_of_optima(sp):
    oracle, theta, noisy = sp
    w = oracle.solve_theta(theta).w
    z = true_objective(oracle, theta, w)
    np.testing.assert_allclose(z, np.einsum("bn,bn->b", theta, w[:, :40]))
    expected = regret(oracle, noisy, theta, w).sum() / np.abs(z).sum()
    assert normalized_regret(oracle, noisy, theta) == pytest.approx(expected, rel=1e-6)
    assert normalized_regret(oracle, noisy, theta, w, z) == pytest.approx(expected, rel=1e-6)


def test_maximize_regret_uses_the_models_optimal_value(pick):
    oracle = Oracle(pick.inst)
    theta_hat, theta = pick.data([[3.0, 1.0, 2.0]]), pick.data([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(regret(oracle, theta_hat, theta), [1.0])
    z = {"min": 1.0, "max": -1.0, "profit": 3.0}[pick.name]
    assert normalized_regret(oracle, theta_hat, theta) == pytest.approx(1.0 / abs(z), rel=1e-6)


def test_matches_pyepo_regret_on_shortest_path(sp_inst):
    pyepo = pytest.importorskip("pyepo")
    from pyepo.data.dataset import optDataset
    from pyepo.model.omo import shortestPathModel
    from torch.utils.data import DataLoader

    try:
        optmodel = shortestPathModel(grid=(5, 5), solver="appsi_highs")
    except Exception as exc:  # pragma: no cover - a pyomo without HiGHS
        pytest.skip(f"pyepo's shortest path model needs appsi_highs: {exc}")
    args = dict(num_data=80, num_features=5, grid=(5, 5), deg=4, noise_width=0.5, seed=3)
    x, c = pyepo.data.shortestpath.genData(
        args["num_data"], args["num_features"], args["grid"], deg=args["deg"],
        noise_width=args["noise_width"], seed=args["seed"])
    ours = shortest_path(**args)
    np.testing.assert_array_equal(ours.targets["cost"], c)
    dataset = optDataset(optmodel, x, c)
    torch.manual_seed(0)
    predictor = torch.nn.Linear(5, 40)
    expected = pyepo.metric.regret(predictor, optmodel, DataLoader(dataset, batch_size=32))
    with torch.no_grad():
        theta_hat = predictor(torch.as_tensor(x, dtype=torch.float32)).double().numpy()
    oracle = Oracle(sp_inst)
    got = normalized_regret(oracle, theta_hat, c.astype(float))
    assert got == pytest.approx(expected, rel=1e-5)
    # and with the true decisions and optima PyEPO's data set computed
    w = np.asarray(dataset.sols, dtype=float)
    z = np.asarray(dataset.objs, dtype=float).ravel()
    assert normalized_regret(oracle, theta_hat, c.astype(float), w, z) == pytest.approx(
        expected, rel=1e-5)


@pytest.mark.parametrize("text", [QP_MIN, QP_MAX], ids=["minimize", "maximize"])
def test_a_qps_regret_and_optimum_count_its_quadratic_part(text):
    """x_i = clip(∓c_i/2, -1, 1): under c = (1, -4, 0.5) the optimum is ∓3.3125; deciding with
    ĉ = (-1, -1, 0.5) scores ∓1.0625, a regret of 2.25 (cᵀ(ŵ - w*) alone would say 1.5)."""
    oracle = Oracle(bind(text, {"I": [1, 2, 3]}))
    sign = 1.0 if "minimize" in text else -1.0
    theta, theta_hat = sign * np.array([QP_COST]), sign * np.array([QP_COST_HAT])
    w = oracle.solve_theta(theta).w
    assert true_objective(oracle, theta, w)[0] == pytest.approx(-3.3125 * sign, abs=1e-6)
    assert regret(oracle, theta_hat, theta)[0] == pytest.approx(2.25, abs=1e-6)
    assert normalized_regret(oracle, theta_hat, theta) == pytest.approx(2.25 / 3.3125, abs=1e-6)


ZERO_OPTIMA = """set I; param c{I} : predicted;
var x{I} in [0, 1];
minimize f: sum{i in I} c[i] * x[i];
"""


def test_when_every_optimum_is_zero_the_regret_is_the_mean_with_one_warning():
    """Costs >= 0 leave x = 0 optimal, z* = 0 for every sample: Σ regret / (Σ|z*| + 1e-7) was
    10⁷ × the regret. The figure is then the mean regret per sample, said once."""
    import warnings

    from dfl_dsl.learn.metrics import RegretWarning

    oracle = Oracle(bind(ZERO_OPTIMA, {"I": [1, 2, 3]}))
    theta = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 4.0]])
    theta_hat = -np.ones_like(theta)  # picks every item: regret 3 and 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        values = [normalized_regret(oracle, theta_hat, theta) for _ in range(3)]
    assert values == [pytest.approx(3.5)] * 3
    assert [w.category for w in caught] == [RegretWarning]
    assert "every true optimal objective z* is 0" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a perfect prediction: 0 (no 0/0)
        assert normalized_regret(oracle, theta, theta) == 0.0


def test_a_nonzero_optimum_keeps_pyepos_normalized_regret_without_a_warning(sp):
    import warnings

    oracle, theta, noisy = sp
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert normalized_regret(oracle, noisy, theta) > 0
