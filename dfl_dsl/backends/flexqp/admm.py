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

import torch

from .iterates import (
    Outcome,
    Params,
    Residuals,
    Result,
    Running,
    Settings,
    State,
)
from .kkt import (
    Factors,
    Schur,
    SchurFactors,
)
from .linsys import LinearSystem
from .polishing import polish, settling
from .problem import QPBatch


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
    if qp.n == 0:
        return _no_columns(qp, s)
    start = time.perf_counter()
    full, D = qp.row_scaled()
    work = {} if work is None else work
    run, out, schur = _start(qp, full, D, policy, s, warm, work)
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


def _start(qp: QPBatch, full: QPBatch, D: torch.Tensor, policy, s: Settings,
           warm: State | None, work: dict) -> tuple[Running, Outcome, Schur | None]:
    """The running batch (row-scaled, from `warm` or zero), its empty outcome, and the Schur
    complement polishing uses where it applies."""
    state = initial_state(full, warm)
    if warm is not None:  # to the scaled rows: z̃ = D z, ỹ = y / D
        state = State(state.x, state.z * D, state.y / D)
    params = initial_params(full, s)
    if policy is not None:
        params = policy.initial(full, params)
    run = Running(full, state, params, None, torch.arange(qp.batch, device=qp.q.device),
                  torch.full((qp.batch,), float("inf"), dtype=qp.q.dtype, device=qp.q.device),
                  warm=warm is not None)
    out = Outcome.empty(state, params.mu, s.max_iter)
    schur = Schur.of(full, work) if s.polish else None
    if s.polish:
        out.factors = (Factors(work, qp.batch, qp.n, qp.m, qp.q) if schur is None
                       else SchurFactors(qp.batch, qp.m, qp.q))
    return run, out, schur


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
        polished = polish(run, settling(run, conv, pinned, s, res.Ax, schur is not None),
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


