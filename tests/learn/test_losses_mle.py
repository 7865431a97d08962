"""I-MLE and AI-MLE against hand-computed values on "pick the cheapest of three items" (with a
known noise), their Sum-of-Gamma noise against its definition, and side by side with PyEPO
2.2.7's implicitMLE / adaptiveImplicitMLE on identical predictions (shortest path 5×5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _learn_helpers import knapsack_side_by_side
from test_losses import COST, COST_HAT, E1, _loss_and_grad, _t

from dfl_dsl.learn.losses import LOSSES, task_loss
from dfl_dsl.learn.losses_mle import AIMLE, IMLE, SUM_OF_GAMMA_TERMS

E2, E3 = np.eye(3)[1], np.eye(3)[2]


def _fixed_noise(loss_fn, noise):
    """Replace the loss's draws by `noise` (S × n, already σ-free and in the minimized
    space), the same for every sample."""
    fixed = torch.tensor(noise, dtype=torch.float64)
    loss_fn.perturb.sample = lambda c_hat: fixed.expand(c_hat.shape[0], *fixed.shape).to(c_hat)


def test_imle_by_hand_on_the_regret(pick):
    # σ = 0.5; Z1 = 0 -> ĉ = [3, 1, 2] picks e2, Z2 = [-6, 0, 0] -> [0, 1, 2] picks e1:
    # w̄ = (e1 + e2)/2, regret cᵀw̄ - z* = 1.5 - 1 = 0.5 (the profit form's canonical costs
    # shift both terms by -4). g = ∂ℓ/∂w̄ = c; λ = 10: [3,1,2] + 10c = [13, 21, 32] -> e1,
    # [0,1,2] + 10c -> e1; ∂ℓ/∂ĉ = mean(e1 - e2, e1 - e1)/10 = (e1 - e2)/20
    loss_fn = IMLE(pick.inst, n_samples=2, sigma=0.5, lambd=10.0, task_loss="regret")
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert loss == pytest.approx(0.5)
    np.testing.assert_allclose(grad, [0.05, -0.05, 0.0])


@pytest.mark.parametrize(("two_sides", "expected"), [(False, 1 / 9), (True, 1 / 18)])
def test_imle_by_hand_on_the_l1_distance_one_and_two_sided(pick_min, two_sides, expected):
    # Z2 = [0, 0, -3] (σ = 0.5) -> [3, 1, 0.5] picks e3: w̄ = (e2 + e3)/2, ℓ = mean|w̄ - e1|
    # = (1 + .5 + .5)/3 = 2/3, g = sign(w̄ - e1)/3 = [-1, 1, 1]/3, λg = [-1.5, 1.5, 1.5]
    # (λ = 4.5). Up: [1.5, 2.5, 3.5] -> e1, [1.5, 2.5, 2] -> e1; down: [4.5, -.5, .5] -> e2,
    # [4.5, -.5, -1] -> e3. One-sided: mean(e1 - e2, e1 - e3)/4.5 = (2e1 - e2 - e3)/9;
    # two-sided: mean(e1 - e2, e1 - e3)/9, half of it
    loss_fn = IMLE(pick_min, n_samples=2, sigma=0.5, lambd=4.5, two_sides=two_sides)
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [0.0, 0.0, -3.0]])
    theta_hat, theta, w, z = _case_min(pick_min)
    loss = loss_fn(theta_hat, theta, w, z)
    loss.backward()
    assert float(loss.detach()) == pytest.approx(2 / 3)
    np.testing.assert_allclose(theta_hat.grad[0].numpy(), expected * (2 * E1 - E2 - E3))


def _case_min(inst):
    theta_hat = _t(COST_HAT).requires_grad_()
    return theta_hat, _t(COST), _t(E1), None


def test_aimle_by_hand_its_step_and_its_alpha(pick_min):
    # λ = α‖ĉ‖/‖g‖ with g = c = [1, 2, 3] and ĉ = [3, 1, 2]: ‖ĉ‖ = ‖g‖, so λ = α.
    # α = 1: [3,1,2] + c = [4, 3, 5] -> e2 (as unshifted), [0,1,2] + c = [1, 3, 5] -> e1 (as
    # unshifted): gradient 0; no entry non-zero, so the share's average drops to 0.9 < 1 and α
    # grows by 0.001. α = 2.5: [5.5, 6, 9.5] -> e1, [2.5, 6, 9.5] -> e1: (e1 - e2)/(2·2.5);
    # two of three entries non-zero: average 0.9·0.9 + 0.1·2/3, α grows again
    loss_fn = AIMLE(pick_min, n_samples=2, sigma=0.5, task_loss="regret")
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    for alpha, want, share in ((1.0, [0.0, 0.0, 0.0], 0.9), (2.5, [0.2, -0.2, 0.0],
                                                               0.81 + 0.2 / 3)):
        loss_fn.alpha = alpha
        theta_hat, theta, w, z = _case_min(pick_min)
        loss = loss_fn(theta_hat, theta, w, z)
        loss.backward()
        assert float(loss.detach()) == pytest.approx(0.5)
        np.testing.assert_allclose(theta_hat.grad[0].numpy(), want, atol=1e-12)
        assert loss_fn.nonzero_share == pytest.approx(share)
        assert loss_fn.alpha == pytest.approx(alpha + 1e-3)


def test_sum_of_gamma_noise_follows_its_definition(pick_min):
    # SoG(κ, s) = (Σ_i Gamma(1/κ, κ/i) - log s)/κ, mean (Σ_i 1/i - log s)/κ
    kappa, samples = 5.0, 4000
    loss_fn = IMLE(pick_min, n_samples=samples, kappa=kappa, seed=3)
    noise = loss_fn.perturb.sample(_t(COST_HAT)).numpy()
    s = SUM_OF_GAMMA_TERMS
    mean = (sum(1 / i for i in range(1, s + 1)) - math.log(s)) / kappa
    var = sum((1 / kappa) * (kappa / i) ** 2 for i in range(1, s + 1)) / kappa**2
    assert noise.shape == (1, samples, 3)
    assert abs(noise.mean() - mean) < 4 * math.sqrt(var / noise.size)
    assert noise.var() == pytest.approx(var, rel=0.1)
    # the same seed draws the same noise; a maximize model's is negated (the model's own
    # cost vector is perturbed)
    again = IMLE(pick_min, n_samples=samples, kappa=kappa, seed=3).perturb.sample(_t(COST_HAT))
    np.testing.assert_array_equal(noise, again.numpy())


def test_a_maximize_models_noise_is_the_negated_minimize_one(pick):
    noise = IMLE(pick.inst, n_samples=3, seed=1).perturb.sample(_t(COST_HAT))
    reference = IMLE(_min_of(pick), n_samples=3, seed=1).perturb.sample(_t(COST_HAT))
    sign = 1.0 if pick.name == "min" else -1.0
    np.testing.assert_array_equal(noise.numpy(), sign * reference.numpy())


def _min_of(pick):
    from _helpers import bind
    from _learn_helpers import PICK_MIN

    return bind(PICK_MIN, {"I": [1, 2, 3]})


def test_task_losses_by_hand():
    w_bar, w, c = _t([0.5, 0.5, 0.0]), _t(E1), _t(COST)
    assert float(task_loss(w_bar, w, c, "regret")) == pytest.approx(0.5)
    assert float(task_loss(w_bar, w, c, "l1")) == pytest.approx(1 / 3)
    assert float(task_loss(w_bar, w, c, "mse")) == pytest.approx(1 / 6)


def test_bad_settings_are_refused(pick_min):
    for bad in (dict(kappa=0.0), dict(lambd=float("nan")), dict(task_loss="hinge"),
                dict(n_samples=0), dict(sigma=-1.0)):
        with pytest.raises(ValueError):
            IMLE(pick_min, **bad)
    assert LOSSES["imle"] is IMLE and LOSSES["aimle"] is AIMLE


# ---------------------------------------------------------------------- side by side with PyEPO
@pytest.fixture(scope="module")
def pyepo_sp():
    """PyEPO's shortest-path model beside ours on the same instance, predictions, truths."""
    pyepo = pytest.importorskip("pyepo")
    from _learn_helpers import SHORTEST_PATH
    from pyepo.model.omo import shortestPathModel

    import dfl_dsl as dfl
    from dfl_dsl.generators import shortest_path
    from dfl_dsl.learn.oracle import Oracle

    data = shortest_path(6, 5, (5, 5), 4, 0.5, 135)
    inst = dfl.load(SHORTEST_PATH).bind(data.instance)
    c = torch.as_tensor(data.targets["cost"], dtype=torch.float64)
    cp = torch.as_tensor(np.random.default_rng(0).normal(1.0, 0.6, c.shape))
    w = torch.as_tensor(Oracle(inst).solve_theta(c).w)
    return pyepo, shortestPathModel(grid=(5, 5), solver="appsi_highs"), inst, cp, c, w


def _pyepo_side(fn, cp, w):
    """PyEPO's documented use: the module's smoothed decision, nn.L1Loss against w*."""
    leaf = cp.clone().requires_grad_()
    loss = torch.nn.L1Loss()(fn(leaf), w)
    loss.backward()
    return float(loss.detach()), leaf.grad


def _our_side(fn, cp, c, w):
    leaf = cp.clone().requires_grad_()
    loss = fn(leaf, c, w, None)
    loss.backward()
    return float(loss.detach()), leaf.grad


def test_the_noise_is_pyepos_bit_for_bit(pyepo_sp):
    # PyEPO draws in the predictions' dtype, float32 for a torch model: the same seed, the
    # same draws, step after step
    pyepo, _, inst, cp, _, _ = pyepo_sp
    ours = IMLE(inst, n_samples=3).perturb
    theirs = pyepo.func.utils.sumGammaDistribution(kappa=5)
    for _ in range(3):
        drawn = theirs.sample(size=(len(cp), 3, cp.shape[1]), device="cpu", dtype=torch.float32)
        assert torch.equal(ours.sample(cp).float(), drawn)


@pytest.mark.parametrize("two_sides", [False, True])
@pytest.mark.parametrize("name", ["imle", "aimle"])
def test_side_by_side_with_pyepo(pyepo_sp, name, two_sides):
    # the same seed draws the same Sum-of-Gamma noise (PyEPO in these float64 predictions'
    # dtype, ours in float32: equal to 1e-8), so both sides solve the same perturbed costs;
    # three steps also compare AI-MLE's α, carried between steps
    pyepo, optmodel, inst, cp, c, w = pyepo_sp
    settings = dict(n_samples=3, sigma=1.0, two_sides=two_sides)
    if name == "imle":
        theirs = pyepo.func.implicitMLE(optmodel, lambd=10.0, **settings)
        ours = IMLE(inst, lambd=10.0, **settings)
    else:
        theirs = pyepo.func.adaptiveImplicitMLE(optmodel, **settings)
        ours = AIMLE(inst, **settings)
    for step in range(3):
        shifted = cp + 0.3 * step
        their_loss, their_grad = _pyepo_side(theirs, shifted, w)
        our_loss, our_grad = _our_side(ours, shifted, c, w)
        assert our_loss == pytest.approx(their_loss, abs=1e-12)
        np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), atol=1e-9)
        assert float(our_grad.abs().sum()) > 0  # a comparison of two zero gradients says little
        if name == "aimle":
            assert ours.alpha == pytest.approx(theirs.alpha)


@pytest.mark.parametrize("name", ["imle", "aimle"])
def test_side_by_side_with_pyepo_on_a_maximize_model(name):
    # PyEPO perturbs and shifts a maximize model's own costs (its sign flips the direction);
    # ours works in the minimized space. Both sides answer from the knapsack's listed feasible
    # points (exact: a MIP solver's gap tolerance would part them on near-ties)
    pyepo = pytest.importorskip("pyepo")
    from dfl_dsl.learn.oracle import Oracle

    inst, optmodel, _, c, w, cp = knapsack_side_by_side(8)
    settings = dict(n_samples=3, sigma=1.0)
    theirs = (pyepo.func.implicitMLE(optmodel, lambd=10.0, **settings) if name == "imle"
              else pyepo.func.adaptiveImplicitMLE(optmodel, **settings))
    ours = LOSSES[name](Oracle(inst, method="enumerate"), **settings)
    their_loss, their_grad = _pyepo_side(theirs, cp, w)
    our_loss, our_grad = _our_side(ours, cp, c, w)
    assert our_loss == pytest.approx(their_loss, abs=1e-12)
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), atol=1e-9)
    assert float(our_grad.abs().sum()) > 0
