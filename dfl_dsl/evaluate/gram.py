"""The quadratic zᵀ L1ᵀ L2 z of two sparse row matrices, as sorted symbol pairs: the kernel that
compiles sums of products of affine rows, Σ_t (l1_t·z)(l2_t·z).

`sum_squares(A @ X - B)`, `x @ P @ x` and `trace(Xᵀ C X)` all reduce to one such product.
scipy's sparse product (Gustavson's SMMP) costs Σ_t nnz(l1_t)·nnz(l2_t) scalar steps at sparse
speed; when the rows are dense (A @ X with A dense) that is the dense flop count at a small
fraction of BLAS speed. The rows split into independent blocks — the connected components of
the row–symbol graph (for A @ X, X n × r, one block per column of X) — and a block that is
dense enough is multiplied as a dense matrix with BLAS; the rest stays sparse. Pairs come out
of canonical CSR matrices row by row, already sorted: no global sort of the product terms.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# A block goes dense when its dense flop count is at most this many times its sparse one (BLAS
# runs ~100x faster per flop than SMMP on such rows), when its sparse cost is worth a Python
# step, and when its dense pieces fit in memory (counted in float64 entries).
DENSE_SPEEDUP = 50.0
MIN_SPARSE_COST = 1e6
MAX_GRAM_ENTRIES = 2**26  # a block's dense L1ᵀL2 (512 MiB)
CHUNK_ENTRIES = 2**23  # rows of a dense block are densified this many entries at a time

Triplets = tuple[np.ndarray, np.ndarray, np.ndarray]  # (a, b, value) with a <= b


def quadratic_pairs(l1: sp.csr_array, l2: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """zᵀ L1ᵀ L2 z for two T × W sparse matrices: (pairs (P, 2) with a <= b, sorted and
    unique; their coefficients)."""
    same = l1 is l2
    l1 = canonical(l1)
    l2 = l1 if same else canonical(l2)
    t, width = l1.shape
    n1, n2 = np.diff(l1.indptr), np.diff(l2.indptr)
    row_cost = n1.astype(float) * n2
    # a row can sit in a dense block only if its two factors are not too lopsided: a block of
    # k symbols holds rows with n1, n2 <= k, and goes dense only if k² <= DENSE_SPEEDUP·n1·n2
    candidate = DENSE_SPEEDUP * row_cost >= np.maximum(n1, n2).astype(float) ** 2
    if row_cost[candidate].sum() < MIN_SPARSE_COST:
        a, b, v = _sparse_upper(l1, l2, same)
        return np.stack([a, b], axis=1), v
    used = np.zeros(width, dtype=bool)
    used[l1.indices] = True
    used[l2.indices] = True
    if _worth_dense(t, used.sum(), row_cost.sum()):  # one dense block: no graph needed
        return assemble([_dense_block(l1, l2, same, np.arange(t), np.flatnonzero(used))], width)
    labels, comps = _blocks(l1, None if same else l2)
    row_label, col_label = labels[:t], labels[t:]
    n_rows = np.bincount(row_label, minlength=comps)
    n_cols = np.bincount(col_label[used], minlength=comps)
    cost = np.bincount(row_label, weights=row_cost, minlength=comps)
    dense = _worth_dense(n_rows, n_cols, cost)
    row_order, row_bounds = _grouped(row_label, comps)
    col_order, col_bounds = _grouped(np.where(used, col_label, comps), comps)
    parts = [_dense_block(l1, l2, same, row_order[row_bounds[c]:row_bounds[c + 1]],
                          col_order[col_bounds[c]:col_bounds[c + 1]])
             for c in np.flatnonzero(dense)]
    sparse_rows = np.flatnonzero(~dense[row_label])
    if len(sparse_rows):
        parts.append(_sparse_upper(l1[sparse_rows], l2[sparse_rows], same))
    return assemble(parts, width)


def dense_triplets(gram: np.ndarray, cols: np.ndarray) -> Triplets:
    """The quadratic zᵀ G z of a dense G over the symbols `cols` (ascending) as upper-triangle
    triplets, row-major: (a, b) gets G[a, b] + G[b, a], (a, a) gets G[a, a]."""
    upper = np.triu(gram) + np.triu(gram.T, 1)
    a, b = np.nonzero(upper)
    return cols[a], cols[b], upper[a, b]


def spread(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """values[r] once for every stored entry of row r of a CSR matrix with this indptr.

    np.repeat by the row lengths, given as intp: scipy keeps index arrays in int32 where they
    fit, and np.repeat then casts its counts element by element (3-4x slower at a million
    rows)."""
    return np.repeat(values, np.diff(indptr).astype(np.intp, copy=False))


def entry_rows(indptr: np.ndarray) -> np.ndarray:
    """The row of every stored entry of a CSR matrix (int64)."""
    return spread(np.arange(len(indptr) - 1, dtype=np.int64), indptr)


def assemble(parts: list[Triplets], width: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum triplets into sorted unique pairs (one CSR conversion: a counting sort by the first
    symbol, then short per-row sorts), dropping zeros."""
    a, b, v = parts[0] if len(parts) == 1 else (np.concatenate([p[k] for p in parts])
                                                 for k in range(3))
    m = sp.csr_array((v, (a, b)), shape=(width, width))
    m.sum_duplicates()
    m.eliminate_zeros()
    rows = entry_rows(m.indptr)
    return np.stack([rows, m.indices.astype(np.int64)], axis=1), m.data


def _sparse_upper(l1: sp.csr_array, l2: sp.csr_array, same: bool) -> Triplets:
    """The quadratic by the sparse product, as upper-triangle triplets, row-major and distinct:
    the upper triangle of P + Pᵀ (P = L1ᵀL2) with its diagonal halved — of P with the
    off-diagonal doubled when L1 is L2 (then P is symmetric)."""
    prod = sp.csr_array(l1.T @ l2)
    sym = prod if same else sp.csr_array(prod + prod.T)
    sym.sum_duplicates()  # a fresh matrix: sorts its rows in place
    sym.eliminate_zeros()
    a = entry_rows(sym.indptr)
    keep = sym.indices >= a
    a, b, v = a[keep], sym.indices[keep].astype(np.int64), sym.data[keep]
    diagonal = a == b
    v = np.where(diagonal, v, 2.0 * v) if same else np.where(diagonal, 0.5 * v, v)
    return a, b, v


def _worth_dense(rows, cols, sparse_cost):
    """Whether a block of `rows` rows over `cols` symbols, costing `sparse_cost` SMMP steps,
    is better multiplied dense (elementwise over arrays of blocks)."""
    rows, cols = np.asarray(rows, dtype=float), np.asarray(cols, dtype=float)
    return ((sparse_cost >= MIN_SPARSE_COST) & (rows * cols**2 <= DENSE_SPEEDUP * sparse_cost)
            & (cols**2 <= MAX_GRAM_ENTRIES))


def canonical(m) -> sp.csr_array:
    """m as CSR with sorted, summed entries; a copy when that needs work (sum_duplicates runs
    in place, and m's arrays may be shared by a cached value)."""
    out = m if type(m) is sp.csr_array else sp.csr_array(m)  # no re-validation of a CSR
    if not out.has_canonical_format:
        out = out.copy()
        out.sum_duplicates()
    return out


def _blocks(l1: sp.csr_array, l2: sp.csr_array | None) -> tuple[np.ndarray, int]:
    """Connected components of the bipartite graph rows ↔ symbols (either factor's entries):
    labels for the T rows then the W symbols. With two factors, row t of L2 is its own node,
    linked to row t of L1. The graph is assembled directly in CSR form from the factors."""
    t, w = l1.shape
    if l2 is None:
        k, indptr, indices = 1, l1.indptr, l1.indices + t
    else:  # node layout: L1's rows, L2's rows (each first linked to its twin), the symbols
        k = 2
        twin = np.insert(l2.indices + 2 * t, l2.indptr[:-1], np.arange(t))
        indptr = np.concatenate([l1.indptr, l1.indptr[-1] + l2.indptr[1:] + np.arange(1, t + 1)])
        indices = np.concatenate([l1.indices + 2 * t, twin])
    nodes = k * t + w
    indptr = np.concatenate([indptr, np.full(w, indptr[-1])])
    graph = sp.csr_array((np.ones(len(indices), dtype=np.int8), indices, indptr),
                         shape=(nodes, nodes))
    from scipy.sparse.csgraph import connected_components  # (~50 ms to import: only here)

    comps, labels = connected_components(graph, directed=False)
    return np.concatenate([labels[:t], labels[k * t:]]), comps


def _grouped(label: np.ndarray, comps: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices sorted by label, and where each label's run starts (label c's indices are
    order[bounds[c]:bounds[c + 1]], ascending; label == comps marks indices in no block)."""
    order = np.argsort(label, kind="stable")
    bounds = np.searchsorted(label[order], np.arange(comps + 1))
    return order, bounds


def _dense_block(l1: sp.csr_array, l2: sp.csr_array, same: bool, rows: np.ndarray,
                 cols: np.ndarray) -> Triplets:
    """One block's quadratic with BLAS (syrk when L1 is L2: half a gemm's flops)."""
    from scipy.linalg import blas  # (~100 ms to import: only for a dense block)

    k = len(cols)
    where = np.full(l1.shape[1], -1, dtype=np.int64)
    where[cols] = np.arange(k)
    gram = np.zeros((k, k), order="F")
    step = max(1, CHUNK_ENTRIES // max(k, 1))
    for start in range(0, len(rows), step):
        chunk = rows[start:start + step]
        d1 = _densify(l1, chunk, where, k)
        if same:  # the upper triangle of d1ᵀd1
            gram = blas.dsyrk(1.0, d1, beta=1.0, c=gram, trans=1, lower=0, overwrite_c=1)
        else:
            gram += d1.T @ _densify(l2, chunk, where, k)
    if same:  # zᵀ G z with G symmetric: the upper triangle, off-diagonal doubled
        upper = np.triu(gram)
        upper += np.triu(gram, 1)
        a, b = np.nonzero(upper)
        return cols[a], cols[b], upper[a, b]
    return dense_triplets(gram, cols)


def _densify(m: sp.csr_array, rows: np.ndarray, where: np.ndarray, k: int) -> np.ndarray:
    """Rows `rows` of canonical m as a dense array over the block's k symbols (`where` maps a
    symbol to its block column); Fortran order, which BLAS takes without a copy."""
    sub = m[rows]
    out = np.zeros((len(rows), k), order="F")
    out[entry_rows(sub.indptr), where[sub.indices]] = sub.data
    return out
