"""Batched ADMM on FlexQP's exact L1 relaxation (Alcalde et al., "FlexQP: an always-feasible
QP solver", ICLR 2026, arXiv 2512.01565):

    minimize ½ xᵀPx + qᵀx + Σᵢ μᵢ dist(aᵢᵀx, [lᵢ, uᵢ])

(dist(·, [l, u]) is |aᵢᵀx − bᵢ| on an equality row and (aᵢᵀx − uᵢ)₊ on an inequality: the
μ_E‖Ax−b‖₁ + μ_I‖(Gx−h)₊‖₁ of the paper). It is always feasible, and it is *exact*: once every
μᵢ exceeds the size of the optimal dual |yᵢ*|, a feasible QP gets its true optimum; an
infeasible one gets the point of least (sparse, L1) violation.

The splitting is OSQP's (Stellato et al., Math. Prog. Comp. 2020) with the indicator of [l, u]
replaced by the penalty: a linear-system step in x (the matrix P + σI + Aᵀdiag(ρ)A is factored
once and cached while ρ stays), over-relaxation α, then the proximal step of the penalty on the
slack z = Ax — clipping to [l, u] followed by soft-thresholding of what is left by μ/ρ — and the
dual step. The duals stay in [−μ, μ], which is why |yᵢ| = μᵢ on a violated row tells when μ is
too small: `solve` then raises μ on those rows (×`mu_growth`, warm-started) until the total
violation stops falling (status `relaxed`) or vanishes (status `optimal`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from .problem import QPBatch


@dataclass
class Settings:
    eps_abs: float = 1e-6
    eps_rel: float = 1e-6
    max_iter: int = 20_000
    check_every: int = 5  # residuals are tested every few iterations (fewer device syncs)
    sigma: float = 1e-6
    rho: float = 0.1  # OSQP's default; equality rows get 1e3 × (OSQP's rule)
    alpha: float = 1.6
    mu: float = 1e3  # penalty on the row-scaled constraints
    mu_growth: float = 10.0
    mu_max: float = 1e10
    time_limit: float | None = None


@dataclass
class Params:
    """The ADMM parameters a policy sets: per-constraint ρ and μ, per-problem α. `mu_ref` is
    the μ that `solve` raises for exactness; a policy sets μ within a decade above it (so it
    can't grow μ without bound on an infeasible problem, where the duals chase μ)."""

    rho: torch.Tensor  # (B, m)
    mu: torch.Tensor  # (B, m)
    alpha: torch.Tensor  # (B, 1)
    mu_ref: torch.Tensor  # (B, m)
    # (B, 1): may the policy set μ? Not once a problem showed violated rows: the least *L1*
    # violation needs one μ for every row (unequal μ would minimize a weighted violation)
    mu_free: torch.Tensor

    def select(self, keep: torch.Tensor) -> Params:
        return Params(self.rho[keep], self.mu[keep], self.alpha[keep], self.mu_ref[keep],
                      self.mu_free[keep])


@dataclass
class State:
    x: torch.Tensor  # (B, n)
    z: torch.Tensor  # (B, m)
    y: torch.Tensor  # (B, m)

    def select(self, keep: torch.Tensor) -> State:
        return State(self.x[keep], self.z[keep], self.y[keep])


@dataclass
class Result:
    x: torch.Tensor
    z: torch.Tensor
    y: torch.Tensor  # duals of the original (unscaled) rows: Px + q + Aᵀy = 0
    status: list[str]  # per problem: optimal | relaxed | feasible (iteration/time limit)
    iterations: torch.Tensor  # (B,) iterations each problem needed
    violation: torch.Tensor  # (B, m) dist(Ax, [l, u]) in the original units
    r_prim: torch.Tensor
    r_dual: torch.Tensor
    mu: torch.Tensor  # final μ (original units)
    extra: dict = field(default_factory=dict)


OUTER_LIMIT = 2**25  # entries of the cached row outer products (m × n(n+1)/2) worth keeping


class LinearSystem:
    """(P + σI + Aᵀdiag(ρ)A)⁻¹ by Cholesky: one factor for the batch when P, A and ρ are shared,
    one per problem otherwise.

    `work` (a dict the caller keeps across factorizations, outside autograd) holds the
    per-problem matrices' buffers: the next factorization overwrites them instead of allocating
    — fresh megabyte-sized tensors cost as much in page faults as the factorization itself."""

    def __init__(self, qp: QPBatch, rho: torch.Tensor, sigma: float,
                 work: dict | None = None) -> None:
        n, B = qp.n, qp.batch
        eye = torch.eye(n, dtype=qp.q.dtype, device=qp.q.device)
        self.shared = qp.shared and bool((rho == rho[:1]).all())
        if self.shared:
            M = qp.P + sigma * eye + qp.A.T @ (rho[0, :, None] * qp.A)
            work = None
        elif qp.A.dim() == 2 and qp.m * n * (n + 1) // 2 <= OUTER_LIMIT:
            # shared A, per-problem ρ: Aᵀdiag(ρ)A = Σᵢ ρᵢ aᵢaᵢᵀ is one (B, m) @ (m, n(n+1)/2)
            # product on the lower triangle, written column-major (LAPACK's layout: Cholesky's
            # copy of it is then a straight one). The lower triangle is all that LAPACK reads on
            # the CPU; it is mirrored on a GPU (whose solver makes no such promise through torch)
            # and under autograd (Cholesky's backward takes the matrix as symmetric)
            outer, lower, upper = _row_outer(qp, work)
            base = (qp.P + sigma * eye).flatten(-2)[..., lower]
            if base.dim() == 1:
                tri = torch.addmm(base, rho, outer, out=_buffer(work, "tri", (B, len(lower)), rho))
            else:
                tri = base + rho @ outer
            M = _buffer(work, "M", (B, n * n), rho)
            M = tri.new_empty(B, n * n) if M is None else M
            M = M.index_copy_(1, upper, tri)
            if M.is_cuda or torch.is_grad_enabled():
                M = M.index_copy_(1, lower, tri)
            M = M.view(B, n, n).mT
        else:
            A = qp.A if qp.A.dim() == 3 else qp.A.expand(B, -1, -1)
            M = qp.P + sigma * eye + A.transpose(1, 2) @ (rho.unsqueeze(-1) * A)
        # LAPACK's batched layout is column-major: a buffer in it is factored in place
        self.L = torch.linalg.cholesky(M, out=_buffer(work, "L", (B, n, n), rho, True))

    def select(self, keep: torch.Tensor) -> LinearSystem:
        """The factors of the problems still running."""
        if self.shared:
            return self
        other = object.__new__(LinearSystem)
        other.shared, other.L = False, self.L[keep]
        return other

    def solve(self, rhs: torch.Tensor) -> torch.Tensor:
        if self.shared:
            return torch.cholesky_solve(rhs.T, self.L).T
        # two triangular solves: cholesky_solve copies every factor on each call on the CPU
        w = torch.linalg.solve_triangular(self.L, rhs.unsqueeze(-1), upper=False)
        return torch.linalg.solve_triangular(self.L.mT, w, upper=True).squeeze(-1)


def _row_outer(qp: QPBatch, work: dict | None) -> tuple:
    """qp.row_outer(), remembered in `work` for the next batch with the same A (a layer's
    calls share it; comparing A costs little next to recomputing and faulting in the
    products)."""
    if work is not None and qp._outer is None and "outer" in work:
        A, outer = work["outer"]
        if (A.shape == qp.A.shape and A.dtype == qp.A.dtype and A.device == qp.A.device
                and torch.equal(A, qp.A)):
            qp._outer = outer
    outer = qp.row_outer()
    if work is not None:
        work["outer"] = (qp.A, outer)
    return outer


def _buffer(work: dict | None, key: str, shape: tuple, like: torch.Tensor,
            column_major: bool = False) -> torch.Tensor | None:
    """The first shape[0] rows of the buffer `key` in `work` (allocated at the first call's,
    largest, size); None without `work`."""
    if work is None:
        return None
    buf = work.get(key)
    if (buf is None or buf.shape[0] < shape[0] or buf.shape[1:] != shape[1:]
            or buf.dtype != like.dtype or buf.device != like.device):
        if column_major:
            buf = like.new_empty((shape[0], *shape[:0:-1])).mT
        else:
            buf = like.new_empty(shape)
        work[key] = buf
    return buf[: shape[0]]


def prox_penalty(w: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor,
                 t: torch.Tensor) -> torch.Tensor:
    """prox of t·dist(·, [lo, hi]): move w towards its projection by at most t — the projection
    clipped to [w − t, w + t]. Under autograd the projection is max then min: `torch.clamp`'s
    backward passes no gradient to the bounds of an equality row (lo = hi)."""
    if torch.is_grad_enabled():
        proj = torch.minimum(torch.maximum(w, lo), hi)
    else:
        proj = torch.clamp(w, lo, hi)
    return torch.clamp(proj, w - t, w + t)


def step(qp: QPBatch, s: State, p: Params, lin: LinearSystem, sigma: float) -> State:
    """One over-relaxed ADMM iteration (functional, so unrolling can backpropagate), in fused
    ops: at these sizes each elementwise op costs a good part of the batch's n × n solve."""
    # x̃ = M⁻¹(σx − q + Aᵀ(ρz − y)), the product fused as σx − Aᵀ(y − ρz)
    xt = lin.solve(qp.ATy(torch.addcmul(s.y, p.rho, s.z, value=-1), s.x, beta=sigma, alpha=-1)
                   - qp.q)
    x = torch.lerp(s.x, xt, p.alpha)
    v = torch.lerp(s.z, qp.Ax(xt), p.alpha)
    z = prox_penalty(torch.addcdiv(v, s.y, p.rho), qp.lo, qp.hi, p.mu / p.rho)
    return State(x, z, torch.addcmul(s.y, p.rho, v - z))


class Residuals(NamedTuple):
    """OSQP's primal/dual residuals at a state (∞-norms, per problem) and the parts they are
    made of: the convergence test, the violations and the policy's features share them."""

    Ax: torch.Tensor  # (B, m)
    prim: torch.Tensor  # (B, m) |Ax − z|
    r_prim: torch.Tensor  # (B,) ‖Ax − z‖∞
    r_dual: torch.Tensor  # (B,) ‖Px + q + Aᵀy‖∞
    scale_prim: torch.Tensor  # (B,) max(‖Ax‖∞, ‖z‖∞)
    scale_dual: torch.Tensor  # (B,) max(‖Px‖∞, ‖Aᵀy‖∞, ‖q‖∞)

    @classmethod
    def of(cls, qp: QPBatch, s: State) -> Residuals:
        Ax, Px, ATy = qp.Ax(s.x), qp.Px(s.x), qp.ATy(s.y)
        prim = (Ax - s.z).abs()
        scale_dual = torch.stack([Px.abs().amax(-1), ATy.abs().amax(-1),
                                  qp.q.abs().amax(-1)]).amax(0)
        return cls(Ax, prim, prim.amax(-1), (Px + qp.q + ATy).abs().amax(-1),
                   torch.maximum(Ax.abs().amax(-1), s.z.abs().amax(-1)), scale_dual)

    def tolerances(self, eps_abs: float, eps_rel: float) -> tuple[torch.Tensor, torch.Tensor]:
        """OSQP's (ε_prim, ε_dual) per problem."""
        return eps_abs + eps_rel * self.scale_prim, eps_abs + eps_rel * self.scale_dual


def initial_params(qp: QPBatch, settings: Settings) -> Params:
    """OSQP's per-row ρ (×1e3 on equalities, tiny on free rows), a uniform μ and α."""
    eq = qp.lo == qp.hi
    free = torch.isinf(qp.lo) & torch.isinf(qp.hi)
    rho = torch.full_like(qp.lo, settings.rho)
    rho = torch.where(eq, rho * 1e3, torch.where(free, torch.full_like(rho, 1e-6), rho))
    mu = torch.full_like(qp.lo, settings.mu)
    alpha = torch.full((qp.batch, 1), settings.alpha, dtype=qp.q.dtype, device=qp.q.device)
    free = torch.ones((qp.batch, 1), dtype=torch.bool, device=qp.q.device)
    return Params(rho, mu, alpha, mu, free)


def initial_state(qp: QPBatch, warm: State | None) -> State:
    if warm is not None:
        return State(warm.x.clone(), warm.z.clone(), warm.y.clone())
    zeros = torch.zeros_like
    return State(zeros(qp.q), zeros(qp.lo), zeros(qp.lo))


@torch.no_grad()
def solve(qp: QPBatch, policy=None, settings: Settings | None = None,
          warm: State | None = None, work: dict | None = None) -> Result:
    """Solve a batch to OSQP's tolerances, raising μ on rows whose duals saturate it.

    `policy` sets ρ, μ, α (None: the fixed OSQP-like parameters); `warm` is a State in the
    original units (x, z = Ax, y) from an earlier solve of similar problems. Problems leave the
    batch as they finish, so the batch costs the sum of its problems' iterations, not B × the
    slowest one's. `work`: a dict of buffers kept across calls (see LinearSystem)."""
    s = settings or Settings()
    start = time.perf_counter()
    full, D = qp.row_scaled()
    scaled = full
    state = initial_state(scaled, warm)
    if warm is not None:  # to the scaled rows: z̃ = D z, ỹ = y / D
        state = State(state.x, state.z * D, state.y / D)
    params = initial_params(scaled, s)
    if policy is not None:
        params = policy.initial(scaled, params)
    lin = None
    work = {} if work is None else work
    B = qp.batch
    device = qp.q.device
    out = State(torch.empty_like(state.x), torch.empty_like(state.z), torch.empty_like(state.y))
    out_mu = torch.empty_like(params.mu)
    iterations = torch.full((B,), s.max_iter, dtype=torch.long, device=device)
    relaxed = torch.zeros(B, dtype=torch.bool, device=device)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    index = torch.arange(B, device=device)  # where each problem still running sits in the batch
    last_violation = torch.full((B,), float("inf"), dtype=qp.q.dtype, device=device)
    every = getattr(policy, "every", None)
    it = 0
    while it < s.max_iter:
        if lin is None:  # ρ changed: factor for the problems still running
            lin = LinearSystem(scaled, params.rho, s.sigma, work)
        state = step(scaled, state, params, lin, s.sigma)
        it += 1
        timed_out = s.time_limit is not None and time.perf_counter() - start > s.time_limit
        check = not it % s.check_every or it == s.max_iter or timed_out
        res = Residuals.of(scaled, state) if check else None
        if every and it % every == 0:
            params = policy.update(scaled, state, params, s, res)
            lin = None
        if not check:
            continue
        e_p, e_d = res.tolerances(s.eps_abs, s.eps_rel)
        conv = (res.r_prim <= e_p) & (res.r_dual <= e_d)
        viol = scaled.violation(state.x, res.Ax)
        violated = viol > e_p.unsqueeze(-1)
        any_violated = bool(violated.any())  # rarely: the μ bookkeeping below runs only then
        if policy is not None and any_violated:
            # a row violated at its full μ: one μ for all rows from now on
            pinned = (violated & (state.y.abs() >= 0.99 * params.mu)).any(-1, keepdim=True)
            params.mu = torch.where(pinned, params.mu_ref, params.mu)
            fresh = pinned & params.mu_free
            if fresh.any():  # and the (feasible-trained) policy's ρ is reset to the start's
                params.rho = torch.where(fresh, initial_params(scaled, s).rho, params.rho)
                lin = None
            params.mu_free = params.mu_free & ~pinned
        if conv.any():
            has = violated.any(-1)
            bump = torch.zeros_like(conv)
            if any_violated:
                total = viol.sum(-1)
                # settled: the violation no longer falls as μ grows (an infeasible QP's least
                # violation), or μ can't grow
                settled = has & ((total >= 0.99 * last_violation - e_p)
                                 | (params.mu_ref >= s.mu_max).any(-1))
                bump = conv & has & ~settled
                if bump.any():
                    grow = bump.unsqueeze(-1)
                    factor = torch.where(grow, s.mu_growth, 1.0).to(params.mu.dtype)
                    params.mu_ref = (params.mu_ref * factor).clamp(max=s.mu_max)
                    params.mu = torch.where(grow, params.mu_ref, params.mu)
                    params.mu_free = params.mu_free & ~grow
                    last_violation = torch.where(bump, total, last_violation)
            finished = conv & ~bump
            if finished.any():
                at = index[finished]
                relaxed[at] = has[finished]
                done[at] = True
                iterations[at] = it
                _store(out, out_mu, at, state, params.mu, finished)
                keep = ~finished
                if not keep.any():
                    break
                index, last_violation = index[keep], last_violation[keep]
                scaled, state = scaled.select(keep), state.select(keep)
                params = params.select(keep)
                lin = lin.select(keep) if lin is not None else None
        if timed_out:
            break
    if not bool(done.all()):  # iteration or time limit: the points reached so far
        _store(out, out_mu, index, state, params.mu, slice(None))
    status = ["relaxed" if r else "optimal" if d else "feasible"
              for d, r in zip(done.tolist(), relaxed.tolist(), strict=True)]
    res = Residuals.of(full, out)
    return Result(x=out.x, z=out.z / D, y=out.y * D, status=status,
                  iterations=iterations, violation=qp.violation(out.x), r_prim=res.r_prim,
                  r_dual=res.r_dual, mu=out_mu * D, extra={"total_iterations": it})


def _store(out: State, out_mu: torch.Tensor, at, state: State, mu: torch.Tensor, rows) -> None:
    out.x[at], out.z[at], out.y[at] = state.x[rows], state.z[rows], state.y[rows]
    out_mu[at] = mu[rows]
