"""The learning-to-rank losses against hand-computed values on "pick the cheapest of three
items" with the pool {e1, e2, e3} (each formulation), the pool growing with the predictions'
solutions, and side by side with PyEPO 2.2.7's listwise / pairwise / pointwise LTR on identical
predictions and pools (shortest path 5×5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_losses import COST, COST_HAT, E1, _loss_and_grad

from dfl_dsl.learn.losses import LOSSES
from dfl_dsl.learn.losses_ranking import ListwiseLTR, PairwiseLTR, PointwiseLTR

C, C_HAT = np.array(COST), np.array(COST_HAT)


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def _with_pool(cls, inst, pool=None, solve_ratio=0.0):
    pool = np.eye(3) if pool is None else pool
    loss_fn = cls(inst, solve_ratio=solve_ratio)
    loss_fn.seed_pool(pool)
    return loss_fn


def test_listwise_by_hand(pick):
    # pool = the unit vectors, so the objectives are the costs themselves (the profit form's
    # canonical costs shift all three by -4: softmax doesn't see it). q = softmax(-c),
    # p = softmax(-ĉ): ℓ = -Σ q log p, ∂ℓ/∂ĉ = Σ_w (q_w - p_w) w = q - p
    q, p = _softmax(-C), _softmax(-C_HAT)
    loss, grad = _loss_and_grad(_with_pool(ListwiseLTR, pick.inst), pick)
    assert loss == pytest.approx(-(q * np.log(p)).sum())
    # q = [.6652, .2447, .0900], log p = [-2.4076, -.4076, -1.4076]
    assert loss == pytest.approx(1.8281, abs=1e-4)
    np.testing.assert_allclose(grad, q - p)


def test_pairwise_by_hand(pick):
    # best under c: e1 (ĉ-objective 3); hinges max(0, 3 - [3, 1, 2]) = [0, 2, 1]: ℓ = 3/2;
    # ∂ℓ/∂ĉ = ((e1 - e2) + (e1 - e3))/2 = [1, -1/2, -1/2]
    loss, grad = _loss_and_grad(_with_pool(PairwiseLTR, pick.inst), pick)
    assert loss == pytest.approx(1.5)
    np.testing.assert_allclose(grad, [1.0, -0.5, -0.5])


def test_pointwise_by_hand(pick):
    # (c - ĉ)ᵀw over the pool: [-2, 1, 1]; ℓ = mean of squares = 2;
    # ∂ℓ/∂ĉ = -(2/3) Σ_w ((c - ĉ)ᵀw) w = -(2/3)[-2, 1, 1]
    loss, grad = _loss_and_grad(_with_pool(PointwiseLTR, pick.inst), pick)
    assert loss == pytest.approx(2.0)
    np.testing.assert_allclose(grad, [4 / 3, -2 / 3, -2 / 3])


def test_the_pool_grows_with_the_predictions_solutions(pick):
    # pool {e1}; solve_ratio 1 adds w(ĉ) = e2. Pairwise: one pair, max(0, 3 - 1) = 2
    loss_fn = _with_pool(PairwiseLTR, pick.inst, E1[None], solve_ratio=1.0)
    loss, grad = _loss_and_grad(loss_fn, pick)
    assert len(loss_fn.oracle.pool) == 2
    assert loss == pytest.approx(2.0)
    np.testing.assert_allclose(grad, [1.0, -1.0, 0.0])


def test_registered_and_checked(pick_min):
    assert (LOSSES["listwise"], LOSSES["pairwise"], LOSSES["pointwise"]) == (
        ListwiseLTR, PairwiseLTR, PointwiseLTR)
    with pytest.raises(ValueError):
        ListwiseLTR(pick_min, solve_ratio=1.5)


# ---------------------------------------------------------------------- side by side with PyEPO
@pytest.fixture(scope="module")
def pyepo_sp():
    pyepo = pytest.importorskip("pyepo")
    from _learn_helpers import SHORTEST_PATH
    from pyepo.model.omo import shortestPathModel

    import dfl_dsl as dfl
    from dfl_dsl.generators import shortest_path
    from dfl_dsl.learn.oracle import Oracle

    data = shortest_path(40, 5, (5, 5), 4, 0.5, 135)
    inst = dfl.load(SHORTEST_PATH).bind(data.instance)
    c = torch.as_tensor(data.targets["cost"], dtype=torch.float64)
    w = torch.as_tensor(Oracle(inst).solve_theta(c).w)
    cp = torch.as_tensor(np.random.default_rng(1).normal(1.0, 0.6, (8, c.shape[1])))
    optmodel = shortestPathModel(grid=(5, 5), solver="appsi_highs")
    dataset = pyepo.data.dataset.optDataset(optmodel, data.features, c.numpy())
    np.testing.assert_allclose(dataset.sols.numpy(), w.numpy(), atol=1e-6)  # the same optima
    return pyepo, optmodel, dataset, inst, cp, c[:8], w


@pytest.mark.parametrize("solve_ratio", [0.0, 1.0])
@pytest.mark.parametrize(("name", "theirs"), [("listwise", "lsLTR"),
                                              ("pairwise", "prLTR"),
                                              ("pointwise", "ptLTR")])
def test_side_by_side_with_pyepo(pyepo_sp, name, theirs, solve_ratio):
    # both pools start from the 40 true solutions; with solve_ratio 1 both add the 8
    # predictions' solutions (the same LP optima) before scoring
    pyepo, optmodel, dataset, inst, cp, c, w = pyepo_sp
    their_fn = getattr(pyepo.func, theirs)(optmodel, solve_ratio=solve_ratio, dataset=dataset)
    their_fn.solpool = their_fn.solpool.double()  # (float32 from the dataset)
    our_fn = LOSSES[name](inst, solve_ratio=solve_ratio)
    our_fn.seed_pool(w.numpy())
    their_leaf, our_leaf = cp.clone().requires_grad_(), cp.clone().requires_grad_()
    their_loss = their_fn(their_leaf, c)
    our_loss = our_fn(our_leaf, c, w[:8], None)
    their_loss.backward()
    our_loss.backward()
    assert len(our_fn.oracle.pool) == len(their_fn.solpool) > 0
    assert float(our_loss.detach()) == pytest.approx(float(their_loss.detach()), rel=1e-9)
    np.testing.assert_allclose(our_leaf.grad.numpy(), their_leaf.grad.numpy(), atol=1e-9)
    assert float(our_leaf.grad.abs().sum()) > 0


@pytest.mark.parametrize("name", ["listwise", "pairwise", "pointwise"])
def test_side_by_side_with_pyepo_on_a_maximize_model(name):
    # the knapsack (maximize): PyEPO ranks by the model's objective, ours by the minimized
    # one; pools from 40 true solutions, grown by the 8 predictions' (exact on both sides)
    pyepo = pytest.importorskip("pyepo")
    from _learn_helpers import knapsack_side_by_side

    from dfl_dsl.learn.oracle import Oracle

    inst, optmodel, features, c, w, cp = knapsack_side_by_side(40)
    dataset = pyepo.data.dataset.optDataset(optmodel, features, c.numpy())
    cls = {"listwise": pyepo.func.lsLTR, "pairwise": pyepo.func.prLTR,
           "pointwise": pyepo.func.ptLTR}[name]
    their_fn = cls(optmodel, solve_ratio=1.0, dataset=dataset)
    their_fn.solpool = their_fn.solpool.double()
    our_fn = LOSSES[name](Oracle(inst, method="enumerate"), solve_ratio=1.0)
    our_fn.seed_pool(w.numpy())
    their_leaf, our_leaf = cp.clone().requires_grad_(), cp.clone().requires_grad_()
    their_loss, our_loss = their_fn(their_leaf, c[:8]), our_fn(our_leaf, c[:8], w[:8], None)
    their_loss.backward()
    our_loss.backward()
    assert len(our_fn.oracle.pool) == len(their_fn.solpool)
    assert float(our_loss.detach()) == pytest.approx(float(their_loss.detach()), rel=1e-12)
    np.testing.assert_allclose(our_leaf.grad.numpy(), their_leaf.grad.numpy(), atol=1e-12)
    assert float(our_leaf.grad.abs().sum()) > 0
