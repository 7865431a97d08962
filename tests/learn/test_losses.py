"""The decision-focused losses against hand-computed values on "pick the cheapest of three
items", for the minimize model and the same problem written as maximize; gradchecks at generic
points; DBB and DPO gradients that lower the true regret."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import QP_COST, QP_COST_HAT, QP_MIN

from dfl_dsl.errors import DflError
from dfl_dsl.learn.loss_registry import LOSSES
from dfl_dsl.learn.losses import DBB, DPO, MSE, NCE, PFYL, SPOPlus
from dfl_dsl.learn.metrics import regret, true_objective
from dfl_dsl.learn.oracle import Oracle

COST = [1.0, 2.0, 3.0]  # the truth: item 1 is cheapest, z* = 1 (in cost terms)
COST_HAT = [3.0, 1.0, 2.0]  # the prediction picks item 2: regret 1
E1, E2, E3 = np.eye(3)


def _t(values) -> torch.Tensor:
    return torch.tensor(np.atleast_2d(values), dtype=torch.float64)


def _case(pick):
    """(θ̂ leaf, θ, w*, z*) for the hand-made sample, in the formulation's own params."""
    theta_hat = _t(pick.data(COST_HAT)).requires_grad_()
    theta = _t(pick.data(COST))
    oracle = Oracle(pick.inst)
    w_true = oracle.solve_theta(theta).w
    np.testing.assert_allclose(w_true, [E1], atol=1e-9)
    z_true = true_objective(oracle, theta.numpy(), w_true)
    return theta_hat, theta, torch.as_tensor(w_true), torch.as_tensor(z_true)


def _loss_and_grad(loss_fn, pick):
    theta_hat, theta, w, z = _case(pick)
    loss = loss_fn(theta_hat, theta, w, z)
    loss.backward()
    return float(loss.detach()), theta_hat.grad[0].numpy() / pick.dtheta  # gradient in cost terms


def _fixed_noise(loss_fn, noise):
    """Replace the loss's Gaussian draws by `noise` (S × n), the same for every sample."""
    fixed = torch.tensor(noise, dtype=torch.float64)
    loss_fn.perturb.sample = lambda c_hat: fixed.expand(c_hat.shape[0], *fixed.shape).to(c_hat)


# ---------------------------------------------------------------------- hand-computed values
def test_the_three_formulations_agree_on_decisions_and_regret(pick):
    oracle = Oracle(pick.inst)
    theta_hat, theta = pick.data([COST_HAT]), pick.data([COST])
    np.testing.assert_allclose(oracle.solve_theta(theta_hat).w, [E2], atol=1e-9)
    np.testing.assert_allclose(regret(oracle, theta_hat, theta), [1.0])
    # the model's own optimal value: 1 (min), -1 (max of -c), 4 - 1 = 3 (profit)
    z = true_objective(oracle, theta, np.array([E1]))
    assert z[0] == pytest.approx({"min": 1.0, "max": -1.0, "profit": 3.0}[pick.name])


def test_spo_plus_by_hand(pick):
    # 2ĉ - c = [5, 0, 1] -> w = e2, min = 0; ℓ = -0 + 2ĉᵀw* - z* = 2·3 - 1 = 5
    # ∂ℓ/∂ĉ = 2(w* - w(2ĉ - c)) = 2(e1 - e2)
    loss, grad = _loss_and_grad(SPOPlus(pick.inst), pick)
    assert loss == pytest.approx(5.0)
    np.testing.assert_allclose(grad, [2.0, -2.0, 0.0])


def test_spo_plus_is_zero_at_the_truth_for_a_clear_winner(pick):
    theta = _t(pick.data(COST))
    w = torch.as_tensor(Oracle(pick.inst).solve_theta(theta).w)
    # 2c - c = c: min_w cᵀw = z*, so ℓ = -z* + 2z* - z* = 0
    assert float(SPOPlus(pick.inst)(theta, theta, w, None)) == pytest.approx(0.0)


def test_pfyl_by_hand_with_a_known_noise(pick):
    # σ = 0.5, Z1 = 0 -> ĉ = [3, 1, 2] picks e2 (value 1); Z2 = [-6, 0, 0] -> [0, 1, 2] picks e1
    # (value 0). ℓ = ĉᵀw* - mean(values) = 3 - 0.5 = 2.5; ∂ℓ/∂ĉ = w* - mean(w) = e1 - (e1+e2)/2
    loss_fn = PFYL(pick.inst, n_samples=2, sigma=0.5)
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    theta_hat, theta, w, z = _case(pick)
    loss = loss_fn(theta_hat, theta, w, z)
    loss.backward()
    # the profit form's canonical costs are ĉ - 4: the values shift by -4 on both sides
    assert float(loss.detach()) == pytest.approx(2.5)
    np.testing.assert_allclose(theta_hat.grad[0].numpy() / pick.dtheta, [0.5, -0.5, 0.0])


def test_pfyl_draws_its_noise_from_its_seeded_generator(pick_min):
    seed, sigma, samples = 7, 0.8, 4
    noise = torch.randn((1, samples, 3), generator=torch.Generator().manual_seed(seed),
                        dtype=torch.float32)[0].double().numpy()
    c_hat = np.array(COST_HAT)
    perturbed = c_hat + sigma * noise
    values = perturbed.min(axis=1)
    expected_w = np.eye(3)[perturbed.argmin(axis=1)].mean(0)
    loss_fn = PFYL(pick_min, n_samples=samples, sigma=sigma, seed=seed)
    theta_hat = _t(c_hat).requires_grad_()
    loss = loss_fn(theta_hat, _t(COST), _t(E1), None)
    loss.backward()
    assert float(loss.detach()) == pytest.approx(c_hat[0] - values.mean())
    np.testing.assert_allclose(theta_hat.grad[0].numpy(), E1 - expected_w)


def test_dbb_by_hand(pick):
    # forward: w(ĉ) = e2, regret cᵀe2 - z* = 1; backward (λ = 10): ∂ℓ/∂w = c, so
    # w(ĉ + λc) = w([13, 21, 32]) = e1 and ∂ℓ/∂ĉ = -(w(ĉ) - w(ĉ + λc))/λ = (e1 - e2)/10
    loss, grad = _loss_and_grad(DBB(pick.inst, lambd=10.0), pick)
    assert loss == pytest.approx(1.0)
    np.testing.assert_allclose(grad, [0.1, -0.1, 0.0])


def test_dpo_by_hand_without_the_baseline(pick):
    # Z1 = 0 -> e2, Z2 = [-6, 0, 0] (σ = 0.5) -> e1: w̄ = (e1 + e2)/2, ℓ = cᵀw̄ - z* = 1.5 - 1
    # Stein: ∂ℓ/∂ĉ = Σ_s (c̃ᵀw_s) Z_s / (Sσ), c̃ the canonical true cost: c (min, max) or c - 4
    # (profit). = (2·0 + 1·[-6, 0, 0]) / 1 = [-6, 0, 0], or (1 - 4)·[-6, 0, 0] = [18, 0, 0]: the
    # estimator is shift-invariant only in expectation (E[Z] = 0), not for a fixed noise.
    loss_fn = DPO(pick.inst, n_samples=2, sigma=0.5, variance_reduction=False)
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert loss == pytest.approx(0.5)
    shift = 4.0 if pick.name == "profit" else 0.0
    np.testing.assert_allclose(grad, [-6.0 * (1.0 - shift), 0.0, 0.0])


def test_dpo_by_hand_with_the_leave_one_out_baseline(pick):
    # the same draws; rewards r = c̃ᵀw_s = [2, 1] (min, max) or [-2, -3] (profit), centred and
    # scaled by S/(S-1) = 2: [1, -1] in every formulation (a shift of c̃ adds the same to both
    # rewards and cancels). ∂ℓ/∂ĉ = (1·Z1 - 1·Z2) / (Sσ) = [6, 0, 0]: item 1 gets cheaper, as
    # it should, where the estimate without the baseline pushed it dearer for the min form
    loss_fn = DPO(pick.inst, n_samples=2, sigma=0.5)
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert loss == pytest.approx(0.5)
    np.testing.assert_allclose(grad, [6.0, 0.0, 0.0])


@pytest.mark.parametrize(("task_loss", "value"), [("l1", 1 / 3), ("mse", 1 / 6)])
def test_dpo_task_losses_on_the_smoothed_decision(pick, task_loss, value):
    # w̄ - w* = (e1 + e2)/2 - e1 = [-1/2, 1/2, 0]: l1 = (1/2 + 1/2)/3, mse = (1/4 + 1/4)/3.
    # ∂ℓ/∂w̄ = sign/3 (l1) = 2(w̄ - w*)/3 (mse) = [-1/3, 1/3, 0]; rewards gᵀw_s = [1/3, -1/3],
    # with the baseline [2/3, -2/3]; ∂ℓ/∂ĉ = (2/3·Z1 - 2/3·Z2)/(2·0.5) = [4, 0, 0]
    loss_fn = DPO(pick.inst, n_samples=2, sigma=0.5, task_loss=task_loss)
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert loss == pytest.approx(value)
    np.testing.assert_allclose(grad, [4.0, 0.0, 0.0])


def test_dpo_answers_from_the_pool_without_solving(pick):
    # pool {e1, e3}, solve_ratio 0: Z1 = 0 -> ĉ = [3, 1, 2] -> e3 (the pool lacks e2);
    # Z2 -> [0, 1, 2] -> e1. w̄ = (e1 + e3)/2, ℓ = (1 + 3)/2 - 1 = 1, and no solver call
    loss_fn = DPO(pick.inst, n_samples=2, sigma=0.5, solve_ratio=0.0)
    loss_fn.seed_pool(np.stack([E1, E3]))
    _fixed_noise(loss_fn, [[0.0, 0.0, 0.0], [-6.0, 0.0, 0.0]])
    calls = loss_fn.oracle.solver_calls
    loss, _ = _loss_and_grad(loss_fn, pick)
    assert loss == pytest.approx(1.0)
    assert loss_fn.oracle.solver_calls == calls


def test_dpo_matches_pyepo_on_identical_inputs(sp_inst, sp_generated):
    """PyEPO's perturbedOpt (its default leave-one-out baseline) under the same regret task
    loss on float32 predictions, as a torch model makes them: the same draws (both seed a
    torch generator with 135 and draw float32), the same smoothed decisions and gradient."""
    pyepo = pytest.importorskip("pyepo")
    from pyepo.model.omo import shortestPathModel

    rng = np.random.default_rng(0)
    c = torch.as_tensor(sp_generated.targets["cost"][:8], dtype=torch.float64)
    c_hat = torch.as_tensor(rng.uniform(0.2, 2.0, c.shape), dtype=torch.float32)
    w = torch.as_tensor(Oracle(sp_inst).solve_theta(c).w)
    grads = []
    for variance_reduction in (True, False):
        ptb = pyepo.func.perturbedOpt(shortestPathModel((5, 5), solver="appsi_highs"),
                                      n_samples=5, sigma=1.0, seed=135,
                                      variance_reduction=variance_reduction)
        theirs = c_hat.clone().requires_grad_()
        loss_theirs = ((ptb(theirs).double() - w) * c).sum(1).mean()
        loss_theirs.backward()
        ours = c_hat.clone().requires_grad_()
        loss_fn = DPO(sp_inst, n_samples=5, sigma=1.0, seed=135,
                      variance_reduction=variance_reduction)
        loss = loss_fn(ours.double(), c, w, None)
        loss.backward()
        assert float(loss.detach()) == pytest.approx(float(loss_theirs.detach()), rel=1e-6)
        # PyEPO computes in float32 (and divides by Sσ + 1e-8)
        assert float(theirs.grad.abs().max()) > 1e-3
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-7)
        grads.append(ours.grad)
    assert not torch.allclose(grads[0], grads[1])  # the option changes the estimate


def test_nce_by_hand_with_a_known_pool(pick):
    # pool {e1, e2, e3}: ℓ = mean_w ĉᵀ(w* - w) = 3 - (3 + 1 + 2)/3 = 1, ∂ℓ/∂ĉ = w* - mean(pool)
    loss_fn = NCE(pick.inst, solve_ratio=0.0)
    loss_fn.seed_pool(np.eye(3))
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert loss == pytest.approx(1.0)
    np.testing.assert_allclose(grad, E1 - 1 / 3)


def test_nce_grows_its_pool_with_the_predictions_solutions(pick):
    # pool {e1}; solve_ratio 1 adds w(ĉ) = e2: ℓ = 3 - (3 + 1)/2 = 1
    loss_fn = NCE(pick.inst, solve_ratio=1.0)
    loss_fn.seed_pool(E1[None])
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert len(loss_fn.oracle.pool) == 2
    assert loss == pytest.approx(1.0)
    np.testing.assert_allclose(grad, [0.5, -0.5, 0.0])


def test_mse_by_hand(pick):
    # ((3-1)² + (1-2)² + (2-3)²)/3 = 2; ∂/∂θ̂ = 2(θ̂ - θ)/3 (the profit form negates both)
    loss, grad = _loss_and_grad(MSE(pick.inst), pick)
    assert loss == pytest.approx(2.0)
    np.testing.assert_allclose(grad * pick.dtheta, 2 * (np.array(pick.data(COST_HAT))
                                                      - pick.data(COST)) / 3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_reductions(pick_min, reduction):
    theta_hat = _t([COST_HAT, COST])
    theta = _t([COST, COST])
    w = _t([E1, E1])
    loss = SPOPlus(pick_min, reduction=reduction)(theta_hat, theta, w, None)
    expected = np.array([5.0, 0.0])
    want = {"mean": expected.mean(), "sum": expected.sum(), "none": expected}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), want)


def test_bad_options_are_refused(pick_min):
    with pytest.raises(ValueError):
        SPOPlus(pick_min, reduction="max")
    with pytest.raises(ValueError):
        PFYL(pick_min, sigma=0.0)
    with pytest.raises(ValueError):
        DPO(pick_min, n_samples=0)
    with pytest.raises(ValueError, match="solve_ratio"):
        DPO(pick_min, solve_ratio=1.5)
    with pytest.raises(ValueError, match="task_loss"):
        DPO(pick_min, task_loss="l2")
    with pytest.raises(ValueError):
        DBB(pick_min, lambd=0.0)
    # these two were taken: MSE returned unreduced losses, a nan λ passed `lambd <= 0`
    with pytest.raises(ValueError, match="reduction"):
        MSE(pick_min, reduction="avg")
    with pytest.raises(ValueError, match="lambd"):
        DBB(pick_min, lambd=float("nan"))
    with pytest.raises(ValueError):
        NCE(pick_min, solve_ratio=2.0)
    assert set(LOSSES) == {"spo+", "pfyl", "dpo", "dbb", "nce", "mse", "imle", "aimle",
                           "listwise", "pairwise", "pointwise", "cave"}


# ---------------------------------------------------------------------- a convex QP
# x_i² + c_i x_i over [-1, 1]: w(c) = clip(-c/2, -1, 1). The truth c = (1, -4, 0.5) decides
# w* = (-0.5, 1, -0.25); the prediction ĉ = (-1, -1, 0.5) decides ŵ = (0.5, 0.5, -0.25).
@pytest.fixture
def qp():
    inst = bind(QP_MIN, {"I": [1, 2, 3]})
    theta, theta_hat = _t(QP_COST), _t(QP_COST_HAT).requires_grad_()
    oracle = Oracle(inst)
    w = torch.as_tensor(oracle.solve_theta(theta).w)
    return oracle, theta_hat, theta, w


def test_pfyl_on_a_qp_by_hand(qp):
    """With no noise: f(ĉ, w*) - min_w f(ĉ, w) = 0.6875 - (-0.5625) = 1.25 (f = x² + ĉx), the
    gradient w* - ŵ as for an LP."""
    oracle, theta_hat, theta, w = qp
    loss_fn = PFYL(oracle, n_samples=1)
    _fixed_noise(loss_fn, np.zeros((1, 3)))
    loss = loss_fn(theta_hat, theta, w, None)
    loss.backward()
    assert float(loss.detach()) == pytest.approx(1.25, abs=1e-6)
    np.testing.assert_allclose(theta_hat.grad[0].numpy(), [-1.0, 0.5, 0.0], atol=1e-6)


def test_dbb_on_a_qp_by_hand(qp):
    """Regret f(c, ŵ) - f(c, w*) = -1.0625 + 3.3125 = 2.25; ∂ℓ/∂w = c + 2ŵ = (2, -3, 0), so
    with λ = 1 the interpolated decision is w(ĉ + (2, -3, 0)) = w* and ∂ℓ/∂ĉ = w* - ŵ."""
    oracle, theta_hat, theta, w = qp
    loss = DBB(oracle, lambd=1.0)(theta_hat, theta, w, None)
    loss.backward()
    assert float(loss.detach()) == pytest.approx(2.25, abs=1e-6)
    np.testing.assert_allclose(theta_hat.grad[0].numpy(), [-1.0, 0.5, 0.0], atol=1e-6)


def test_dpo_regret_on_a_qp_counts_its_quadratic_part(qp):
    """A smoothed decision with σ → 0 is ŵ: its regret is the QP's 2.25 (cᵀ(ŵ - w*) = 1.5)."""
    oracle, theta_hat, theta, w = qp
    loss_fn = DPO(oracle, n_samples=2, task_loss="regret")
    _fixed_noise(loss_fn, np.zeros((2, 3)))
    assert float(loss_fn(theta_hat, theta, w, None).detach()) == pytest.approx(2.25, abs=1e-6)


@pytest.mark.parametrize("name", ["spo+", "nce", "imle", "listwise", "cave"])
def test_losses_built_on_a_linear_objective_refuse_a_qp_naming_those_that_train_it(qp, name):
    with pytest.raises(DflError, match="needs a linear objective") as info:
        LOSSES[name](qp[0])
    assert info.value.hint == "for a QP train with --loss pfyl | dpo | dbb | mse"
    # the CLI's name of the loss, at the objective (it was the class's name, unlocated)
    assert f"(--loss {name})" in info.value.message and info.value.pos.line > 0


# ---------------------------------------------------------------------- gradcheck
def _generic(inst, rows: int, seed: int):
    """θ̂ and θ at a generic point (no ties), float64, with the true solutions."""
    rng = np.random.default_rng(seed)
    n = Oracle(inst).n_theta
    theta = torch.as_tensor(rng.uniform(1, 3, (rows, n)))
    theta_hat = torch.as_tensor(rng.uniform(1, 3, (rows, n))).requires_grad_()
    w = torch.as_tensor(Oracle(inst).solve_theta(theta).w)
    return theta_hat, theta, w


def test_gradcheck_mse(pick):
    theta_hat, theta, w = _generic(pick.inst, 2, 0)
    loss_fn = MSE(pick.inst)
    assert torch.autograd.gradcheck(lambda t: loss_fn(t, theta, w, None), (theta_hat,))


def test_gradcheck_spo_plus(pick, sp_inst):
    for inst in (pick.inst, sp_inst):
        theta_hat, theta, w = _generic(inst, 2, 1)
        loss_fn = SPOPlus(inst)
        assert torch.autograd.gradcheck(lambda t, f=loss_fn, th=theta, w=w: f(t, th, w, None),
                                        (theta_hat,), atol=1e-6)


def test_gradcheck_pfyl_with_the_perturbation_reseeded(pick, sp_inst):
    for inst in (pick.inst, sp_inst):
        theta_hat, theta, w = _generic(inst, 2, 2)
        loss_fn = PFYL(inst, n_samples=3, sigma=0.5)

        def f(t, loss_fn=loss_fn, theta=theta, w=w):
            loss_fn.perturb.generator.manual_seed(0)
            return loss_fn(t, theta, w, None)

        assert torch.autograd.gradcheck(f, (theta_hat,), atol=1e-6)


# ---------------------------------------------------------------------- DBB / DPO directions
def _true_regret(pick, c_hat: np.ndarray) -> float:
    """Regret (in cost terms) of deciding with the canonical costs `c_hat`."""
    oracle = Oracle(pick.inst)
    w = oracle.solve(c_hat).w[0]
    return float(np.dot(COST, w) - 1.0)


# DPO's Stein estimate descends the *smoothed* regret; at [3, 1, 2] that means making item 3
# (the worst) less likely, not item 1 more, so it is checked where items 1 and 2 compete.
@pytest.mark.parametrize(("make", "cost_hat"), [
    (lambda inst: DBB(inst, lambd=10.0), COST_HAT),
    (lambda inst: DPO(inst, n_samples=1000, sigma=1.0, seed=3), [1.6, 1.4, 3.0]),
], ids=["dbb", "dpo"])
def test_backward_is_finite_and_descends_the_true_regret(pick, make, cost_hat):
    loss_fn = make(pick.inst)
    theta_hat = _t(pick.data(cost_hat)).requires_grad_()
    _, theta, w, z = _case(pick)
    c_hat = loss_fn.oracle.costs(theta_hat.detach())
    loss_fn(theta_hat, theta, w, z).backward()
    grad_c = theta_hat.grad / pick.dtheta  # ∂ℓ/∂ĉ in the canonical (minimized) space
    assert torch.isfinite(grad_c).all()
    # the item it should pick (1) gets cheaper, the one it picks (2) dearer
    assert grad_c[0, 0] > 0 > grad_c[0, 1]
    before = _true_regret(pick, c_hat.numpy())
    assert before == pytest.approx(1.0)
    after = [_true_regret(pick, (c_hat - step * grad_c).numpy())
             for step in (0.5, 1, 2, 5, 10, 20, 50)]
    assert min(after) < before


@pytest.mark.parametrize("name", ["spo+", "pfyl", "dpo", "dbb", "nce", "mse"])
def test_a_batch_size_mismatch_names_every_shape(sp_inst, sp_generated, name):
    """θ̂ for 4 samples against the truth of 3 failed inside the loss with torch's 'The size
    of tensor a (4) must match ...'; each loss now names the arguments' shapes."""
    theta = torch.as_tensor(sp_generated.targets["cost"][:3], dtype=torch.float64)
    oracle = Oracle(sp_inst)
    w = torch.as_tensor(oracle.solve_theta(theta.numpy()).w)
    z = (oracle.costs(theta) * w).sum(-1)
    loss = LOSSES[name](sp_inst)
    with pytest.raises(ValueError, match=r"theta_hat \[4, 40\], theta \[3, 40\], w_true "
                                         r"\[3, \d+\], z_true \[3\]"):
        loss(torch.zeros(4, 40, dtype=torch.float64), theta, w, z)
    with pytest.raises(ValueError, match=r"theta_hat \[3, 39\], theta \[3, 40\]"):
        loss(theta=theta, theta_hat=theta[:, :39], w_true=w, z_true=z)
