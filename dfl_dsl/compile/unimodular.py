"""When an integer model's LP relaxation already has integral optimal vertices.

If the constraint matrix is totally unimodular and every finite row and column bound is an
integer, every vertex of {rl <= Ax <= ru, lb <= x <= ub} is integral (Hoffman & Kruskal, 1956),
so an LP solver that returns an optimal vertex solves the integer model — shortest paths,
assignments, transportation and flow problems with integer data. The test here is the
sufficient condition of Heller & Tompkins (1956): every entry is 0 or ±1, every column has at
most two nonzeros, and the rows split into two groups such that a column's two nonzeros lie in
the same group when their signs differ and in different groups when they agree (or the same of
Aᵀ, since A is TU exactly when Aᵀ is). Network matrices (node–arc incidence) and bipartite
incidence matrices pass it. Matrices that are TU for other reasons are not recognized; the
training oracle then keeps its MILP solver, so a miss costs speed, never correctness.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .linear import LinearForm


def integral_relaxation(form: LinearForm) -> str | None:
    """None when the form's LP relaxation provably has integral vertices, else why not."""
    if form.is_qp:
        return "the objective is quadratic"
    if form.theta_in_constraints:
        return "predicted params enter the constraints"
    bounds = np.concatenate([form.rl, form.ru, form.lb, form.ub])
    finite = bounds[np.isfinite(bounds)]
    if np.any(finite != np.round(finite)):
        return "some bounds are not integers"
    A = sp.csc_array(form.A)
    A.eliminate_zeros()
    if A.nnz and not np.all(np.isin(A.data, (-1.0, 1.0))):
        return "the constraint matrix has entries other than 0, 1 and -1"
    if _two_per_line_splittable(A) or _two_per_line_splittable(sp.csc_array(A.T)):
        return None
    return "the constraint matrix is not recognized as totally unimodular"


def _two_per_line_splittable(A: sp.csc_array) -> bool:
    """Heller–Tompkins on the columns of A: at most two nonzeros each, and a 2-colouring of
    the rows with 'same colour' for opposite signs and 'different colour' for equal signs.
    Solved as connectivity on 2m nodes (row i in colour 0 or 1): a row whose two colours end
    up connected has no consistent colouring."""
    m = A.shape[0]
    counts = np.diff(A.indptr)
    if np.any(counts > 2):
        return False
    pairs = np.flatnonzero(counts == 2)
    if len(pairs) == 0:
        return True
    first, second = A.indptr[pairs], A.indptr[pairs] + 1
    i, k = A.indices[first], A.indices[second]
    same_sign = A.data[first] == A.data[second]
    # node 2r + colour; opposite signs join equal colours, equal signs join opposite ones
    flip = same_sign.astype(np.int64)
    src = np.concatenate([2 * i, 2 * i + 1])
    dst = np.concatenate([2 * k + flip, 2 * k + 1 - flip])
    graph = sp.coo_array((np.ones(len(src)), (src, dst)), shape=(2 * m, 2 * m))
    _, label = connected_components(graph, directed=False)
    return bool(np.all(label[0::2] != label[1::2]))
