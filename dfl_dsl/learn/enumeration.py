"""Every feasible point of a small pure-integer model, so the oracle becomes a matrix product.

Decision-focused learning re-solves one feasible set with thousands of cost vectors. When every
variable is integer with finite bounds and the feasible set is small (a knapsack whose capacity
holds a handful of items, a small assignment), listing its points once turns each solve into
argmin over rows of `costs @ pointsᵀ` — exact, batched, and free of a MILP solver's fixed cost
per call (several milliseconds in HiGHS even when branch and bound needs no node). This is the
solution pool of Mulamba et al. ("Contrastive losses and solution caching for
predict-and-optimize", IJCAI 2021) carried to completeness: a pool holding every feasible point
gives the exact argmin, not an approximation.

The listing is a breadth-first branching over the columns, one column at a time and vectorized
over the frontier of partial assignments. A partial assignment survives only while every row
can still be satisfied by the columns left (interval arithmetic on row activities), so the
frontier stays close to the number of feasible points when the rows bound it. Each level keeps
only (parent, value) pairs; the points are read back at the end. The search gives up — the
caller falls back to its solver — once the frontier or the work passes the limits.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..compile.linear import LinearForm

MAX_POINTS = 200_000
MAX_POINT_ENTRIES = 8_000_000  # points × columns kept as float64: 64 MB
MAX_WORK = 400_000_000  # frontier rows × model rows summed over the levels
MAX_EXPANSION = 20_000_000  # row activities held while one column branches: 160 MB
MAX_DOMAIN = 64  # values per integer column


def why_not_enumerable(form: LinearForm) -> str | None:
    """Why the form's feasible set can't be listed (None when it can be tried)."""
    if form.is_qp:
        return "the objective is quadratic"
    if not np.all(form.integer):
        return "some variables are continuous"
    if form.theta_in_constraints:
        return "predicted params enter the constraints"
    if not (np.all(np.isfinite(form.lb)) and np.all(np.isfinite(form.ub))):
        return "some integer variables have no finite bound"
    if np.any(np.floor(form.ub + 1e-9) - np.ceil(form.lb - 1e-9) + 1 > MAX_DOMAIN):
        return f"some integer variables take more than {MAX_DOMAIN} values"
    return None


def feasible_points(form: LinearForm, *, max_points: int = MAX_POINTS,
                    tol: float = 1e-9) -> np.ndarray | None:
    """All integer points x with lb ≤ x ≤ ub and rl ≤ Ax ≤ ru, as a (K, n) float array, or None
    when the form isn't enumerable or the points (or the work to list them) pass the limits."""
    if why_not_enumerable(form) is not None:
        return None
    n, m = form.n, form.m
    max_points = min(max_points, MAX_POINT_ENTRIES // max(n, 1))
    lb = np.ceil(form.lb - tol)
    ub = np.floor(form.ub + tol)
    if np.any(lb > ub):
        return np.zeros((0, n))
    A = sp.csc_array(form.A).toarray() if m else np.zeros((0, n))
    lo_part, hi_part = np.minimum(A * lb, A * ub), np.maximum(A * lb, A * ub)
    # the least and the most the columns after j can add to each row
    rest_lo = np.cumsum(lo_part[:, ::-1], axis=1)[:, ::-1]
    rest_hi = np.cumsum(hi_part[:, ::-1], axis=1)[:, ::-1]
    slack = tol * (1.0 + np.maximum(np.abs(np.nan_to_num(form.rl, posinf=0, neginf=0)),
                                    np.abs(np.nan_to_num(form.ru, posinf=0, neginf=0))))
    rl, ru = form.rl - slack, form.ru + slack
    activity = np.zeros((1, m))
    parents: list[np.ndarray] = []
    values: list[np.ndarray] = []
    work = 0
    for j in range(n):
        domain = np.arange(lb[j], ub[j] + 1)
        k = len(activity)
        if k * len(domain) * max(m, 1) > MAX_EXPANSION:
            return None
        parent = np.repeat(np.arange(k), len(domain))
        value = np.tile(domain, k)
        activity = activity[parent] + value[:, None] * A[:, j]
        after = j + 1
        if after < n:
            keep = np.all(activity + rest_lo[:, after] <= ru, axis=1)
            keep &= np.all(activity + rest_hi[:, after] >= rl, axis=1)
        else:
            keep = np.all((activity <= ru) & (activity >= rl), axis=1)
        parent, value, activity = parent[keep], value[keep], activity[keep]
        work += len(keep) * max(m, 1)
        if len(activity) > max_points or work > MAX_WORK:
            return None
        parents.append(parent)
        values.append(value)
    points = np.empty((len(activity), n))
    index = np.arange(len(activity))
    for j in range(n - 1, -1, -1):
        points[:, j] = values[j][index]
        index = parents[j][index]
    return points
