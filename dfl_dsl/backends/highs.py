"""HiGHS through highspy, directly: the model is handed over as arrays in one call (no
per-element objects), kept, and re-solved after pushing only changed coefficients — the
decision-focused-learning loop re-solves the same problem with a new predicted cost each time.
(Huangfu & Hall, "Parallelizing the dual revised simplex method", Math. Prog. Comp. 2018.)
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import replace

import highspy
import numpy as np
import scipy.sparse as sp

from ..compile.bridges import build_linear, linear_form
from ..compile.linear import LinearForm
from ..instance import Instance
from .clarabel_qp import solve_form
from .common import RawResult, kkt_residuals, optimal_without_columns, to_solution, unproven
from .equilibrate import equilibrated, unscaled
from .magnitudes import check_representable, highs_limits

_quiet = False


@contextmanager
def _silenced_stdout():
    """HiGHS prints a banner to the C stdout the first time a solver is made; keep `--json`
    output clean."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def silence_banner() -> None:
    """Make the first HiGHS object with stdout muted (other libraries, like CVXPY, make more
    later; only the first prints the banner)."""
    global _quiet
    if not _quiet:
        with _silenced_stdout():
            highspy.Highs()
        _quiet = True


def new_highs() -> highspy.Highs:
    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


_STATUS = {
    highspy.HighsModelStatus.kOptimal: "optimal",
    highspy.HighsModelStatus.kInfeasible: "infeasible",
    highspy.HighsModelStatus.kUnbounded: "unbounded",
    highspy.HighsModelStatus.kUnboundedOrInfeasible: "infeasible_or_unbounded",
    highspy.HighsModelStatus.kTimeLimit: "time_limit",
    highspy.HighsModelStatus.kIterationLimit: "time_limit",
    highspy.HighsModelStatus.kSolutionLimit: "time_limit",
    highspy.HighsModelStatus.kModelEmpty: "optimal",
}


def _floats(a: np.ndarray) -> np.ndarray:
    """float64 without a copy when it already is (HiGHS's infinity is IEEE inf: no clipping)."""
    return np.asarray(a, dtype=float)


def qp_iteration_limit(n: int, m: int) -> int:
    """A bound on HiGHS's active-set QP iterations: its default (2^31) let HiGHS 1.16 cycle for
    ever at the optimum of a 4-column QP (found by benchmarks/fuzz.py). Stopped, it reports
    its point `feasible` (status word of an iteration limit), not a hang."""
    return 10_000 + 20 * (n + m)


QP_SCALE_MAX = 20  # the largest power-of-two objective scaling qp_scale_exponent asks for


def qp_scale_exponent(P: sp.spmatrix | None) -> int:
    """The power of two HiGHS scales a QP's objective by (`user_objective_scale`) so that the
    Hessian's largest entry is about 1. HiGHS 1.16's active-set QP solver stalls at a vertex
    until its iteration limit when the Hessian's entries are tiny (a mean-variance portfolio
    with daily-return covariances ~1e-5: 7 of 1,800 such QPs, and 3 of 468 random 3-5 asset
    ones, ended `feasible` at a non-optimal vertex; none once scaled). A power of two is exact
    in floating point, and HiGHS reports x, the objective and the duals unscaled. Only small
    Hessians are scaled up: shrinking a large one would push the linear costs towards the
    dual tolerance. An LP (P None) is not scaled."""
    largest = float(np.abs(P.data).max()) if P is not None and P.nnz else 0.0
    if not largest > 0 or not np.isfinite(largest):
        return 0
    return int(np.clip(-np.round(np.log2(largest)), 0, QP_SCALE_MAX))


class HighsModel:
    """A LinearForm loaded into HiGHS, ready to re-solve with new objective coefficients."""

    def __init__(self, form: LinearForm, *, theta: np.ndarray | None = None,
                 time_limit: float | None = None, seed: int | None = None,
                 threads: int | None = None) -> None:
        self.form = form
        self.h = new_highs()
        if time_limit is not None:
            self.h.setOptionValue("time_limit", float(time_limit))
        if seed is not None:
            self.h.setOptionValue("random_seed", int(seed))
        if threads is not None:
            self.h.setOptionValue("threads", int(threads))
        if form.is_qp:
            self.h.setOptionValue("qp_iteration_limit", qp_iteration_limit(form.n, form.m))
            self.h.setOptionValue("user_objective_scale", qp_scale_exponent(form.P))
        self._load(theta)
        self._cols: np.ndarray | None = None  # 0 .. n-1, made when costs first change
        self._now = self._check = None  # a continuous QP at θ with the current costs
        if form.is_qp and not form.is_mip:
            self._now, self._check = _checked_forms(form, theta)

    def _load(self, theta: np.ndarray | None) -> None:
        form = self.form
        c, c0 = form.objective_at(theta)
        A, rl, ru = form.rows_at(theta)
        # with no columns every row's activity is 0: HiGHS calls the model empty, feasible or not
        self._empty_infeasible = form.n == 0 and bool(np.any(rl > 1e-9) or np.any(ru < -1e-9))
        csc = A.tocsc()  # (its result knows its indices are sorted: no O(nnz) check below)
        if not csc.has_sorted_indices:
            csc.sort_indices()
        # (an LP's: zeros from the allocator, no cast of a million flags)
        integrality = (form.integer.astype(np.int32) if form.is_mip
                       else np.zeros(form.n, dtype=np.int32))
        args = (
            form.n, form.m, csc.nnz,
        )
        common = (
            float(c0), _floats(c), _floats(form.lb), _floats(form.ub), _floats(rl), _floats(ru),
            csc.indptr.astype(np.int32, copy=False), csc.indices.astype(np.int32, copy=False),
            csc.data.astype(float, copy=False),
        )
        col = highspy.MatrixFormat.kColwise
        minimize = highspy.ObjSense.kMinimize
        if form.is_qp:
            lower = sp.tril(form.P, format="csc")
            lower.sort_indices()
            self.h.passModel(
                *args, lower.nnz, col, highspy.HessianFormat.kTriangular, minimize, *common,
                lower.indptr.astype(np.int32), lower.indices.astype(np.int32),
                lower.data.astype(float), integrality,
            )
        else:
            self.h.passModel(*args, col, minimize, *common, integrality)

    def set_objective(self, c: np.ndarray, c0: float = 0.0) -> None:
        """Push a new cost vector (the only change when a prediction changes)."""
        c = np.asarray(c, dtype=float)
        if self._cols is None:
            self._cols = np.arange(self.form.n, dtype=np.int32)
        self.h.changeColsCost(self.form.n, self._cols, c)
        self.h.changeObjectiveOffset(float(c0))
        for form in (self._now, self._check):
            if form is not None:
                form.c, form.c0 = c, float(c0)

    def solve_fast(self) -> np.ndarray | None:
        """Re-solve and return x only (None unless optimal): the oracle's hot path. A
        continuous QP's answer is KKT-checked as `verified` checks `solve`'s (the oracle's
        convex-QP training meets the same wrong `optimal`s); one that fails goes through the
        same re-solves, and their best point (checked, or feasible) is returned. LPs and MIPs
        pay nothing."""
        h = self.h
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        solution = h.getSolution()
        x = np.asarray(solution.col_value, dtype=float)
        if self._now is None or kkt_residuals(self._check, x, np.asarray(solution.row_dual),
                                              np.asarray(solution.col_dual)).holds():
            return x
        raw = verified(self._now, None, self.solve())
        return raw.x if raw.status in ("optimal", "feasible") else None

    def solve(self, *, want_duals: bool = True) -> RawResult:
        h = self.h
        h.run()
        model_status = h.getModelStatus()
        if model_status == highspy.HighsModelStatus.kUnboundedOrInfeasible:
            # presolve found no feasible-and-bounded point but can't say which; solving without
            # presolve tells infeasible from unbounded
            h.setOptionValue("presolve", "off")
            try:
                h.run()
            finally:
                h.setOptionValue("presolve", "choose")
            model_status = h.getModelStatus()
        status = _STATUS.get(model_status, "error")
        if model_status == highspy.HighsModelStatus.kModelEmpty and self._empty_infeasible:
            status = "infeasible"
        info = h.getInfo()
        x = obj = duals = reduced = gap = None
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        if status == "time_limit":
            status = "feasible" if has_solution else "time_limit"  # (no point: claims none)
        if has_solution and status in ("optimal", "feasible"):
            sol = h.getSolution()
            x = np.asarray(sol.col_value, dtype=float)
            obj = float(info.objective_function_value)
            if want_duals and not self.form.is_mip and sol.dual_valid:
                duals = np.asarray(sol.row_dual, dtype=float)
                reduced = np.asarray(sol.col_dual, dtype=float)
            if self.form.is_mip:
                gap = float(info.mip_gap)
        message = h.modelStatusToString(model_status)
        if model_status == highspy.HighsModelStatus.kModelEmpty and status == "optimal":
            # no columns: HiGHS gives no solution, but the empty point is one, at the
            # objective's constant (as the pyomo backend reports it)
            return optimal_without_columns(self.form, np.zeros(0), float(h.getLp().offset_),
                                           message)
        result = RawResult(status, x, obj, duals, gap, message, col_duals=reduced)
        if status == "infeasible" and not self.form.is_mip:
            result.iis_rows = self._iis()
        return result

    def _iis(self) -> list[int] | None:
        """Rows of an irreducible infeasible subset (HiGHS's IIS search from the LP rows). A
        QP's rows are searched as an LP's: HiGHS 1.16's search never returned on a QP (an
        infeasible 3-variable QP hung `dfl solve`), and the objective plays no part in it."""
        h = self.h
        if self.form.is_qp:
            h = new_highs()
            h.passModel(self.h.getLp())
        try:
            h.setOptionValue("iis_strategy", 2)
            status, iis = h.getIis()
        except Exception:  # a highspy without IIS support
            return None
        if status != highspy.HighsStatus.kOk:
            return None
        rows = list(getattr(iis, "row_index_", []) or [])
        return [int(r) for r in rows] or None


DENSE_CHECK = 40_000  # n·(n + m) up to which solve_fast's check uses dense P and A


def _checked_forms(form: LinearForm, theta) -> tuple[LinearForm, LinearForm]:
    """The continuous QP at θ (its costs replaced by each `set_objective`), for `verified`,
    and the same with dense P and A for `solve_fast`'s check where small: scipy's sparse
    products cost more than the arithmetic there (portfolio_qp, 10 columns: the check took
    100 µs sparse, 53 dense, against HiGHS's 300 µs solve)."""
    c, c0 = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    now = replace(form, c=c, c0=c0, A=A, rl=rl, ru=ru, n_theta=0)
    if form.n * (form.n + form.m) > DENSE_CHECK:
        return now, now
    return now, replace(now, P=form.P.toarray(), A=sp.csr_array(A).toarray())


def solve(form: LinearForm, *, theta=None, time_limit=None, seed=None) -> tuple[RawResult, float]:
    start = time.perf_counter()
    model = HighsModel(form, theta=theta, time_limit=time_limit, seed=seed)
    result = verified(form, theta, model.solve(), _left(time_limit, start), seed)
    result = polished(form, theta, result, seed, _left(time_limit, start))
    return result, time.perf_counter() - start


def solve_instance(inst: Instance, *, time_limit=None, seed=None):
    """Solve a bound instance with HiGHS -> Solution (values in the model's names)."""
    start = time.perf_counter()
    form = linear_form(inst)
    theta = inst.theta_for_solve()
    model = HighsModel(form, theta=theta, time_limit=time_limit, seed=seed)
    check_representable(inst, form, theta, highs_limits(model.h))
    given = inst.start()
    if given is not None and form.is_mip:  # AMPL's initial values: a (partial) MIP start
        model.h.setSolution(len(given[0]), given[0].astype(np.int32), _floats(given[1]))
    raw = verified(form, theta, model.solve(), _left(time_limit, start), seed)
    raw = polished(form, theta, raw, seed, _left(time_limit, start))
    if raw.status == "infeasible" and not form.is_mip and form.kept_rows is not None:
        # rows turned into bounds hide from an IIS: look for one on the unreduced form
        full = build_linear(inst, reduce=False)
        raw.iis_rows = HighsModel(full, theta=theta).solve().iis_rows
        return to_solution(inst, full, raw, "highs", time.perf_counter() - start)
    return to_solution(inst, form, raw, "highs", time.perf_counter() - start)


def polished(form: LinearForm, theta, raw: RawResult, seed: int | None = None,
             time_limit: float | None = None) -> RawResult:
    """A MIP's point with its integer columns rounded and the continuous ones solved again
    with those fixed. HiGHS calls a column integral within 1e-6 of an integer, and a row's
    coefficient multiplies that slack: the binary of `x >= 2 or ...` (grammar/disjunctions.py)
    at 0.9999992, times the part's reach of -30006 within x's bounds, let x = 1.992 pass (seed
    300767 of the logical-constraint check in docs/reliability.md). A point HiGHS returned
    with every integer column exact is kept as it is. Where the rounded columns leave no
    feasible point (seed 401331: -999996.25 for the optimum -3.33), the MIP is solved again
    with HiGHS's tightest integrality tolerance and that answer rounded; where that fails
    too, no point is claimed (`error`)."""
    if not form.is_mip or raw.x is None or raw.status not in ("optimal", "feasible"):
        return raw
    done = _rounded(form, theta, raw)
    if done is not None:
        return done
    left = None if time_limit is None else max(time_limit, 0.1)  # (HiGHS refuses <= 0)
    model = HighsModel(form, theta=theta, seed=seed, time_limit=left)
    model.h.setOptionValue("mip_feasibility_tolerance", TIGHTEST_INTEGRALITY)
    again = model.solve(want_duals=False)
    said = ("with its integer columns rounded, HiGHS's point left no feasible point; solved "
            f"again with integrality to {TIGHTEST_INTEGRALITY:g}")
    again.message = f"{again.message}; {said}"
    if again.x is None or again.status not in ("optimal", "feasible"):
        return again
    done = _rounded(form, theta, again)
    if done is not None:
        return done
    return RawResult("error", None, None, message=said,
                     warning=f"no answer: {said}, and its point rounded left none either")


TIGHTEST_INTEGRALITY = 1e-10  # HiGHS's least mip_feasibility_tolerance


def _rounded(form: LinearForm, theta, raw: RawResult) -> RawResult | None:
    """`raw` with its integer columns rounded and the others re-solved with them fixed (as
    it is where they are whole already); None where that leaves no feasible point."""
    whole = form.integer.astype(bool)
    rounded = np.clip(np.round(raw.x[whole]), np.ceil(form.lb[whole] - 1e-9),
                      np.floor(form.ub[whole] + 1e-9))
    if np.array_equal(rounded, raw.x[whole]):
        return raw
    lb, ub = form.lb.astype(float), form.ub.astype(float)
    lb[whole] = ub[whole] = rounded
    fixed = replace(form, lb=lb, ub=ub, integer=np.zeros_like(form.integer))
    again = HighsModel(fixed, theta=theta).solve(want_duals=False)
    if again.status != "optimal":
        return None
    x = again.x.copy()
    x[whole] = rounded
    return replace(raw, x=x, objective=again.objective)


def _left(time_limit: float | None, start: float) -> float | None:
    return None if time_limit is None else time_limit - (time.perf_counter() - start)


def verified(form: LinearForm, theta, raw: RawResult, time_limit: float | None = None,
             seed: int | None = None) -> RawResult:
    """A continuous QP's `optimal` (or `error`, `unbounded`, or a point HiGHS's QP iteration
    limit stopped at) from HiGHS, checked against the KKT conditions at the model's scale
    (common.kkt_residuals): HiGHS's active-set QP solver judges its tolerances on the data as
    given, and answered `optimal` at a non-optimal point, `error` ("claims optimality, but
    with primal infeasibilities") or `unbounded` (of a strictly convex QP) on QPs with one
    entry 1e3 to 1e6 times the others (benchmarks/fuzz.py, docs/reliability.md). Such an
    answer is solved again on the equilibrated form (equilibrate.py), then by Clarabel
    (clarabel_qp.py: an interior point, no active set), whose answers must pass the same
    check (a KKT point of a convex QP is its optimum: that refutes `unbounded` too); the
    message says which solver answered. If none does, Clarabel's checked ray proves
    `unbounded`; else an `unbounded` stands, an `optimal` says it is not proven
    (`common.unproven`) and an iteration limit's point is an `error` (it had reported
    objectives near -1e36 as `feasible`: seed 5031414). LPs and MIPs are not checked (the
    simplex's and the MIP solver's answers had no such failure): they pay nothing."""
    stopped = raw.status == "feasible" and "iteration" in raw.message.lower()  # (pyomo's too)
    if not form.is_qp or form.is_mip or not (stopped or raw.status in CHECKED):
        return raw
    first = _optimality(form, theta, raw)
    if first is not None and first.holds():
        return raw
    failed = f"fails the KKT check ({first.describe()})" if first is not None else ""
    said = (f"HiGHS stopped at its QP iteration limit ({raw.message})" + (
        f", at a point that {failed}" if failed else "")) if stopped else \
        f"HiGHS's `{raw.status}` " + (failed or f"({raw.message})")
    answers = [(raw, first)]
    stop = None if time_limit is None else time.perf_counter() + time_limit
    for who, attempt in _attempts(form, theta, seed):
        left = None if stop is None else stop - time.perf_counter()
        if left is not None and left <= 0:
            break
        again = attempt(left)
        verdict = _optimality(form, theta, again)
        if again.status == "optimal" and verdict is not None and verdict.holds() or \
                (again.status == "unbounded" and who == "Clarabel"):  # (its ray checked)
            again.message = f"{again.message}; {said}: {who} answered"
            return again
        answers.append((again, verdict))
        said += f"; {who}: no answer that passes" + ("" if verdict else f" ({again.message})")
    if raw.status == "unbounded":
        return raw
    if stopped:
        return RawResult("error", None, None, message=said, warning=f"no answer: {said}")
    checked = [(r, k) for r, k in answers if k is not None]
    best, verdict = min(checked, key=lambda pair: (not pair[1].feasible(), pair[0].objective),
                        default=(raw, None))
    return unproven(best, verdict, said)


CHECKED = ("optimal", "error", "unbounded")  # HiGHS's QP answers `verified` checks


def _attempts(form: LinearForm, theta, seed):
    """`verified`'s re-solves in order, each (who, solve given the time left): HiGHS on the
    equilibrated form with each of RESOLVE_OPTIONS, then Clarabel on the form itself."""
    scaled = equilibrated(form, theta)
    for options in RESOLVE_OPTIONS:
        yield ("a re-solve with rows and columns equilibrated" + (
            ", no regularization" if options else ""),
            lambda left, options=options: _resolve(scaled, options, left, seed))
    yield "Clarabel", lambda left: solve_form(form, theta, left)


# The re-solves' options: without HiGHS's proximal regularization first (its 1e-7 · x̂ is a
# stationarity error of its own where the equilibrated x̂ is large: 2e-3 at the model's
# scale in seed 5036872's column with the 7.9e5 entry), then with it, which a singular
# reduced Hessian may need.
RESOLVE_OPTIONS = ({"qp_regularization_value": 0.0}, {})


def _resolve(scaled: tuple, options: dict, time_limit, seed) -> RawResult:
    """HiGHS on the equilibrated form (`equilibrate.equilibrated`'s triple) with `options`,
    its answer mapped back to the original form."""
    form, D, E = scaled
    model = HighsModel(form, time_limit=time_limit, seed=seed)
    for name, value in options.items():
        model.h.setOptionValue(name, value)
    return unscaled(model.solve(), D, E)


def _optimality(form: LinearForm, theta, raw: RawResult):
    """`kkt_residuals` of an answer with a point and duals (None without them)."""
    if raw.x is None or raw.row_duals is None:
        return None
    return kkt_residuals(form, raw.x, raw.row_duals, raw.col_duals, theta)
