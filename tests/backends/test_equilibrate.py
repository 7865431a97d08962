"""Ruiz equilibration of a QP: factors that bring rows and columns to a largest entry near 1,
exact (powers of two), and answers mapped back to the original form."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import bind

from dfl_dsl.backends.common import kkt_residuals
from dfl_dsl.backends.equilibrate import equilibrated, ruiz_factors, unscaled
from dfl_dsl.backends.highs import HighsModel

TEXT = """param n : int; param m : int; param P[n, n] psd; param c[n]; param A[m, n];
param b[m];
var x[n] >= -10 <= 10;
minimize f: 0.5 * quad_form(x, P) + c @ x;
subject to rows: A @ x <= b;
"""
DATA = {"n": 3, "m": 2, "P": [[4e6, 0, 0], [0, 1, 0.5], [0, 0.5, 1]], "c": [-1, 1, -2],
        "A": [[1e-4, 1, 1], [2e5, -1, 0]], "b": [1, 3e5]}


def test_the_factors_are_powers_of_two_that_equilibrate_the_kkt_matrix():
    form = bind(TEXT, DATA).linear_form()
    D, E = ruiz_factors(form.P, form.A)
    for factor in (D, E):
        assert np.all(np.log2(factor) == np.round(np.log2(factor)))
    P = np.diag(D) @ form.P.toarray() @ np.diag(D)
    A = np.diag(E) @ form.A.toarray() @ np.diag(D)
    columns = np.maximum(np.abs(P).max(0), np.abs(A).max(0))
    # within a factor 2 of 1 (rounding to powers of two) and then some for the sweeps left
    assert np.all((columns > 0.2) & (columns < 5)) and np.all(np.abs(A).max(1) > 0.2)
    assert np.abs(form.A.toarray()).max() / np.abs(form.A.toarray()[form.A.toarray() != 0]
                                                    ).min() > 1e9  # (the data were not)


def test_an_empty_row_or_column_keeps_factor_one():
    D, E = ruiz_factors(None, sp.csr_array(np.array([[0.0, 4.0], [0.0, 0.0]])))
    assert D[0] == 1 and E[1] == 1 and 0.5 <= 4 * D[1] * E[0] <= 2


def test_the_equilibrated_answer_maps_back_to_the_originals_optimum():
    inst = bind(TEXT, DATA)
    form = inst.linear_form()
    direct = HighsModel(form).solve()
    scaled, D, E = equilibrated(form)
    back = unscaled(HighsModel(scaled).solve(), D, E)
    assert back.status == direct.status == "optimal"
    assert back.objective == pytest.approx(direct.objective, rel=1e-9)
    np.testing.assert_allclose(back.x, direct.x, rtol=1e-6, atol=1e-9)
    assert kkt_residuals(form, back.x, back.row_duals, back.col_duals).holds()
