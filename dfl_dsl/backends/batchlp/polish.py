"""From an approximate primal–dual pair to an exact, certified optimum — batched.

A first-order method stops near a solution; an oracle for SPO+ or the regret must return an
optimal point, to the last digits a simplex solver would give. Polishing (the active-set
"crossover" idea, done in closed form per sample):

1. *Identify* which columns sit at a bound and which rows are active, from the approximate
   point and its reduced costs (a column whose reduced cost is clearly positive is at its
   lower bound even if the iterate has not quite reached it).
2. *Solve exactly*: put those columns on their bounds and move the free columns the least
   that makes the active rows hold with equality; then move the duals the least that makes
   every free or dual-tight column's reduced cost exactly zero. Both are least-change
   projections onto affine sets, min ‖Δ‖ s.t. M Δ = g, computed as Δ = Mᵀ(M Mᵀ + ρI)⁻¹ g with
   a few refinement steps (a proximal-point iteration, exact on consistent systems whatever
   M's rank — network matrices are rank-deficient), one batched Cholesky factor per sample.
3. *Certify*: with r = c - Kᵀy, the duality gap splits into nonnegative terms,
   cᵀx - D(y) = Σ_j [r_j⁺ (x_j - l_j) + r_j⁻ (u_j - x_j)] + Σ_i [y_i⁺ (a_i - rl_i) +
   y_i⁻ (ru_i - a_i)],  a = Kx,
   so a point that is primal feasible, whose reduced costs need no infinite bound, and whose
   gap is below the tolerance is optimal to that tolerance: no trust in the identification is
   needed. A sample that fails keeps iterating, or goes to the fallback solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .problem import BatchLP, cholesky_solve

RHO = 1e-10  # Tikhonov weight of the least-change solves, relative to the Gram's diagonal
REFINE = 4  # proximal refinement steps per solve
ROUND = 1e-6  # integer columns this close to an integer are rounded before certifying
SNAP = 1e-12  # columns this close to a bound (relative) are put on it
GAP = 1e-11  # the certificate's relative duality gap


@dataclass
class Partition:
    """Which columns sit at which bound, which rows are active at which side, and which
    columns must have a zero reduced cost — all (B, ·) boolean masks."""

    at_lower: torch.Tensor
    at_upper: torch.Tensor
    row_lower: torch.Tensor
    row_upper: torch.Tensor
    tight: torch.Tensor
    priced: torch.Tensor  # active rows whose dual is clearly nonzero (the others' is set to 0)


def identify(lp: BatchLP, x: torch.Tensor, y: torch.Tensor, tol: torch.Tensor,
             tight: torch.Tensor | None = None) -> Partition:
    """The active set at the approximate pair (x, y) of the *scaled* problem, where entries
    are of comparable size; `tol` (B,) is the per-sample threshold. `tight` (B, n) gives the
    dual-tight columns instead of reading them off the reduced costs: a warm start's own
    (its basis, in effect), which stays right when only the costs moved."""
    t = tol[:, None]
    r = lp.c - lp.K.rmatvec(y)
    a = lp.K.matvec(x)
    lb_fin, ub_fin = torch.isfinite(lp.lb), torch.isfinite(lp.ub)
    near_l = lb_fin & ((x - lp.lb) <= t * (1 + lp.lb.abs()))
    near_u = ub_fin & ((lp.ub - x) <= t * (1 + lp.ub.abs()))
    # the iterate's own position decides where it is near a bound; the reduced cost decides
    # between two near bounds, and for an interior iterate whether it is still on its way
    interior = ~near_l & ~near_u
    at_l = (near_l & ~(near_u & (r < 0))) | (interior & lb_fin & (r > t))
    at_u = (near_u & ~at_l) | (interior & ub_fin & (r < -t))
    rl_fin, ru_fin = torch.isfinite(lp.rl), torch.isfinite(lp.ru)
    row_l = rl_fin & (((a - lp.rl) <= t * (1 + lp.rl.abs())) | (y > t))
    row_u = ru_fin & (((lp.ru - a) <= t * (1 + lp.ru.abs())) | (y < -t))
    equality = rl_fin & ru_fin & (lp.rl == lp.ru)
    both = row_l & row_u & ~equality
    closer_l = (a - lp.rl).abs() <= (lp.ru - a).abs()
    row_l = row_l & ~(both & ~closer_l)
    row_u = (row_u & ~(both & closer_l)) | equality
    row_l = row_l | equality
    free = ~(at_l | at_u)
    tight = free | ((r.abs() <= t) if tight is None else tight)
    # a degenerate active row whose dual is ~0 keeps a zero dual: the least-change solve
    # could otherwise push it across zero, to the side its bound doesn't allow
    priced = (row_l | row_u) & ((y.abs() > t) | equality)
    return Partition(at_l, at_u, row_l.expand_as(a), row_u.expand_as(a), tight,
                     priced.expand_as(a))


def _least_change(lp: BatchLP, columns: torch.Tensor, rows: torch.Tensor):
    """A solver of min ‖Δ‖ s.t. (K restricted to `rows` × `columns`) acting as described in
    the module docstring: returns solve(g) -> z with (K_S K_Sᵀ + ρI) z = g on `rows`."""
    rows_f = rows.to(lp.c.dtype)
    gram = lp.K.gram(columns.to(lp.c.dtype))
    gram = gram * rows_f[:, :, None] * rows_f[:, None, :]
    diag = torch.diagonal(gram, dim1=1, dim2=2)
    scale = diag.amax(1, keepdim=True).clamp_min(1.0)
    gram.diagonal(dim1=1, dim2=2).add_(RHO * scale * rows_f + (1 - rows_f))
    factor, info = torch.linalg.cholesky_ex(gram)

    def solve(g: torch.Tensor) -> torch.Tensor:
        return cholesky_solve(factor, g * rows_f) * rows_f

    return solve, info == 0


def polish(lp: BatchLP, x: torch.Tensor, y: torch.Tensor, part: Partition,
           integer: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor,
                                                          torch.Tensor]:
    """The exact pair the partition implies, in the *original* (unscaled, float64) problem:
    returns (x, y, factored), `factored` False where a Cholesky factor failed. `integer`
    (n,) marks integer columns, rounded when near an integer (None: there are none)."""
    free = ~(part.at_lower | part.at_upper)
    x = torch.where(part.at_lower, lp.lb, torch.where(part.at_upper, lp.ub, x))
    active = part.row_lower | part.row_upper
    target = torch.where(part.row_lower, lp.rl, lp.ru).expand_as(active)
    target = torch.where(active, target, 0.0)
    ok = torch.ones(x.shape[0], dtype=torch.bool, device=x.device)
    if bool(free.any()):  # (a vertex with every column on a bound has nothing to solve)
        solve_p, ok = _least_change(lp, free, active)
        for _ in range(REFINE):
            z = solve_p(target - lp.K.matvec(x))
            x = x + lp.K.rmatvec(z) * free
    # a free column that ended on a bound up to rounding is put on it (clean zeros; the
    # certificate below still checks the point)
    lb_fin, ub_fin = torch.isfinite(lp.lb), torch.isfinite(lp.ub)
    x = torch.where(lb_fin & ((x - lp.lb).abs() <= SNAP * (1 + lp.lb.abs())), lp.lb, x)
    x = torch.where(ub_fin & ((lp.ub - x).abs() <= SNAP * (1 + lp.ub.abs())), lp.ub, x)
    if integer is not None:
        rounded = torch.round(x)
        x = torch.where(integer & ((x - rounded).abs() <= ROUND), rounded, x)
    y = torch.where(part.priced, y, 0.0)
    if bool(part.tight.any()):  # (no dual-tight column: the duals stand as they are)
        solve_d, ok_d = _least_change(lp, part.tight, part.priced)
        tight = part.tight.to(x.dtype)
        for _ in range(REFINE):
            g = (lp.c - lp.K.rmatvec(y)) * tight
            y = y + solve_d(lp.K.matvec(g))
        ok = ok & ok_d
    return x, y, ok


@dataclass
class Certificate:
    """Per-sample measures of an (x, y) pair and whether they pass the tolerance."""

    primal_infeasibility: torch.Tensor
    dual_infeasibility: torch.Tensor
    gap: torch.Tensor
    objective: torch.Tensor
    optimal: torch.Tensor


def certify(lp: BatchLP, x: torch.Tensor, y: torch.Tensor, tol: float = 1e-9,
            gap_tol: float = GAP) -> Certificate:
    """The optimality certificate of the module docstring, relative to each sample's scale:
    violations over (1 + |bound|) and reduced costs over (1 + ‖c‖∞) within `tol`, the gap
    over (1 + |cᵀx|) within `gap_tol`. A polished pair whose identification was right has a
    gap at rounding level; the tight gap turns a near miss (a column left free that belongs
    on its bound) into another try instead of an answer off in the tenth digit."""
    a = lp.K.matvec(x)
    r = lp.c - lp.K.rmatvec(y)
    rl, ru = lp.rl.expand_as(a), lp.ru.expand_as(a)
    viol_col = torch.maximum((lp.lb - x).clamp_min(0), (x - lp.ub).clamp_min(0))
    viol_col = viol_col / (1 + torch.maximum(_finite_abs(lp.lb), _finite_abs(lp.ub)))
    viol_row = torch.maximum((rl - a).clamp_min(0), (a - ru).clamp_min(0))
    viol_row = viol_row / (1 + torch.maximum(_finite_abs(rl), _finite_abs(ru)))
    primal_inf = torch.maximum(_row_max(viol_col), _row_max(viol_row))
    r_pos, r_neg = r.clamp_min(0), (-r).clamp_min(0)
    y_pos, y_neg = y.clamp_min(0), (-y).clamp_min(0)
    lb_fin, ub_fin = torch.isfinite(lp.lb), torch.isfinite(lp.ub)
    rl_fin, ru_fin = torch.isfinite(rl), torch.isfinite(ru)
    c_scale = 1 + lp.c.abs().amax(1, keepdim=True)
    dual_inf = torch.maximum(
        _row_max(torch.where(lb_fin, 0.0, r_pos) + torch.where(ub_fin, 0.0, r_neg)),
        _row_max(torch.where(rl_fin, 0.0, y_pos) + torch.where(ru_fin, 0.0, y_neg)),
    ) / c_scale[:, 0]
    gap = ((r_pos * torch.where(lb_fin, x - lp.lb, 0.0)).sum(1)
           + (r_neg * torch.where(ub_fin, lp.ub - x, 0.0)).sum(1)
           + (y_pos * torch.where(rl_fin, a - rl, 0.0)).sum(1)
           + (y_neg * torch.where(ru_fin, ru - a, 0.0)).sum(1))
    objective = (lp.c * x).sum(1)
    optimal = ((primal_inf <= tol) & (dual_inf <= tol)
               & (gap.abs() <= gap_tol * (1 + objective.abs()))
               & torch.isfinite(objective))
    return Certificate(primal_inf, dual_inf, gap, objective, optimal)


def _row_max(t: torch.Tensor) -> torch.Tensor:
    """The largest entry of each row; 0 for rows of no entries (a model without rows)."""
    return t.amax(1) if t.shape[1] else torch.zeros(t.shape[0], dtype=t.dtype, device=t.device)


def _finite_abs(t: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isfinite(t), t.abs(), 0.0)
