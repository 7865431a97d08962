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

from .gram import assemble, canonical, dense_triplets, entry_rows, quadratic_pairs, spread


def _csr(data, indices, indptr, shape) -> sp.csr_array:
    return sp.csr_array((data, indices, indptr), shape=shape)


def scale_rows(m: sp.csr_array, factor: np.ndarray, one_per_row: bool = False) -> sp.csr_array:
    """diag(factor) @ m without building the diagonal. `one_per_row` (the caller knows every
    row holds one entry: a `Poly.selection`) skips the O(rows) test for it."""
    m = m.tocsr()
    if one_per_row or (m.nnz == m.shape[0] and (np.diff(m.indptr) == 1).all()):
        data = m.data * factor  # one entry per row (a variable's entries): no spread
    else:
        data = m.data * spread(factor, m.indptr)
    return _csr(data, m.indices, m.indptr, m.shape)


def segment_sum_rows(m: sp.csr_array, starts: np.ndarray) -> sp.csr_array:
    """Sum contiguous row groups: group g is rows starts[g]:starts[g+1]."""
    m = m.tocsr()
    indptr = m.indptr[starts] - m.indptr[starts[0]]
    span = slice(m.indptr[starts[0]], m.indptr[starts[-1]])
    # views of m's arrays; copied (by canonical) only when entries need summing
    return canonical(_csr(m.data[span], m.indices[span], indptr, (len(starts) - 1, m.shape[1])))


def segment_sum_values(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of contiguous groups of an array (group g is values[starts[g]:starts[g+1]], the
    groups covering it; an empty group sums to 0): one `reduceat` over the group starts, no
    per-row owner array (at a million rows that array and a bincount over it cost more than
    the sum)."""
    groups = len(starts) - 1
    if values.dtype.kind == "b":  # counts (np.add on booleans is `or`)
        values = values.astype(np.float64)
    out = np.zeros(groups, dtype=values.dtype)
    if not groups or not len(values):
        return out
    lo = starts[:-1]
    filled = starts[1:] > lo
    if filled.all():
        out[:] = np.add.reduceat(values, lo)
    elif filled.any():  # reduceat can't take an empty group: sum the others only
        out[filled] = np.add.reduceat(values, lo[filled])
    return out


@dataclass
class Poly:
    const: np.ndarray  # (R,)
    lin: sp.csr_array  # (R, Z)
    quad: sp.csr_array | None = None  # (R, P)
    pairs: np.ndarray | None = None  # (P, 2), a <= b
    # every row is one symbol times a coefficient, and the constant is 0 (a variable's
    # entries, scaled or taken): known from construction, so scaling and summing needn't
    # test for one entry a row, or read a million zeros, to find it out
    selection: bool = False

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
    def symbols(columns: np.ndarray | range, width: int, offset: int = 0) -> Poly:
        """Row r is z[offset + columns[r]] (a range: consecutive symbols, written once)."""
        if not isinstance(columns, range):
            columns = np.asarray(columns).ravel()
        rows = len(columns)
        # scipy keeps 32-bit indices where they fit: handing it 64-bit ones costs a scan and
        # a cast of each array (the offset is added in the same pass)
        index = np.int32 if max(rows, width) < 2**31 else np.int64
        if isinstance(columns, range):
            columns = np.arange(columns.start + offset, columns.stop + offset, dtype=index)
        else:
            columns = (np.add(columns, offset, dtype=index, casting="unsafe") if offset
                       else columns.astype(index, copy=False))
        lin = _csr(np.ones(rows), columns, np.arange(rows + 1, dtype=index), (rows, width))
        lin.has_canonical_format = True  # one entry a row: nothing to sort or sum
        return Poly(np.zeros(rows), lin, selection=True)

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
        return Poly(self.const[idx], self.lin[idx], quad, self.pairs, self.selection)

    def scale(self, factor: np.ndarray) -> Poly:
        factor = np.broadcast_to(np.asarray(factor, dtype=float), (self.rows,))
        quad = scale_rows(self.quad, factor) if self.quad is not None else None
        # a zero constant (a variable's entries) stays a fresh zero array: nothing to write
        const = (self.const * factor if not self.selection and self.const.any()
                 else np.zeros(self.rows))
        return Poly(const, scale_rows(self.lin, factor, self.selection), quad, self.pairs,
                    self.selection)

    def rowmap(self, m: sp.csr_array) -> Poly:
        """New rows as sparse combinations of these: m @ self (m is R_new × R)."""
        m = sp.csr_array(m)
        quad = (m @ self.quad).tocsr() if self.quad is not None else None
        return Poly(m @ self.const, (m @ self.lin).tocsr(), quad, self.pairs)

    def segment_sum(self, starts: np.ndarray) -> Poly:
        const = (np.zeros(len(starts) - 1) if self.selection
                 else segment_sum_values(self.const, starts))
        quad = segment_sum_rows(self.quad, starts) if self.quad is not None else None
        return Poly(const, segment_sum_rows(self.lin, starts), quad, self.pairs)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other: Poly) -> Poly:
        const = self.const + other.const
        same = self.lin.shape == other.lin.shape
        if same and not other.lin.nnz:  # adding a constant (a right-hand side): no sparse sum
            lin = self.lin
        elif same and not self.lin.nnz:
            lin = other.lin
        else:
            lin = (self.lin + other.lin).tocsr()
        mine, theirs = _has_quad(self), _has_quad(other)
        if not mine and not theirs:
            return Poly(const, lin)
        if mine != theirs:  # one side's pairs carry over as they are: no merge, no sort
            keep = self if mine else other
            return Poly(const, lin, keep.quad, keep.pairs)
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
            pairs, values = quadratic_pairs(lin, lin)
            ctl = lin.T @ const
            c0 = float(const @ const)
        else:
            w = sp.csr_array(weight) if sp.issparse(weight) else np.asarray(weight)
            pairs, values = _weighted_pairs(lin, w)
            ctl = 0.5 * ((w.T @ const) @ lin + (w @ const) @ lin)
            c0 = float(const @ (w @ const))
        return _one_row(pairs, values, 2.0 * np.asarray(ctl).ravel(), c0)

    def inner_sum(self, other: Poly, starts: np.ndarray) -> Poly:
        """Sums of rowwise products over contiguous row groups: out[g] = Σ_{t∈g} self[t]·other[t]
        (rows starts[g]:starts[g+1], the groups covering all rows, as in `segment_sum`); a
        matmul's and a trace's reduction.

        Group g's quadratic part is zᵀ L1_gᵀ L2_g z, one matrix product (`gram`) that sums the
        repeated pairs as it goes, instead of one outer product per row followed by a global
        sort of every product term."""
        if self.degree == 0 or other.degree == 0:
            return self.times(other).segment_sum(starts)
        if self.degree + other.degree > 2:
            raise ValueError("product of degree > 2")
        # (c1 + l1)(c2 + l2) = c2 (c1 + l1) + c1 l2 + l1 l2; a zero constant adds nothing
        groups = len(starts) - 1
        quad, pairs = _bilinear_groups(self.lin, other.lin, starts)
        out = Poly(np.zeros(groups), Poly.zeros(groups, self.width).lin, quad, pairs)
        if other.const.any():
            out = out + self.scale(other.const).segment_sum(starts)
        if self.const.any():
            out = out + Poly(np.zeros(self.rows), other.scale(self.const).lin).segment_sum(starts)
        return out


def _weighted_pairs(lin: sp.csr_array, w) -> tuple[np.ndarray, np.ndarray]:
    """zᵀ Lᵀ W L z over the symbols L uses: a dense W makes W L dense, so it is formed on those
    columns only, never on all of z."""
    lin = sp.csr_array(lin)
    cols = np.unique(lin.indices)
    used = lin[:, cols]
    wl = w @ used
    if sp.issparse(wl):
        pairs, values = quadratic_pairs(used, sp.csr_array(wl))
        return cols[pairs], values
    return assemble([dense_triplets(used.T @ wl, cols)], lin.shape[1])


def _one_row(pairs: np.ndarray, values: np.ndarray, linear: np.ndarray, const: float) -> Poly:
    """A one-row Poly Σ values·z_a·z_b + linear @ z + const."""
    return Poly(np.array([const]), _row(linear), _quad_row(values), pairs)


def _row(values: np.ndarray) -> sp.csr_array:
    """A dense vector as a one-row sparse matrix of its nonzeros."""
    nz = np.nonzero(values)[0]
    return _csr(values[nz], nz.astype(np.int64), np.array([0, len(nz)], dtype=np.int64),
                (1, len(values)))


def _quad_row(values: np.ndarray) -> sp.csr_array:
    """One row holding every pair: `values` over pairs 0..P-1."""
    count = len(values)
    return _csr(values, np.arange(count, dtype=np.int64), np.array([0, count], dtype=np.int64),
                (1, count))


def _unique_pairs(a: np.ndarray, b: np.ndarray, width: int):
    codes = a * np.int64(width) + b
    uniq, inverse = np.unique(codes, return_inverse=True)
    pairs = np.stack([uniq // width, uniq % width], axis=1).astype(np.int64)
    return pairs, inverse


def _has_quad(p: Poly) -> bool:
    return p.quad is not None and p.quad.nnz > 0


def _merge_quads(p: Poly, q: Poly):
    parts = [(x.quad.tocoo(), x.pairs) for x in (p, q) if x.quad is not None]
    rows = np.concatenate([m.row for m, _ in parts]).astype(np.int64)
    a = np.concatenate([pr[m.col, 0] for m, pr in parts])
    b = np.concatenate([pr[m.col, 1] for m, pr in parts])
    v = np.concatenate([m.data for m, _ in parts])
    return quad_from_triplets(rows, a, b, v, p.rows, p.width)


def quad_from_triplets(rows, a, b, v, nrows: int, width: int):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs, inverse = _unique_pairs(lo, hi, width)
    quad = sp.coo_array((v, (rows, inverse)), shape=(nrows, len(pairs))).tocsr()
    quad.sum_duplicates()
    return quad, pairs


def _outer_rows(l1: sp.csr_array, l2: sp.csr_array) -> Poly:
    """Σ_i Σ_j l1[r,i] l2[r,j] z_i z_j for every row r, as quadratic pairs."""
    l1, l2 = l1.tocsr(), l2.tocsr()
    # row lengths as intp: no int32 overflow in the products, and np.repeat's fast path
    n1, n2 = np.diff(l1.indptr).astype(np.intp), np.diff(l2.indptr).astype(np.intp)
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
    quad, pairs = quad_from_triplets(rows, a, b, v, nrows, width)
    return Poly(np.zeros(nrows), Poly.zeros(nrows, width).lin, quad, pairs)


def _bilinear_groups(l1: sp.csr_array, l2: sp.csr_array, starts: np.ndarray):
    """Quadratic parts of Σ_{t∈g} (l1_t·z)(l2_t·z) for each row group g, as (quad, pairs)."""
    groups, width = len(starts) - 1, l1.shape[1]
    l1, l2 = sp.csr_array(l1), sp.csr_array(l2)
    if groups == 1:
        pairs, values = quadratic_pairs(l1, l2)
        return _quad_row(values), pairs
    # Several groups: index the sparser factor's columns by (group, symbol), renumbered
    # densely so the product stays small; then merge the pairs of all groups.
    small, big = (l1, l2) if l1.nnz <= l2.nnz else (l2, l1)
    owner = entry_rows(starts)
    t = entry_rows(small.indptr)
    codes, inverse = np.unique(owner[t] * np.int64(width) + small.indices, return_inverse=True)
    left = sp.csr_array((small.data, (t, inverse)), shape=(small.shape[0], len(codes)))
    prod = sp.coo_array(left.T @ big)
    code = codes[prod.row]
    a, b = code % width, prod.col.astype(np.int64)
    return quad_from_triplets(code // width, a, b, prod.data, groups, width)
