"""The CVXPY backend: DCP models with nonlinear atoms, predicted params as one DPP Parameter."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import OPTIMUM, SEED_5013383, SEED_5036872, bind, spec_qp_with

import dfl_dsl as dfl
from dfl_dsl.backends import cvxpy_backend
from dfl_dsl.solution import Solution


def test_norms_and_sum_squares():
    c = np.array([3.0, 4.0])
    # the closest point to c in the unit ball is c/|c|: distance 4
    inst = bind("param c[2]; var x[2]; minimize f: 2 * norm2(x - c); subject to ball: "
                "sum_squares(x) <= 1;", {"c": c.tolist()})
    sol = inst.solve("cvxpy")
    assert sol.status == "optimal" and sol.objective == pytest.approx(8.0, rel=1e-6)
    assert sol.value("x") == pytest.approx(c / 5, abs=1e-5)


def test_concave_atoms_maximized():
    # max log(x) + sqrt(y) + log1p(z) s.t. x + y + z <= 3: the KKT point has 1/x = 1/(2√y) = 1/(1+z)
    inst = bind("var x >= 0; var y >= 0; var z >= 0; maximize f: log(x) + sqrt(y) + log1p(z);"
                "subject to budget: x + y + z <= 3;")
    sol = inst.solve("cvxpy")
    x, y, z = (sol.value(n) for n in "xyz")
    assert x + y + z == pytest.approx(3, abs=1e-5)
    assert x == pytest.approx(2 * np.sqrt(y), abs=1e-4) and x == pytest.approx(1 + z, abs=1e-4)
    assert sol.objective == pytest.approx(np.log(x) + np.sqrt(y) + np.log1p(z), abs=1e-6)


def test_exp_and_abs_minimized():
    sol = bind("var x; minimize f: exp(x) + abs(x - 1) - 2 * x;").solve("cvxpy")
    # slopes: e^x - 3 < 0 left of 1 (e < 3), e^x - 1 > 0 right of it: the kink at 1
    assert sol.value("x") == pytest.approx(1, abs=1e-4)
    assert sol.objective == pytest.approx(np.e - 2, abs=1e-6)


def test_grouped_atom_with_one_group_and_a_weight():
    sol = bind("param c[3]; var x[3]; minimize f: 3 * norm_inf(x - c) + norm1(x);",
               {"c": [1.0, -2.0, 0.5]}).solve("cvxpy")
    assert sol.status == "optimal"
    # brute check: x = 0 gives 3 * 2 = 6; shrinking |x - c|_inf to t costs 3t + Σ max(|c_i|-t, 0)
    ts = np.linspace(0, 2, 2001)
    best = min(3 * t + np.maximum(np.abs([1, -2, 0.5]) - t, 0).sum() for t in ts)
    assert sol.objective == pytest.approx(best, abs=1e-3)


def test_predicted_params_are_one_parameter():
    text = """set I; param c{I} : predicted; param w{I};
              var x{I} in [0, 1]; minimize f: sum{i in I} c[i] * x[i];
              subject to cap: sum{i in I} w[i] * x[i] <= 2;"""
    data = {"I": [1, 2, 3], "w": [1.0, 1.5, 0.7]}
    inst = dfl.parse(text, "p.opt").bind(data)
    built = cvxpy_backend.build(inst)
    assert built is cvxpy_backend.build(inst)  # cached
    assert built.theta is not None and built.theta.shape == (3,)
    assert built.problem.is_dpp()
    for theta in ([-1.0, -2.0, -0.5], [1.0, -1.0, -3.0]):
        built.theta.value = np.array(theta)
        built.problem.solve(solver="CLARABEL")
        ref = dfl.parse(text.replace(": predicted", ""), "d.opt").bind({**data, "c": theta})
        assert built.problem.value == pytest.approx(ref.solve("highs").objective, abs=1e-6)


@pytest.mark.parametrize(("text", "status"), [
    ("var x; minimize f: x;", "unbounded"),
    ("var x >= 0; minimize f: x; subject to c: x <= -1;", "infeasible"),
    ("var x; minimize f: x ^ 2; subject to c: x ^ 2 <= -1;", "infeasible"),
    ("var x binary; minimize f: x; subject to c: x == 0.5;", "infeasible"),
    # HiGHS's MIP presolve says "infeasible or unbounded" for these: a feasibility solve tells
    ("var x integer >= 0; var y >= 0; maximize f: x + y; s.t. c: x - y <= 1;", "unbounded"),
    ("var x integer >= 0; var y >= 0; var z{1..4} integer >= 0 <= 3; maximize f: x + y;"
     "s.t. c: x - y <= 1; s.t. d: 6 * z[1] + 10 * z[2] + 15 * z[3] + 14 * z[4] == 7;",
     "infeasible"),
    # Clarabel calls this one "unbounded_inaccurate" (y is free below, x has no room at all)
    ("var x; var y; minimize f: x ^ 2 + y; s.t. a: x >= 1; s.t. b: x <= 0;", "infeasible"),
])
def test_statuses(text, status):
    sol = bind(text).solve("cvxpy")
    assert sol.status == status and sol.x is None and sol.objective is None


def test_mixed_integer_goes_through_highs():
    sol = bind("var x{1..3} binary; param v{1..3}; maximize f: sum{i in 1..3} v[i] * x[i];"
               "subject to one: sum{i in 1..3} x[i] <= 1;", {"v": [1, 3, 2]}).solve("cvxpy")
    assert sol.objective == pytest.approx(3) and sol.value("x").tolist() == pytest.approx([0, 1, 0])
    assert sol.message.startswith("HIGHS")


@pytest.mark.parametrize(("constraint", "sense", "want"), [
    ("abs(x - a[1]) <= 1", "minimize", 1.0),  # x in [0, 2] and in [1, 3]
    ("abs(x - 3) <= a[2]", "maximize", 3.5),  # x <= 3 + 0.5 and x <= 3 + 1
    ("norm2(x - a[1]) + a[2] <= 3", "maximize", 3.5),  # x <= 1 + 2.5 and x <= 2 + 2
])
def test_nonlinear_constraints_hold_for_every_scenario(constraint, sense, want):
    inst = bind(f"param a{{1..2}} : uncertain; var x; {sense} f: x; subject to c: {constraint};",
                {"a": [[1.0, 0.5], [2.0, 1.0]]})
    sol = inst.solve("cvxpy")
    assert sol.status == "optimal" and sol.objective == pytest.approx(want, abs=1e-6)


DUALS_QP = """var x >= 0; var y >= 0;
maximize f: 2*x + y - 0.1*x^2 - 0.1*y^2;
subject to cap: x + y <= 3;
subject to lo: x - y >= 0.5;
subject to eq: x + 2*y == 2.5;
subject to rng: -1 <= x - 2*y <= 0.8;
"""


@pytest.mark.parametrize("sense", ["maximize", "minimize"])
def test_duals_follow_highs_convention(sense):
    """Each row's dual is the objective's rate in its bound, as HiGHS reports it, for <=, >=,
    == and ranged rows, in both senses (CVXPY's own multipliers are >= 0 on inequalities and
    enter equalities with the other sign)."""
    text = DUALS_QP if sense == "maximize" else DUALS_QP.replace(
        "maximize f: 2*x + y - 0.1*x^2 - 0.1*y^2", "minimize f: (x - 3)^2 + (y - 2)^2")
    inst = dfl.parse(text, "m.opt").bind(None)
    ours, reference = inst.solve("cvxpy").duals, inst.solve("highs").duals
    assert set(ours) == {"cap", "lo", "eq", "rng"}
    for row, values in reference.items():
        assert ours[row][0] == pytest.approx(values[0], abs=1e-4), row
    assert any(abs(v[0]) > 0.1 for v in reference.values())  # some row binds


def test_mixed_integer_solutions_have_no_duals():
    inst = dfl.parse("var x integer >= 0; minimize f: x; subject to c: x >= 1.5;",
                     "m.opt").bind(None)
    sol = inst.solve("cvxpy")
    assert sol.objective == pytest.approx(2) and sol.duals is None


def test_a_time_limited_milp_without_a_point_is_time_limit_not_feasible():
    # it said `feasible`, objective 0, all zeros, breaking the `>= 10` row
    rng = np.random.default_rng(7)
    n, m = 300, 5
    w = rng.integers(10, 100, size=(m, n))
    inst = bind("param n : int; param m : int; param W[m, n]; param cap[m]; param v[n];"
                "var x[n] binary; var y >= 0; maximize f: v @ x - y;"
                "subject to c: W @ x <= cap; subject to big: y >= 10;",
                {"n": n, "m": m, "W": w.tolist(), "cap": (w.sum(axis=1) // 2).tolist(),
                 "v": rng.integers(10, 100, size=n).tolist()})
    sol = inst.solve("cvxpy", time_limit=1e-6)
    assert sol.status == "time_limit" and sol.x is None and sol.objective is None
    found = inst.solve("cvxpy", time_limit=30)
    assert found.status in ("optimal", "feasible") and found.value("y") >= 10 - 1e-6


@pytest.mark.parametrize(("text", "want"), [
    # Clarabel said `optimal` -5.3e-9 (x = -1.2e-18) and `unbounded` for these; the optimum is
    # 1e-12 (HiGHS, through CVXPY, reads 1e-24 within its tolerance of 0: off by 1e-12)
    ("var x; var y; minimize f: 1e12 * x + y; subject to c: x >= 1e-24; subject to d: y >= x;",
     1e-12),
    ("var x{1..3}; minimize f: 1e12 * x[1] + x[2]; subject to c: x[1] + x[2] >= 1e-24;"
     "subject to d: x[2] >= 0; subject to e: x[1] >= 1e-24; subject to g: x[3] == x[1];", 1e-12),
    # Clarabel: `infeasible`
    ("var x; var y; minimize f: 1e12 * x + 1e-3 * y; subject to c: x + y >= 1;"
     "subject to d: x >= 0; subject to e: y >= 0;", 1e-3),
])
def test_badly_scaled_lps_are_solved_right(text, want):
    inst = bind(text)
    sol = inst.solve("cvxpy")
    assert sol.status == "optimal" and sol.message.startswith("HIGHS")
    assert sol.objective == pytest.approx(want, abs=1e-11)
    assert sol.objective == pytest.approx(inst.solve("highs").objective, abs=1e-11)


@pytest.mark.parametrize(("seed", "changes"), [(5013383, SEED_5013383),
                                               (5036872, SEED_5036872)])
def test_a_wrong_or_failed_qp_answer_from_cvxpys_highs_is_solved_by_clarabel(seed, changes):
    """Seed 5013383: CVXPY's HiGHS said `optimal` 0.7639 at a feasible non-optimal point (the
    optimum 0.70599); 5036872: it failed. The KKT check catches the first, and Clarabel's
    answer, which passes it, is the one returned."""
    sol = bind(*spec_qp_with(*changes)).solve("cvxpy")
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(OPTIMUM[seed], rel=1e-7)


def _wrong_then(inst, monkeypatch, second):
    """CVXPY's HiGHS made to answer a vertex `optimal` with zero duals; then `second`."""
    answers = []
    real = cvxpy_backend._solved

    def solved(built, inst_, solver, options, start):
        answers.append(solver)
        if solver == "HIGHS":
            return Solution("optimal", -1.0, np.array([1.0, 0.0]), "cvxpy", 0.0, inst_,
                            duals={"total": np.zeros(1)}, message="HIGHS: optimal")
        return real(built, inst_, solver, options, start) if second is None else second(inst_)

    monkeypatch.setattr(cvxpy_backend, "_solved", solved)
    return inst.solve("cvxpy"), answers


SMALL = """var x{0..1} >= 0;
minimize f: 0.5 * (x[0]^2 + x[1]^2) - 1.5 * x[0] - 1.5 * x[1];
s.t. total: x[0] + x[1] <= 1.5;
"""


def test_a_qp_answer_that_fails_the_kkt_check_goes_to_clarabel(monkeypatch):
    sol, solvers = _wrong_then(bind(SMALL), monkeypatch, None)
    assert solvers == ["HIGHS", "CLARABEL"]
    assert sol.status == "optimal" and sol.objective == pytest.approx(-1.6875, rel=1e-7)
    assert "CVXPY's HiGHS's `optimal` fails the KKT check" in sol.message


def test_a_qp_answer_nothing_confirms_is_feasible_with_a_warning(monkeypatch):
    def also_wrong(inst):
        return Solution("optimal", -1.0, np.array([1.0, 0.0]), "cvxpy", 0.0, inst,
                        duals={"total": np.zeros(1)}, message="CLARABEL: optimal")

    sol, _ = _wrong_then(bind(SMALL), monkeypatch, also_wrong)
    assert (sol.status, sol.objective) == ("feasible", -1.0) and sol.duals is None
    assert sol.extra["warning"].startswith("not proven optimal: CVXPY's HiGHS's `optimal`")
    assert "and so does Clarabel's answer" in sol.extra["warning"]
