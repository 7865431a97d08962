"""RowsToBounds, on the assembled standard form: a row with a single variable and no predicted
param (`lo <= a x_j <= hi`) is a bound on x_j, which solvers take for free (HiGHS's presolve
would do the same; an IIS on such a row is then found on the unreduced form). Its dual comes
back from x_j's reduced cost: with the row kept, the multiplier of an active bound is the row's,
y = d_j / a (d = c - Aᵀy the reduced costs), and x_j's own reduced cost is then 0."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..linear import LinearForm


@dataclass
class BoundRows:
    """The rows a RowsToBounds step made bounds: their original row, column and coefficient,
    the bounds each gave its column (lo/a, hi/a, ordered), and the column's bounds before."""

    rows: np.ndarray
    cols: np.ndarray
    coef: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    col_lo: np.ndarray
    col_hi: np.ndarray

    def owners(self, form: LinearForm, reduced: np.ndarray) -> np.ndarray:
        """For each row, whether it holds its column's active bound: the column's reduced
        cost says which side is active (d_j > 0: the lower, < 0: the upper), and the row set
        that side's bound, tighter than the column's own (a tie is the column's). Of two rows
        that set the same bound, the first holds it."""
        d = reduced[self.cols]
        lower = (d > 0) & (self.lo == form.lb[self.cols]) & (self.lo > self.col_lo)
        upper = (d < 0) & (self.hi == form.ub[self.cols]) & (self.hi < self.col_hi)
        claims = np.flatnonzero(lower | upper)
        _, first = np.unique(self.cols[claims], return_index=True)
        owns = np.zeros(len(self.rows), dtype=bool)
        owns[claims[first]] = True
        return owns


def rows_to_bounds(form: LinearForm) -> LinearForm:
    """Rows with a single variable and no predicted param (`lo <= a x_j <= hi`) become bounds on
    x_j. `kept_rows` records which original rows remain (duals of the others are reported as
    missing)."""
    A = form.A.tocsr()
    if A.nnz and not A.data.all():  # a stored zero is no variable (and no divisor)
        A = A.copy()
        A.eliminate_zeros()
    count = np.diff(A.indptr)
    touched_by_theta = np.zeros(form.m, dtype=bool)
    touched_by_theta[np.unique(form.row_theta.tocoo().row)] = True
    touched_by_theta[np.unique(form.a_theta[0])] = True
    single = (count == 1) & ~touched_by_theta
    if not single.any():
        return form
    single &= ~_named_rows_on_aux(form, A, single)
    if not single.any():
        return form
    rows = np.nonzero(single)[0]
    cols = A.indices[A.indptr[rows]]
    coef = A.data[A.indptr[rows]]
    lo_x = np.where(coef > 0, form.rl[rows], form.ru[rows]) / coef
    hi_x = np.where(coef > 0, form.ru[rows], form.rl[rows]) / coef
    lb, ub = form.lb.copy(), form.ub.copy()
    np.maximum.at(lb, cols, lo_x)
    np.minimum.at(ub, cols, hi_x)
    old_kept = form.kept_rows if form.kept_rows is not None else np.arange(form.m)
    record = BoundRows(old_kept[rows], cols, coef, lo_x, hi_x, form.lb[cols], form.ub[cols])
    # integer variables take integral bounds
    integer = form.integer
    lb = np.where(integer, np.ceil(lb - 1e-9), lb)
    ub = np.where(integer, np.floor(ub + 1e-9), ub)
    keep = np.nonzero(~single)[0]
    mapping = np.full(form.m, -1, dtype=np.int64)
    mapping[keep] = np.arange(len(keep))
    rows_t, cols_t, ks, vals = form.a_theta
    a_theta = (mapping[rows_t], cols_t, ks, vals)
    return replace(
        form,
        A=sp.csr_array(A[keep]),
        rl=form.rl[keep],
        ru=form.ru[keep],
        lb=lb,
        ub=ub,
        row_theta=sp.csr_array(form.row_theta.tocsr()[keep]),
        a_theta=a_theta,
        kept_rows=old_kept[keep],
        bound_rows=_merged(form.bound_rows, record),
        row_labels=[form.row_labels[i] for i in keep] if form.row_labels else None,
    )


def _named_rows_on_aux(form: LinearForm, A: sp.csr_array, single: np.ndarray) -> np.ndarray:
    """The single-variable rows that stay rows: a named row on one epigraph variable (`abs(x)
    <= 1` is `t <= 1`), whose dual is the user's constraint's."""
    first = A.indices[A.indptr[:-1][single]]
    on_aux = np.zeros(form.m, dtype=bool)
    on_aux[np.flatnonzero(single)[first >= form.n_model]] = True
    if not on_aux.any():
        return on_aux
    named = np.zeros(form.m, dtype=bool)  # the model's rows and their scenario copies
    for (_, start, count), origin in zip(form.row_names, form.row_origins, strict=True):
        if origin is None or origin.reduction == "scenario":
            named[start : start + count] = True
    if form.kept_rows is not None:
        named = named[form.kept_rows]
    return on_aux & named


def _merged(before: BoundRows | None, record: BoundRows) -> BoundRows:
    """A second step's record after the first's (the first's rows keep their claim)."""
    if before is None:
        return record
    parts = [(getattr(before, name), getattr(record, name)) for name in BoundRows.__annotations__]
    return BoundRows(*(np.concatenate(pair) for pair in parts))


class RowsToBounds:
    """`rows_to_bounds` as a reduction of the LinearForm (the `Reduction` protocol there)."""

    name = "rows to bounds"

    def accepts(self, form: LinearForm) -> bool:
        return form.m > 0

    def apply(self, form: LinearForm) -> LinearForm:
        """The reduced form; its `kept_rows` is what `invert` needs."""
        return rows_to_bounds(form)

    @staticmethod
    def invert(row_duals: np.ndarray, form: LinearForm,
               reduced: np.ndarray | None = None) -> np.ndarray:
        """Duals over every row of the unreduced form. A row turned into a bound takes its
        column's reduced cost over its coefficient where it holds the column's active bound,
        0 where it holds none; without reduced costs its dual is unknown (NaN)."""
        if form.kept_rows is None:
            return row_duals
        full = np.full(sum(count for _, _, count in form.row_names), np.nan)
        full[form.kept_rows] = row_duals
        record = form.bound_rows
        if reduced is not None and isinstance(record, BoundRows):
            owns = record.owners(form, reduced)
            full[record.rows] = np.where(owns, reduced[record.cols] / record.coef, 0.0)
        return full

    @staticmethod
    def invert_reduced(reduced: np.ndarray, form: LinearForm) -> np.ndarray:
        """The columns' reduced costs with the row kept: a bound's multiplier that `invert`
        gave its row is the row's, so the column's own is 0 (d_j - a·y = 0)."""
        record = form.bound_rows
        if not isinstance(record, BoundRows):
            return reduced
        reduced = reduced.copy()
        reduced[record.cols[record.owners(form, reduced)]] = 0.0
        return reduced
