"""CaVE against hand-computed values on "pick the cheapest of three items" (the normal cone at
w* = e1 is {v : v1 >= v2, v1 >= v3}), its binding normals on a model with inequality rows, its
refusals (non-binary models and solutions), and side by side with PyEPO 2.2.7's CaVE given the
same binding normals (shortest path 5×5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _helpers import bind
from test_losses import COST_HAT, E1, _t

from dfl_dsl.errors import DflError
from dfl_dsl.learn.loss_registry import LOSSES
from dfl_dsl.learn.losses_cave import CaVE, binding_normals, cone_projection

V = -np.array(COST_HAT)  # -ĉ = [-3, -1, -2]


def _loss_and_grad(loss_fn, costs=COST_HAT, w=E1):
    theta_hat = _t(costs).requires_grad_()
    loss = loss_fn(theta_hat, None, _t(w), None)
    loss.backward()
    return float(loss.detach()), theta_hat.grad[0].numpy()


def _cos_and_grad(v, p):
    """1 - cos(v, p) and its gradient in ĉ = -v (p fixed): ∂cos/∂v = p/(|v||p|) - cos·v/|v|²."""
    cos = v @ p / (np.linalg.norm(v) * np.linalg.norm(p))
    return 1 - cos, p / (np.linalg.norm(v) * np.linalg.norm(p)) - cos * v / (v @ v)


def test_binding_normals_by_hand(pick_min):
    # at e1: the equality row both ways, x2 and x3 at their lower bound, x1 at its upper one
    normals = binding_normals(CaVE(pick_min).oracle.form, E1)
    want = {(1, 1, 1), (-1, -1, -1), (0, -1, 0), (0, 0, -1), (1, 0, 0)}
    assert {tuple(r) for r in normals.astype(int)} == want and len(normals) == 5


def test_binding_normals_of_inequality_rows():
    # x + y <= 1 binds at (1, 0), its reverse x + y >= 0 doesn't; 2x + y >= 2 binds (as -a)
    inst = bind("set I; param c{I} : predicted; var x{I} binary; minimize f: sum{i in I} "
                "c[i] * x[i]; s.t. cap: sum{i in I} x[i] <= 1; s.t. need: 2 * x[1] + x[2] >= 2;",
                {"I": [1, 2]})
    normals = binding_normals(CaVE(inst).oracle.form, np.array([1.0, 0.0]))
    assert {tuple(r) for r in normals.astype(int)} == {(1, 1), (-2, -1), (0, -1), (1, 0)}


def test_cave_by_hand_converged(pick_min):
    # the projection of v = [-3, -1, -2] onto {v1 >= v2, v1 >= v3}: p = [-2, -2, -2] (KKT:
    # 2(p - v) = [2, -2, 0] = 2·(e1 - e2), a multiplier 2 >= 0 on v2 <= v1);
    # ℓ = 1 - 12/(√14·√12) = 0.07418. Clarabel stops at its own tolerance (the ±(1, 1, 1)
    # normals make the multipliers non-unique): p to ~1e-4
    p = np.array([-2.0, -2.0, -2.0])
    np.testing.assert_allclose(cone_projection(V, binding_normals(
        CaVE(pick_min).oracle.form, E1), max_iter=50), p, atol=2e-4)
    loss, grad = _loss_and_grad(CaVE(pick_min, max_iter=50))
    want_loss, want_grad = _cos_and_grad(V, p)
    assert loss == pytest.approx(want_loss, abs=1e-6) and loss == pytest.approx(0.07418, abs=1e-5)
    np.testing.assert_allclose(grad, want_grad, atol=1e-4)


def test_cave_in_each_formulation(pick):
    # the maximize forms' minimized costs are c (max of -c) and c - 4 (profit): -ĉ is
    # [-3, -1, -2] or [1, 3, 2], projected onto the same cone: [-2, -2, -2] or [2, 2, 2] —
    # the same angle, ℓ = 0.07418 in all three
    loss_fn = CaVE(pick.inst, max_iter=50)
    theta_hat = _t(pick.data(COST_HAT)).requires_grad_()
    loss = loss_fn(theta_hat, None, _t(E1), None)
    assert float(loss.detach()) == pytest.approx(0.07418, abs=1e-5)


def test_cave_is_zero_inside_the_cone(pick_min):
    # ĉ = [1, 2, 3]: e1 is optimal, -ĉ already in the cone: its own projection
    loss, grad = _loss_and_grad(CaVE(pick_min, max_iter=50), costs=[1.0, 2.0, 3.0])
    assert loss == pytest.approx(0.0, abs=1e-7)
    np.testing.assert_allclose(grad, 0.0, atol=1e-6)


def test_cave_hybrid_by_hand(pick_min):
    # solve_ratio 0: p = 0.8·v/|v| + 0.2·mean(unit normals); the unit normals sum to
    # [1, -1, -1] (the ±(1,1,1)/√3 cancel), so their mean is [0.2, -0.2, -0.2]
    p = 0.8 * V / math.sqrt(14) + 0.2 * np.array([0.2, -0.2, -0.2])
    loss, grad = _loss_and_grad(CaVE(pick_min, solve_ratio=0.0))
    want_loss, want_grad = _cos_and_grad(V, p)
    assert loss == pytest.approx(want_loss) and loss > 0
    np.testing.assert_allclose(grad, want_grad)


def test_cave_refuses_what_is_not_binary(pick_min):
    with pytest.raises(DflError, match="binary linear programs"):
        CaVE(bind("var x in [0, 2]; param c : predicted; minimize f: c * x;", {}))
    with pytest.raises(DflError, match="binary true solutions"):
        _loss_and_grad(CaVE(pick_min), w=[0.5, 0.5, 0.0])
    with pytest.raises(ValueError):
        CaVE(pick_min, max_iter=0)
    assert LOSSES["cave"] is CaVE


def test_cave_refusal_points_at_the_variable_and_names_the_losses_that_can():
    """An assignment LP (x >= 0, no upper bound): the error is at `var x`, names the entry and
    its range, and its hint lists every other LP/MILP loss (it said `spo+, pfyl, ...`)."""
    src = ("set W; param c{W} : predicted;\nvar y{W} binary;\nvar x{W} >= 0;\n"
           "minimize f: sum{w in W} c[w] * (x[w] + y[w]);\n"
           "subject to one: sum{w in W} x[w] == 1;")
    with pytest.raises(DflError) as err:
        CaVE(bind(src, {"W": ["a", "b"]}))
    exc = err.value
    assert (exc.pos.line, exc.pos.column) == (3, 5) and "`x[a]` ranges over [0, inf]" in str(exc)
    assert exc.hint.split("--loss ")[1].split(" | ") == [k for k in LOSSES if k != "cave"]


# ---------------------------------------------------------------------- side by side with PyEPO
@pytest.mark.parametrize("solve_ratio", [1.0, 0.0])
def test_side_by_side_with_pyepo(solve_ratio):
    # PyEPO reads the binding normals from Gurobi (not installed here); given ours, its CaVE+
    # (Clarabel, 3 iterations) and its hybrid branch compute the same loss and gradient. PyEPO
    # returns the projection in float32 (measured differences: 5e-10 in the loss, 2e-10 in the
    # gradient, whose largest entry is 1.8e-3)
    pyepo = pytest.importorskip("pyepo")
    from _learn_helpers import SHORTEST_PATH
    from pyepo.model.omo import shortestPathModel
    from torch.nn.utils.rnn import pad_sequence

    import dfl_dsl as dfl
    from dfl_dsl.generators import shortest_path
    from dfl_dsl.learn.oracle import Oracle

    data = shortest_path(8, 5, (5, 5), 4, 0.5, 135)
    inst = dfl.load(SHORTEST_PATH).bind(data.instance)
    c = torch.as_tensor(data.targets["cost"], dtype=torch.float64)
    w = torch.as_tensor(Oracle(inst).solve_theta(c).w)
    cp = torch.as_tensor(np.random.default_rng(2).normal(1.0, 0.6, c.shape))
    ours = CaVE(inst, solve_ratio=solve_ratio)
    normals = [torch.as_tensor(ours.normals(row)) for row in w.numpy()]
    theirs = pyepo.func.coneAlignedCosine(shortestPathModel(grid=(5, 5), solver="appsi_highs"),
                                          solve_ratio=solve_ratio)
    their_leaf, our_leaf = cp.clone().requires_grad_(), cp.clone().requires_grad_()
    their_loss = theirs(their_leaf, pad_sequence(normals, batch_first=True))
    our_loss = ours(our_leaf, c, w, None)
    their_loss.backward()
    our_loss.backward()
    assert float(our_loss.detach()) == pytest.approx(float(their_loss.detach()), rel=1e-6)
    assert float(our_loss.detach()) > 1e-5  # (measured: 0.0195 CaVE+, 1.1e-4 hybrid)
    scale = float(their_leaf.grad.abs().max())
    np.testing.assert_allclose(our_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-5,
                               atol=1e-6 * scale)


def test_side_by_side_with_pyepo_on_a_maximize_model():
    # the knapsack: PyEPO's CaVE aligns the model's own costs with the cone, ours -ĉ in the
    # minimized space: the same vector
    pyepo = pytest.importorskip("pyepo")
    from _learn_helpers import knapsack_side_by_side
    from torch.nn.utils.rnn import pad_sequence

    inst, optmodel, _, c, w, cp = knapsack_side_by_side(8)
    ours = CaVE(inst)
    normals = [torch.as_tensor(ours.normals(row)) for row in w.numpy()]
    their_leaf, our_leaf = cp.clone().requires_grad_(), cp.clone().requires_grad_()
    their_loss = pyepo.func.coneAlignedCosine(optmodel)(their_leaf,
                                                       pad_sequence(normals, batch_first=True))
    our_loss = ours(our_leaf, c, w, None)
    their_loss.backward()
    our_loss.backward()
    assert float(our_loss.detach()) == pytest.approx(float(their_loss.detach()), rel=1e-6)
    scale = float(their_leaf.grad.abs().max())
    np.testing.assert_allclose(our_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-5,
                               atol=1e-6 * scale)
