"""What every backend shares: a solution's IIS rows named by the model's constraint rows, and
the KKT check of an answer at the model's scale."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.backends.common import RawResult, form_row_duals, kkt_residuals, unproven


def test_iis_labels_of_a_partly_split_constraint_name_the_rows_they_are():
    """`c`'s row b holds no uncertain param (kept once), rows a and c are copied per
    scenario: the IIS named the kept row `c[a]` (the constraint's first row, not the kept
    one) and the copy `c@0` (no row at all)."""
    text = """
    set I; param d{I} : uncertain; param u{I}; param need;
    var x{I} >= 0;
    maximize o: sum{i in I} x[i];
    s.t. c{i in I}: x[i] + 0.5 * x["a"] <= (if i == "b" then u[i] else d[i]);
    s.t. m: sum{i in I} x[i] >= need;
    """
    data = {"I": ["a", "b", "c"], "u": [1, 2, 3], "d": [[4, 5, 6], [7, 8, 9]], "need": 100}
    sol = bind(text, data).solve("highs")
    assert sol.status == "infeasible"
    assert sorted(sol.extra["iis"]) == ["c[b]", "c[c]@0", "m"]


# min ½|x|² − x₁ − x₂ s.t. a·(x₁ + x₂) <= a, x >= 0: the optimum x = (½, ½), objective −¾,
# the row's dual −½ / a (HiGHS's sign: ≤ 0 on an upper side)
SMALL_QP = """param n : int; param m : int; param c[n]; param A[m, n]; param b[m];
var x[n] >= 0;
minimize f: c @ x + 0.5 * sum_squares(x);
subject to rows: A @ x <= b;
"""


def small_qp(a: float = 1.0):
    data = {"n": 2, "m": 1, "c": [-1, -1], "A": [[a, a]], "b": [a]}
    return bind(SMALL_QP, data).linear_form()


def test_the_kkt_check_passes_the_optimum_and_fails_a_feasible_non_optimal_point():
    form = small_qp()
    at_optimum = kkt_residuals(form, np.array([0.5, 0.5]), np.array([-0.5]))
    assert at_optimum.holds() and max(at_optimum.primal, at_optimum.dual, at_optimum.gap) < 1e-15
    # a vertex of the feasible set, with the dual that fits it best: not stationary
    vertex = kkt_residuals(form, np.array([1.0, 0.0]), np.array([0.0]))
    assert vertex.feasible() and not vertex.holds() and vertex.dual > 0.1
    # the optimum's dual at a point off the row: complementarity fails
    inside = kkt_residuals(form, np.array([0.25, 0.25]), np.array([-0.5]))
    assert inside.feasible() and inside.gap > 0.1 and not inside.holds()


def test_a_point_off_a_row_fails_the_primal_check():
    verdict = kkt_residuals(small_qp(), np.array([0.75, 0.75]), np.array([-0.5]))
    # 0.5 over the row, relative to 1 + its terms (1.5) + its bound (1)
    assert not verdict.feasible() and verdict.primal == pytest.approx(0.5 / 3.5)


def test_a_tiny_dual_of_the_wrong_sign_on_a_row_of_large_coefficients_fails():
    """The mechanism of fuzz seed 5036872: HiGHS's dual on a row with an entry near 1e6 was
    +8e-8 on its upper side, under HiGHS's dual tolerance, but times the row's 1e6 it is a
    stationarity error of order 0.1 at the model's scale. The right sign passes."""
    a = 1e6
    form = small_qp(a)
    x = np.array([0.5, 0.5])
    assert kkt_residuals(form, x, np.array([-0.5 / a])).holds()
    wrong = kkt_residuals(form, x, np.array([+0.5 / a]))
    assert wrong.dual > 0.1 and not wrong.holds()


def test_bound_duals_are_derived_where_none_are_given_and_checked_where_they_are():
    """min ½x² + x, x >= 0: x = 0 with z = 1 on the lower bound. Derived, z fits; given with
    the wrong sign it is dropped and stationarity fails."""
    form = bind("var x >= 0; minimize f: 0.5 * x^2 + x;").linear_form()
    assert kkt_residuals(form, np.zeros(1), np.zeros(0)).holds()
    assert kkt_residuals(form, np.zeros(1), np.zeros(0), np.ones(1)).holds()
    assert not kkt_residuals(form, np.zeros(1), np.zeros(0), -np.ones(1)).holds()


def test_a_non_finite_point_fails():
    verdict = kkt_residuals(small_qp(), np.array([np.nan, 0.5]), np.array([-0.5]))
    assert not verdict.holds() and not verdict.feasible()


def test_form_row_duals_undo_the_solutions_dual_mapping():
    inst = bind("var x >= 0; var y >= 0; maximize f: x + 2 * y - x^2 - y^2;"
                "s.t. both: x + y <= 1; s.t. one: x - y <= 0.5;")
    form = inst.linear_form()
    sol = inst.solve("highs")
    y = form_row_duals(form, sol.duals)
    assert y is not None and kkt_residuals(form, sol.x, y).holds()
    assert form_row_duals(form, None) is None
    assert form_row_duals(form, {"both": np.zeros(1)}) is None  # a block missing


def test_an_unproven_answer_is_feasible_at_a_feasible_point_else_an_error():
    form = small_qp()
    raw = RawResult("optimal", np.array([1.0, 0.0]), -0.5, np.zeros(1))
    verdict = kkt_residuals(form, raw.x, raw.row_duals)
    kept = unproven(raw, verdict, "why")
    assert (kept.status, kept.objective, kept.row_duals) == ("feasible", -0.5, None)
    assert kept.warning == "not proven optimal: why" and kept.message == "why"
    off = RawResult("optimal", np.array([2.0, 0.0]), 0.0, np.zeros(1))
    dropped = unproven(off, kkt_residuals(form, off.x, off.row_duals), "why")
    assert (dropped.status, dropped.x, dropped.objective) == ("error", None, None)
