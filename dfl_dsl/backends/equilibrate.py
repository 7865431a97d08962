"""A QP's rows and columns equilibrated, for a re-solve when a solver's answer fails the KKT
check at the model's scale (common.kkt_residuals).

Ruiz's scaling (D. Ruiz, "A scaling algorithm to equilibrate both rows and columns norms in
matrices", RAL-TR-2001-034) applied, as OSQP does (Stellato et al., "OSQP: an operator
splitting solver for quadratic programs", Math. Prog. Comp. 2020, §5.1), to the KKT matrix
[[P, Aᵀ], [A, 0]]: each sweep divides every column and row by the square root of its
largest entry, so all tend to 1. HiGHS's active-set QP solver works on the data as given;
a row with entries near 1e6 (benchmarks/fuzz.py, seed 5036872) let a dual of the wrong sign
through under its tolerance, 8e-8, which that row multiplies into a stationarity error of
0.07 at the model's scale; on the equilibrated copy the same sign error is far above it.
The factors are rounded to powers of two, so the scaled data are exact.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..compile.linear import LinearForm
from .common import RawResult

SWEEPS = 15  # OSQP's default number of Ruiz iterations (`scaling`: 10) and a few more


def ruiz_factors(P: sp.spmatrix | None, A: sp.spmatrix, sweeps: int = SWEEPS,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Column factors D (n) and row factors E (m), powers of two, such that D P D and E A D
    have rows and columns of largest entry near 1 (empty ones keep factor 1)."""
    n, m = A.shape[1], A.shape[0]
    P = abs(sp.csc_array(P)) if P is not None else sp.csc_array((n, n))
    A = abs(sp.csc_array(A))
    D, E = np.ones(n), np.ones(m)
    for _ in range(sweeps):
        PD = P @ sp.diags_array(D)
        AD = A @ sp.diags_array(D)
        column = np.maximum(_column_max(sp.diags_array(D) @ PD), _column_max(
            sp.diags_array(E) @ AD))
        row = _column_max((sp.diags_array(E) @ AD).T)
        D /= np.sqrt(np.where(column > 0, column, 1.0))
        E /= np.sqrt(np.where(row > 0, row, 1.0))
    return np.exp2(np.round(np.log2(D))), np.exp2(np.round(np.log2(E)))


def _column_max(M) -> np.ndarray:
    if M.shape[0] == 0:  # (no rows: a QP whose rows all became bounds; scipy refuses)
        return np.zeros(M.shape[1])
    return np.asarray(sp.csc_array(M).max(axis=0).toarray()).ravel()


def equilibrated(form: LinearForm, theta=None) -> tuple[LinearForm, np.ndarray, np.ndarray]:
    """The form at θ with x = D x̂ and rows scaled by E: minimize ½x̂ᵀ(DPD)x̂ + (Dc)ᵀx̂ s.t.
    E rl <= (E A D) x̂ <= E ru, lb/D <= x̂ <= ub/D; the same objective values. Its θ maps
    are left as they were: solve it at θ = None."""
    c, c0 = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    D, E = ruiz_factors(form.P, A)
    Dm, Em = sp.diags_array(D), sp.diags_array(E)
    P = sp.csc_array(Dm @ form.P @ Dm) if form.P is not None else None
    scaled = replace(form, c=D * c, c0=c0, P=P, A=sp.csr_array(Em @ A @ Dm), rl=E * rl,
                     ru=E * ru, lb=form.lb / D, ub=form.ub / D)
    return scaled, D, E


def unscaled(raw: RawResult, D: np.ndarray, E: np.ndarray) -> RawResult:
    """An answer on the equilibrated form as one on the original: x = D x̂, row duals E ŷ,
    bound duals ẑ / D (the objective is the same)."""
    return replace(raw, x=None if raw.x is None else D * raw.x,
                   row_duals=None if raw.row_duals is None else E * raw.row_duals,
                   col_duals=None if raw.col_duals is None else raw.col_duals / D)
