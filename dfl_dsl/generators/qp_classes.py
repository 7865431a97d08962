"""Batches of QPs from the OSQP benchmark classes (Stellato et al., "OSQP: an operator splitting
solver for quadratic programs", Math. Prog. Comp. 2020, Appendix A; the same classes train and
test Deep FlexQP, arXiv 2512.01565 §5): random QP, equality QP, portfolio, lasso, Huber fitting,
SVM and optimal control, each in the box form ½xᵀPx + qᵀx, lo <= Ax <= hi.

Every generator takes a size (the class's natural dimension), a batch size and a seed, draws the
whole batch with array calls, and returns a `QPSet` with per-problem arrays (B, ...), or with one
P and A for the batch when `shared=True` (only the vectors then vary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DENSITY = 0.15  # OSQP's benchmark density for random matrices


@dataclass
class QPSet:
    P: np.ndarray  # (B, n, n), or (n, n) when shared
    q: np.ndarray  # (B, n)
    A: np.ndarray  # (B, m, n), or (m, n) when shared
    lo: np.ndarray  # (B, m)
    hi: np.ndarray  # (B, m)
    name: str = ""

    @property
    def n(self) -> int:
        return self.q.shape[1]

    @property
    def m(self) -> int:
        return self.lo.shape[1]

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.P, self.q, self.A, self.lo, self.hi


def _sparse_normal(rng, shape, density=DENSITY):
    return rng.standard_normal(shape) * (rng.random(shape) < density)


def _psd(rng, B, n, reg=1e-2):
    M = _sparse_normal(rng, (B, n, n))
    return M @ M.transpose(0, 2, 1) + reg * np.eye(n)


def _blocks(*blocks) -> np.ndarray:
    """Batched block-diagonal matrix from (B, k, k) blocks."""
    B = blocks[0].shape[0]
    size = sum(b.shape[1] for b in blocks)
    out = np.zeros((B, size, size))
    at = 0
    for b in blocks:
        k = b.shape[1]
        out[:, at : at + k, at : at + k] = b
        at += k
    return out


def random_qp(n: int, batch: int = 1, seed: int = 0, *, m: int | None = None,
              shared: bool = False) -> QPSet:
    """P = MMᵀ + 0.01 I, A sparse normal, lo = −U(0,1), hi = U(0,1), q normal (m = 2n)."""
    rng = np.random.default_rng(seed)
    m = 2 * n if m is None else m
    count = 1 if shared else batch
    P = _psd(rng, count, n)
    A = _sparse_normal(rng, (count, m, n))
    if shared:
        P, A = P[0], A[0]
    lo = -rng.random((batch, m))
    hi = rng.random((batch, m))
    return QPSet(P, rng.standard_normal((batch, n)), A, lo, hi, "random_qp")


def eq_qp(n: int, batch: int = 1, seed: int = 0) -> QPSet:
    """Equality-constrained QP: m = n/2 rows Ax = b."""
    rng = np.random.default_rng(seed)
    m = max(1, n // 2)
    A = _sparse_normal(rng, (batch, m, n)) + np.eye(m, n)  # full row rank
    b = rng.standard_normal((batch, m))
    return QPSet(_psd(rng, batch, n), rng.standard_normal((batch, n)), A, b, b.copy(), "eq_qp")


def portfolio(n: int, batch: int = 1, seed: int = 0, gamma: float = 1.0) -> QPSet:
    """Factor-model portfolio over n assets, k = n/10 factors: variables (x, y = Fᵀx),
    min xᵀDx + yᵀy − μᵀx/γ s.t. y = Fᵀx, Σx = 1, 0 <= x."""
    rng = np.random.default_rng(seed)
    k = max(1, n // 10)
    F = _sparse_normal(rng, (batch, n, k), 0.5)
    D = rng.random((batch, n)) * np.sqrt(k)
    P = _blocks(2 * np.einsum("bi,ij->bij", D, np.eye(n)), 2 * np.broadcast_to(np.eye(k),
                                                                             (batch, k, k)))
    q = np.concatenate([-rng.standard_normal((batch, n)) / gamma, np.zeros((batch, k))], 1)
    A = np.zeros((batch, k + 1 + n, n + k))
    A[:, :k, :n] = F.transpose(0, 2, 1)
    A[:, :k, n:] = -np.eye(k)
    A[:, k, :n] = 1
    A[:, k + 1 :, :n] = np.eye(n)
    lo = np.concatenate([np.zeros((batch, k)), np.ones((batch, 1)), np.zeros((batch, n))], 1)
    hi = np.concatenate([np.zeros((batch, k)), np.ones((batch, 1)),
                         np.full((batch, n), np.inf)], 1)
    return QPSet(P, q, A, lo, hi, "portfolio")


def lasso(n: int, batch: int = 1, seed: int = 0) -> QPSet:
    """min ½‖y‖² + λ1ᵀt s.t. y = Ax − b, −t <= x <= t, over (x, y, t); 2n data rows,
    λ = ‖Aᵀb‖∞ / 5 (OSQP's choice)."""
    rng = np.random.default_rng(seed)
    m = 2 * n
    Ad = _sparse_normal(rng, (batch, m, n))
    v = rng.standard_normal((batch, n)) * (rng.random((batch, n)) < 0.5)
    b = np.einsum("bij,bj->bi", Ad, v) + rng.standard_normal((batch, m))
    lam = np.abs(np.einsum("bij,bi->bj", Ad, b)).max(1, keepdims=True) / 5
    zn = np.zeros((batch, n, n))
    P = _blocks(zn, np.broadcast_to(np.eye(m), (batch, m, m)), zn)
    q = np.concatenate([np.zeros((batch, n + m)), np.broadcast_to(lam, (batch, n))], 1)
    In, Im = np.broadcast_to(np.eye(n), (batch, n, n)), np.broadcast_to(np.eye(m), (batch, m, m))
    A = np.concatenate([
        np.concatenate([Ad, -Im, np.zeros((batch, m, n))], 2),
        np.concatenate([In, np.zeros((batch, n, m)), -In], 2),
        np.concatenate([In, np.zeros((batch, n, m)), In], 2)], 1)
    lo = np.concatenate([b, np.full((batch, n), -np.inf), np.zeros((batch, n))], 1)
    hi = np.concatenate([b, np.zeros((batch, n)), np.full((batch, n), np.inf)], 1)
    return QPSet(P, q, A, lo, hi, "lasso")


def huber(n: int, batch: int = 1, seed: int = 0) -> QPSet:
    """Huber fitting as a QP: min ½uᵀu + 1ᵀ(r + s) s.t. Ax − b − u = r − s, r, s >= 0, over
    (x, u, r, s); 2n data rows, 5% outliers."""
    rng = np.random.default_rng(seed)
    m = 2 * n
    Ad = _sparse_normal(rng, (batch, m, n))
    v = rng.standard_normal((batch, n)) / np.sqrt(n)
    outlier = rng.random((batch, m)) < 0.05
    noise = np.where(outlier, 10 * rng.random((batch, m)), rng.standard_normal((batch, m)) / 4)
    b = np.einsum("bij,bj->bi", Ad, v) + noise
    Im = np.broadcast_to(np.eye(m), (batch, m, m))
    zm = np.zeros((batch, m, m))
    P = _blocks(np.zeros((batch, n, n)), Im, zm, zm)
    q = np.concatenate([np.zeros((batch, n + m)), np.ones((batch, 2 * m))], 1)
    zmn = np.zeros((batch, m, n))
    A = np.concatenate([
        np.concatenate([Ad, -Im, -Im, Im], 2),
        np.concatenate([zmn, zm, Im, zm], 2),
        np.concatenate([zmn, zm, zm, Im], 2)], 1)
    lo = np.concatenate([b, np.zeros((batch, 2 * m))], 1)
    hi = np.concatenate([b, np.full((batch, 2 * m), np.inf)], 1)
    return QPSet(P, q, A, lo, hi, "huber")


def svm(n: int, batch: int = 1, seed: int = 0, lam: float = 1.0) -> QPSet:
    """Soft-margin SVM: min xᵀx + λ1ᵀt s.t. t >= diag(b)Ax + 1, t >= 0, over (x, t); 2n
    samples from two shifted classes."""
    rng = np.random.default_rng(seed)
    m = 2 * n
    labels = np.where(np.arange(m) < m // 2, 1.0, -1.0)
    Ad = _sparse_normal(rng, (batch, m, n)) + labels[None, :, None] / np.sqrt(n)
    Im = np.broadcast_to(np.eye(m), (batch, m, m))
    P = _blocks(2 * np.broadcast_to(np.eye(n), (batch, n, n)), np.zeros((batch, m, m)))
    q = np.concatenate([np.zeros((batch, n)), np.full((batch, m), lam)], 1)
    A = np.concatenate([
        np.concatenate([labels[None, :, None] * Ad, -Im], 2),
        np.concatenate([np.zeros((batch, m, n)), Im], 2)], 1)
    lo = np.concatenate([np.full((batch, m), -np.inf), np.zeros((batch, m))], 1)
    hi = np.concatenate([-np.ones((batch, m)), np.full((batch, m), np.inf)], 1)
    return QPSet(P, q, A, lo, hi, "svm")


def control(nx: int, batch: int = 1, seed: int = 0, horizon: int = 5) -> QPSet:
    """Linear MPC: states x₀..x_T (nx), inputs u₀..u_{T−1} (nu = nx/2), x_{t+1} = A x_t + B u_t,
    x₀ given, |u| <= 1, |x| <= 5; cost Σ xᵀQx + uᵀRu + x_TᵀQ_T x_T."""
    rng = np.random.default_rng(seed)
    nu, T = max(1, nx // 2), horizon
    Ad = np.eye(nx) + 0.1 * rng.standard_normal((batch, nx, nx))
    Bd = rng.standard_normal((batch, nx, nu))
    Q = np.einsum("bi,ij->bij", rng.random((batch, nx)) * 10 * (rng.random((batch, nx)) < 0.7),
                  np.eye(nx))
    R = 0.1 * np.broadcast_to(np.eye(nu), (batch, nu, nu))
    n = (T + 1) * nx + T * nu
    P = _blocks(*([Q] * T), 10 * Q + np.eye(nx), *([R] * T))
    P = 2 * P
    rows = (T + 1) * nx
    A = np.zeros((batch, rows + n, n))
    A[:, :nx, :nx] = np.eye(nx)  # x₀ = x_init
    for t in range(T):  # dynamics, one block row per step (T is small)
        r = (t + 1) * nx
        A[:, r : r + nx, t * nx : (t + 1) * nx] = Ad
        A[:, r : r + nx, (t + 1) * nx : (t + 2) * nx] = -np.eye(nx)
        c = (T + 1) * nx + t * nu
        A[:, r : r + nx, c : c + nu] = Bd
    A[:, rows:, :] = np.eye(n)
    x0 = rng.uniform(-1, 1, (batch, nx))
    lo = np.concatenate([x0, np.zeros((batch, T * nx)), np.full((batch, (T + 1) * nx), -5.0),
                         np.full((batch, T * nu), -1.0)], 1)
    hi = np.concatenate([x0, np.zeros((batch, T * nx)), np.full((batch, (T + 1) * nx), 5.0),
                         np.full((batch, T * nu), 1.0)], 1)
    return QPSet(P, np.zeros((batch, n)), A, lo, hi, "control")


CLASSES = {"random_qp": random_qp, "eq_qp": eq_qp, "portfolio": portfolio, "lasso": lasso,
           "huber": huber, "svm": svm, "control": control}
