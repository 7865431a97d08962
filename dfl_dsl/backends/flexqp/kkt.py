"""The active-set KKT system of a QP batch, which polishing (`admm.polish`) and the implicit
backward (`layer.kkt_gradients`) both solve:

    [[P, A_Sᵀ], [A_S, 0]] [u; v] = [r₁; r₂]       (v = 0 off the active rows S)

as OSQP polishes (Stellato et al., Math. Prog. Comp. 2020, §4.2): the quasi-definite
K̃ = [[P + δI, A_Sᵀ], [A_S, −δI]] reduces to the n × n Cholesky of P + δI + A_SᵀA_S/δ (the ADMM's
own factorization with ρ = 1/δ on S and 0 elsewhere, so it reuses LinearSystem and its buffers),
and iterative refinement against K removes the δ. Cheaper than a dense (n + m) LU of K per
problem, and the same code for a shared and a per-problem A.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .linsys import LinearSystem
from .problem import QPBatch

# δ: small enough that refinement removes it in a few rounds, large enough that P survives
# next to A_SᵀA_S/δ in the working precision (in float32, 1e-7 would drown P in rounding)
DELTA = {torch.float64: 1e-7, torch.float32: 1e-3}


def delta_for(dtype: torch.dtype) -> float:
    return DELTA.get(dtype, 1e-3)


def solve_active(qp: QPBatch, active: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor,
                 rounds: int, work: dict | None = None, stop_at_rounding: bool = False,
                 lin: LinearSystem | None = None,
                 ) -> tuple[torch.Tensor, torch.Tensor, LinearSystem]:
    """(u, v) with Pu + Aᵀv = r₁ and A_S u = r₂ on S, v = 0 off S (`active`: (B, m) bool; r₂
    is read on S only), and the factorization it used. `rounds` refinement rounds at most; with
    `stop_at_rounding`, fewer once the residual is at rounding level (one device sync a round).
    `work`: LinearSystem's buffers (outside autograd); `lin`: a factorization for these rows
    made earlier (by polishing)."""
    D = active.to(r1.dtype)
    delta = delta_for(r1.dtype)
    lin = lin if lin is not None else LinearSystem(qp, D / delta, delta, work)
    r2 = D * r2
    u = lin.solve(qp.ATy(r2 / delta, r1))  # the first round from u = v = 0
    v = D * (qp.Ax(u) - r2) / delta
    floor = 100 * torch.finfo(r1.dtype).eps
    for _ in range(rounds - 1):
        Pu, ATv = qp.Px(u), qp.ATy(v)
        e1 = r1 - Pu - ATv
        e2 = r2 - D * qp.Ax(u)
        if stop_at_rounding and bool(torch.maximum(e1.abs().amax(), e2.abs().amax()) <= floor
                                     * torch.stack([r1.abs().amax(), Pu.abs().amax(),
                                                    ATv.abs().amax()]).amax()):
            break
        du = lin.solve(qp.ATy(e2 / delta, e1))
        u = u + du
        v = v + D * (qp.Ax(du) - e2) / delta
    return u, v, lin


class Factors:
    """The factorizations of P + δI + A_SᵀA_S/δ that polishing ended with, per problem of a
    batch, and their rows S: the implicit backward solves the same system when its active rows
    are the same (it then makes no factorization). `token` tells which solve filled them (the
    buffers are reused by the next one)."""

    def __init__(self, work: dict, batch: int, n: int, m: int, like: torch.Tensor) -> None:
        bufs = work.get("factors")
        if (bufs is None or bufs[0].shape != (batch, n, n) or bufs[0].dtype != like.dtype
                or bufs[0].device != like.device):
            bufs = (like.new_empty(batch, n, n),
                    torch.zeros(batch, m, dtype=torch.bool, device=like.device))
            work["factors"] = bufs
        self.L, self.active = bufs
        self.have = torch.zeros(batch, dtype=torch.bool, device=like.device)
        self.token = object()
        work["factors_token"] = self.token

    def put(self, at: torch.Tensor, L: torch.Tensor, active: torch.Tensor) -> None:
        self.L[at], self.active[at], self.have[at] = L, active, True

    def lookup(self, active: torch.Tensor, work: dict | None) -> LinearSystem | None:
        """The factorization for the rows `active` of every problem, if polishing left it and
        no later solve has overwritten it."""
        if (work is None or work.get("factors_token") is not self.token
                or not bool(self.have.all()) or not torch.equal(active, self.active)):
            return None
        return LinearSystem.from_factor(self.L)


def guess_active(qp: QPBatch, z: torch.Tensor, y: torch.Tensor,
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """(upper, lower): OSQP's guess of the rows at their upper bound (uᵢ − zᵢ < yᵢ, a positive
    dual) and at their lower bound (zᵢ − lᵢ < −yᵢ)."""
    upper = (y > 0) & (qp.hi - z < y)
    lower = (y < 0) & (z - qp.lo < -y)
    return upper, lower


class Polished(NamedTuple):
    """A polished point: (x, z, y) with y in the normal cone of z at [lo, hi] (its sign fixed by
    the bound, |y| <= μ, zero off the active rows), the KKT solve's raw y, Ax, the rows held
    and their factorization."""

    x: torch.Tensor
    z: torch.Tensor
    y: torch.Tensor
    y_raw: torch.Tensor
    Ax: torch.Tensor
    active: torch.Tensor
    lin: LinearSystem


def polish_on(qp: QPBatch, upper: torch.Tensor, lower: torch.Tensor, mu: torch.Tensor,
              rounds: int = 2, work: dict | None = None) -> Polished:
    """OSQP's solution polishing (Stellato et al. 2020, §4.2): solve the QP with the rows
    `upper` held at their upper bound, `lower` at their lower one and every equality row, and
    nothing else. z is the bound on those rows and Ax clipped elsewhere, so OSQP's residual
    test on (x, z, y) decides whether the guess was right (a wrong dual sign or a violated
    inactive row shows up as a residual). A right guess gives a point exact to rounding."""
    eq = qp.lo == qp.hi
    active = upper | lower | eq
    b = torch.where(active, torch.where(lower, qp.lo, qp.hi), 0.0)
    x, y_raw, lin = solve_active(qp, active, -qp.q, b, rounds, work)
    zero = torch.zeros_like(mu)
    y = torch.clamp(y_raw, torch.where(lower | eq, -mu, zero), torch.where(upper | eq, mu, zero))
    Ax = qp.Ax(x)
    z = torch.where(active, b, torch.clamp(Ax, qp.lo, qp.hi))
    return Polished(x, z, y, y_raw, Ax, active, lin)


def corrected(qp: QPBatch, upper: torch.Tensor, lower: torch.Tensor, p: Polished,
              tol: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The next guess after a polish that failed the test, by a primal-dual active-set step
    (Hintermüller, Ito & Kunisch, SIAM J. Optim. 2002): rows whose dual came out with the wrong
    sign leave, inactive rows violated by more than `tol` (per problem) join at the bound they
    cross. From ADMM's guess, one or two such steps usually reach the optimal active set."""
    tol = tol.unsqueeze(-1)
    upper = (upper & (p.y_raw > 0)) | (~lower & (p.Ax > qp.hi + tol))
    lower = (lower & (p.y_raw < 0)) | (~upper & (p.Ax < qp.lo - tol))
    return upper, lower
