"""Numbers HiGHS can't hold, refused before a solve instead of answered wrongly.

HiGHS reads every cost or bound of magnitude `infinite_cost` / `infinite_bound` (1e20) or more
as infinite, and refuses a model with a matrix entry above `large_matrix_value` (1e15) — then
answers anyway: `x >= 1e25` solved `optimal` at x = 0 (the bound read as -inf... or the model as
empty), `1e20 * x` gave objective `inf`, and a refused model an empty point. A form holding
such a number is a located error naming the row, bound or cost and where the model wrote it.
"""

from __future__ import annotations

import numpy as np

from .. import ast
from ..compile.bridges import build_linear
from ..compile.linear import LinearForm
from ..errors import DflError
from ..instance import Instance
from .common import row_labels

LIMIT_OPTIONS = ("infinite_cost", "infinite_bound", "large_matrix_value")


def highs_limits(h) -> tuple[float, float, float]:
    """`LIMIT_OPTIONS` as a HiGHS object `h` has them set."""
    # (highspy returns (status, value) pairs)
    cost, bound, matrix = (float(h.getOptionValue(name)[1]) for name in LIMIT_OPTIONS)
    return cost, bound, matrix


HIGHS_READS = "it reads larger ones as infinite, or refuses them"


def check_representable(inst: Instance, form: LinearForm, theta,
                        limits: tuple[float, float, float],
                        solver: str = "HiGHS", why: str = HIGHS_READS) -> None:
    """A DflError at the first number of the form at `theta` beyond `limits` (see
    `highs_limits`), which the solver would misread (`why`: what it does with them)."""
    cost_cap, bound_cap, matrix_cap = limits
    who = (solver, why)
    c, _ = form.objective_at(theta)
    A, rl, ru = form.rows_at(theta)
    objective = getattr(inst.model.objective, "pos", None)
    col = _first_huge(c, cost_cap)
    if col is not None:
        raise _error(inst, f"the objective's coefficient of {inst.column_label(col)} is "
                     f"{c[col]:g}", cost_cap, who, objective)
    if form.P is not None and form.P.nnz:
        at = _first_huge(form.P.data, matrix_cap, finite=False)
        if at is not None:
            raise _error(inst, f"the objective has a quadratic coefficient of "
                         f"{form.P.data[at]:g}", matrix_cap, who, objective)
    A = A.tocsr()
    at = _first_huge(A.data, matrix_cap, finite=False)
    if at is not None:
        row = int(np.searchsorted(A.indptr, at, side="right") - 1)
        raise _row_error(inst, form, row, f"has the coefficient {A.data[at]:g}", matrix_cap,
                         who)
    for side in (rl, ru):
        row = _first_huge(side, bound_cap)
        if row is not None:
            raise _row_error(inst, form, row, f"has the bound {side[row]:g}", bound_cap, who,
                             _NO_BOUND)
    for side in (form.lb, form.ub):
        col = _first_huge(side, bound_cap)
        if col is not None:
            raise _bound_error(inst, form, col, side[col], bound_cap, who)


SQUARES_OVERFLOW = "its arithmetic multiplies them together: larger ones overflow"


def float_limits(largest: float) -> tuple[float, float, float]:
    """`LIMIT_OPTIONS`' caps for a solver in plain floating point of largest value `largest`
    (FlexQP's ADMM in torch): it forms ρAᵀA, P + ρAᵀA, xᵀPx and squared residual norms, so
    every number's square must be finite: √largest (1.3e154 in float64, 1.8e19 in float32,
    where a larger entry was a Cholesky failure, exit 3)."""
    cap = float(np.sqrt(largest))
    return cap, cap, cap


def _first_huge(values: np.ndarray, cap: float, finite: bool = True) -> int | None:
    values = np.abs(np.asarray(values, dtype=float))
    bad = (values >= cap) & (np.isfinite(values) if finite else True)
    return int(np.argmax(bad)) if bad.any() else None


def _error(inst: Instance, what: str, cap: float, solver: tuple[str, str], pos,
           hint: str = "rescale the model's units") -> DflError:
    """`solver`: its name and what it does with larger numbers."""
    name, why = solver
    return DflError(f"{what}: {name} takes magnitudes below {cap:g} here ({why})", pos, hint=hint,
                    filename=inst.model.filename, source=inst.model.source)


# (a side at 1e20 or beyond where it loosens, `x <= 1e20`, is no bound: compile/linear.py)
_NO_BOUND = "a bound of 1e20 or more is no bound only where it loosens (`x <= 1e20`, " \
            "`x >= -1e20`); this one can't be met: rescale the model's units"


def _row_error(inst: Instance, form: LinearForm, row: int, what: str, cap: float,
               solver: tuple[str, str], hint: str = "rescale the model's units") -> DflError:
    original = int(form.kept_rows[row]) if form.kept_rows is not None else row
    label = row_labels(inst, form, [original])[0]  # (row_names count the original rows)
    return _error(inst, f"row `{label}` {what}", cap, solver, _declared(inst, label), hint)


def _bound_error(inst: Instance, form: LinearForm, col: int, value: float, cap: float,
                 solver: tuple[str, str]) -> DflError:
    """A column's bound: the variable's own, or one a single-variable row became."""
    if form.kept_rows is not None:
        full = _unreduced(inst)
        rows = full.A.tocsc()[:, [col]].tocoo().row
        single = [int(r) for r in rows if full.A.tocsr()[[int(r)]].nnz == 1]
        if single:
            label = row_labels(inst, full, single[:1])[0]
            return _error(inst, f"row `{label}` bounds {inst.column_label(col)} at {value:g}", cap,
                          solver, _declared(inst, label), _NO_BOUND)
    return _error(inst, f"{inst.column_label(col)} has the bound {value:g}", cap, solver,
                  _declared(inst, inst.column_label(col)), _NO_BOUND)


def _unreduced(inst: Instance) -> LinearForm:
    return build_linear(inst, reduce=False)


def _declared(inst: Instance, label: str):
    """The position of the declaration a row or column label starts with (None: a bridge's)."""
    name = label.split("[")[0].split(" ")[0]
    for statement in inst.model.ast.statements:
        if getattr(statement, "name", None) == name and not isinstance(statement, ast.ModelDecl):
            return statement.pos
    return None
