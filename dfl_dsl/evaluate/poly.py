"""Vectorized polynomials of degree <= 2 over the symbol vector z = [x; θ].

A `Poly` holds R rows at once: row r is const[r] + lin[r, :] @ z + Σ_p quad[r, p] z[a_p] z[b_p].
x are the decision variables and θ the entries of `predicted`/`uncertain` params, so a product
θ_k x_j (a predicted cost times a decision) is a quadratic pair that compile turns into a linear
map from θ into the objective or constraint coefficients. Every operation is scipy.sparse or
numpy on whole arrays: this is what lets `sum{...}` over a million terms bind in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


def _csr(data, indices, indptr, shape) -> sp.csr_array:
    return sp.csr_array((data, indices, indptr), shape=shape)


def scale_rows(m: sp.csr_array, factor: np.ndarray) -> sp.csr_array:
    """diag(factor) @ m without building the diagonal."""
    m = m.tocsr()
    data = m.data * np.repeat(factor, np.diff(m.indptr))
    return _csr(data, m.indices, m.indptr, m.shape)


def segment_sum_rows(m: sp.csr_array, starts: np.ndarray) -> sp.csr_array:
    """Sum contiguous row groups: group g is rows starts[g]:starts[g+1]."""
    m = m.tocsr()
    indptr = m.indptr[starts] - m.indptr[starts[0]]
    span = slice(m.indptr[starts[0]], m.indptr[starts[-1]])
    # copies: sum_duplicates works in place and must not touch `m` (a cached value may own it)
    out = _csr(m.data[span].copy(), m.indices[span].copy(), indptr, (len(starts) - 1, m.shape[1]))
    out.sum_duplicates()
    return out


@dataclass
class Poly:
    const: np.ndarray  # (R,)
    lin: sp.csr_array  # (R, Z)
    quad: sp.csr_array | None = None  # (R, P)
    pairs: np.ndarray | None = None  # (P, 2), a <= b

    # ------------------------------------------------------------ construction
    @staticmethod
    def zeros(rows: int, width: int) -> Poly:
        return Poly(np.zeros(rows), _csr(np.zeros(0), np.zeros(0, np.int64),
                                         np.zeros(rows + 1, np.int64), (rows, width)))

    @staticmethod
    def constant(values: np.ndarray, width: int) -> Poly:
        values = np.asarray(values, dtype=float).ravel()
        p = Poly.zeros(len(values), width)
        p.const = values.copy()
        return p

    @staticmethod
    def symbols(columns: np.ndarray, width: int) -> Poly:
        """Row r is z[columns[r]]."""
        columns = np.asarray(columns, dtype=np.int64).ravel()
        rows = len(columns)
        lin = _csr(np.ones(rows), columns, np.arange(rows + 1, dtype=np.int64), (rows, width))
        return Poly(np.zeros(rows), lin)

    # ------------------------------------------------------------ facts
    @property
    def rows(self) -> int:
        return len(self.const)

    @property
    def width(self) -> int:
        return self.lin.shape[1]

    @property
    def degree(self) -> int:
        if self.quad is not None and self.quad.nnz:
            return 2
        return 1 if self.lin.nnz else 0

    def columns(self) -> np.ndarray:
        """The symbols this polynomial uses."""
        cols = [self.lin.indices]
        if self.quad is not None and self.pairs is not None:
            used = np.unique(self.quad.indices)
            cols.append(self.pairs[used].ravel())
        return np.unique(np.concatenate(cols))

    # ------------------------------------------------------------ row maps
    def take(self, idx: np.ndarray) -> Poly:
        idx = np.asarray(idx, dtype=np.int64)
        quad = self.quad[idx] if self.quad is not None else None
        return Poly(self.const[idx], self.lin[idx], quad, self.pairs)

    def scale(self, factor: np.ndarray) -> Poly:
        factor = np.broadcast_to(np.asarray(factor, dtype=float), (self.rows,))
        quad = scale_rows(self.quad, factor) if self.quad is not None else None
        return Poly(self.const * factor, scale_rows(self.lin, factor), quad, self.pairs)

    def rowmap(self, m: sp.csr_array) -> Poly:
        """New rows as sparse combinations of these: m @ self (m is R_new × R)."""
        m = sp.csr_array(m)
        quad = (m @ self.quad).tocsr() if self.quad is not None else None
        return Poly(m @ self.const, (m @ self.lin).tocsr(), quad, self.pairs)

    def segment_sum(self, starts: np.ndarray) -> Poly:
        groups = len(starts) - 1
        owner = np.repeat(np.arange(groups), np.diff(starts))
        const = np.bincount(owner, weights=self.const, minlength=groups)
        quad = segment_sum_rows(self.quad, starts) if self.quad is not None else None
        return Poly(const, segment_sum_rows(self.lin, starts), quad, self.pairs)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other: Poly) -> Poly:
        const = self.const + other.const
        lin = (self.lin + other.lin).tocsr()
        if self.quad is None and other.quad is None:
            return Poly(const, lin)
        quad, pairs = _merge_quads(self, other)
        return Poly(const, lin, quad, pairs)

    def __neg__(self) -> Poly:
        return self.scale(-1.0)

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def add_constant(self, values: np.ndarray) -> Poly:
        return Poly(self.const + values, self.lin, self.quad, self.pairs)

    def times(self, other: Poly) -> Poly:
        """Rowwise product; the result must stay of degree <= 2 (the checker ensures it)."""
        if self.degree == 0:
            return other.scale(self.const)
        if other.degree == 0:
            return self.scale(other.const)
        if self.degree + other.degree > 2:
            raise ValueError("product of degree > 2")
        cross = _outer_rows(self.lin, other.lin)
        # (c1 + l1)(c2 + l2) = c2 (c1 + l1) + c1 l2 + l1 l2
        result = self.scale(other.const) + Poly(np.zeros(self.rows), other.scale(self.const).lin)
        return result + cross

    def square_sum(self, weight: sp.spmatrix | np.ndarray | None = None) -> Poly:
        """One row: Σ_r (row_r)² — or rowᵀ W row for a symmetric W — via a Gram matrix, which
        is far cheaper than expanding products row by row."""
        lin = self.lin
        const = self.const
        if weight is None:
            gram = (lin.T @ lin).tocoo()
            ctl = lin.T @ const
            c0 = float(const @ const)
        else:
            w = sp.csr_array(weight) if sp.issparse(weight) else np.asarray(weight)
            wl = w @ lin
            gram = sp.coo_array(lin.T @ wl)
            ctl = (wl.T @ const) + (lin.T @ (w @ const))
            ctl = 0.5 * ctl
            c0 = float(const @ (w @ const))
        return _from_symmetric(gram, 2.0 * np.asarray(ctl).ravel(), c0, self.width)


def _from_symmetric(gram: sp.coo_array, linear: np.ndarray, const: float, width: int) -> Poly:
    """A one-row Poly zᵀ G z + linear @ z + const from a symmetric sparse G."""
    gram = sp.coo_array(gram)
    a, b, v = gram.row.astype(np.int64), gram.col.astype(np.int64), gram.data
    keep = a <= b
    a, b, v = a[keep], b[keep], np.where(a[keep] == b[keep], v[keep], 2 * v[keep])
    nz = v != 0
    a, b, v = a[nz], b[nz], v[nz]
    pairs, inverse = _unique_pairs(a, b, width)
    values = np.bincount(inverse, weights=v, minlength=len(pairs))
    quad = _csr(values, np.arange(len(pairs), dtype=np.int64),
                np.array([0, len(pairs)], dtype=np.int64), (1, len(pairs)))
    nzl = np.nonzero(linear)[0]
    lin = _csr(linear[nzl], nzl.astype(np.int64), np.array([0, len(nzl)], dtype=np.int64),
               (1, width))
    return Poly(np.array([const]), lin, quad, pairs)


def _unique_pairs(a: np.ndarray, b: np.ndarray, width: int):
    codes = a * np.int64(width) + b
    uniq, inverse = np.unique(codes, return_inverse=True)
    pairs = np.stack([uniq // width, uniq % width], axis=1).astype(np.int64)
    return pairs, inverse


def _merge_quads(p: Poly, q: Poly):
    parts = [(x.quad.tocoo(), x.pairs) for x in (p, q) if x.quad is not None]
    rows = np.concatenate([m.row for m, _ in parts]).astype(np.int64)
    a = np.concatenate([pr[m.col, 0] for m, pr in parts])
    b = np.concatenate([pr[m.col, 1] for m, pr in parts])
    v = np.concatenate([m.data for m, _ in parts])
    return _quad_from_triplets(rows, a, b, v, p.rows, p.width)


def _quad_from_triplets(rows, a, b, v, nrows: int, width: int):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs, inverse = _unique_pairs(lo, hi, width)
    quad = sp.coo_array((v, (rows, inverse)), shape=(nrows, len(pairs))).tocsr()
    quad.sum_duplicates()
    return quad, pairs


def _outer_rows(l1: sp.csr_array, l2: sp.csr_array) -> Poly:
    """Σ_i Σ_j l1[r,i] l2[r,j] z_i z_j for every row r, as quadratic pairs."""
    l1, l2 = l1.tocsr(), l2.tocsr()
    n1, n2 = np.diff(l1.indptr), np.diff(l2.indptr)
    count = n1 * n2
    total = int(count.sum())
    nrows, width = l1.shape
    rows = np.repeat(np.arange(nrows, dtype=np.int64), count)
    start = np.repeat(np.cumsum(count) - count, count)
    local = np.arange(total, dtype=np.int64) - start
    k2 = np.repeat(n2, count)
    i1 = np.repeat(l1.indptr[:-1], count) + local // np.maximum(k2, 1)
    i2 = np.repeat(l2.indptr[:-1], count) + local % np.maximum(k2, 1)
    a, b = l1.indices[i1].astype(np.int64), l2.indices[i2].astype(np.int64)
    v = l1.data[i1] * l2.data[i2]
    quad, pairs = _quad_from_triplets(rows, a, b, v, nrows, width)
    return Poly(np.zeros(nrows), Poly.zeros(nrows, width).lin, quad, pairs)
