"""RowsToBounds, on the assembled standard form: a row with a single variable and no predicted
param (`lo <= a x_j <= hi`) is a bound on x_j, which solvers take for free (HiGHS's presolve
would do the same; an IIS or a dual on such a row is then found on the unreduced form)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..linear import LinearForm


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
    # a named row on one epigraph variable (`abs(x) <= 1` is `t <= 1`) stays a row: its dual
    # is the user's constraint's
    first = A.indices[A.indptr[:-1][single]]
    on_aux = np.zeros(form.m, dtype=bool)
    on_aux[np.flatnonzero(single)[first >= form.n_model]] = True
    if on_aux.any():
        named = np.zeros(form.m, dtype=bool)  # the model's rows and their scenario copies
        for (_, start, count_), origin in zip(form.row_names, form.row_origins, strict=True):
            if origin is None or origin.reduction == "scenario":
                named[start : start + count_] = True
        if form.kept_rows is not None:
            named = named[form.kept_rows]
        single &= ~(on_aux & named)
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
    # integer variables take integral bounds
    integer = form.integer
    lb = np.where(integer, np.ceil(lb - 1e-9), lb)
    ub = np.where(integer, np.floor(ub + 1e-9), ub)
    keep = np.nonzero(~single)[0]
    old_kept = form.kept_rows if form.kept_rows is not None else np.arange(form.m)
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
        row_labels=[form.row_labels[i] for i in keep] if form.row_labels else None,
    )


class RowsToBounds:
    """`rows_to_bounds` as a reduction of the LinearForm (the `Reduction` protocol there)."""

    name = "rows to bounds"

    def accepts(self, form: LinearForm) -> bool:
        return form.m > 0

    def apply(self, form: LinearForm) -> LinearForm:
        """The reduced form; its `kept_rows` is what `invert` needs."""
        return rows_to_bounds(form)

    @staticmethod
    def invert(row_duals: np.ndarray, form: LinearForm) -> np.ndarray:
        """Duals over every row of the unreduced form: a row turned into a bound has no dual
        of its own (NaN)."""
        if form.kept_rows is None:
            return row_duals
        full = np.full(sum(count for _, _, count in form.row_names), np.nan)
        full[form.kept_rows] = row_duals
        return full
