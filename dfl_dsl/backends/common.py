"""What the backends share: the raw result of a solve and its mapping to a Solution."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compile.expand import compiled
from ..compile.linear import LinearForm
from ..compile.reductions.rows_to_bounds import RowsToBounds
from ..instance import Instance
from ..solution import Solution


@dataclass
class RawResult:
    """A solver's answer on the canonical (minimized) form."""

    status: str  # optimal | feasible | infeasible | unbounded | error
    x: np.ndarray | None
    objective: float | None  # canonical (minimized) value
    row_duals: np.ndarray | None = None
    gap: float | None = None
    message: str = ""
    iis_rows: list[int] | None = None
    col_duals: np.ndarray | None = None  # reduced costs, where the solver gives them
    warning: str | None = None  # why an answer is less than it seemed (`unproven`)


def optimal_without_columns(form: LinearForm, x: np.ndarray, objective: float,
                            message: str) -> RawResult:
    """The optimum of a model whose rows are all constants (its sets left it no columns in
    any row), known without a solver's certificate: a MIP reports gap 0 and no duals, an LP
    zero duals (no row can bind a column)."""
    duals, gap = (None, 0.0) if form.is_mip else (np.zeros(form.m), None)
    return RawResult("optimal", x, objective, duals, gap, message)


def to_solution(inst: Instance, form: LinearForm, raw: RawResult, backend: str,
                elapsed: float) -> Solution:
    """RawResult (canonical, minimized) -> Solution (the model's sense and names): duals
    mapped back through the reductions that made the form, to the model's constraints."""
    objective = form.model_objective(raw.objective) if raw.objective is not None else None
    x = raw.x[: form.n_model] if raw.x is not None else None
    duals = None
    if raw.row_duals is not None:
        row_duals = RowsToBounds.invert(raw.row_duals, form, raw.col_duals)
        blocks = [form.sign * row_duals[start : start + count] + 0.0  # no -0.0
                  for _, start, count in form.row_names]
        duals = form.model_duals(blocks)
    solution = Solution(raw.status, objective, x, backend, elapsed, inst, raw.gap, duals,
                        raw.message)
    if raw.col_duals is not None:
        reduced = RowsToBounds.invert_reduced(raw.col_duals, form)
        solution.reduced_costs = form.sign * reduced[: form.n_model] + 0.0
    if raw.warning:
        solution.extra["warning"] = raw.warning
    if raw.iis_rows:
        rows = raw.iis_rows
        if form.kept_rows is not None:
            rows = [int(form.kept_rows[r]) for r in rows]
        solution.extra["iis"] = row_labels(inst, form, rows)
    return solution


def form_row_duals(form: LinearForm, duals: dict[str, np.ndarray] | None) -> np.ndarray | None:
    """`to_solution`'s dual mapping undone: the form's row duals (canonical, minimized) from
    a Solution's model duals, where every row is a model constraint's own (no reduction's
    rows: their duals have no model name); None where not."""
    if duals is None or any(origin is not None for origin in form.row_origins):
        return None
    blocks = []
    for name, _, count in form.row_names:
        block = np.asarray(duals.get(name, ()), dtype=float).reshape(-1)
        if block.size != count:
            return None
        blocks.append(form.sign * block)
    full = np.concatenate(blocks) if blocks else np.zeros(0)
    return full if form.kept_rows is None else full[form.kept_rows]


def row_labels(inst: Instance, form: LinearForm, rows: list[int]) -> list[str]:
    """How an IIS or a violation names each row: the model constraint's row label, or the
    reduction's row it is (`c (epigraph of `abs`)`, a scenario's copy `c@3`)."""
    labels = []
    by_name = {r.name: r for r in compiled(inst).constraints}
    for row in rows:
        for (name, start, count), origin in zip(form.row_names, form.row_origins, strict=True):
            if start <= row < start + count:
                block = by_name.get(name)
                if origin is None and block is not None:
                    labels.append(block.labels()[row - start])
                elif origin.rows is not None and block is not None:  # a part of the block
                    label = block.labels()[origin.rows[row - start]]
                    at = origin.scenario
                    labels.append(label if at is None else f"{label}@{at}")
                else:
                    labels.append(origin.describe(name))
                break
    return labels


KKT_TOLERANCE = 1e-5  # the relative residual at which a solver's `optimal` is taken on trust


@dataclass
class Optimality:
    """How far a point and its row duals are from the KKT conditions of a LinearForm, each
    measure relative to the magnitudes it is made of (so that HiGHS's tolerances, absolute at
    its internal scale, are judged at ours): `primal` the worst row or bound violation,
    `dual` the worst stationarity residual Px + c − Aᵀy − z (after the wrong-signed parts
    of y are dropped and z is the best bound multiplier for it), `gap` the complementarity
    products' sum over 1 + the objective's terms (with the other two met, a bound on how far
    the objective is above the optimum)."""

    primal: float
    dual: float
    gap: float

    def holds(self, tol: float = KKT_TOLERANCE) -> bool:
        """Each measure within `tol`, the gap within a tenth of it: it bounds the objective's
        error, which a 1e-5 gap let reach 4e-5 of a QP's objective (HiGHS, a row with an
        entry of 3e5 slack by 8.7 and a dual on it); correct answers' gaps were below 3e-8."""
        return max(self.primal, self.dual, 10 * self.gap) <= tol  # (NaN fails)

    def feasible(self, tol: float = KKT_TOLERANCE) -> bool:
        return self.primal <= tol

    def describe(self) -> str:
        return (f"relative primal infeasibility {self.primal:.2g}, stationarity residual "
                f"{self.dual:.2g}, complementarity gap {self.gap:.2g}")


def kkt_residuals(form: LinearForm, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None,
                  theta=None) -> Optimality:
    """The KKT conditions of `form` at θ, at x with row duals y and bound duals z in HiGHS's
    convention (the objective's rate in the row's or bound's side: ≥ 0 on an active lower
    side, ≤ 0 on an upper one); the wrong-signed parts are dropped. Without z, each column's
    bound multiplier is derived from the stationarity residual where a bound is nearer than
    that residual's weight in the gap (see `_bound_duals`). The residuals are OSQP's,
    relative as its eps_rel test is (Stellato et al., "OSQP: an operator splitting solver for
    quadratic programs", Math. Prog. Comp. 2020, §3.4: the dual residual over the largest of
    ‖Px‖∞, ‖c‖∞, ‖Aᵀy‖∞), plus complementarity, which OSQP's iterates meet by construction
    and an active-set solver's answer need not. Vectorized: a few sparse products, O(nnz)."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return Optimality(np.inf, np.inf, np.inf)
    cost, _ = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    Px = form.P @ x if form.P is not None else np.zeros_like(x)
    Ax = A @ x
    y = _signed(y, rl, ru)
    g = Px + cost - A.T @ y
    scale = max(_norm(Px), _norm(cost), _norm(A.T @ y))
    size = 1.0 + abs(float(x @ Px)) + abs(float(cost @ x))
    z = _bound_duals(form, x, g, size / scale if scale > 0 else np.inf) if z is None else \
        _signed(z, form.lb, form.ub)
    primal = max(_relative_violation(Ax, rl, ru, abs(A) @ np.abs(x)),
                 _relative_violation(x, form.lb, form.ub, np.abs(x)))
    residual = _norm(g - z)
    dual = residual / scale if scale > 0 else (0.0 if residual == 0 else np.inf)
    gap = (_complementarity(y, Ax, rl, ru) + _complementarity(z, x, form.lb, form.ub)) / size
    return Optimality(float(primal), float(dual), float(gap))


def _signed(dual: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The parts of `dual` of the signs its sides allow (none on an infinite side)."""
    return np.where(np.isfinite(lo), np.maximum(dual, 0), 0) + np.where(
        np.isfinite(hi), np.minimum(dual, 0), 0)


def _bound_duals(form: LinearForm, x: np.ndarray, g: np.ndarray, reach: float) -> np.ndarray:
    """The bound multipliers z that fit stationarity (z = g on a side g's sign allows) where
    putting g on the bound costs less than leaving it: its complementarity term |g|·slack,
    relative to the gap's scale, is below |g| relative to stationarity's, i.e. the slack is
    under `reach` (their ratio). A solver's regularized x (HiGHS keeps 1e-7 of g) is then
    not charged for a bound far away."""
    with np.errstate(invalid="ignore"):
        low = np.isfinite(form.lb) & (g > 0) & (x - form.lb < reach)
        high = np.isfinite(form.ub) & (g < 0) & (form.ub - x < reach)
    return np.where(low | high, g, 0.0)


def _norm(v: np.ndarray) -> float:
    return float(np.abs(v).max(initial=0.0))


def _relative_violation(v: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                        size: np.ndarray) -> float:
    """The worst distance of v from [lo, hi], each relative to 1 + the size of its terms and
    its finite bounds."""
    with np.errstate(invalid="ignore"):  # (inf - inf where a side is infinite)
        off = np.maximum(np.maximum(lo - v, v - hi), 0.0)
    bound = np.maximum(np.where(np.isfinite(lo), np.abs(lo), 0), np.where(np.isfinite(hi),
                                                                          np.abs(hi), 0))
    return float((off / (1.0 + size + bound)).max(initial=0.0))  # (NaN, from an inf v, fails)


def _complementarity(dual: np.ndarray, v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Σ dual⁺·|v − lo| + dual⁻·|hi − v|: what a multiplier on a side the point is off
    costs (each term 0 where the side binds; dual has no part on an infinite side)."""
    with np.errstate(invalid="ignore"):
        low = np.where(dual > 0, dual * np.abs(v - lo), 0.0)
        high = np.where(dual < 0, -dual * np.abs(hi - v), 0.0)
    return float(low.sum() + high.sum())  # (a NaN, from an inf v, fails `holds`)


def unproven(raw: RawResult, verdict: Optimality | None, said: str,
             tol: float = KKT_TOLERANCE) -> RawResult:
    """An answer that failed the KKT check, as the contract's words can tell it: `feasible`
    at its point where the point meets every row and bound (its objective then bounds the
    optimum from above; no duals: they failed), else `error` and no point. `said` is why,
    in the message and in `warning` (the CLI prints it on stderr)."""
    warning = f"not proven optimal: {said}"
    if verdict is not None and verdict.feasible(tol):
        return RawResult("feasible", raw.x, raw.objective, None, raw.gap, said, warning=warning)
    return RawResult("error", None, None, message=said, warning=warning)
