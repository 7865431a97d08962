"""CVXPY: every DCP model (norms, sum_squares, quad_form, log, sqrt, second-order cones).

Predicted params become one CVXPY `Parameter` and enter as parameter-affine coefficients (DPP,
Agrawal et al., "Differentiable convex optimization layers", NeurIPS 2019), so the same problem
object later becomes a cvxpylayers layer without rebuilding.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..atoms.registry import ATOMS
from ..compile.bridges import for_backend, linear_form, reduce_model
from ..compile.expand import compiled
from ..compile.linear import Columns, column_bounds, split_poly
from ..compile.reductions.base import Applied
from ..errors import DflError
from ..evaluate.nonlinear import NL, AtomNode
from ..evaluate.poly import Poly
from ..instance import Instance
from ..solution import Solution
from .chains import plan
from .common import Optimality, RawResult, form_row_duals, kkt_residuals, unproven
from .declarations import BY_NAME
from .highs import new_highs, polished, qp_iteration_limit, qp_scale_exponent, silence_banner
from .magnitudes import check_representable, highs_limits


@dataclass
class CvxpyProblem:
    problem: cp.Problem
    x: cp.Variable  # the model's variables, then auxiliaries
    theta: cp.Parameter | None
    n_model: int
    applied: Applied  # the reductions that made the rows: duals map back through them
    # per row block: its row count and (rows, CVXPY constraint, sign) per side, the sign
    # turning CVXPY's multiplier (>= 0 on an inequality) into the objective's rate in the bound
    dual_parts: list[tuple[int, list]] = field(default_factory=list)


class _Lowering:
    """Poly / NL values over z = [x; θ; aux] -> CVXPY expressions."""

    def __init__(self, cols: Columns, x: cp.Variable, theta: cp.Parameter | None) -> None:
        self.cols, self.x, self.theta = cols, x, theta

    def poly(self, p: Poly, what: str):
        const, ax, bt, bil, quad = split_poly(p, self.cols, what)
        rows = p.rows
        n, nt = self.cols.n, self.cols.n_theta
        expr = ax @ self.x + const
        if bt is not None and bt.nnz:
            expr = expr + bt @ self.theta
        if len(bil[0]):
            t = len(bil[0])
            pick_theta = sp.csr_array((np.ones(t), (np.arange(t), bil[2])), shape=(t, nt))
            pick_x = sp.csr_array((np.ones(t), (np.arange(t), bil[1])), shape=(t, n))
            gather = sp.csr_array((bil[3], (bil[0], np.arange(t))), shape=(rows, t))
            expr = expr + gather @ cp.multiply(pick_theta @ self.theta, pick_x @ self.x)
        if len(quad[0]):
            expr = expr + self._quadratic(quad, rows, what)
        return expr

    def _quadratic(self, quad, rows: int, what: str):
        r, a, b, v = quad
        parts = []
        for row in range(rows):
            mine = r == row
            if not mine.any():
                parts.append(cp.Constant(0.0))
                continue
            used, local = np.unique(np.concatenate([a[mine], b[mine]]), return_inverse=True)
            k = len(used)
            la, lb = local[: mine.sum()], local[mine.sum():]
            m = np.zeros((k, k))
            np.add.at(m, (la, lb), v[mine] / 2)
            np.add.at(m, (lb, la), v[mine] / 2)
            lowest = np.linalg.eigvalsh(m)[0] if k <= 3000 else 0.0
            scale = max(1.0, float(np.abs(m).max()))
            sub = self.x[used]
            if lowest >= -1e-9 * scale:
                parts.append(cp.quad_form(sub, cp.psd_wrap(m)))
            elif np.linalg.eigvalsh(-m)[0] >= -1e-9 * scale:
                parts.append(-cp.quad_form(sub, cp.psd_wrap(-m)))
            else:
                raise DflError(
                    f"{what}: the quadratic form is indefinite (an eigenvalue is {lowest:.3g}); "
                    "it is neither convex nor concave"
                )
        return cp.hstack(parts) if rows > 1 else parts[0]

    def payload(self, value, what: str):
        if isinstance(value, Poly):
            return self.poly(value, what)
        if isinstance(value, NL):
            expr = self.poly(value.poly, what)
            for matrix, node in value.terms:
                expr = expr + sp.csr_array(matrix) @ self.atom(node, what)
            return expr
        return cp.Constant(np.asarray(value, dtype=float))

    def atom(self, node: AtomNode, what: str):
        args = [self.payload(a, what) for a in node.args]
        atom = ATOMS[node.name]
        if node.starts is None:
            expr = atom.cvxpy(args, node.param)
            if expr is None:
                raise DflError(f"{what}: `{node.name}` has no CVXPY form")
            return expr
        starts = node.starts
        groups = [atom.cvxpy_group(args[0][int(a) : int(b)], node.param)
                  for a, b in zip(starts[:-1], starts[1:], strict=True)]
        if any(g is None for g in groups):
            raise DflError(f"{what}: `{node.name}` is not convex; CVXPY can't take it")
        return cp.hstack(groups)  # a vector even for one group: a sparse matrix combines them


def build(inst: Instance) -> CvxpyProblem:
    """The instance as a CVXPY problem (cached on the instance)."""
    cached = inst.memo.get("cvxpy")
    if cached is not None:
        return cached
    try:
        result = _build(inst)
    except DflError as exc:
        raise exc.located(inst.model.filename, inst.model.source) from None
    inst.memo["cvxpy"] = result
    return result


def _build(inst: Instance) -> CvxpyProblem:
    bridged, applied = reduce_model(compiled(inst), inst, for_backend(inst, "cvxpy"))
    cols = Columns(inst, bridged.width)
    lb, ub, integer = column_bounds(bridged, inst)
    flags = np.nonzero(integer)[0]
    x = cp.Variable(cols.n, integer=(flags,)) if len(flags) else cp.Variable(cols.n)
    theta = cp.Parameter(cols.n_theta) if cols.n_theta else None
    low = _Lowering(cols, x, theta)
    constraints = []
    finite_lb, finite_ub = np.isfinite(lb), np.isfinite(ub)
    if finite_lb.any():
        constraints.append(x[np.nonzero(finite_lb)[0]] >= lb[finite_lb])
    if finite_ub.any():
        constraints.append(x[np.nonzero(finite_ub)[0]] <= ub[finite_ub])
    rate = 1.0 if bridged.sense == "minimize" else -1.0  # d(objective)/d(bound) per multiplier
    dual_parts: list[tuple[int, list]] = []
    for block in bridged.rows:
        what = f"constraint `{block.name}`" if block.name else "the objective"
        expr = low.payload(block.body, what)
        lo, hi = np.asarray(block.lo, float), np.asarray(block.hi, float)
        eq = lo == hi
        sides = []
        if eq.any():
            constraints.append(_pick(expr, eq) == lo[eq])
            sides.append((np.nonzero(eq)[0], constraints[-1], -rate))  # CVXPY: +ν(e − b)
        for mask, side in ((np.isfinite(lo) & ~eq, "lo"), (np.isfinite(hi) & ~eq, "hi")):
            if mask.any():
                part = _pick(expr, mask)
                constraints.append(part >= lo[mask] if side == "lo" else part <= hi[mask])
                sides.append((np.nonzero(mask)[0], constraints[-1],
                              rate if side == "lo" else -rate))
        dual_parts.append((len(lo), sides))
    objective = low.payload(bridged.objective, "the objective")
    if getattr(objective, "shape", ()) not in ((), (1,)):
        raise DflError("the objective must be a scalar")
    objective = cp.sum(objective)
    sense = cp.Minimize if bridged.sense == "minimize" else cp.Maximize
    problem = cp.Problem(sense(objective), constraints)
    if not problem.is_dcp():
        raise DflError(
            "CVXPY can't verify this model is convex (DCP)",
            hint="see `dfl check` for the model's class",
        )
    return CvxpyProblem(problem, x, theta, cols.nx, applied, dual_parts)


def _duals(built: CvxpyProblem) -> dict[str, np.ndarray] | None:
    """Row duals in the contract's convention (HiGHS's: the objective's rate of change in the
    row's bound), from CVXPY's multipliers, mapped back through the reductions to the model's
    constraints; none for a mixed-integer problem."""
    if built.problem.is_mixed_integer():
        return None
    blocks = []
    for rows, sides in built.dual_parts:
        values = np.zeros(rows)
        for at, constraint, sign in sides:
            if constraint.dual_value is None:
                return None
            values[at] += sign * np.asarray(constraint.dual_value, dtype=float).reshape(-1)
        blocks.append(values + 0.0)  # no -0.0
    return built.applied.duals(blocks)


def _pick(expr, mask: np.ndarray):
    if mask.all():
        return expr
    return expr[np.nonzero(mask)[0]]


_STATUS = {
    cp.OPTIMAL: "optimal",
    cp.OPTIMAL_INACCURATE: "optimal",
    cp.INFEASIBLE: "infeasible",
    cp.INFEASIBLE_INACCURATE: "infeasible",
    cp.UNBOUNDED: "unbounded",
    cp.USER_LIMIT: "feasible",
    cp.settings.INFEASIBLE_OR_UNBOUNDED: "infeasible_or_unbounded",
}


# Verdicts a feasibility solve must confirm: HiGHS's MIP presolve can't tell infeasible from
# unbounded, and Clarabel's inaccurate "unbounded" is also what it says of some infeasible
# problems (an approximate ray of the objective, with no feasible point to start it from).
_UNSETTLED = frozenset({cp.settings.INFEASIBLE_OR_UNBOUNDED, cp.UNBOUNDED_INACCURATE})


def solve_instance(inst: Instance, *, time_limit=None, seed=None):
    start = time.perf_counter()
    built = build(inst)
    if built.theta is not None:
        built.theta.value = inst.theta_for_solve()
    solver = _solver(built, inst)
    options: dict = {} if time_limit is None else {"time_limit": float(time_limit)}
    qp = built.problem.is_qp() and not built.problem.is_mixed_integer()
    if solver == "HIGHS" and qp:
        options["qp_iteration_limit"] = qp_iteration_limit(*built.x.shape,
                                                           len(built.problem.constraints))
        options["user_objective_scale"] = qp_scale_exponent(linear_form(inst).P)
    solution = _solved(built, inst, solver, options, start)
    if solver == "HIGHS" and qp:
        return _verified(built, inst, solution, time_limit, start)
    if solver == "HIGHS" and built.problem.is_mixed_integer():
        return _rounded(inst, solution, time_limit, start)
    return solution


def _rounded(inst: Instance, solution: Solution, time_limit, start: float) -> Solution:
    """CVXPY's HiGHS on a MIP, its integer columns rounded and the others solved again as
    `highs.polished` does: the same 1e-6 integrality slack, times a logical constraint's
    reach, let `x2 >= 2` pass at 1.992 (docs/reliability.md). Only where the point is in the
    linear form's columns (no auxiliary ones)."""
    form = linear_form(inst)
    if solution.x is None or solution.objective is None or form.n != form.n_model:
        return solution
    raw = RawResult(solution.status, solution.x, form.sign * solution.objective)
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    done = polished(form, inst.theta_for_solve(), raw, None, left)
    if done is raw:
        return solution
    extra = {"warning": done.warning} if done.warning else {}
    objective = None if done.objective is None else form.model_objective(done.objective)
    message = solution.message if done.status == solution.status else done.message
    return Solution(done.status, objective, done.x, "cvxpy", time.perf_counter() - start, inst,
                    message=message, extra=extra)


def _solved(built: CvxpyProblem, inst: Instance, solver: str, options: dict,
            start: float) -> Solution:
    """One solve by `solver`, its status in the contract's words."""
    try:
        with warnings.catch_warnings():  # settled below instead of cvxpy's stderr warning
            warnings.filterwarnings("ignore", message=r"\s*The problem is either infeasible")
            warnings.filterwarnings("ignore", message=r"\s*Solution may be inaccurate")
            built.problem.solve(solver=solver, **options)
            if built.problem.status in _UNSETTLED:
                return _settle_infeasible_or_unbounded(built, solver, options, start, inst)
    except cp.error.SolverError as exc:
        return Solution("error", None, None, "cvxpy", time.perf_counter() - start, inst,
                        message=str(exc))
    status = _STATUS.get(built.problem.status, "error")
    if status == "feasible" and not _meets_constraints(built):
        status = "time_limit"  # stopped by the limit: HiGHS hands back zeros, not a point
    x = None
    objective = None
    if status in ("optimal", "feasible") and built.x.value is not None:
        x = np.asarray(built.x.value, dtype=float)[: built.n_model]
        objective = float(built.problem.value)
    duals = _duals(built) if status == "optimal" else None
    return Solution(status, objective, x, "cvxpy", time.perf_counter() - start, inst,
                    duals=duals, message=f"{solver}: {built.problem.status}")


def _verified(built: CvxpyProblem, inst: Instance, solution: Solution, time_limit,
              start: float) -> Solution:
    """CVXPY's HiGHS on a continuous QP is HiGHS's active-set QP solver, with the failures
    `highs.verified` checks for (benchmarks/fuzz.py seed 5013383: `optimal` 0.7639 at a
    feasible point, the optimum 0.70599; 5036872: an error). Its `optimal` is checked the
    same way (common.kkt_residuals, where the form's rows are the model's own); one that
    fails, an `error` or an `unbounded` is solved again by Clarabel (an interior-point
    method: no active set to misjudge), whose `optimal` must pass too; else an `unbounded`
    stands and an `optimal` says it is not proven."""
    first = _optimality(inst, solution)
    # HiGHS's QP iteration limit (a `user_limit` to CVXPY): seed 5031414's point, -3e36,
    # was no optimum (see highs.verified)
    stopped = solution.status == "feasible" and _at_iteration_limit(built)
    if not stopped and solution.status not in ("optimal", "error", "unbounded") or (
            solution.status == "optimal" and (first is None or first.holds())):
        return solution  # (None: a form with auxiliary columns or reductions' rows)
    said = "CVXPY's HiGHS's `{}` {}".format(solution.status, f"fails the KKT check "
                                            f"({first.describe()})" if first is not None
                                            else f"({solution.message})")
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    again = solution
    if left is None or left > 0:
        again = _solved(built, inst, "CLARABEL", {} if left is None else {"time_limit": left},
                        start)
        verdict = _optimality(inst, again)
        if again.status == "optimal" and (verdict is None or verdict.holds()):
            again.message = f"{again.message}; {said}"
            return again
        said += "; and so does Clarabel's answer"
    if solution.status == "unbounded":  # (stands unless an optimum was found)
        return solution
    answers = [(s, _optimality(inst, s)) for s in (solution, again)]
    best, verdict = min([(s, k) for s, k in answers if k is not None],
                        key=lambda pair: (not pair[1].feasible(), pair[0].objective),
                        default=(solution, None))
    raw = unproven(RawResult(best.status, best.x, best.objective), verdict, said)
    return Solution(raw.status, raw.objective, raw.x, "cvxpy", time.perf_counter() - start,
                    inst, message=raw.message, extra={"warning": raw.warning})


def _at_iteration_limit(built: CvxpyProblem) -> bool:
    """Whether CVXPY's HiGHS stopped at the QP iteration limit `solve_instance` set (its
    HighsInfo, CVXPY's `extra_stats`, counts the iterations; CVXPY calls every limit
    `user_limit`)."""
    info = built.problem.solver_stats.extra_stats if built.problem.solver_stats else None
    limit = qp_iteration_limit(*built.x.shape, len(built.problem.constraints))
    return int(getattr(info, "qp_iteration_count", 0)) >= limit


def _optimality(inst: Instance, solution: Solution) -> Optimality | None:
    """`common.kkt_residuals` of a CVXPY answer, where it can be checked: a point and duals,
    on a linear form without auxiliary columns whose rows are all the model's own."""
    form = linear_form(inst)
    y = form_row_duals(form, solution.duals)
    if solution.x is None or y is None or form.n != form.n_model:
        return None
    return kkt_residuals(form, solution.x, y, None, inst.theta_for_solve())


def _solver(built: CvxpyProblem, inst: Instance) -> str:
    """HiGHS for what it takes (MILP, LP, convex QP), Clarabel for cones. Clarabel's interior
    point on a badly scaled LP (1e12 * x, x near 0) answered `optimal` -0.001 where the optimum
    is 1e-12, or `unbounded`; HiGHS is exact there. Numbers beyond HiGHS's range are refused
    (`magnitudes`), as for `--backend highs`: Clarabel, tried on them, called `min x^2 s.t.
    x >= 1e25` infeasible."""
    if built.x.size == 0:  # no columns (every set empty): HiGHS answers UNKNOWN, which CVXPY
        return "CLARABEL"  # can't unpack
    if plan(inst.klass.form, BY_NAME["highs"]) is None:
        return "HIGHS" if built.problem.is_mixed_integer() else "CLARABEL"
    silence_banner()
    check_representable(inst, linear_form(inst), inst.theta_for_solve(),
                        highs_limits(new_highs()), "CVXPY's HiGHS")
    return "HIGHS"


def _meets_constraints(built: CvxpyProblem, tol: float = 1e-6) -> bool:
    """Whether the point a limit stopped at meets every constraint (and integrality) within
    `tol`, relative to the point's size."""
    value = built.x.value
    if value is None or not np.all(np.isfinite(value)):
        return False
    scale = tol * (1.0 + float(np.abs(value).max(initial=0.0)))
    for constraint in built.problem.constraints:
        if float(np.max(constraint.violation(), initial=0.0)) > scale:
            return False
    flags = built.x.attributes.get("integer")
    if isinstance(flags, tuple) and len(flags) and len(flags[0]):
        whole = np.asarray(value).ravel()[np.asarray(flags[0])]
        return bool(np.all(np.abs(whole - np.round(whole)) <= scale))
    return True


def _settle_infeasible_or_unbounded(built: CvxpyProblem, solver: str, options: dict,
                                    start: float, inst: Instance) -> Solution:
    """The solver couldn't tell infeasible from unbounded (see `_UNSETTLED`): the same
    constraints with a zero objective can't be unbounded, so solving them tells."""
    feasibility = cp.Problem(cp.Minimize(0), built.problem.constraints)
    feasibility.solve(solver=solver, **options)
    status = {cp.OPTIMAL: "unbounded", cp.OPTIMAL_INACCURATE: "unbounded",
              cp.INFEASIBLE: "infeasible", cp.INFEASIBLE_INACCURATE: "infeasible"}.get(
        feasibility.status, "infeasible_or_unbounded")
    return Solution(status, None, None, "cvxpy", time.perf_counter() - start, inst,
                    message=f"{solver}: {built.problem.status}, feasibility: "
                            f"{feasibility.status}")
