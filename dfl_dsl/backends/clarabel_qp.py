"""A continuous QP's LinearForm solved by Clarabel directly: the last resort of `highs.verified`
(used by `--backend highs` and `--backend pyomo`) when HiGHS's answer and its re-solves on the
equilibrated form all fail the KKT check.

Clarabel is an interior-point method (Goulart & Chen, "Clarabel: An interior-point solver for
conic programs with quadratic objectives", arXiv:2405.12762, 2024): it has no active set to
misjudge, and it proves unboundedness by a certificate (a ray d with Pd = 0, Ad in the
recession cone, cᵀd < 0: its `DualInfeasible`). It is installed with CVXPY. The form is handed
over as arrays (no CVXPY canonicalization): each finite side of a row or bound becomes one row
of Clarabel's `Ax + s = b, s ∈ K` (equal sides one zero-cone row), and its duals are mapped
back to HiGHS's convention, so that the same `common.kkt_residuals` judges the answer.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..compile.linear import LinearForm
from .common import RawResult

try:
    import clarabel
except ImportError:  # (a cvxpy without it: the fallback is then skipped)
    clarabel = None

_STATUS = {"Solved": "optimal", "AlmostSolved": "optimal", "PrimalInfeasible": "infeasible",
           "DualInfeasible": "unbounded", "MaxIterations": "time_limit",
           "MaxTime": "time_limit"}


def solve_form(form: LinearForm, theta=None, time_limit: float | None = None) -> RawResult:
    """Clarabel's answer on the form at θ, in HiGHS's terms: x, the canonical objective, row
    duals y and bound duals z (≥ 0 on an active lower side, ≤ 0 on an upper one). Its
    `AlmostSolved` counts as `optimal` here: the caller's KKT check decides. An answer whose
    name is not in `_STATUS` (numerical error, insufficient progress) is an `error`."""
    if clarabel is None:
        return RawResult("error", None, None, message="Clarabel is not installed")
    c, c0 = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    stacked = sp.vstack([sp.csr_array(A), sp.identity(form.n, format="csr")], format="csr")
    lo, hi = np.concatenate([rl, form.lb]), np.concatenate([ru, form.ub])
    equal = np.isfinite(lo) & (lo == hi)
    upper = np.isfinite(hi) & ~equal
    lower = np.isfinite(lo) & ~equal
    M = sp.vstack([stacked[equal], stacked[upper], -stacked[lower]], format="csc")
    b = np.concatenate([hi[equal], hi[upper], -lo[lower]])
    cones = [clarabel.ZeroConeT(int(equal.sum())), clarabel.NonnegativeConeT(
        int(upper.sum() + lower.sum()))]
    P = sp.triu(form.P if form.P is not None else sp.csc_array((form.n, form.n)), format="csc")
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    if time_limit is not None:
        settings.time_limit = max(float(time_limit), 0.0)
    answer = clarabel.DefaultSolver(P, np.asarray(c, float), M, b, cones, settings).solve()
    name = str(answer.status).split(".")[-1]
    status = _STATUS.get(name, "error")
    message = f"Clarabel: {name}"
    if status == "unbounded" and not proves_unbounded(form, theta, np.asarray(answer.x)):
        return RawResult("error", None, None, message=f"{message}, whose ray fails the check "
                         "(Pd = 0, Ad within the rows' recession cone, cᵀd < 0)")
    if status != "optimal":
        return RawResult(status, None, None, message=message)
    x = np.asarray(answer.x, dtype=float)
    z = np.asarray(answer.z, dtype=float)
    k, u = int(equal.sum()), int(upper.sum())
    # Clarabel: Px + c + Mᵀz = 0, so a row's HiGHS dual is −z (equal, upper), +z (lower)
    y = np.zeros(lo.size)
    y[equal] -= z[:k]
    y[upper] -= z[k:k + u]
    y[lower] += z[k + u:]
    objective = float(0.5 * x @ (form.P @ x) if form.P is not None else 0.0) + float(
        c @ x) + c0
    return RawResult(status, x, objective, y[: form.m], message=message,
                     col_duals=y[form.m:])


RAY_TOLERANCE = 1e-8  # relative, as Clarabel's own infeasibility tolerances (tol_infeas_rel)


def proves_unbounded(form: LinearForm, theta, d: np.ndarray, tol: float = RAY_TOLERANCE) -> bool:
    """Whether d is a ray along which the objective falls without end: Pd = 0 (dᵀPd, P being
    PSD), every row and bound holds along it (Ad ≤ 0 under a finite upper side, ≥ 0 over a
    lower one) and cᵀd < 0, each relative to d's size and the data's. Clarabel's certificate
    is judged at its own scaled data's tolerance: on a strictly convex QP with one cost of
    9.3e18 (benchmarks/fuzz.py seed 5031414; λmin(P) = 0.053) it answered `DualInfeasible`
    with a ray of length 1e-13 and dᵀPd = 5.6‖d‖², which no PSD P's ray can have."""
    size = float(np.abs(d).max(initial=0.0))
    if not np.all(np.isfinite(d)) or size == 0:
        return False
    d = d / size
    c, _ = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    Ad, reach = A @ d, abs(A) @ np.ones(form.n)
    curved = float(d @ (form.P @ d)) if form.P is not None else 0.0
    scale = float(abs(form.P).max()) if form.P is not None and form.P.nnz else 0.0
    along = (np.all(Ad[np.isfinite(ru)] <= tol * reach[np.isfinite(ru)])
             and np.all(Ad[np.isfinite(rl)] >= -tol * reach[np.isfinite(rl)])
             and np.all(d[np.isfinite(form.ub)] <= tol) and np.all(d[np.isfinite(form.lb)] >= -tol))
    return bool(along and curved <= tol * scale and float(c @ d) < -tol * float(
        np.abs(c).max(initial=0.0)))
