"""Small reductions on the standard form, each separately tested."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .linear import LinearForm


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
        named = np.zeros(form.m, dtype=bool)
        for name, start, count_ in form.row_names:
            if not name.startswith("#"):
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
