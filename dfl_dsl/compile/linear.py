"""The LP/MILP/QP standard form, with a recorded affine map from the predicted params θ:

    minimize   ½ xᵀPx + c(θ)ᵀx + c0(θ)        c(θ) = c + Cθ θ,  c0(θ) = c0 + dθᵀθ
    subject to rl - Rθ θ <= A(θ) x <= ru - Rθ θ,   A(θ) = A + Σ_k θ_k A_k
               lb <= x <= ub,  x_j integer for j in J

A maximize model is flipped (`sign` = -1), so every backend minimizes. Because the map from θ
is recorded, a new prediction only changes numbers: the model is never rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..atoms.epigraph import L1Pairs
from ..errors import DflError
from ..evaluate.poly import Poly
from ..instance import Instance
from .problem import Origin, Problem
from .reductions.base import Applied


@dataclass
class LinearForm:
    n: int  # variables: the model's, then auxiliaries
    n_model: int
    n_theta: int
    sign: float  # canonical objective = sign × the model's objective
    c: np.ndarray
    c0: float
    P: sp.csc_array | None  # symmetric
    A: sp.csr_array
    rl: np.ndarray
    ru: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray
    c_theta: sp.csr_array  # n × nθ
    c0_theta: np.ndarray  # nθ
    row_theta: sp.csr_array  # m × nθ
    a_theta: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # rows, cols, θ index, coef
    row_names: list[tuple[str, int, int]] = field(default_factory=list)  # (name, start, count)
    row_origins: list[Origin | None] = field(default_factory=list)  # per row_names entry
    row_labels: list[str] | None = None
    kept_rows: np.ndarray | None = None  # original row of each row (after RowsToBounds)
    bound_rows: object | None = None  # rows_to_bounds.BoundRows: the rows made bounds (duals)
    applied: Applied | None = None  # the reductions that made it: duals map back through them
    l1_pairs: list[L1Pairs] = field(default_factory=list)  # L1 balls the epigraphs wrote

    @property
    def m(self) -> int:
        return self.A.shape[0]

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    @property
    def is_qp(self) -> bool:
        return self.P is not None and self.P.nnz > 0

    @property
    def theta_in_constraints(self) -> bool:
        return self.row_theta.nnz > 0 or len(self.a_theta[0]) > 0

    def block_of(self, row: int) -> tuple[str, Origin | None] | None:
        """The (constraint name, origin) of the row block holding row `row` of A (after any
        RowsToBounds reduction; origin None: the model's own constraint)."""
        original = int(self.kept_rows[row]) if self.kept_rows is not None else row
        for (name, start, count), origin in zip(self.row_names, self.row_origins, strict=True):
            if start <= original < start + count:
                return name, origin
        return None

    def objective_at(self, theta: np.ndarray | None) -> tuple[np.ndarray, float]:
        if theta is None or self.n_theta == 0:
            return self.c, self.c0
        return self.c + self.c_theta @ theta, self.c0 + float(self.c0_theta @ theta)

    def rows_at(self, theta: np.ndarray | None):
        """(A, rl, ru) at θ."""
        if theta is None or not self.theta_in_constraints:
            return self.A, self.rl, self.ru
        shift = self.row_theta @ theta
        rows, cols, ks, vals = self.a_theta
        A = self.A
        if len(rows):
            delta = sp.csr_array((vals * theta[ks], (rows, cols)), shape=self.A.shape)
            A = (A + delta).tocsr()
        return A, self.rl - shift, self.ru - shift

    def model_objective(self, canonical_value: float) -> float:
        return self.sign * canonical_value

    def model_duals(self, blocks: list[np.ndarray]) -> dict[str, np.ndarray]:
        """The model's constraint duals by name, from the duals of each row block: mapped
        back through the reductions that made the form (or, without that record, the blocks
        of no reduction's making)."""
        if self.applied is not None:
            return self.applied.duals(blocks)
        return {name: block for (name, _, _), origin, block in
                zip(self.row_names, self.row_origins, blocks, strict=True) if origin is None}


class Columns:
    """z = [x (model vars); θ; aux] -> canonical variables [x; aux] and θ indices. The maps
    are made when first asked for: with no θ (`identity`) the linear blocks need none, and
    each is a million-entry array at a million columns."""

    def __init__(self, inst: Instance, width: int) -> None:
        self.nx = inst.n_vars
        self.theta_end = inst.width
        self.width = width
        self.n_theta = inst.width - self.nx
        self.n = self.nx + (width - inst.width)
        # with no θ, z = [x; aux] is already the canonical column order: no reindexing
        self.identity = self.n_theta == 0

    @cached_property
    def var_of(self) -> np.ndarray:
        """Each symbol's canonical column (-1 for θ): x keep their place, aux move up past θ."""
        var_of = np.arange(self.width, dtype=np.int64)
        var_of[self.theta_end :] -= self.n_theta
        var_of[self.nx : self.theta_end] = -1
        return var_of

    @cached_property
    def theta_of(self) -> np.ndarray:
        """Each symbol's θ index (-1 for x and aux)."""
        theta_of = np.full(self.width, -1, dtype=np.int64)
        theta_of[self.nx : self.theta_end] = np.arange(self.n_theta)
        return theta_of

    @cached_property
    def x_cols(self) -> np.ndarray:
        """The symbols that are canonical columns, in order (var_of increases along them)."""
        return np.r_[0 : self.nx, self.theta_end : self.width]

    @cached_property
    def theta_cols(self) -> np.ndarray:
        return np.arange(self.nx, self.theta_end)


def _relabel_columns(m: sp.csr_array, new_of: np.ndarray, width: int) -> sp.csr_array:
    """The columns j of `m` with new_of[j] >= 0, renumbered new_of[j] (increasing along
    them, so sorted rows stay sorted): one pass over the entries, where scipy's fancy column
    index sorts each block's entries."""
    m = m.tocsr()
    index = np.int32 if max(m.nnz, len(new_of)) < 2**31 else np.int64
    new = new_of[m.indices].astype(index, copy=False)
    keep = new >= 0
    if keep.all():
        return sp.csr_array((m.data, new, m.indptr), shape=(m.shape[0], width))
    before = np.zeros(len(keep) + 1, dtype=index)
    np.cumsum(keep, out=before[1:])
    return sp.csr_array((m.data[keep], new[keep], before[m.indptr]), shape=(m.shape[0], width))


def split_poly(poly: Poly, cols: Columns, what: str):
    """Blocks of a Poly: constant, x-linear (rows × n CSR), θ-linear (rows × nθ CSR; None
    when the model has no θ), θ·x bilinear and x·x quadratic (COO tuples)."""
    lin = poly.lin
    if cols.identity:
        ax, bt = lin, None
    else:
        if lin.nnz < 2 * lin.shape[1]:
            # a block with few entries for its width (one scenario's rows, an epigraph's):
            # scipy's fancy column index costs O(width log width) per block whatever its size
            ax = _relabel_columns(lin, cols.var_of, cols.n)
            bt = _relabel_columns(lin, cols.theta_of, cols.n_theta)
        else:
            ax, bt = lin[:, cols.x_cols], lin[:, cols.theta_cols]
    empty = np.zeros(0, dtype=np.int64)
    bilinear = (empty, empty, empty, np.zeros(0))
    quad = (empty, empty, empty, np.zeros(0))
    if poly.quad is not None and poly.quad.nnz:
        q = poly.quad.tocoo()
        qr = q.row.astype(np.int64)
        a, b, qv = poly.pairs[q.col, 0], poly.pairs[q.col, 1], q.data
        va, vb = cols.var_of[a], cols.var_of[b]
        ta, tb = cols.theta_of[a], cols.theta_of[b]
        xx = (va >= 0) & (vb >= 0)
        tt = (ta >= 0) & (tb >= 0)
        if tt.any():
            raise DflError(f"{what}: a product of two predicted params is not supported")
        quad = (qr[xx], va[xx], vb[xx], qv[xx])
        tx = ~xx
        var = np.where(va >= 0, va, vb)[tx]
        th = np.where(ta >= 0, ta, tb)[tx]
        bilinear = (qr[tx], var, th, qv[tx])
    return poly.const, ax, bt, bilinear, quad


def assemble(bridged: Problem, inst: Instance, *, label_rows: bool = False,
             applied: Applied | None = None) -> LinearForm:
    """The standard form of a problem whose objective and rows are polynomials (every atom
    lowered): sparse matrices, with the maps from θ recorded."""
    cols = Columns(inst, bridged.width)
    n, nt = cols.n, cols.n_theta
    sign = 1.0 if bridged.sense == "minimize" else -1.0
    c, c0, c_theta, c0_theta, P = _objective(bridged.objective, cols, sign)
    bodies = bridged.rows
    m = sum(b.body.rows for b in bodies)
    A_parts, R_parts, at_parts = [], [], []
    rl = np.empty(m)
    ru = np.empty(m)
    names, origins, labels = [], [], [] if label_rows else None
    at = 0
    for block in bodies:
        k = block.body.rows
        bconst, bax, bbt, bbil, bquad = split_poly(block.body, cols, f"constraint `{block.name}`")
        if len(bquad[0]):
            decl = next((c for c in inst.model.constraints if c.name == block.name), None)
            raise DflError(
                f"constraint `{block.name}` is quadratic; this backend takes linear "
                "constraints only",
                decl.pos if decl is not None else None, hint="use --backend cvxpy",
                filename=inst.model.filename, source=inst.model.source,
            )
        A_parts.append(bax)
        R_parts.append(bbt)
        at_parts.append((bbil[0] + at, bbil[1], bbil[2], bbil[3]))
        rl[at : at + k], ru[at : at + k] = open_sides(block.lo - bconst, block.hi - bconst)
        names.append((block.name, at, k))
        origins.append(block.origin)
        if labels is not None:
            owner = block.origin.describe(block.name) if block.origin else block.name
            labels.extend(block.labels or [f"{owner}[{i}]" for i in range(k)])
        at += k

    A = _stack_rows(A_parts, n)
    row_theta = sp.csr_array((m, 0)) if cols.identity else _stack_rows(R_parts, nt)
    a_theta = tuple(np.concatenate([p[i] for p in at_parts]) if at_parts else np.zeros(0)
                    for i in range(4))
    a_theta = (a_theta[0].astype(np.int64), a_theta[1].astype(np.int64),
               a_theta[2].astype(np.int64), a_theta[3].astype(float))

    lb, ub, integer = column_bounds(bridged, inst)
    return LinearForm(
        n=n, n_model=cols.nx, n_theta=nt, sign=sign, c=c, c0=c0, P=P, A=A, rl=rl, ru=ru,
        lb=lb, ub=ub, integer=integer, c_theta=c_theta, c0_theta=c0_theta,
        row_theta=row_theta, a_theta=a_theta, row_names=names, row_origins=origins,
        row_labels=labels, applied=applied,
        l1_pairs=[L1Pairs(cols.var_of[p.x], cols.var_of[p.s]) for p in bridged.structures
                  if isinstance(p, L1Pairs)],
    )


def _objective(objective: Poly, cols: Columns, sign: float):
    """c, c0, c_θ, c0_θ and P (None without quadratic terms) of the minimized objective."""
    n, nt = cols.n, cols.n_theta
    const, ax, bt, bil, quad = split_poly(objective, cols, "the objective")
    c = _column_sums(ax, n)  # (fresh: the sign flips in place)
    c *= sign
    c0 = float(const.sum()) * sign
    c0_theta = np.zeros(0) if bt is None else np.asarray(bt.sum(axis=0)).ravel() * sign
    c_theta = (sp.csr_array((bil[3] * sign, (bil[1], bil[2])), shape=(n, nt)) if len(bil[3])
               else sp.csr_array((n, nt)))  # (no θ: no triplets to sort into n rows)
    P = None
    if len(quad[0]):
        _, a, b, v = quad
        # v z_a z_b = ½ zᵀPz with P_ab = P_ba = v (a != b) and P_aa = 2v
        rows_ = np.concatenate([a, b])
        cols_ = np.concatenate([b, a])
        vals = np.concatenate([v, v]) * sign
        P = sp.csc_array((vals, (rows_, cols_)), shape=(n, n))
        P.sum_duplicates()
    return c, c0, c_theta, c0_theta, P


def _column_sums(m: sp.csr_array, n: int) -> np.ndarray:
    """The objective's cost vector: the sum of its rows. One canonical row (the usual
    `minimize sum{...}`) is a scatter of its entries, half the time of scipy's sum."""
    if m.shape[0] == 1 and m.has_canonical_format:
        out = np.zeros(n)
        out[m.indices] = m.data
        return out
    return np.asarray(m.sum(axis=0)).ravel()


def _stack_rows(blocks: list[sp.csr_array], width: int) -> sp.csr_array:
    """The row blocks one under the other (CSR blocks stack by concatenating their arrays)."""
    if not blocks:
        return sp.csr_array((0, width))
    out = sp.vstack(blocks, format="csr")
    if all(b.has_canonical_format for b in blocks):  # then so is the stack: no O(nnz) check
        out.has_canonical_format = True
    else:
        out.sum_duplicates()
    if out.nnz < 2**31 and width < 2**31:
        # 32-bit indices: what HiGHS takes, and scipy's tocsc runs several times faster on them
        out.indices = out.indices.astype(np.int32, copy=False)
        out.indptr = out.indptr.astype(np.int32, copy=False)
    return out


def column_bounds(bridged: Problem, inst: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds and integrality of the columns [x; aux]: the model's variables, then the
    bridges' auxiliaries (continuous). One concatenation each: fresh arrays the form owns."""
    variables = inst.variables
    lb = np.concatenate([v.lower for v in variables] + [bridged.aux_lower], dtype=float)
    ub = np.concatenate([v.upper for v in variables] + [bridged.aux_upper], dtype=float)
    integer = np.concatenate([v.integer for v in variables]
                             + [np.zeros(len(bridged.aux_lower))], dtype=bool, casting="unsafe")
    return *open_sides(lb, ub), integer


# A bound of magnitude 1e20 or more is no bound: so HiGHS, CPLEX and MINOS (the solvers AMPL
# hands a model to) read it, and so AMPL models write "no bound" (`1e20` in the data).
NO_BOUND = 1e20


def open_sides(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`lo <= . <= hi` with an upper side at or above `NO_BOUND` made +inf and a lower side at
    or below -`NO_BOUND` made -inf. A side beyond it the other way (`x >= 1e20`) is no "no
    bound": it stays, and the backends refuse it (backends/magnitudes.py). In place: the
    callers hand over fresh float arrays (a million columns' bounds: no copies)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)  # (ints: a float copy)
    np.putmask(lo, lo <= -NO_BOUND, -np.inf)
    np.putmask(hi, hi >= NO_BOUND, np.inf)
    return lo, hi
