"""Pyomo: the LinearForm at θ as a `ConcreteModel`, solved by HiGHS through Pyomo's `highs`
plugin (`pyomo.contrib.solver`; the older `appsi_highs` takes no quadratic objective).

For users who want Pyomo's ecosystem: its writers (`write=` .lp, .mps, .nl), its other
solvers, their own extensions of the model. It is slower to build than the highs backend —
Pyomo keeps one object per variable and per term — so rows are made straight from the CSR
slices of A as `LinearExpression`s, never by adding term objects one at a time.
"""

from __future__ import annotations

import math
import os
import time
from itertools import chain
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.common.util import NoDualsError
from pyomo.core.expr.numeric_expr import LinearExpression
from pyomo.core.expr.visitor import identify_variables
from pyomo.opt import ProblemFormat

from ..compile.bridges import linear_form
from ..compile.linear import LinearForm
from ..errors import DflError
from ..instance import Instance
from .common import RawResult, optimal_without_columns, to_solution
from .highs import new_highs, polished, qp_iteration_limit, verified
from .magnitudes import check_representable, highs_limits

SOLVER = "highs"
WRITE_FORMATS = {".lp": ProblemFormat.cpxlp, ".mps": ProblemFormat.mps, ".nl": ProblemFormat.nl}

_STATUS = {
    TerminationCondition.convergenceCriteriaSatisfied: "optimal",
    TerminationCondition.provenInfeasible: "infeasible",
    TerminationCondition.locallyInfeasible: "infeasible",
    TerminationCondition.unbounded: "unbounded",
    TerminationCondition.infeasibleOrUnbounded: "infeasible_or_unbounded",
    TerminationCondition.maxTimeLimit: "time_limit",
    TerminationCondition.iterationLimit: "time_limit",
}


def _bound(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def build_model(form: LinearForm, theta: np.ndarray | None = None) -> pyo.ConcreteModel:
    """minimize ½xᵀPx + cᵀx + c0 s.t. rl <= Ax <= ru, lb <= x <= ub at θ, as Pyomo: `x[j]` is
    canonical column j, `rows[i]` canonical row i (a free row is skipped), `objective`."""
    c, c0 = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    A = sp.csr_array(A)
    A.sort_indices()
    model = pyo.ConcreteModel(name="dfl")
    lb, ub = form.lb.tolist(), form.ub.tolist()
    model.x = pyo.Var(range(form.n), domain=pyo.Reals,
                      bounds=lambda _, j: (_bound(lb[j]), _bound(ub[j])))
    x = [model.x[j] for j in range(form.n)]
    for j in np.flatnonzero(form.integer).tolist():  # a rule per column costs twice as much
        x[j].domain = pyo.Integers

    indptr, cols, vals = A.indptr.tolist(), A.indices.tolist(), A.data.tolist()
    lo, hi = rl.tolist(), ru.tolist()

    def row(_, i):
        low, high = _bound(lo[i]), _bound(hi[i])
        if low is None and high is None:
            return pyo.Constraint.Skip
        if low is not None and high is not None and low > high:
            # `5 <= x + y <= 3`: Pyomo refuses to build the range (an internal error here)
            return pyo.Constraint.Infeasible
        s, e = indptr[i], indptr[i + 1]
        body = LinearExpression(linear_coefs=vals[s:e], linear_vars=[x[j] for j in cols[s:e]])
        if low == high:
            return body == low
        return (low, body, high)

    model.rows = pyo.Constraint(range(form.m), rule=row)

    nz = np.flatnonzero(c)
    expr = LinearExpression(
        constant=float(c0), linear_coefs=c[nz].tolist(), linear_vars=[x[j] for j in nz]
    )
    if form.is_qp:
        # ½ xᵀPx over the upper triangle: ½ P_ii x_i² + P_ij x_i x_j (i < j)
        upper = sp.triu(form.P, format="coo")
        half = np.where(upper.row == upper.col, 0.5, 1.0) * upper.data
        expr = pyo.quicksum(
            (v * x[i] * x[j] for i, j, v in
             zip(upper.row.tolist(), upper.col.tolist(), half.tolist(), strict=True)),
            start=expr,
        )
    model.objective = pyo.Objective(expr=expr, sense=pyo.minimize)
    return model


def write_format(path: Path) -> ProblemFormat:
    """The Pyomo writer for `path`'s suffix, or an error listing the ones we write."""
    fmt = WRITE_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise DflError(
            f"can't write the model as `{Path(path).name}`: unknown file type",
            hint="give a file ending in " + ", ".join(WRITE_FORMATS),
        )
    return fmt


def write_model(model: pyo.ConcreteModel, path: Path, sign: float = 1.0) -> None:
    """Pyomo's writer into a temp file beside `path`, renamed over it when complete (as
    `--output` is written: never half a file), its folder made as `--output`'s is. A maximize
    model (`sign` -1: solved as the minimum of its negation) is written as the user's
    maximize, so that another solver reading the file reports the user's objective."""
    fmt = write_format(path)
    solved = model.objective.expr
    if sign < 0:
        model.objective.set_value(-solved)
        model.objective.sense = pyo.maximize
    # names like x[3] and rows[2] (the canonical column and row) in the formats that keep names
    options = {"symbolic_solver_labels": fmt is not ProblemFormat.nl}
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # (a name of our own, not mkstemp's: the writer creates it with the usual permissions)
        tmp = str(path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}"))
        model.write(tmp, format=fmt, io_options=options)
        os.replace(tmp, path)
    except OSError as exc:
        raise DflError(f"can't write the model to `{path}`: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if sign < 0:  # back to the form the solve reads
            model.objective.set_value(solved)
            model.objective.sense = pyo.minimize


def _solver():
    solver = SolverFactory(SOLVER)
    if not solver.available():
        raise DflError(
            "Pyomo's HiGHS plugin is not available (it needs highspy)",
            hint="`pip install highspy`, or use --backend highs",
        )
    return solver


def solve_model(model: pyo.ConcreteModel, form: LinearForm, *, time_limit=None,
                seed=None) -> RawResult:
    """Solve a model made by `build_model` -> RawResult on the canonical form."""
    solver = _solver()
    x = np.clip(0.0, form.lb, form.ub)  # a column in no row and not in the objective
    if np.any(form.lb > form.ub):  # HiGHS never sees such a column's bounds: Pyomo drops it
        return RawResult("infeasible", None, None, message="a column's bounds conflict")
    if not _references_a_variable(model):
        return _without_columns(model, form, x)
    options = {"random_seed": int(seed)} if seed is not None else {}
    if form.is_qp:
        options["qp_iteration_limit"] = qp_iteration_limit(form.n, form.m)
    results = _run(solver, model, time_limit, options)
    status = _STATUS.get(results.termination_condition, "error")
    if status == "infeasible_or_unbounded":
        # HiGHS's presolve can't tell which; the solver itself can
        results = _run(solver, model, time_limit, {**options, "presolve": "off"})
        status = _STATUS.get(results.termination_condition, "error")
    has_solution = results.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    if status == "time_limit":
        status = "feasible" if has_solution else "time_limit"  # (no point: claims none)
    message = str(results.termination_condition.name)
    if not (has_solution and status in ("optimal", "feasible")):
        return RawResult(status, None, None, message=message)

    for var, value in results.solution_loader.get_vars().items():
        x[var.index()] = value
    duals = reduced = gap = None
    objective = float(results.incumbent_objective)
    if form.is_mip:
        gap = _mip_gap(objective, results.objective_bound)
    elif status == "optimal":
        duals = _row_duals(results, form.m)
        reduced = None if duals is None else _reduced_costs(results, form.n)
    return RawResult(status, x, objective, duals, gap, message, col_duals=reduced)


def _references_a_variable(model: pyo.ConcreteModel) -> bool:
    """Whether any column is in the objective or a row (stops at the first one found)."""
    exprs = chain([model.objective.expr], (row.body for row in model.rows.values()))
    return any(next(identify_variables(e), None) is not None for e in exprs)


def _without_columns(model: pyo.ConcreteModel, form: LinearForm, x: np.ndarray) -> RawResult:
    """HiGHS reports an empty model's status as unknown to Pyomo: settle it here — the rows
    are constants, so it is feasible exactly when they hold (the bounds were checked)."""
    tol = 1e-9
    feasible = all(row.lslack() >= -tol and row.uslack() >= -tol for row in model.rows.values())
    if not feasible:
        return RawResult("infeasible", None, None, message="constant rows conflict")
    return optimal_without_columns(form, x, float(pyo.value(model.objective)), "no columns")


def _run(solver, model, time_limit, options):
    return solver.solve(
        model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
        time_limit=time_limit, solver_options=options,
    )


def _mip_gap(primal: float, bound: float | None) -> float | None:
    """The usual relative gap, as HiGHS reports it: |primal - bound| / |primal|."""
    if bound is None:
        return None
    if primal == bound:
        return 0.0
    return abs(primal - bound) / abs(primal) if primal else math.inf


def _row_duals(results, m: int) -> np.ndarray | None:
    try:
        by_row = results.solution_loader.get_duals()
    except NoDualsError:  # HiGHS gave no valid duals
        return None
    duals = np.zeros(m)  # a skipped (free) row's dual is 0
    for con, value in by_row.items():
        duals[con.index()] = value
    return duals


def _reduced_costs(results, n: int) -> np.ndarray | None:
    """The columns' reduced costs (the duals of rows made bounds come from them); a column
    Pyomo left out (in no row, not in the objective) has 0."""
    try:
        by_column = results.solution_loader.get_reduced_costs()
    except NoDualsError:
        return None
    reduced = np.zeros(n)
    for var, value in by_column.items():
        reduced[var.index()] = value
    return reduced


def solve_instance(inst: Instance, *, time_limit=None, seed=None, write: Path | None = None):
    """Solve a bound instance through Pyomo -> Solution; `write` also saves the model as
    .lp, .mps or .nl (checked before anything is built)."""
    start = time.perf_counter()
    if write is not None:
        write_format(write)
    form = linear_form(inst)
    theta = inst.theta_for_solve()
    check_representable(inst, form, theta, highs_limits(new_highs()), "Pyomo's HiGHS")
    model = build_model(form, theta)
    if write is not None:
        write_model(model, Path(write), form.sign)
    raw = solve_model(model, form, time_limit=time_limit, seed=seed)
    # Pyomo's HiGHS is HiGHS's QP solver, with the wrong `optimal`s highs.verified catches
    # (fuzz seed 5036872: -1.37489, the optimum -1.375521): the same check, and re-solve
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    raw = verified(form, theta, raw, left, seed)
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    raw = polished(form, theta, raw, seed, left)  # (its MIPs' integer columns too)
    return to_solution(inst, form, raw, "pyomo", time.perf_counter() - start)
