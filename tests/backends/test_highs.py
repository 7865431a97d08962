"""The HiGHS backend: re-solving with a new cost, time limits, IIS rows, statuses and duals."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time

import cvxpy as cp
import numpy as np
import pytest
from _helpers import bind, spec_dir

import dfl_dsl as dfl
from dfl_dsl.backends.highs import HighsModel, qp_scale_exponent


@pytest.fixture(scope="module")
def knapsack():
    spec = spec_dir()
    return dfl.load(spec / "knapsack.opt").bind(spec / "knapsack.json")


def test_set_objective_resolve_matches_a_fresh_build(knapsack):
    form = knapsack.linear_form()
    theta = knapsack.theta_for_solve()
    kept = HighsModel(form, theta=theta)
    assert kept.solve().status == "optimal"
    rng = np.random.default_rng(0)
    for _ in range(4):
        new = rng.uniform(0, 5, size=theta.shape)
        c, c0 = form.objective_at(new)
        kept.set_objective(c, c0)
        again = kept.solve()
        fresh = HighsModel(form, theta=new).solve()
        assert again.status == fresh.status == "optimal"
        assert again.objective == pytest.approx(fresh.objective, rel=1e-9)


def _hard_knapsack():
    rng = np.random.default_rng(7)
    n, m = 70, 5
    weights = rng.integers(10, 100, size=(m, n))
    text = """param n : int; param m : int; param W[m, n]; param cap[m]; param v[n];
              var x[n] binary; maximize f: v @ x; subject to c: W @ x <= cap;"""
    return bind(text, {"n": n, "m": m, "W": weights.tolist(),
                       "cap": (weights.sum(axis=1) // 2).tolist(),
                       "v": rng.integers(10, 100, size=n).tolist()})


def test_time_limit_returns_a_point_without_crashing():
    inst = _hard_knapsack()
    start = time.perf_counter()
    sol = inst.solve("highs", time_limit=0.2)
    assert time.perf_counter() - start < 5
    assert sol.status in ("feasible", "optimal")
    if sol.status == "feasible":
        assert sol.x is not None and sol.gap is not None and sol.gap >= 0
    assert np.all(np.isin(np.round(sol.value("x"), 6), [0, 1]))


INFEASIBLE_LP = """
var x >= 0; var y >= 0;
minimize f: x + y;
subject to enough: x + y >= 5;
subject to small: x + 2 * y <= 3;
subject to loose: x - y <= 100;
"""


def test_iis_rows_of_an_infeasible_lp():
    sol = bind(INFEASIBLE_LP).solve("highs")
    assert sol.status == "infeasible" and sol.objective is None and sol.x is None
    assert sorted(sol.extra["iis"]) == ["enough", "small"]
    assert sorted(sol.to_json()["iis"]) == ["enough", "small"]


def test_iis_labels_name_indexed_rows():
    text = """set I; param need{I}; var x{I} >= 0;
              subject to low{i in I}: x[i] + x["b"] >= need[i];
              subject to cap: sum{i in I} x[i] <= 1;"""
    sol = bind(text, {"I": ["a", "b"], "need": [5, 0]}).solve("highs")
    assert sol.status == "infeasible"
    assert set(sol.extra["iis"]) == {"low[a]", "cap"}


@pytest.mark.parametrize(("text", "status"), [
    ("var x; minimize f: x;", "unbounded"),
    ("var x integer; minimize f: x;", "unbounded"),  # presolve alone can't tell
    ("var x integer >= 0; var y integer; minimize f: x - y; subject to c: x + y >= 1;"
     "subject to d: x + y <= 0.5;", "infeasible"),
    ("var x binary; var y integer >= 0; minimize f: x; subject to c: x + 2 * y == 1.5;",
     "infeasible"),
    ("var x >= 0; minimize f: x; subject to c: x <= -1;", "infeasible"),
])
def test_statuses(text, status):
    sol = bind(text).solve("highs")
    assert sol.status == status and not sol.ok


def test_a_model_without_variables_is_infeasible_when_a_row_is():
    text = ("set A; set B; var x{A, B} >= 0; minimize f: sum{a in A, b in B} x[a, b]; "
            "s.t. r{a in A}: sum{b in B} x[a, b] >= 1;")
    assert bind(text, {"A": [1], "B": []}).solve("highs").status == "infeasible"
    assert bind(text, {"A": [], "B": []}).solve("highs").status == "optimal"


def test_transport_duals_match_finite_differences():
    spec = spec_dir()
    model = dfl.load(spec / "transport.opt")
    data = json.loads((spec / "transport.json").read_text())
    base = model.bind(data).solve("highs")
    assert base.status == "optimal"
    for origin, k in (("GARY", 0), ("CLEV", 1), ("PITT", 2)):
        more = copy.deepcopy(data)
        more["supply"][origin] += 1.0
        bumped = model.bind(more).solve("highs")
        slope = bumped.objective - base.objective
        assert base.duals["supply_limit"][k] == pytest.approx(slope, abs=1e-6)
        assert base.duals["supply_limit"][k] <= 1e-9  # more supply never costs more
    assert np.all(base.duals["meet_demand"] >= -1e-9)  # more demand never costs less
    fewer = copy.deepcopy(data)
    fewer["demand"]["FRA"] -= 1.0
    cut = model.bind(fewer).solve("highs")
    assert base.duals["meet_demand"][0] == pytest.approx(base.objective - cut.objective)
    # PITT's supply is slack: its dual is 0, printed as 0 and not -0 (the sign of the sense)
    zeros = np.concatenate([d[d == 0] for d in base.duals.values()])
    assert len(zeros) and not np.signbit(zeros).any()


def test_duals_in_the_models_sense_for_maximize():
    text = """param b default 4; var x >= 0; var y >= 0;
              maximize f: 3 * x + 2 * y;
              subject to c1: x + y <= b; subject to c2: x + 3 * y <= 7;"""
    base = bind(text).solve("highs")
    up = bind(text, {"b": 4.5}).solve("highs")
    assert base.duals["c1"][0] > 0  # a looser budget raises the maximum
    assert base.duals["c1"][0] == pytest.approx((up.objective - base.objective) / 0.5)


def test_qp_is_solved_and_mip_has_no_duals(knapsack):
    sol = knapsack.solve("highs")
    assert sol.duals is None and sol.gap == pytest.approx(0, abs=1e-9)
    qp = bind("param P[2, 2] psd; param c[2]; var v[2]; minimize f: quad_form(v, P) + c @ v;",
              {"P": [[1, 0.5], [0.5, 1]], "c": [-2, 4]}).solve("highs")
    # minimum of x² + y² + xy - 2x + 4y: gradient 2x + y = 2, x + 2y = -4
    assert qp.status == "optimal"
    assert qp.value("v") == pytest.approx([8 / 3, -10 / 3])
    assert qp.objective == pytest.approx(-28 / 3)



def test_an_empty_set_leaves_no_columns_and_the_objective_its_constant():
    """HiGHS calls a model without columns `empty` and gives no solution; the empty point is
    one, so the objective is its constant (not None), as the other backends report."""
    text = ("set I; set J; param c{I}; var x{I} >= 0; minimize f: 3 + sum{i in I} c[i] * x[i];"
            "s.t. r{j in J}: sum{i in I} x[i] <= 1;")
    inst = dfl.parse(text, "m.opt").bind({"I": [], "J": ["j"], "c": []})
    sol = inst.solve("highs")
    assert sol.status == "optimal" and sol.objective == 3.0
    assert sol.objective == inst.solve("pyomo").objective


def test_an_empty_model_whose_constant_rows_fail_is_infeasible():
    text = "set I; var x{I} >= 0; minimize f: sum{i in I} x[i]; s.t. r: sum{i in I} x[i] >= 1;"
    assert dfl.parse(text, "m.opt").bind({"I": []}).solve("highs").status == "infeasible"


# ---------------------------------------------- piecewise-linear atoms in constraints
PWL_DUALS = [
    # (model, constraint, step): the dual is d(objective)/d(bound), checked by moving the
    # bound (a `<=` row's right side, a `>=` row's left side) by `step`
    ("param r default 2; param n : int; param c[n]; var x[n];\n"
     "maximize o: c @ x; subject to ball: norm1(x) <= r;", "ball", {"n": 3, "c": [1, -3, 2]}),
    ("param r default 1; var x; minimize o: x; subject to ball: abs(x) <= r;", "ball", {}),
    ("param r default 3; var x; var y; maximize o: x + y; subject to ball: max(x, y) <= r;",
     "ball", {}),
    ("param r default 1; var x; var y; minimize o: x + 2 * y;\n"
     "subject to ball: min(x, y) >= r;", "ball", {}),
    ("param r default 0; set I; param b{I}; var x; var t; minimize o: t;\n"
     "subject to ball: max{i in I} abs(x - b[i]) - t <= r;", "ball",
     {"I": [1, 2], "b": [0, 4]}),
]


@pytest.mark.parametrize(("text", "name", "data"), PWL_DUALS,
                         ids=[c[0].split("ball: ")[1][:20] for c in PWL_DUALS])
@pytest.mark.parametrize("backend", ["highs", "pyomo"])
def test_duals_of_atom_constraints_are_the_users_rows(text, name, data, backend):
    """The named row keeps its dual (t <= r for `abs(x) <= r`, not a bound on t): the
    multiplier of the convex constraint, as finite differences of the optimum show."""
    base = bind(text, data).solve(backend)
    moved = bind(text, {**data, "r": _default_r(text) + 0.25}).solve(backend)
    assert base.status == moved.status == "optimal"
    assert base.duals[name].shape == (1,)
    slope = (moved.objective - base.objective) / 0.25
    assert base.duals[name][0] == pytest.approx(slope, abs=1e-6)
    assert set(base.duals) == {name}  # the epigraph rows report no duals of their own


def _default_r(text: str) -> float:
    return float(text.split("param r default ")[1].split(";")[0])


def test_iis_names_the_constraint_an_epigraph_row_belongs_to():
    sol = bind("var x; var y >= 0; minimize o: x;\n"
               "subject to c: abs(x) + y <= -1;").solve("highs")
    assert sol.status == "infeasible"
    assert "c" in sol.extra["iis"]
    assert set(sol.extra["iis"]) <= {"c", "c (epigraph of `abs`)"}


@pytest.mark.parametrize("n", [100_000])
def test_a_large_indexed_atom_constraint_builds_fast(n):
    """One AtomNode for all rows and whole-array epigraph rows: no per-row Python work
    (about 0.03 s for 10^5 rows on one core; the bound leaves room for a busy machine)."""
    rng = np.random.default_rng(0)
    inst = bind("param n : int; set I = 1..n; param t{I}; var x{I};\n"
                "maximize o: sum{i in I} x[i];\n"
                "subject to dev{i in I}: abs(x[i] - t[i]) <= 1;\n"
                "subject to tot: sum{i in I} abs(x[i] - t[i]) <= n / 2;",
                {"n": n, "t": rng.normal(size=n).tolist()})
    start = time.perf_counter()
    form = inst.linear_form()
    elapsed = time.perf_counter() - start
    assert form.m == n + 2 * n + 1 + 2 * n  # dev, its epigraph rows, tot, its epigraph rows
    assert form.n == n + n + n
    assert elapsed < 1.0, elapsed


HUNG_QP = """param lo{0..2}; param hi{0..2}; param c{0..2}; param A{0..2, 0..2}; param b{0..2};
var x{i in 0..2} >= lo[i] <= hi[i];
minimize f: sum{i in 0..2} c[i] * x[i] + 0.5 * sum_squares(x);
subject to rows{j in 0..2}: sum{i in 0..2} A[j, i] * x[i] >= b;
subject to cap: max(x[1], x[1]) <= 2;
"""
HUNG_DATA = {"c": [5, 3, 1], "A": [[-4, -3, -2], [-2, -1, 0], [1, 2, 0]], "b": [5, 3, 10],
             "lo": [1, "-inf", 0], "hi": ["inf", 2, 2]}


def test_an_infeasible_qp_gets_its_iis_and_returns(tmp_path):
    """HiGHS's IIS search never returned on this QP (found by benchmarks/fuzz.py): its rows
    are now searched as an LP's. In a child process, so that a regression fails, not hangs."""
    (tmp_path / "m.opt").write_text(HUNG_QP)
    (tmp_path / "d.json").write_text(json.dumps(HUNG_DATA))
    run = subprocess.run([sys.executable, "-c", "from dfl_dsl.cli import app; app()", "solve",
                          str(tmp_path / "m.opt"), "--data", str(tmp_path / "d.json"), "--json"],
                         capture_output=True, text=True, timeout=120)
    got = json.loads(run.stdout)
    assert run.returncode == 1 and got["status"] == "infeasible" and got["iis"]


CYCLING_QP = """param lo[2]; param hi[2];
var x[2] >= lo <= hi;
maximize f: -2 * x[0] - 2 * x[1] - sum_squares(x);
subject to budget: norm1(x) <= 1;
"""


@pytest.mark.parametrize("backend", ["highs", "cvxpy", "pyomo"])
def test_a_qp_highs_cycles_on_stops_at_its_iteration_limit(tmp_path, backend):
    """HiGHS's active-set QP cycled for ever at this QP's optimum (found by benchmarks/fuzz.py),
    through all three backends that hand it QPs; bounded, it reports the point `feasible`. In a
    child process, so that a regression fails, not hangs."""
    (tmp_path / "m.opt").write_text(CYCLING_QP)
    (tmp_path / "d.json").write_text(json.dumps({"lo": ["-inf", 0], "hi": [10, 2]}))
    run = subprocess.run([sys.executable, "-c", "from dfl_dsl.cli import app; app()", "solve",
                          str(tmp_path / "m.opt"), "--data", str(tmp_path / "d.json"), "--json",
                          "--backend", backend], capture_output=True, text=True, timeout=120)
    got = json.loads(run.stdout)
    assert run.returncode == 0 and got["status"] in ("optimal", "feasible")
    assert got["objective"] == pytest.approx(1.0, abs=1e-6)  # x = (-1, 0)


# 12 items, capacity 30: `take := if i <= 3` (value 23) and `if i <= 2` (19) are feasible
START_KNAPSACK = """
set I = 1..12;
param w{i in I} = 3 + (7 * i) mod 11;
param v{i in I} = 2 + (5 * i) mod 13;
var take{i in I} binary%s;
maximize value: sum{i in I} v[i] * take[i];
subject to cap: sum{i in I} w[i] * take[i] <= 30;
"""


@pytest.mark.parametrize(("start", "objective"), [
    ("", None), (", := if i <= 3 then 1 else 0", 23.0), (" := if i <= 2 then 1 else 0", 19.0)])
def test_initial_values_are_a_mip_start(monkeypatch, start, objective):
    """AMPL's `var x := e`: HiGHS starts from it. Stopped at the root without presolve or
    heuristics, it has no point of its own: what it returns is the start."""
    from dfl_dsl.backends import highs

    fresh = highs.new_highs

    def at_the_root():
        h = fresh()
        for option, value in (("presolve", "off"), ("mip_heuristic_effort", 0.0),
                              ("mip_max_nodes", 0)):
            h.setOptionValue(option, value)
        return h

    inst = bind(START_KNAPSACK % start)
    assert inst.solve(backend="highs").objective == 55.0  # (the optimum, any start)
    monkeypatch.setattr(highs, "new_highs", at_the_root)
    assert inst.solve(backend="highs").objective == objective


PORTFOLIO = ("set A; param r{A}; param cov{A, A}; var w{A} >= 0; maximize u: sum{a in A} "
             "r[a] * w[a] - 2 * sum{a in A, b in A} cov[a, b] * w[a] * w[b];"
             "s.t. budget: sum{a in A} w[a] == 1;")


def test_a_qp_with_a_tiny_hessian_is_solved_to_optimality():
    """Daily-return covariances (~1e-5): unscaled, HiGHS's QP solver stopped at its iteration
    limit on the vertex w = e2 and reported `feasible` (through CVXPY too); scaled
    (qp_scale_exponent), both backends find the optimum Clarabel finds."""
    names = ["a", "b", "c", "d"]
    r = [0.09845, 0.09927, 0.09931, 0.08695]
    cov = [[2.8614e-05, 8.37e-07, -3.55e-07, -3.747e-06],
           [8.37e-07, 2.8752e-05, -6.54e-07, -8.84e-07],
           [-3.55e-07, -6.54e-07, 2.5127e-05, 3.71e-07],
           [-3.747e-06, -8.84e-07, 3.71e-07, 2.8885e-05]]
    inst = bind(PORTFOLIO, {"A": names, "r": dict(zip(names, r, strict=True)),
                            "cov": {a: dict(zip(names, row, strict=True))
                                    for a, row in zip(names, cov, strict=True)}})
    assert qp_scale_exponent(inst.linear_form().P) == 13  # (P = 4 cov: largest 1.2e-4)
    w = cp.Variable(4, nonneg=True)
    ref = cp.Problem(cp.Maximize(np.array(r) @ w - 2 * cp.quad_form(w, np.array(cov))),
                     [cp.sum(w) == 1])
    ref.solve(solver="CLARABEL")
    # on its support {b, c} the optimum solves 4 w_b (Σbb - 2Σbc + Σcc) = r_b - r_c - 4Σbc
    # + 4Σcc (Clarabel's w is 5e-5 off it: the objective is that flat)
    s = np.array(cov)
    w_b = (r[1] - r[2] - 4 * s[1, 2] + 4 * s[2, 2]) / (4 * (s[1, 1] - 2 * s[1, 2] + s[2, 2]))
    for backend in ("highs", "cvxpy"):
        ours = inst.solve(backend=backend)
        assert ours.status == "optimal", backend
        assert ours.objective == pytest.approx(ref.value, rel=1e-7)
        np.testing.assert_allclose(ours.value("w"), [0, w_b, 1 - w_b, 0], atol=1e-7)


def test_the_qp_scale_only_scales_small_hessians_up():
    import scipy.sparse as sp

    assert qp_scale_exponent(sp.csc_matrix(np.diag([1e-5, 2e-5]))) == 16  # 2e-5 ≈ 2^-15.6
    assert qp_scale_exponent(sp.csc_matrix(np.diag([1.0, 3.0]))) == 0
    assert qp_scale_exponent(sp.csc_matrix(np.diag([1e6]))) == 0
    assert qp_scale_exponent(sp.csc_matrix(np.diag([1e-300]))) == 20
    assert qp_scale_exponent(sp.csc_matrix((2, 2))) == qp_scale_exponent(None) == 0
