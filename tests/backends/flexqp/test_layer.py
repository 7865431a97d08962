"""The flexqp layer: implicit (KKT) gradients agree with cvxpylayers on a random QP, with
finite differences when predicted params sit in the row bounds and in A, and unrolling agrees
with the implicit gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind

pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

QP_Q = """param n : int; param m : int; param p : int;
param P[n, n] psd; param q[n] : predicted; param A[m, n]; param u[m]; param G[p, n];
param h[p];
var x[n];
minimize f: 0.5 * quad_form(x, P) + q @ x;
subject to eq: G @ x == h;
subject to ineq: A @ x <= u;
"""


def _random_qp(seed: int, n: int = 8, m: int = 12, p: int = 2) -> dict:
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    A = rng.standard_normal((m, n))
    x0 = rng.standard_normal(n)
    G = rng.standard_normal((p, n))
    return {"n": n, "m": m, "p": p, "P": (M @ M.T / n + 0.1 * np.eye(n)).tolist(),
            "q": rng.standard_normal(n).tolist(), "A": A.tolist(),
            "u": (A @ x0 + rng.uniform(0, 0.5, m) * (rng.random(m) < 0.5)).tolist(),
            "G": G.tolist(), "h": (G @ x0).tolist()}


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def test_gradients_agree_with_cvxpylayers_on_a_random_qp():
    inst = bind(QP_Q, _random_qp(3))
    rng = np.random.default_rng(4)
    q = torch.as_tensor(rng.standard_normal((4, 8))).requires_grad_()
    w = torch.as_tensor(rng.standard_normal((4, 8)))
    ours = inst.layer(backend="flexqp")(q)
    (ours * w).sum().backward()
    g_ours = q.grad.clone()
    q.grad = None
    ref = inst.layer("cvxpylayers")(q)  # SCS at 1e-8
    (ref * w).sum().backward()
    assert _relative(ours.detach(), ref.detach()) < 1e-5
    assert _relative(g_ours, q.grad) < 1e-4


@pytest.mark.parametrize("schur", [True, False])
def test_the_backward_reuses_polishing_factorizations_and_gets_the_same_gradients(schur):
    # shared, definite P: the Schur path (G[S, S] factors); without it, the reduced KKT's
    from dfl_dsl.backends.flexqp import kkt

    inst = bind(QP_Q, _random_qp(6, n=10, m=16))
    rng = np.random.default_rng(7)
    q = torch.as_tensor(rng.standard_normal((5, 10)))
    w = torch.as_tensor(rng.standard_normal((5, 10)))
    grads, hits = [], []
    store = kkt.SchurFactors if schur else kkt.Factors
    lookup, of = store.lookup, kkt.Schur.of
    for reuse in (True, False):
        def spy(self, active, work=None, reuse=reuse):
            found = lookup(self, active, work) if reuse else None
            hits.append(found is not None)
            return found

        store.lookup = spy
        if not schur:
            kkt.Schur.of = classmethod(lambda cls, qp, work: None)
        try:
            qq = q.clone().requires_grad_()
            (inst.layer("flexqp", eps=1e-6)(qq) * w).sum().backward()
        finally:
            store.lookup, kkt.Schur.of = lookup, of
        grads.append(qq.grad)
    assert hits == [True, False]
    assert _relative(grads[0], grads[1]) < 1e-10


def test_the_schur_path_matches_the_reduced_kkt_path():
    # polishing and the backward on G[S, S] (shared definite P) against the n × n reduced KKT
    from dfl_dsl.backends.flexqp import kkt

    inst = bind(QP_Q, _random_qp(8, n=12, m=20))
    rng = np.random.default_rng(9)
    q = torch.as_tensor(rng.standard_normal((6, 12)))
    w = torch.as_tensor(rng.standard_normal((6, 12)))
    out = []
    of = kkt.Schur.of
    for schur in (True, False):
        if not schur:
            kkt.Schur.of = classmethod(lambda cls, qp, work: None)
        try:
            layer = inst.layer("flexqp", eps=1e-6)
            qq = q.clone().requires_grad_()
            x = layer(qq)
            (x * w).sum().backward()
        finally:
            kkt.Schur.of = of
        assert layer.last_result.extra["polished"] > 0
        out.append((x.detach(), qq.grad))
    assert _relative(out[0][0], out[1][0]) < 1e-8
    assert _relative(out[0][1], out[1][1]) < 1e-8


def _finite_difference(layer, theta: torch.Tensor, w: torch.Tensor, h: float = 1e-5):
    grad = torch.zeros_like(theta)
    for j in range(theta.shape[1]):
        e = torch.zeros_like(theta)
        e[:, j] = h
        grad[:, j] = ((layer(theta + e) - layer(theta - e)) * w).sum(-1) / (2 * h)
    return grad


RHS_AND_A = """param n : int; param P[n, n] psd; param c[n]; param b[2] : predicted;
param a[n] : predicted;
var x[n] >= -1;
minimize f: 0.5 * quad_form(x, P) + c @ x;
subject to cap: sum(x) <= b[0];
subject to tilt: a @ x == b[1];
"""


@pytest.mark.parametrize("diff", ["implicit", "unroll"])
def test_gradients_in_row_bounds_and_in_A_match_finite_differences(diff):
    rng = np.random.default_rng(5)
    n = 6
    M = rng.standard_normal((n, n))
    inst = bind(RHS_AND_A, {"n": n, "P": (M @ M.T + np.eye(n)).tolist(),
                            "c": rng.standard_normal(n).tolist()})
    layer = inst.layer("flexqp", diff=diff, eps=1e-10, unroll_iters=300)
    b = torch.as_tensor([[0.5, 0.3], [1.0, -0.2]], dtype=torch.float64).requires_grad_()
    a = torch.as_tensor(rng.uniform(0.5, 1.5, (2, n))).requires_grad_()
    w = torch.as_tensor(rng.standard_normal((2, n)))
    (layer(b=b, a=a) * w).sum().backward()
    with torch.no_grad():
        fd_b = _finite_difference(lambda t: layer(b=t, a=a), b.detach(), w)
        fd_a = _finite_difference(lambda t: layer(b=b, a=t), a.detach(), w)
    tol = 1e-4 if diff == "implicit" else 1e-3  # central differences on a 1e-10 solve
    assert _relative(b.grad, fd_b) < tol
    assert _relative(a.grad, fd_a) < tol


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_layer_runs_on_cuda():
    inst = bind(QP_Q, _random_qp(3))
    q = torch.as_tensor(np.random.default_rng(4).standard_normal((4, 8)))
    cpu = inst.layer("flexqp")(q)
    qc = q.cuda().requires_grad_()
    gpu = inst.layer("flexqp")(qc)
    gpu.sum().backward()
    assert qc.grad.is_cuda and torch.isfinite(qc.grad).all()
    assert _relative(gpu.detach().cpu(), cpu) < 1e-6


def test_a_model_without_variables_gives_empty_decisions_and_no_gradient():
    text = """set I; param c{I} : predicted; param k : predicted; var x{I} >= 0;
              minimize f: sum{i in I} c[i] * x[i]; s.t. r: sum{i in I} x[i] >= k;"""
    layer = bind(text, {"I": [], "c": [], "k": 0}).layer(backend="flexqp")
    k = torch.tensor([0.0, 2.0], dtype=torch.float64, requires_grad=True)
    x = layer(c=torch.zeros(2, 0, dtype=torch.float64), k=k)
    assert x.shape == (2, 0) and layer.last_result.status == ["optimal", "relaxed"]
    x.sum().backward()  # nothing depends on k


def test_an_unbounded_problem_in_the_batch_is_an_error_naming_it():
    from dfl_dsl.errors import DflError

    text = """set I; param c{I} : predicted; var x{I} >= 0;
              minimize f: sum{i in I} c[i] * x[i]; s.t. r: sum{i in I} x[i] >= 1;"""
    layer = bind(text, {"I": [1, 2], "c": [1, 1]}).layer(backend="flexqp")
    c = torch.tensor([[1.0, 2.0], [-1.0, 1.0], [2.0, 1.0]], dtype=torch.float64)
    with pytest.raises(DflError, match=r"1 of the batch's 3 QPs are unbounded \(first: 1\)"):
        layer(c)
    assert layer.last_result.status == ["optimal", "unbounded", "optimal"]
    np.testing.assert_allclose(layer(c[[0, 2]]), [[1.0, 0.0], [0.0, 1.0]], atol=1e-7)


def test_a_float32_layer_defaults_to_a_tolerance_it_can_reach():
    from dfl_dsl.backends.flexqp.iterates import FLOAT32_EPS
    from dfl_dsl.backends.flexqp.layer import FlexQPLayer

    inst = bind(QP_Q, _random_qp(3))
    layer = FlexQPLayer(inst, dtype=torch.float32)
    assert layer.settings.eps_abs == FLOAT32_EPS  # float64's 1e-8 never converged in float32
    q = torch.as_tensor(np.random.default_rng(4).standard_normal((4, 8)), dtype=torch.float32)
    x = layer(q)
    assert layer.last_result.status == ["optimal"] * 4  # converged, not stopped by max_iter
    ref = inst.layer(backend="flexqp")(q.double())
    assert _relative(x.double(), ref) < 1e-3
