"""rows_to_bounds: single-variable rows without θ become variable bounds."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import bind

from dfl_dsl.compile.bridges import build_linear
from dfl_dsl.compile.reductions.rows_to_bounds import rows_to_bounds

MODEL = """
var x >= -10 <= 10; var y >= -10 <= 10; var k integer >= -10 <= 10;
param t : predicted;
minimize f: x + y + k;
subject to pos: 2 * x <= 3;            # x <= 1.5
subject to neg: -4 * y <= 2;           # y >= -0.5
subject to neg_band: -1 <= -2 * x <= 8;  # -4 <= x <= 0.5
subject to both: x + y >= -1;          # two variables: stays a row
subject to intk: 3 * k >= 2;           # k >= 2/3, so k >= 1 (integer)
subject to intk2: 2 * k <= 9;          # k <= 4.5, so k <= 4
subject to theta_row: y <= t;          # holds θ: stays a row
"""


@pytest.fixture()
def forms():
    inst = bind(MODEL)
    return build_linear(inst, reduce=False), rows_to_bounds(build_linear(inst, reduce=False))


def test_bounds_from_positive_and_negative_coefficients(forms):
    _, reduced = forms
    assert reduced.lb.tolist() == pytest.approx([-4, -0.5, 1])
    assert reduced.ub.tolist() == pytest.approx([0.5, 10, 4])


def test_rows_kept(forms):
    full, reduced = forms
    assert full.m == 7 and reduced.m == 2
    names = {name: (start, count) for name, start, count in full.row_names}
    kept = [names["both"][0], names["theta_row"][0]]
    assert reduced.kept_rows.tolist() == kept
    assert np.allclose(reduced.A.toarray(), full.A.toarray()[kept])
    assert reduced.row_theta.nnz == 1 and reduced.row_theta.toarray()[1, 0] == -1


def test_same_optimum_as_without_the_reduction():
    inst = bind(MODEL, {"t": 2.0})
    reduced = inst.solve("highs")
    assert reduced.objective == pytest.approx(0.5 - 1.5 + 1)
    assert reduced.value("k") == pytest.approx(1)


def test_nothing_to_reduce_returns_the_same_form():
    inst = bind("var x; var y; minimize f: x + y; subject to c: x + y >= 1;")
    form = build_linear(inst, reduce=False)
    assert rows_to_bounds(form) is form


def test_rows_with_theta_in_the_coefficient_are_kept():
    inst = bind("param a : predicted; var x in [0, 5]; minimize f: x; subject to c: a * x >= 1;")
    form = rows_to_bounds(build_linear(inst, reduce=False))
    assert form.m == 1 and form.ub.tolist() == [5]
    assert len(form.a_theta[0]) == 1 and form.a_theta[0][0] == 0


def test_stored_zero_coefficients_are_not_variables():
    inst = bind("var x in [0, 5]; var y in [0, 5]; maximize f: x; subject to c: y <= 4;")
    form = build_linear(inst, reduce=False)
    form.A = sp.csr_array((np.array([0.0]), (np.array([0]), np.array([1]))), shape=(1, 2))
    assert form.A.nnz == 1  # the row now reads `0 * y <= 4`: it always holds
    reduced = rows_to_bounds(form)
    assert reduced.lb.tolist() == [0, 0] and reduced.ub.tolist() == [5, 5]


def test_duals_of_rows_that_became_bounds_come_from_the_reduced_costs():
    """They were null: `lo`'s dual is x's reduced cost over its coefficient, 1 − 2·1."""
    inst = bind("var x >= 0; var y >= 0; minimize f: x + 2 * y;"
                "subject to lo: x >= 1; subject to both: x + y >= 3;")
    sol = inst.solve("highs")
    assert sol.objective == pytest.approx(3)
    assert sol.duals["lo"][0] == pytest.approx(0) and sol.duals["both"][0] == pytest.approx(1)
    assert sol.to_json()["duals"] == {"lo": 0.0, "both": 1.0}  # scalar rows: numbers


LP = """
var x >= -10 <= 10; var y >= -10 <= 10; var z >= -10 <= 10; var w >= 0 <= 10;
SENSE f: x + 2 * y + 3 * z - w;
subject to pos: 2 * x >= 3;              # x >= 1.5: active
subject to neg: -4 * y <= -2;            # y >= 0.5: active, a negative coefficient
subject to band: -1 <= -2 * z <= 8;      # -4 <= z <= 0.5: its upper side is active
subject to loose: 3 * w <= 27;           # w <= 9: inactive (the pair row binds w first)
subject to pair: x + w <= 4;             # two variables: stays a row
subject to twice: 4 * x >= 2;            # x >= 0.5: looser than `pos`, inactive
"""


def test_duals_of_rows_made_bounds_equal_those_with_the_rows_kept():
    """Canonical duals of the reduced form, mapped back, against HiGHS on the unreduced form,
    and the columns' reduced costs with them (a bound's multiplier is then the row's)."""
    from dfl_dsl.backends.common import RowsToBounds
    from dfl_dsl.backends.highs import solve

    inst = bind(LP.replace("SENSE", "minimize"))
    full, reduced = build_linear(inst, reduce=False), build_linear(inst)
    assert reduced.m == 1
    kept, _ = solve(full)
    made, _ = solve(reduced)
    assert made.objective == pytest.approx(kept.objective)
    duals = RowsToBounds.invert(made.row_duals, reduced, made.col_duals)
    np.testing.assert_allclose(duals, kept.row_duals, atol=1e-9)
    assert np.abs(duals).min() == 0 and np.count_nonzero(duals) == 4
    np.testing.assert_allclose(RowsToBounds.invert_reduced(made.col_duals, reduced),
                               kept.col_duals, atol=1e-9)


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_duals_of_rows_made_bounds_agree_with_cvxpy(sense):
    """In the model's sense, as `dfl solve --json` prints them: the same as CVXPY's, which
    keeps every row."""
    text = LP.replace("SENSE", sense)
    if sense == "maximize":
        text = text.replace("x + 2 * y + 3 * z - w", "-x - 2 * y - 3 * z + w")
    inst = bind(text)
    ours, theirs = inst.solve("highs"), inst.solve("cvxpy")
    assert ours.objective == pytest.approx(theirs.objective)
    for name, dual in theirs.duals.items():
        np.testing.assert_allclose(ours.duals[name], dual, atol=1e-6, err_msg=name)


def test_a_bound_the_column_already_had_keeps_its_multiplier():
    """`x >= 0` as a row on `var x >= 0`: the tie is the column's (the row's dual 0, x's
    reduced cost kept) — one of the optimal dual solutions, and the one without the row."""
    inst = bind("var x >= 0; var y >= 0; minimize f: 3 * x + y;"
                "subject to lo: x >= 0; subject to both: 2 * x + y >= 1;")
    sol = inst.solve("highs")
    assert sol.value("x") == 0 and sol.duals["both"][0] == pytest.approx(1)
    assert sol.duals["lo"][0] == 0 and sol.reduced_costs[0] == pytest.approx(3 - 2 * 1)
