"""The numerical convexity check of a quadratic objective the DCP rules can't prove convex.

`sum{i in S, j in S} cov[i, j] * x[i] * x[j]` is convex exactly when the matrix Q it assembles
is positive semidefinite, which depends on the data: as AMPL's solvers do (CPLEX, Gurobi and
HiGHS test Q before solving), the check is numerical, made once the data are bound. Q is split
into the connected components of its sparsity pattern (a separable or block-diagonal Q is many
small blocks) and the smallest eigenvalue of each block is computed: small blocks of one size
at once with numpy's batched `eigvalsh`, a large one with ARPACK (`eigsh`, smallest algebraic).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..errors import DflError
from ..evaluate.nonlinear import NL
from ..instance import Instance
from .expand import compiled
from .linear import Columns, split_poly

DENSE_LIMIT = 2000  # blocks up to this size get a dense eigvalsh
BATCH_LIMIT = 64  # blocks up to this size are stacked by size and solved in one call
RELATIVE_TOL = 1e-9  # an eigenvalue above -tol * max|Q| counts as zero


def check_objective_psd(inst: Instance) -> None:
    """Refuse, at the objective, a minimized quadratic whose Q is not PSD (a maximized one
    whose Q is not NSD), naming its most negative (positive) eigenvalue."""
    decl = inst.model.objective
    objective = compiled(inst).objective
    poly = objective.poly if isinstance(objective, NL) else objective
    Q = objective_q(poly, Columns(inst, poly.width))
    if Q.nnz == 0:
        return
    sign = 1.0 if decl.sense == "minimize" else -1.0
    lowest = smallest_eigenvalue(sign * Q)
    scale = float(np.abs(Q.data).max())
    if lowest >= -RELATIVE_TOL * max(scale, 1.0):
        return
    if sign > 0:
        what = f"not convex: the Q of its products of variables has a negative eigenvalue " \
               f"(the smallest is {lowest:.6g})"
        need = "a minimized quadratic needs a positive semidefinite Q"
    else:
        what = f"not concave: the Q of its products of variables has a positive eigenvalue " \
               f"(the largest is {-lowest:.6g})"
        need = "a maximized quadratic needs a negative semidefinite Q"
    error = DflError(f"objective `{decl.name}` is {what}", decl.body.pos,
                     hint=f"{need}; check the data that multiply the products (a covariance "
                          "matrix must be PSD)")
    raise error.located(inst.model.filename, inst.model.source)


def objective_q(poly, cols: Columns) -> sp.csr_array:
    """The symmetric Q with xᵀQx the objective's products of variables (its x·x terms)."""
    _, _, _, _, quad = split_poly(poly, cols, "the objective")
    _, a, b, v = quad
    n = cols.n
    rows = np.concatenate([a, b])
    cols_ = np.concatenate([b, a])
    Q = sp.coo_array((np.concatenate([v, v]) / 2, (rows, cols_)), shape=(n, n)).tocsr()
    Q.sum_duplicates()
    Q.eliminate_zeros()
    return Q


def smallest_eigenvalue(Q: sp.csr_array) -> float:
    """The smallest eigenvalue of a symmetric sparse Q (its unused rows and columns aside):
    the least over the blocks of its connected components."""
    coo = Q.tocoo()
    used = np.unique(np.concatenate([coo.row, coo.col]))
    Q = Q[used][:, used]
    count, labels = connected_components(Q, directed=False)
    sizes = np.bincount(labels, minlength=count)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    local = np.empty(len(labels), dtype=np.int64)  # each row's place in its block
    local[order] = np.arange(len(labels)) - starts[labels[order]]
    coo = Q.tocoo()
    lowest = np.inf
    for size in np.unique(sizes).tolist():
        blocks = np.flatnonzero(sizes == size)
        if size == 1:  # a square on its own: its coefficient
            lowest = min(lowest, float(Q.diagonal()[order[starts[blocks]]].min()))
            continue
        if size > BATCH_LIMIT:
            for b in blocks.tolist():
                idx = order[starts[b] : starts[b + 1]]
                lowest = min(lowest, _one(Q[idx][:, idx]))
            continue
        slot = np.full(count, -1, dtype=np.int64)
        slot[blocks] = np.arange(len(blocks))
        entry_slot = slot[labels[coo.row]]
        chunk = max(1, 2**22 // (size * size))  # blocks per dense stack (32 MiB)
        for lo in range(0, len(blocks), chunk):
            hi = min(lo + chunk, len(blocks))
            mine = (entry_slot >= lo) & (entry_slot < hi)
            stack = np.zeros((hi - lo, size, size))
            np.add.at(stack, (entry_slot[mine] - lo, local[coo.row[mine]],
                              local[coo.col[mine]]), coo.data[mine])
            lowest = min(lowest, float(np.linalg.eigvalsh(stack)[:, 0].min()))
    return float(lowest)


def _one(block: sp.csr_array) -> float:
    if block.shape[0] <= DENSE_LIMIT:
        return float(np.linalg.eigvalsh(block.toarray())[0])
    from scipy.sparse.linalg import eigsh

    try:
        return float(eigsh(block, k=1, which="SA", return_eigenvectors=False, tol=1e-8)[0])
    except Exception:  # ARPACK did not converge: the dense route, however long it takes
        return float(np.linalg.eigvalsh(block.toarray())[0])
