"""The active-set KKT system of a QP batch, which polishing (`polishing.polish`) and the implicit
backward (`layer.kkt_gradients`) both solve:

    [[P, A_Sᵀ], [A_S, 0]] [u; v] = [r₁; r₂]       (v = 0 off the active rows S)

as OSQP polishes (Stellato et al., Math. Prog. Comp. 2020, §4.2): the quasi-definite
K̃ = [[P + δI, A_Sᵀ], [A_S, −δI]] reduces to the n × n Cholesky of P + δI + A_SᵀA_S/δ (the ADMM's
own factorization with ρ = 1/δ on S and 0 elsewhere, so it reuses LinearSystem and its buffers),
and iterative refinement against K removes the δ. Cheaper than a dense (n + m) LU of K per
problem, and the same code for a shared and a per-problem A.

When P and A are shared by the batch and P is definite (`Schur.of`), the system is solved by
its Schur complement instead (beyond the papers: a standard reduction, e.g. Nocedal & Wright,
"Numerical Optimization", §16.2): P's factor, H = P⁻¹Aᵀ and the Gram matrix G = A P⁻¹ Aᵀ
(m × m) are formed once and cached across calls, and each problem only gathers the principal
submatrix G[S, S] of its active rows and factors that |S| × |S| matrix — no n × n matrix is
formed or factored per problem.
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
                 lin: LinearSystem | SchurFactor | None = None, schur: Schur | None = None,
                 ) -> tuple[torch.Tensor, torch.Tensor, LinearSystem | SchurFactor]:
    """(u, v) with Pu + Aᵀv = r₁ and A_S u = r₂ on S, v = 0 off S (`active`: (B, m) bool; r₂
    is read on S only), and the factorization it used (None on the Schur path). `rounds`
    refinement rounds at most; with `stop_at_rounding`, fewer once the residual is at rounding
    level (one device sync a round). `work`: LinearSystem's buffers (outside autograd); `lin`: a
    factorization for these rows made earlier (by polishing); `schur`: the batch's shared
    Schur data (`Schur.of`), which solves on the active rows' Gram submatrix instead (in
    float64 without refinement: its δ is negligible)."""
    if schur is not None:
        if schur.exact:  # δ is negligible (float64): a refinement round would change nothing
            rounds = 1
        u, v, f = schur.solve(qp, active, r1, r2, rounds, stop_at_rounding,
                              lin if isinstance(lin, SchurFactor) else None)
        if u is not None:
            return u, v, f
        lin = None
    D = active.to(r1.dtype)
    delta = delta_for(r1.dtype)
    lin = lin if lin is not None else LinearSystem(qp, D / delta, delta, work)
    r2 = D * r2
    u = lin.solve(qp.ATy(r2 / delta, r1))  # the first round from u = v = 0
    v = D * (qp.Ax(u) - r2) / delta
    for _ in range(rounds - 1):
        Pu, ATv = qp.Px(u), qp.ATy(v)
        e1 = r1 - Pu - ATv
        e2 = r2 - D * qp.Ax(u)
        if stop_at_rounding and _at_rounding(e1, e2, r1, Pu, ATv):
            break
        du = lin.solve(qp.ATy(e2 / delta, e1))
        u = u + du
        v = v + D * (qp.Ax(du) - e2) / delta
    return u, v, lin


def _at_rounding(e1, e2, r1, Pu, ATv) -> bool:
    """Whether the residuals (e1, e2) of K[u; v] = [r1; r2] are at rounding level."""
    floor = 100 * torch.finfo(r1.dtype).eps
    return bool(torch.maximum(e1.abs().amax(), e2.abs().amax()) <= floor
                * torch.stack([r1.abs().amax(), Pu.abs().amax(), ATv.abs().amax()]).amax())


# the largest condition number of P the Schur path takes (its solves with P⁻¹ lose about
# cond(P)·eps, which refinement against P itself then removes)
SCHUR_COND = {torch.float64: 1e10, torch.float32: 1e4}
SCHUR_DELTA = {torch.float64: 1e-12, torch.float32: 1e-5}  # relative to G's largest diagonal


class Schur:
    """A shared, definite P and a shared A (row-scaled as the solver works on them): P⁻¹,
    H = P⁻¹Aᵀ (n × m) and G = A P⁻¹ Aᵀ (m × m). The QP on the rows S,

        P u + A_Sᵀ v = r₁,   A_S u = r₂,

    is then (G[S, S] + δI) v_S = A_S P⁻¹ r₁ − r₂ and u = P⁻¹ r₁ − H_S v_S (δ regularizes
    dependent active rows, as OSQP's −δI block does; refinement against the exact system
    removes it). Per problem that is a gather of G[S, S] and an |S| × |S| Cholesky, the
    |S| padded to the batch's largest with identity rows so the batch is one tensor."""

    def __init__(self, P: torch.Tensor, A: torch.Tensor) -> None:
        self.P, self.A = P, A
        m = A.shape[0]
        L = torch.linalg.cholesky(P)
        self.Pinv = torch.cholesky_inverse(L)
        self.H = self.Pinv @ A.T  # (n, m)
        G = A @ self.H
        # δ: a dependent set of active rows still factors; small next to G's diagonal, so a
        # solve without refinement is already exact to ~δ|v| on the active rows
        self.delta = SCHUR_DELTA.get(P.dtype, SCHUR_DELTA[torch.float32]) * float(
            G.diagonal().amax())
        # G + δI, then an identity block: a problem with fewer active rows than the batch's
        # most pads with indices m + j, which gather identity rows (no masking of k × k)
        self.G = torch.eye(2 * m, dtype=P.dtype, device=P.device)
        self.G[:m, :m] = 0.5 * (G + G.T) + self.delta * torch.eye(m, dtype=P.dtype,
                                                                  device=P.device)
        self.exact = P.dtype == torch.float64
        self._buffers: dict[str, torch.Tensor] = {}

    @classmethod
    def of(cls, qp: QPBatch, work: dict | None) -> Schur | None:
        """The Schur data for the batch's shared P and A (remembered in `work` while they stay
        the same), or None: P or A per problem, or P not definite enough (then the
        reduced-KKT path)."""
        if not qp.shared or work is None:
            return None
        cached = work.get("schur")  # (Schur or None, the P and A it was made for)
        if cached is not None and _same(cached[1], qp.P) and _same(cached[2], qp.A):
            return cached[0]
        ev = torch.linalg.eigvalsh(qp.P)
        limit = SCHUR_COND.get(qp.P.dtype, SCHUR_COND[torch.float32])
        ok = bool(ev[0] > 0) and bool(ev[-1] <= limit * ev[0])
        found = cls(qp.P, qp.A) if ok else None
        work["schur"] = (found, qp.P, qp.A)
        return found

    def _scratch(self, name: str, numel: int, dtype: torch.dtype) -> torch.Tensor:
        buf = self._buffers.get(name)
        if buf is None or buf.numel() < numel:
            buf = torch.empty(max(numel, 2 * (0 if buf is None else buf.numel())),
                              dtype=dtype, device=self.G.device)
            self._buffers[name] = buf
        return buf[:numel]

    def factor(self, active: torch.Tensor) -> SchurFactor | None:
        """The Cholesky factors of G[S, S] + δI for each problem's rows S (`active`: (B, m)),
        padded to the batch's largest |S|; None if one isn't numerically definite. The
        factors sit in a buffer that the next call overwrites (outside autograd only)."""
        B, m = active.shape
        counts = active.sum(-1)
        k = max(int(counts.max()), 1)
        # the active rows first (topk of the mask: half an argsort's cost), then padding:
        # slots past a problem's |S| take indices m + j, G's identity block
        idx = torch.topk(active.to(torch.int8), k, dim=-1).indices
        pos = torch.arange(k, device=active.device)
        valid = pos < counts.unsqueeze(-1)
        ext = torch.where(valid, idx, m + pos)
        # into buffers kept across calls: fresh megabyte-sized temporaries cost page faults
        n3 = B * k * k
        flat = torch.add(ext.unsqueeze(-1) * (2 * m), ext.unsqueeze(-2),
                         out=self._scratch("flat", n3, torch.long).view(B, k, k))
        Gs = torch.index_select(self.G.view(-1), 0, flat.view(-1),
                                out=self._scratch("Gs", n3, self.G.dtype)).view(B, k, k)
        L, info = torch.linalg.cholesky_ex(  # LAPACK's column-major layout: no copy
            Gs, out=(self._scratch("L", n3, self.G.dtype).view(B, k, k).mT,
                     self._scratch("info", B, torch.int32)))
        if bool(info.any()):
            return None
        return SchurFactor(ext, valid.to(self.G.dtype), L)

    def solve(self, qp: QPBatch, active: torch.Tensor | None, r1: torch.Tensor,
              r2: torch.Tensor, rounds: int, stop_at_rounding: bool = False,
              factor: SchurFactor | None = None,
              ) -> tuple[torch.Tensor | None, torch.Tensor | None, SchurFactor | None]:
        """(u, v) as `solve_active` defines them, and the factor used (`factor`: one made
        earlier for these rows); (None, None, None) if a Gram submatrix isn't numerically
        definite (the caller then takes the reduced-KKT path)."""
        f = factor if factor is not None else self.factor(active)
        if f is None:
            return None, None, None
        m = r2.shape[1]
        idx = f.ext.clamp(max=m - 1)  # gathers: padding slots read row m − 1, masked by valid
        validf, L = f.valid, f.L
        zeros = r2.new_zeros(r2.shape[0], m + f.ext.shape[1])

        def inner(e1, e2S):  # a solve with the δ-regularized system; v over all m rows
            rS = (torch.gather(e1 @ self.H, 1, idx) - e2S) * validf
            w = torch.linalg.solve_triangular(L, rS.unsqueeze(-1), upper=False)
            vS = torch.linalg.solve_triangular(L.mT, w, upper=True).squeeze(-1)
            v = zeros.scatter(1, f.ext, vS)[:, :m]  # padding lands past m
            return torch.addmm(e1 @ self.Pinv, v, self.H.T, alpha=-1), v

        r2S = torch.gather(r2, 1, idx) * validf
        u, v = inner(r1, r2S)
        for _ in range(rounds - 1):
            Pu, ATv = qp.Px(u), v @ self.A
            e1 = r1 - Pu - ATv
            e2 = r2S - torch.gather(u @ self.A.T, 1, idx) * validf
            if stop_at_rounding and _at_rounding(e1, e2, r1, Pu, ATv):
                break
            du, dv = inner(e1, e2)
            u, v = u + du, v + dv
        return u, v, f


class SchurFactor(NamedTuple):
    """Factors of G[S, S] + δI for a batch: each problem's rows S in its slots (`ext`, m + j
    on padding slots), which slots are real (`valid`, 0/1), and the Cholesky factors."""

    ext: torch.Tensor  # (B, k) long
    valid: torch.Tensor  # (B, k)
    L: torch.Tensor  # (B, k, k)

    def select(self, keep: torch.Tensor) -> SchurFactor:
        return SchurFactor(self.ext[keep], self.valid[keep], self.L[keep])


class SchurFactors:
    """The factors polishing ended with on the Schur path, per problem of a batch, and their
    rows: the backward solves the same system when its active rows are these (then it
    factors nothing). A problem is stored once (a polished problem stops), into buffers
    padded to the largest |S| so far (identity rows past a problem's own)."""

    def __init__(self, batch: int, m: int, like: torch.Tensor) -> None:
        self.batch, self.m = batch, m
        self.active = torch.zeros(batch, m, dtype=torch.bool, device=like.device)
        self.have = torch.zeros(batch, dtype=torch.bool, device=like.device)
        self.factor: SchurFactor | None = None

    def _grow(self, k: int, like: torch.Tensor) -> None:
        old = self.factor
        if old is not None and k <= old.ext.shape[1]:
            return
        K = -(-k // 8) * 8  # rounded up: later pieces are rarely larger by more
        if old is not None:
            K = max(K, old.ext.shape[1])
        pos = torch.arange(K, device=like.device)
        L = like.new_zeros(self.batch, K, K)
        L.diagonal(dim1=-2, dim2=-1).fill_(1.0)
        new = SchurFactor((self.m + pos).repeat(self.batch, 1), like.new_zeros(self.batch, K), L)
        if old is not None:
            j = old.ext.shape[1]
            new.ext[:, :j], new.valid[:, :j], new.L[:, :j, :j] = old
        self.factor = new

    def put(self, at: torch.Tensor, factor: SchurFactor, active: torch.Tensor) -> None:
        self.active[at], self.have[at] = active, True
        k = factor.ext.shape[1]
        self._grow(k, factor.L)
        f = self.factor
        f.ext[at, :k], f.valid[at, :k], f.L[at, :k, :k] = factor

    def lookup(self, active: torch.Tensor, work: dict | None = None) -> SchurFactor | None:
        if not bool(self.have.all()) or not torch.equal(active, self.active):
            return None
        return self.factor


class SchurPolish:
    """OSQP's polish (`polish_on`) and its residual test on the Schur path, for a sub-batch
    whose rows are guessed again and again (the active-set corrections): what doesn't depend
    on the guess — A P⁻¹q, P⁻¹q, ‖q‖∞ — is formed once, and a round is about 75 tensor ops
    instead of the general path's 110 (at these sizes an op's overhead costs about as much as
    its arithmetic)."""

    def __init__(self, schur: Schur, qp: QPBatch, mu: torch.Tensor, eps_abs: float,
                 eps_rel: float) -> None:
        self.schur, self.qp, self.mu = schur, qp, mu
        self.eps_abs, self.eps_rel = eps_abs, eps_rel
        self.qH = qp.q @ schur.H  # A P⁻¹ q
        self.x0 = -(qp.q @ schur.Pinv)
        self.qn = qp.q.abs().amax(-1)
        self.eq = qp.lo == qp.hi

    def select(self, keep: torch.Tensor) -> SchurPolish:
        other = object.__new__(SchurPolish)
        other.schur, other.qp, other.mu = self.schur, self.qp.select(keep), self.mu[keep]
        other.eps_abs, other.eps_rel = self.eps_abs, self.eps_rel
        other.qH, other.x0, other.qn, other.eq = (self.qH[keep], self.x0[keep], self.qn[keep],
                                                  self.eq[keep])
        return other

    def round(self, upper: torch.Tensor, lower: torch.Tensor,
              ) -> tuple[Polished, torch.Tensor, torch.Tensor] | None:
        """The polished point for the rows `upper`, `lower` (and the equalities), whether it
        passes OSQP's test, and ε_prim per problem; None if a Gram submatrix doesn't factor."""
        schur, qp, m = self.schur, self.qp, self.qp.m
        active = upper | lower | self.eq
        b = torch.where(lower, qp.lo, qp.hi)
        f = schur.factor(active)
        if f is None:
            return None
        # (G[S, S] + δI) v_S = −(A_S P⁻¹ q + b_S), x = −P⁻¹q − H_S v_S
        rS = torch.gather(self.qH + b, 1, f.ext.clamp(max=m - 1)) * f.valid
        w = torch.linalg.solve_triangular(f.L, rS.unsqueeze(-1), upper=False)
        vS = torch.linalg.solve_triangular(f.L.mT, w, upper=True).squeeze(-1)
        v = rS.new_zeros(rS.shape[0], m + rS.shape[1]).scatter_(1, f.ext, vS.neg_())[:, :m]
        x = torch.addmm(self.x0, v, schur.H.T, alpha=-1)
        Ax = x @ schur.A.T
        # y in the normal cone (v is 0 off S, so only S's bounds matter there), z the bound
        # on S and Ax clipped elsewhere
        y = torch.clamp(v, torch.where(upper, 0.0, -self.mu), torch.where(lower, 0.0, self.mu))
        z = torch.where(active, b, torch.clamp(Ax, qp.lo, qp.hi))
        Px, ATy = x @ schur.P, y @ schur.A  # P symmetric
        r_prim = (Ax - z).abs().amax(-1)
        r_dual = (Px + ATy + qp.q).abs().amax(-1)
        e_p = torch.cat([Ax, z], -1).abs().amax(-1).mul_(self.eps_rel).add_(self.eps_abs)
        sd = torch.maximum(torch.cat([Px, ATy], -1).abs().amax(-1), self.qn)
        ok = (r_prim <= e_p) & (torch.add(r_dual, sd, alpha=-self.eps_rel) <= self.eps_abs)
        return Polished(x, z, y, v, Ax, active, f), ok, e_p


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a is b or (a.shape == b.shape and a.dtype == b.dtype and a.device == b.device
                      and torch.equal(a, b))


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


def guess_active(qp: QPBatch, Ax: torch.Tensor, y: torch.Tensor, weight: float = 1.0,
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """(upper, lower): the rows guessed at their upper bound (uᵢ − aᵢᵀx < w·yᵢ, a positive
    dual) and at their lower bound (aᵢᵀx − lᵢ < −w·yᵢ). OSQP's guess (Stellato et al. 2020,
    §4.2) is w = 1 with the slack z for Ax; the solver's default, w = 0.3 on Ax, is beyond
    the paper (measured to need fewer corrections, `iterates.Settings.guess_weight`)."""
    upper = (y > 0) & (qp.hi - Ax < weight * y)
    lower = (y < 0) & (Ax - qp.lo < -weight * y)
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
    lin: LinearSystem | SchurFactor


def polish_on(qp: QPBatch, upper: torch.Tensor, lower: torch.Tensor, mu: torch.Tensor,
              rounds: int = 2, work: dict | None = None, schur: Schur | None = None,
              ) -> Polished:
    """OSQP's solution polishing (Stellato et al. 2020, §4.2): solve the QP with the rows
    `upper` held at their upper bound, `lower` at their lower one and every equality row, and
    nothing else. z is the bound on those rows and Ax clipped elsewhere, so OSQP's residual
    test on (x, z, y) decides whether the guess was right (a wrong dual sign or a violated
    inactive row shows up as a residual). A right guess gives a point exact to rounding.
    `schur`: solve on the active rows' Gram submatrix (then `lin` is a SchurFactor)."""
    eq = qp.lo == qp.hi
    active = upper | lower | eq
    b = torch.where(active, torch.where(lower, qp.lo, qp.hi), 0.0)
    x, y_raw, lin = solve_active(qp, active, -qp.q, b, rounds, work, schur=schur)
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
