"""Bridges: scenarios of uncertain params, risk aggregators (CVaR, worst, mean) and epigraphs of
piecewise-linear atoms, each checked against brute-force enumeration of a tiny binary problem."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import bridge
from dfl_dsl.errors import DataError

N, S, ALPHA = 5, 7, 0.6
rng = np.random.default_rng(3)
COST = rng.normal(size=(S, N))
DATA = {"I": list(range(N)), "cost": COST.tolist(), "alpha": ALPHA, "kmin": 2}

RISK = """
set I; param cost{I} : uncertain; param alpha default 0.5; param kmin : int;
var x{I} binary;
%s f: %s;
subject to pick: sum{i in I} x[i] >= kmin;
"""
LOSS = "sum{i in I} cost[i] * x[i]"


def _cvar_upper(losses):
    """Rockafellar–Uryasev CVaR of the upper tail (a minimized loss)."""
    k = 1.0 / ((1 - ALPHA) * len(losses))
    return min(e + k * np.maximum(losses - e, 0).sum() for e in losses)


def _cvar_lower(gains):
    """The lower-tail CVaR (a maximized gain)."""
    k = 1.0 / ((1 - ALPHA) * len(gains))
    return max(e - k * np.maximum(e - gains, 0).sum() for e in gains)


def _brute(aggregate, best):
    picks = [np.array(b) for b in itertools.product([0, 1], repeat=N) if sum(b) >= 2]
    return best(aggregate(COST @ x) for x in picks)


CASES = [
    ("minimize", f"cvar(alpha, {LOSS})", _cvar_upper, min),
    ("maximize", f"cvar(alpha, {LOSS})", _cvar_lower, max),
    ("minimize", f"worst({LOSS})", np.max, min),
    ("maximize", f"worst({LOSS})", np.min, max),
    ("minimize", f"mean({LOSS})", np.mean, min),
    ("minimize", LOSS, np.mean, min),  # unwrapped: the mean over scenarios
    ("minimize", f"{LOSS} + 0.5 * worst({LOSS})", lambda v: v.mean() + 0.5 * v.max(), min),
    ("maximize", f"2 * cvar(alpha, {LOSS}) - 1", lambda v: 2 * _cvar_lower(v) - 1, max),
]


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
@pytest.mark.parametrize(("sense", "body", "aggregate", "best"), CASES,
                         ids=[f"{c[0]}-{c[1][:12]}" for c in CASES])
def test_risk_aggregators_against_brute_force(sense, body, aggregate, best, backend):
    inst = bind(RISK % (sense, body), DATA)
    sol = inst.solve(backend)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(_brute(aggregate, best), abs=1e-6)


NESTED_LOSS = "sum{i in I} (cost[i] * x[i] + 2 * pos(cost[i] - x[i]))"


def _nested_losses(x):
    return COST @ x + 2 * np.maximum(COST - x, 0).sum(axis=1)


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
@pytest.mark.parametrize(("sense", "body", "aggregate", "best"), [
    ("minimize", f"cvar(alpha, {NESTED_LOSS})", _cvar_upper, min),
    ("minimize", f"worst({NESTED_LOSS})", np.max, min),
    ("minimize", f"mean({NESTED_LOSS})", np.mean, min),
    ("maximize", "cvar(alpha, sum{i in I} (cost[i] * x[i] - pos(cost[i] - x[i])))",
     _cvar_lower, max),
], ids=["cvar", "worst", "mean", "cvar-lower"])
def test_piecewise_linear_atoms_inside_risk_aggregators(sense, body, aggregate, best, backend):
    # a newsvendor-style loss: the atoms in it are bridged once per scenario
    sol = bind(RISK % (sense, body), DATA).solve(backend)
    picks = [np.array(b) for b in itertools.product([0, 1], repeat=N) if sum(b) >= 2]
    if body.startswith("cvar(alpha, sum{i in I} (cost[i] * x[i] - pos"):
        want = best(aggregate(COST @ x - np.maximum(COST - x, 0).sum(axis=1)) for x in picks)
    else:
        want = best(aggregate(_nested_losses(x)) for x in picks)
    assert sol.status == "optimal" and sol.objective == pytest.approx(want, abs=1e-6)


def test_cvar_adds_eta_and_one_tail_variable_per_scenario():
    inst = bind(RISK % ("minimize", f"cvar(alpha, {LOSS})"), DATA)
    bridged = bridge(inst.compile(), inst)
    assert bridged.width == inst.width + 1 + S
    assert bridged.aux_lower.tolist() == [-np.inf] + [0.0] * S
    assert sum(b.body.rows for b in bridged.rows if b.name == "#cvar") == S


def test_uncertain_constraints_hold_for_every_scenario():
    text = """
    set I; param cost{I} : uncertain; param value{I};
    var x{I} binary;
    maximize f: sum{i in I} value[i] * x[i];
    subject to budget: sum{i in I} cost[i] * x[i] <= 1;
    """
    costs = np.abs(COST)
    value = rng.uniform(1, 2, size=N)
    inst = bind(text, {"I": list(range(N)), "cost": costs.tolist(), "value": value.tolist()})
    rows = [b for b in bridge(inst.compile(), inst).rows if b.name.startswith("budget")]
    assert [b.name for b in rows] == ["budget"] + [f"budget@{s}" for s in range(S)]
    best = max(value @ np.array(b) for b in itertools.product([0, 1], repeat=N)
               if np.all(costs @ np.array(b) <= 1 + 1e-12))
    assert inst.solve("highs").objective == pytest.approx(best)


def test_scenario_count_must_agree():
    text = ("set I; param a{I} : uncertain; param b{I} : uncertain; var x{I} in [0, 1];"
            "minimize f: sum{i in I} (a[i] + b[i]) * x[i];")
    # data that disagrees is refused when it is bound (so `dfl check --data` says so too),
    # naming the params (it used to be found only at solve time, naming neither, nor any file)
    with pytest.raises(DataError, match="same number of scenarios") as info:
        bind(text, {"I": [1, 2], "a": [[1, 2], [3, 4]], "b": [[1, 2]]})
    assert "`a` has 2, `b` has 1" in info.value.message and info.value.filename == "<data>"
    # scenarios set after binding (sampled from a generator) are checked by the bridge
    inst = bind(text, {"I": [1, 2], "a": [[1, 2], [3, 4]], "b": [[1, 2], [0, 0]]})
    inst.uncertain[1].extra["scenarios"] = np.array([[1.0, 2.0]])
    with pytest.raises(DataError, match="`a` has 2, `b` has 1"):
        inst.solve("highs")


def test_uncertain_param_without_scenarios():
    inst = bind("set I; param a{I} : uncertain; var x{I} in [0, 1];"
                "minimize f: sum{i in I} a[i] * x[i];", {"I": [1, 2]})
    with pytest.raises(dfl.DflError, match="has no scenarios") as info:
        inst.solve("highs")
    assert info.value.filename == "m.opt"


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
    names = [b.name for b in bridged.rows]
    assert names[0] == "dev" and names[1:] == ["#abs of dev", "#abs of dev"]
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


def test_uncertain_params_in_atoms_of_constraints_hold_per_scenario():
    # |x_i - c_i| <= 1 in both scenarios: x_0 <= 2, x_1 <= 3
    inst = bind("set I; param c{I} : uncertain; var x{I} >= 0 <= 3;\n"
                "maximize o: sum{i in I} x[i];\n"
                "subject to r{i in I}: abs(x[i] - c[i]) <= 1;",
                {"I": [0, 1], "c": [[1, 2], [1.5, 2.5]]})
    assert inst.klass.name == "LP"
    for backend in ("highs", "cvxpy"):
        assert inst.solve(backend).objective == pytest.approx(5.0)


def test_predicted_params_bound_an_atom():
    inst = bind("param th : predicted; var x; maximize o: x; subject to r: abs(x - 1) <= th;",
                {"th": 2.0})
    assert inst.klass.name == "LP"
    assert inst.linear_form().theta_in_constraints
    for backend in ("highs", "cvxpy"):
        assert inst.solve(backend).objective == pytest.approx(3.0)


VALUE = np.array([1.0, 0.7, 1.3, 0.4, 0.9])
RISK_ROWS = """
set I; param cost{I} : uncertain; param alpha default 0.5; param value{I};
var x{I} binary;
maximize f: sum{i in I} value[i] * x[i];
subject to risk: %s <= %s;
"""


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
@pytest.mark.parametrize(("lhs", "budget", "aggregate"), [
    (f"cvar(alpha, {LOSS})", 0.8, _cvar_upper),
    (f"worst({LOSS})", 1.0, np.max),
    (f"mean({LOSS})", 0.3, np.mean),
    (f"2 * cvar(alpha, {NESTED_LOSS}) - 1", 7.15,
     lambda v: 2 * _cvar_upper(v) - 1),  # (v: the nested losses)
])
def test_risk_aggregators_in_constraints_against_brute_force(lhs, budget, aggregate, backend):
    """A risk aggregator bounded from above in a constraint: the same bridge as in the
    objective (`cvar(α, L) <= b`: the Rockafellar–Uryasev rows), checked by enumeration."""
    data = {**DATA, "value": VALUE.tolist()}
    inst = bind(RISK_ROWS % (lhs, budget), data)
    assert inst.klass.name == "MILP"
    nested = "pos" in lhs
    best = -np.inf
    for b in itertools.product([0, 1], repeat=N):
        x = np.array(b, float)
        losses = _nested_losses(x) if nested else COST @ x
        if aggregate(losses) <= budget + 1e-9:
            best = max(best, VALUE @ x)
    sol = inst.solve(backend)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(best, abs=1e-6)


def test_a_row_bounded_on_both_sides_is_refused_by_the_bridge_too():
    """The checker refuses `lo <= abs(x) <= hi` and `abs(x) == 1`; the bridge does as well."""
    from dfl_dsl.compile.bridges import RowBlock, _row_plan

    inst = bind("var x; minimize o: x; subject to c: abs(x) <= 1;")
    rows = inst.compile().constraints[0]
    block = RowBlock("c@2", rows.body, np.array([-1.0]), np.array([0.0]))
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
