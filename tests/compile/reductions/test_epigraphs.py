"""Epigraphs: convex atoms in the objective and in constraints lowered to epigraph rows,
each against brute-force enumeration or an optimum worked out by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import bridge
from dfl_dsl.compile.problem import Origin, RowBlock

# ---------------------------------------------------------------------- epigraphs
EPI_CASES = [
    ("minimize", "sum{i in I} abs(x[i] - c[i])", lambda x, c: np.abs(x - c).sum()),
    ("minimize", "max{i in I} (c[i] * x[i])", lambda x, c: (c * x).max()),
    ("minimize", "norm1(x - c) + norm_inf(x - c)",
     lambda x, c: np.abs(x - c).sum() + np.abs(x - c).max()),
    ("minimize", "sum{i in I} pos(c[i] - x[i]) + max(x[0], x[1])",
     lambda x, c: np.maximum(c - x, 0).sum() + max(x[0], x[1])),
    ("maximize", "min{i in I} (x[i] + c[i]) + min(x[2], 0.5)",
     lambda x, c: (x + c).min() + min(x[2], 0.5)),
    # atoms nested in atoms: each inner one gets its own epigraph variables
    ("minimize", "max{i in I} pos(x[i] - c[i]) + norm_inf(x - c)",
     lambda x, c: np.maximum(x - c, 0).max() + np.abs(x - c).max()),
    ("minimize", "max(max{i in I} abs(x[i] - c[i]), 0.9) - 2 * min{i in I} min(x[i], c[i])",
     lambda x, c: max(np.abs(x - c).max(), 0.9) - 2 * np.minimum(x, c).min()),
    ("maximize", "min{i in I} (c[i] - pos(x[i] - c[i]))",
     lambda x, c: (c - np.maximum(x - c, 0)).min()),
    # |e| of an e of known sign with atoms in it: one side of the epigraph is |e|
    ("minimize", "sum{i in I} abs(-min(x[i] - c[i], 0)) + norm1(pos(x - c)) + 0.1 * sum(x)",
     lambda x, c: np.maximum(c - x, 0).sum() + np.maximum(x - c, 0).sum() + 0.1 * x.sum()),
]


@pytest.mark.parametrize(("sense", "body", "fn"), EPI_CASES, ids=[c[1][:20] for c in EPI_CASES])
def test_epigraphs_against_brute_force(sense, body, fn):
    c = np.array([0.3, 1.4, -0.2, 0.8])
    text = f"""param n : int; param c[n]; set I = 0..n-1;
    var x[n] binary;
    {sense} f: {body};
    subject to some: sum(x) >= 2;"""
    inst = bind(text, {"n": 4, "c": c.tolist()})
    picks = [np.array(b, float) for b in itertools.product([0, 1], repeat=4) if sum(b) >= 2]
    best = (min if sense == "minimize" else max)(fn(x, c) for x in picks)
    for backend in ("highs", "cvxpy"):
        sol = inst.solve(backend)
        assert sol.objective == pytest.approx(best, abs=1e-7), backend



# ---------------------------------------------------------------- atoms in constraints
# (convex atoms bounded from above, concave ones from below: epigraph rows, an LP or MILP)
ROW_CASES = [
    # (model, data, objective), the objective worked out by hand
    ("param n : int; param c[n]; var x[n]; maximize o: c @ x;\n"
     "subject to ball: norm1(x) <= 2;", {"n": 3, "c": [1, -3, 2]}, 6.0),  # 2 * max |c|
    ("set I; param c{I}; var x{I}; maximize o: sum{i in I} c[i] * x[i];\n"
     "subject to ball: sum{i in I} abs(x[i]) <= 2;", {"I": [1, 2, 3], "c": [1, -3, 2]}, 6.0),
    ("var x; var y; maximize o: x + y; subject to c: max(x, y) <= 3;", {}, 6.0),
    ("var x; var y; minimize o: x + y; subject to c: min(x, y) >= 1;", {}, 2.0),
    ("var x; var y; minimize o: x + y; subject to c: 2 <= min(x + 1, 2 * y);", {}, 2.0),
    ("var x; var y; minimize o: x + y; subject to c: -2 * min(x, y) <= -2;", {}, 2.0),
    ("var x; maximize o: x; subject to c: 4 >= abs(x - 1) + abs(x + 1);", {}, 2.0),
    # minimax: the worst of |x - 0| and |x - 4| is least at x = 2
    ("set I; param b{I}; var x; var t; minimize o: t;\n"
     "subject to mm: max{i in I} abs(x - b[i]) <= t;", {"I": [1, 2], "b": [0, 4]}, 2.0),
    # shortfall: s[i] >= d[i] - x[i] costs 3, x costs 1: buy the demand
    ("set I; param d{I}; var x{I} >= 0; var s{I} >= 0;\n"
     "minimize o: sum{i in I} (x[i] + 3 * s[i]);\n"
     "subject to short{i in I}: pos(d[i] - x[i]) <= s[i];", {"I": [1, 2], "d": [2, 5]}, 7.0),
    # atoms nested in atoms
    ("var x; var y; maximize o: x + y; subject to c: max(abs(x), pos(y - 1)) <= 2;", {}, 5.0),
    ("param n : int; param c[n]; var x[n]; maximize o: sum(x);\n"
     "subject to k: norm1(pos(x - c)) <= 2; subject to u: x <= 10;",
     {"n": 3, "c": [0, 1, 2]}, 5.0),
    ("set I = 1..3; var x{I}; var y; maximize o: sum{i in I} x[i] + y;\n"
     "subject to k: sum{i in I} max(abs(x[i]), y) <= 6;", {}, 8.0),
    ("param m : int; param n : int; param A[m, n]; param b[m]; var x[n]; var t;\n"
     "minimize o: t + 0.1 * norm1(x); subject to fit: norm_inf(A @ x - b) <= t;",
     {"m": 3, "n": 2, "A": [[1, 0], [0, 1], [1, 1]], "b": [1, 2, 2]}, 0.56666666667),
    # an `expr` with an atom, used by some rows only
    ("set I = 1..4; param t{I}; var x{I}; expr dev{i in I} = abs(x[i] - t[i]);\n"
     "maximize o: sum{i in I} x[i];\n"
     "subject to a{i in I : i >= 3}: dev[i] <= 1; subject to b{i in I : i <= 2}: x[i] <= 0;",
     {"t": [1, 2, 3, 4]}, 9.0),
    # an infinite bound leaves its row free: its atom is dropped
    ("set I; param cap{I}; var x{I} <= 5; maximize o: sum{i in I} x[i];\n"
     "subject to r{i in I}: abs(x[i]) <= cap[i];", {"I": [1, 2], "cap": [1, "inf"]}, 6.0),
    # a quadratic objective over an L1 ball: a QP
    ("param n : int; param c[n]; var x[n]; minimize o: sum_squares(x - c);\n"
     "subject to ball: norm1(x) <= 1;", {"n": 2, "c": [2, 0.5]}, 1.25),
    # budgeted absolute deviations with integers: x = (1, 2, 3) deviates by 1.6 <= 2
    ("set I; param t{I}; param B; var x{I} integer; maximize o: sum{i in I} x[i];\n"
     "subject to dev: sum{i in I} abs(x[i] - t[i]) <= B;",
     {"I": [1, 2, 3], "t": [0.5, 1.2, 2.7], "B": 2}, 6.0),
]


@pytest.mark.parametrize(("text", "data", "best"), ROW_CASES,
                         ids=[c[0].split("subject to ")[1][:28] for c in ROW_CASES])
def test_atoms_in_constraints_become_linear_rows(text, data, best):
    inst = bind(text, data)
    assert inst.klass.name in ("LP", "MILP", "QP")
    form = inst.linear_form()
    assert not form.is_qp or inst.klass.name == "QP"
    for backend in ("highs", "pyomo", "cvxpy"):
        sol = inst.solve(backend)
        assert sol.status == "optimal", backend
        assert sol.objective == pytest.approx(best, abs=1e-6), backend


def test_constraint_epigraph_rows_keep_the_name_and_bounds():
    inst = bind("set I; param t{I}; var x{I}; minimize o: sum{i in I} x[i];\n"
                "subject to dev{i in I}: abs(x[i] - t[i]) <= 1;",
                {"I": [1, 2, 3], "t": [0, 1, 2]})
    bridged = bridge(inst.compile(), inst, label_rows=True)
    assert [b.name for b in bridged.rows] == ["dev"] * 3  # the epigraph's rows are dev's
    assert [b.origin for b in bridged.rows] == [None] + [Origin("epigraph", "abs")] * 2
    dev = bridged.rows[0]
    assert dev.labels == ["dev[1]", "dev[2]", "dev[3]"]
    assert np.all(dev.hi == 0) and np.all(dev.lo == -np.inf)
    assert np.all(dev.body.const == -1)  # t - 1 <= 0, t the epigraph variable
    assert bridged.width == inst.width + 3  # one epigraph variable per row


def test_an_expr_used_by_some_rows_gets_epigraphs_for_those_only():
    inst = bind("set I = 1..100; var x{I}; expr dev{i in I} = abs(x[i] - 1);\n"
                "minimize o: sum{i in I} x[i]; subject to a{i in I : i <= 2}: dev[i] <= 1;")
    bridged = bridge(inst.compile(), inst)
    assert bridged.width == inst.width + 2
    assert sum(b.body.rows for b in bridged.rows) == 2 + 2 * 2


def test_predicted_params_bound_an_atom():
    inst = bind("param th : predicted; var x; maximize o: x; subject to r: abs(x - 1) <= th;",
                {"th": 2.0})
    assert inst.klass.name == "LP"
    assert inst.linear_form().theta_in_constraints
    for backend in ("highs", "cvxpy"):
        assert inst.solve(backend).objective == pytest.approx(3.0)


def test_a_row_bounded_on_both_sides_is_refused_by_the_bridge_too():
    """The checker refuses `lo <= abs(x) <= hi` and `abs(x) == 1`; the bridge does as well."""
    from dfl_dsl.compile.reductions.epigraphs import _row_plan

    inst = bind("var x; minimize o: x; subject to c: abs(x) <= 1;")
    rows = inst.compile().constraints[0]
    block = RowBlock("c", rows.body, np.array([-1.0]), np.array([0.0]),
                     origin=Origin("scenario", scenario=2))
    with pytest.raises(dfl.DflError, match="constraint `c` bounds an expression with `abs`"):
        _row_plan(block)


def test_a_quadratic_objective_with_piecewise_linear_terms_is_a_qp_for_highs():
    """The lasso: ½‖Av − b‖² + λ‖v‖₁ — the norm's epigraph leaves a QP HiGHS solves, at
    CVXPY's optimum."""
    rng_ = np.random.default_rng(0)
    A, b = rng_.normal(size=(8, 5)), rng_.normal(size=8)
    text = ("param A[8, 5]; param b[8];\nvar v[5];\n"
            "minimize o: 0.5 * sum_squares(A @ v - b) + 0.7 * norm1(v);")
    inst = dfl.parse(text).bind({"A": A.tolist(), "b": b.tolist()})
    assert inst.klass.name == "QP"
    highs, conic = inst.solve("highs"), inst.solve("cvxpy")
    assert highs.status == conic.status == "optimal"
    assert highs.objective == pytest.approx(conic.objective, rel=1e-6)
