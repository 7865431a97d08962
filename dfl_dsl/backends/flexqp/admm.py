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

The relaxation is always feasible, not always bounded: when the objective falls without bound
along a direction that no row's violation grows on, the iterates diverge and OSQP's certificate
of dual infeasibility (Stellato et al. 2020, §3.4) on the step between two checks ends the
problem with status `unbounded`; when it falls along a direction that some rows' violation does
grow on, but by less than μ, μ is too small for exactness and grows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from .kkt import (
    Factors,
    Schur,
    SchurFactor,
    SchurFactors,
    SchurPolish,
    corrected,
    guess_active,
    polish_on,
)
from .linsys import LinearSystem
from .problem import QPBatch

# the tightest residual tolerance float32 iterates reach reliably (its rounding is ~1.2e-7
# relative); float64's defaults (1e-8, 1e-9) are below it, and such a solve never converges
FLOAT32_EPS = 1e-5


@dataclass
class Settings:
    eps_abs: float = 1e-6
    eps_rel: float = 1e-6
    max_iter: int = 20_000
    # residuals are tested every few iterations (fewer device syncs and ops); 6 puts the
    # second check, where the Schur path polishes everything, after the policy's first update
    check_every: int = 6
    sigma: float = 1e-6
    rho: float = 0.1  # OSQP's default; equality rows get 1e3 × (OSQP's rule)
    alpha: float = 1.6
    mu: float = 1e3  # penalty on the row-scaled constraints
    mu_growth: float = 10.0
    mu_max: float = 1e10
    # OSQP's tolerance of its certificate of dual infeasibility (eps_dual_inf, §3.4)
    eps_unbounded: float = 1e-4
    time_limit: float | None = None
    # OSQP's polishing (§4.2), tried while iterating: at a check where a running problem's
    # guess of its active rows (from its iterates) has nearly settled, solve its QP on those
    # rows exactly, correct the guess by up to `polish_rounds` − 1 active-set steps, and stop
    # the problem once a polished point passes the residual test (kkt.polish_on, kkt.corrected)
    polish: bool = True
    polish_changes: int = 2  # try when at most this many rows changed their guess in a check
    polish_rounds: int = 4
    # on the Schur path (shared definite P: a round is cheap) every running problem is tried
    # once at the second check whatever its guess, with more rounds (beyond the papers)
    schur_rounds: int = 8
    # the guess: row i at its upper bound when yᵢ > 0 and uᵢ − aᵢᵀx < w·yᵢ (OSQP's guess is
    # w = 1 with the slack z in place of Ax; measured here, w = 0.3 with Ax needs fewer
    # active-set corrections — beyond the papers)
    guess_weight: float = 0.3


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
    # per problem: optimal | relaxed | unbounded; at an iteration or time limit, feasible
    # (the point meets the rows within tolerance) or time_limit (it may not)
    status: list[str]
    iterations: torch.Tensor  # (B,) iterations each problem needed
    violation: torch.Tensor  # (B, m) dist(Ax, [l, u]) in the original units
    r_prim: torch.Tensor
    r_dual: torch.Tensor
    mu: torch.Tensor  # final μ (original units)
    extra: dict = field(default_factory=dict)


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
    def of(cls, qp: QPBatch, s: State, Ax: torch.Tensor | None = None) -> Residuals:
        """The residuals at s (`Ax`: A s.x when already at hand)."""
        Ax = qp.Ax(s.x) if Ax is None else Ax
        Px, ATy = qp.Px(s.x), qp.ATy(s.y)
        prim = (Ax - s.z).abs()
        # the scales as one max over the concatenated vectors: fewer ops, the same values
        scale_dual = torch.cat([Px, ATy, qp.q], -1).abs().amax(-1)
        return cls(Ax, prim, prim.amax(-1), (Px + qp.q + ATy).abs().amax(-1),
                   torch.cat([Ax, s.z], -1).abs().amax(-1), scale_dual)

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


@dataclass
class Running:
    """The problems still iterating: their (row-scaled) data, ADMM state and parameters, the
    factorization for their ρ (None: to be made), where each sits in the full batch, and the
    total violation at its last μ increase."""

    qp: QPBatch
    state: State
    params: Params
    lin: LinearSystem | None
    index: torch.Tensor
    last_violation: torch.Tensor
    guess: torch.Tensor | None = None  # (B, m) int8 active-row guess at the last check
    tried: torch.Tensor | None = None  # (B,) polished once without success
    warm: bool = False  # started from an earlier solution (its first guess is worth a try)
    x_check: torch.Tensor | None = None  # (B, n) x at the last check

    def select(self, keep: torch.Tensor) -> Running:
        return Running(self.qp.select(keep), self.state.select(keep), self.params.select(keep),
                       self.lin.select(keep) if self.lin is not None else None,
                       self.index[keep], self.last_violation[keep],
                       self.guess[keep] if self.guess is not None else None,
                       self.tried[keep] if self.tried is not None else None, self.warm,
                       self.x_check[keep] if self.x_check is not None else None)


@dataclass
class Outcome:
    """Per problem of the full batch: the final state, μ, iterations, and status flags."""

    state: State
    mu: torch.Tensor
    iterations: torch.Tensor
    done: torch.Tensor
    relaxed: torch.Tensor
    unbounded: torch.Tensor
    polished: int = 0
    factors: Factors | SchurFactors | None = None  # polishing's, for the backward pass

    @classmethod
    def empty(cls, like: State, mu: torch.Tensor, max_iter: int) -> Outcome:
        B, device = like.x.shape[0], like.x.device
        flags = torch.zeros(B, dtype=torch.bool, device=device)
        return cls(State(torch.empty_like(like.x), torch.empty_like(like.z),
                         torch.empty_like(like.y)), torch.empty_like(mu),
                   torch.full((B,), max_iter, dtype=torch.long, device=device), flags,
                   flags.clone(), flags.clone())

    def store(self, run: Running, rows, it: int | None = None, relaxed=None) -> None:
        at = run.index[rows]
        out, s = self.state, run.state
        out.x[at], out.z[at], out.y[at] = s.x[rows], s.z[rows], s.y[rows]
        self.mu[at] = run.params.mu[rows]
        if it is not None:
            self.done[at] = True
            self.iterations[at] = it
            self.relaxed[at] = relaxed


@torch.no_grad()
def solve(qp: QPBatch, policy=None, settings: Settings | None = None,
          warm: State | None = None, work: dict | None = None) -> Result:
    """Solve a batch to OSQP's tolerances, raising μ on rows whose duals saturate it.

    `policy` sets ρ, μ, α (None: the fixed OSQP-like parameters); `warm` is a State in the
    original units (x, z = Ax, y) from an earlier solve of similar problems. Problems leave the
    batch as they finish, so the batch costs the sum of its problems' iterations, not B × the
    slowest one's. `work`: a dict of buffers kept across calls (see LinearSystem)."""
    s = settings or Settings()
    if qp.n == 0:
        return _no_columns(qp, s)
    start = time.perf_counter()
    full, D = qp.row_scaled()
    state = initial_state(full, warm)
    if warm is not None:  # to the scaled rows: z̃ = D z, ỹ = y / D
        state = State(state.x, state.z * D, state.y / D)
    params = initial_params(full, s)
    if policy is not None:
        params = policy.initial(full, params)
    work = {} if work is None else work
    run = Running(full, state, params, None, torch.arange(qp.batch, device=qp.q.device),
                  torch.full((qp.batch,), float("inf"), dtype=qp.q.dtype, device=qp.q.device),
                  warm=warm is not None)
    out = Outcome.empty(state, params.mu, s.max_iter)
    schur = Schur.of(full, work) if s.polish else None
    if s.polish:
        out.factors = (Factors(work, qp.batch, qp.n, qp.m, qp.q) if schur is None
                       else SchurFactors(qp.batch, qp.m, qp.q))
    every = getattr(policy, "every", None)
    it = 0
    while it < s.max_iter:
        if run.lin is None:  # ρ changed: factor for the problems still running
            run.lin = LinearSystem(run.qp, run.params.rho, s.sigma, work)
        run.state = step(run.qp, run.state, run.params, run.lin, s.sigma)
        it += 1
        timed_out = s.time_limit is not None and time.perf_counter() - start > s.time_limit
        check = not it % s.check_every or it == s.max_iter or timed_out
        update = bool(every) and it % every == 0
        if not (check or update):
            continue
        res = Residuals.of(run.qp, run.state)
        if check:
            keep = _check(run, res, out, it, policy is not None, s, work, schur)
            if run.x_check is not None and (keep is None or bool(keep.any())):
                keep = _unbounded(run, out, it, s, keep)
            run.x_check = run.state.x
            if keep is not None:
                if not bool(keep.any()):
                    break
                run, res = run.select(keep), Residuals(*(t[keep] for t in res))
            if timed_out:
                break
        if update:
            run.params = policy.update(run.qp, run.state, run.params, s, res)
            run.lin = None
    if not bool(out.done.all()):  # iteration or time limit: the points reached so far
        out.store(run, slice(None))
        out.iterations[run.index] = it
    x, z, y = out.state.x, out.state.z, out.state.y
    res = Residuals.of(full, out.state)
    status = _statuses(out, full, res, s)
    return Result(x=x, z=z / D, y=y * D, status=status, iterations=out.iterations,
                  violation=qp.violation(x), r_prim=res.r_prim, r_dual=res.r_dual,
                  mu=out.mu * D, extra={"total_iterations": it, "polished": out.polished,
                                        "factors": out.factors})


def _statuses(out: Outcome, full: QPBatch, res: Residuals, s: Settings) -> list[str]:
    """Each problem's status word. One a limit stopped is `feasible` only if its point meets
    every row within the primal tolerance; else `time_limit`, which claims nothing of it."""
    e_p, _ = res.tolerances(s.eps_abs, s.eps_rel)
    meets = (full.violation(out.state.x, res.Ax) <= e_p.unsqueeze(-1)).all(-1).tolist()
    return ["unbounded" if u else "relaxed" if r else "optimal" if d
            else "feasible" if ok else "time_limit"
            for d, r, u, ok in zip(out.done.tolist(), out.relaxed.tolist(),
                                   out.unbounded.tolist(), meets, strict=True)]


def _no_columns(qp: QPBatch, s: Settings) -> Result:
    """A batch without variables (a model whose sets are all empty): the empty point is the
    only point, and each row reads 0 ∈ [l, u]. It is optimal with zero duals, or `relaxed`
    where a row's bounds exclude 0 (no other point violates less). Nothing to iterate — and
    the iterations' reductions over the columns would be over nothing."""
    zero = torch.zeros_like(qp.lo)
    violation = qp.violation(qp.q, zero)
    status = ["relaxed" if r else "optimal" for r in (violation > s.eps_abs).any(-1).tolist()]
    none = zero.new_zeros(qp.batch)
    return Result(x=torch.zeros_like(qp.q), z=zero, y=zero.clone(), status=status,
                  iterations=torch.zeros(qp.batch, dtype=torch.long, device=zero.device),
                  violation=violation, r_prim=none, r_dual=none, mu=torch.full_like(zero, s.mu),
                  extra={"total_iterations": 0, "polished": 0, "factors": None})


def _check(run: Running, res: Residuals, out: Outcome, it: int, adaptive: bool,
           s: Settings, work: dict, schur: Schur | None = None) -> torch.Tensor | None:
    """The convergence test, μ's growth on violated rows, polishing; finished problems go to
    `out`. Returns the mask of problems that keep running (None: all of them)."""
    p = run.params
    e_p, e_d = res.tolerances(s.eps_abs, s.eps_rel)
    conv = (res.r_prim <= e_p) & (res.r_dual <= e_d)
    viol = run.qp.violation(run.state.x, res.Ax)
    violated = viol > e_p.unsqueeze(-1)
    any_violated = bool(violated.any())  # rarely: the μ bookkeeping below runs only then
    pinned = None
    if any_violated:  # a row violated at its full μ: the relaxation is at work there
        pinned = (violated & (run.state.y.abs() >= 0.99 * p.mu)).any(-1, keepdim=True)
    if adaptive and pinned is not None:  # one μ for all rows from now on
        p.mu = torch.where(pinned, p.mu_ref, p.mu)
        fresh = pinned & p.mu_free
        if fresh.any():  # and the (feasible-trained) policy's ρ is reset to the start's
            p.rho = torch.where(fresh, initial_params(run.qp, s).rho, p.rho)
            run.lin = None
        p.mu_free = p.mu_free & ~pinned
    if s.polish:
        first = run.guess is None  # a warm start's first try doesn't use up the eager one
        polished = _polish(run, _settling(run, conv, pinned, s, res.Ax, schur is not None),
                           s, work, out.factors, schur, res.Ax, mark=not first)
        if polished is not None:  # exact on its active rows: nothing violated
            conv = conv | polished
            violated = violated & ~polished.unsqueeze(-1)
            out.polished += int(polished.sum())
    if not bool(conv.any()):
        return None
    has = violated.any(-1)
    bump = torch.zeros_like(conv)
    if any_violated:
        total = viol.sum(-1)
        # settled: the violation no longer falls as μ grows (an infeasible QP's least
        # violation), or μ can't grow
        settled = has & ((total >= 0.99 * run.last_violation - e_p)
                         | (p.mu_ref >= s.mu_max).any(-1))
        bump = conv & has & ~settled
        if bump.any():
            _grow_mu(p, bump, s)
            run.last_violation = torch.where(bump, total, run.last_violation)
    finished = conv & ~bump
    if not bool(finished.any()):
        return None
    out.store(run, finished, it, has[finished])
    return ~finished


def _grow_mu(p: Params, grow: torch.Tensor, s: Settings) -> None:
    """μ ×`mu_growth` (up to `mu_max`) on the problems `grow` (B,), one μ for all their rows
    from now on."""
    grow = grow.unsqueeze(-1)
    factor = torch.where(grow, s.mu_growth, 1.0).to(p.mu.dtype)
    p.mu_ref = (p.mu_ref * factor).clamp(max=s.mu_max)
    p.mu = torch.where(grow, p.mu_ref, p.mu)
    p.mu_free = p.mu_free & ~grow


def _unbounded(run: Running, out: Outcome, it: int, s: Settings,
               live: torch.Tensor | None) -> torch.Tensor | None:
    """OSQP's certificate of dual infeasibility (Stellato et al. 2020, §3.4) on the step δx the
    iterates took since the last check (it tends to the direction along which they diverge;
    every condition scales with ‖δx‖, so a step of several iterations serves as well as one):

        ‖Pδx‖∞ ≤ ε‖δx‖∞,   qᵀδx < −ε‖δx‖∞,   Aδx within ε‖δx‖∞ of the recession cone of [l, u]

    (0 on a row with both bounds, ≥ 0 with a lower bound only, ≤ 0 with an upper bound only).
    Then the objective falls without bound along δx while no row's violation grows: the QP is
    unbounded — and an infeasible one is unbounded on its points of least violation, so it has
    no `relaxed` answer either. The problems so certified go to `out`. When instead only the
    relaxed objective falls along δx, qᵀδx + Σᵢ μᵢ dist(aᵢᵀδx, cone) < −ε‖δx‖∞ (its recession
    slope), the rows that leave the cone don't weigh enough: μ grows, as when a violated row's
    dual sits at μ. Of the problems `live` (None: all), returns those that keep running (None:
    all of them)."""
    qp, dx = run.qp, run.state.x - run.x_check
    tol = s.eps_unbounded * dx.abs().amax(-1)
    slope = (qp.q * dx).sum(-1)
    falls = (slope < -tol) & (qp.Px(dx).abs().amax(-1) <= tol)
    if live is not None:
        falls = falls & live
    if not bool(falls.any()):  # (normal problems: one sync, a few ops)
        return live
    Adx = qp.Ax(dx)
    gap = Adx.clamp(min=0) * torch.isfinite(qp.hi) + (-Adx).clamp(min=0) * torch.isfinite(qp.lo)
    unbounded = falls & (gap.amax(-1) <= tol)
    short = falls & ~unbounded & (slope + (run.params.mu * gap).sum(-1) < -tol)
    if bool(short.any()):
        _grow_mu(run.params, short, s)
    if not bool(unbounded.any()):
        return live
    out.store(run, unbounded, it, False)
    out.unbounded[run.index[unbounded]] = True
    return ~unbounded if live is None else live & ~unbounded


def _settling(run: Running, conv: torch.Tensor, pinned: torch.Tensor | None,
              s: Settings, Ax: torch.Tensor, eager: bool = False) -> torch.Tensor:
    """The problems worth polishing: not converged, no row pinned at its μ (the relaxation at
    work: polishing finds feasible points only), and a guess of the active rows that changed in
    at most `polish_changes` rows since the last check (a guess still moving is rarely right,
    and every attempt costs a factorization) — or, when `eager` (cheap rounds), any problem
    not tried yet, from the second check on (from the first when warm-started)."""
    upper, lower = guess_active(run.qp, Ax, run.state.y, s.guess_weight)
    guess = upper.to(torch.int8) - lower.to(torch.int8)
    if run.guess is None:
        run.guess = guess
        if not (eager and run.warm):
            return torch.zeros_like(conv)
        settling = torch.ones_like(conv)  # warm-started: its first guess is a good one
    else:
        settling = (guess != run.guess).sum(-1) <= s.polish_changes
        run.guess = guess
    if eager:
        settling = settling | (~run.tried if run.tried is not None else True)
    settling = settling & ~conv
    return settling if pinned is None else settling & ~pinned.squeeze(-1)


def _polish(run: Running, candidates: torch.Tensor, s: Settings, work: dict,
            factors: Factors | SchurFactors, schur: Schur | None, Ax: torch.Tensor,
            mark: bool = True) -> torch.Tensor | None:
    """Polish the `candidates` from the active rows their iterates show, with up to
    `polish_rounds` − 1 (`schur_rounds` − 1 on the Schur path) active-set corrections (a
    primal-dual active-set method on the guess); a problem whose polished point passes OSQP's
    test takes it as its state (and its factorization goes to `factors`). Returns which
    problems did (None: none).

    A problem that passes keeps its rows (its next round repeats its solve) while the others
    are corrected; the passed ones are written back and leave the sub-batch only once they are
    at least half of it, or at the end: at these sizes an indexing op costs about as much as
    solving a passed problem again."""
    if not bool(candidates.any()):
        return None
    at = candidates.nonzero().squeeze(1)
    sub, mu = run.qp.select(at), run.params.mu[at]
    upper, lower = guess_active(sub, Ax[at], run.state.y[at], s.guess_weight)
    polished = torch.zeros_like(candidates)
    # the lean Schur rounds in float64; in float32 the general ones (which refine)
    fast = (SchurPolish(schur, sub, mu, s.eps_abs, s.eps_rel)
            if schur is not None and schur.exact else None)
    rounds = s.schur_rounds if schur is not None else s.polish_rounds
    if mark:  # tried (those that pass leave the batch anyway)
        tried = run.tried if run.tried is not None else torch.zeros_like(candidates)
        run.tried = tried.index_fill_(0, at, True)
    for r in range(rounds):
        got = fast.round(upper, lower) if fast is not None else None
        if got is not None:
            p, ok, e_p = got
        else:
            if fast is not None:  # a Gram submatrix didn't factor: the reduced KKT's path
                fast = schur = None
            p = polish_on(sub, upper, lower, mu, work=work.setdefault("polish", {}),
                          schur=schur)
            res = Residuals.of(sub, State(p.x, p.z, p.y), p.Ax)
            e_p, e_d = res.tolerances(s.eps_abs, s.eps_rel)
            ok = (res.r_prim <= e_p) & (res.r_dual <= e_d)
        work["polish_factorizations"] = work.get("polish_factorizations", 0) + len(at)
        passed = int(ok.sum())
        last = r + 1 == rounds or passed == len(ok)
        if passed and (last or 2 * passed >= len(ok)):  # write back, and compact
            good = at[ok]
            run.state.x[good], run.state.z[good], run.state.y[good] = p.x[ok], p.z[ok], p.y[ok]
            polished[good] = True
            if isinstance(p.lin, SchurFactor):
                if isinstance(factors, SchurFactors):
                    factors.put(run.index[good], p.lin.select(ok), p.active[ok])
            elif isinstance(factors, Factors):  # (not after a fall back from the Schur path)
                factors.put(run.index[good], p.lin.factor_rows(len(ok))[ok], p.active[ok])
            if last:
                break
            new_upper, new_lower = corrected(sub, upper, lower, p, e_p)
            left = ~ok
            at, sub, mu = at[left], sub.select(left), mu[left]
            upper, lower = new_upper[left], new_lower[left]
            fast = fast.select(left) if fast is not None else None
        elif last:
            break
        else:  # the passed ones keep their rows
            new_upper, new_lower = corrected(sub, upper, lower, p, e_p)
            hold = ok.unsqueeze(-1)
            upper = torch.where(hold, upper, new_upper)
            lower = torch.where(hold, lower, new_lower)
    return polished if bool(polished.any()) else None
