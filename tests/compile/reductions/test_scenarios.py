"""ScenarioSplit: rows holding uncertain params hold in every scenario (one copy each, its
origin saying which), the objective takes their mean; scenario data is checked."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import bind
from _risk_data import COST, N, S, rng

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import bridge
from dfl_dsl.compile.problem import Origin
from dfl_dsl.errors import DataError


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
    rows = [b for b in bridge(inst.compile(), inst).rows if b.name == "budget"]
    assert [b.origin for b in rows] == [Origin("scenario", rows=())] + [
        Origin("scenario", scenario=s, rows=(0,)) for s in range(S)]
    best = max(value @ np.array(b) for b in itertools.product([0, 1], repeat=N)
               if np.all(costs @ np.array(b) <= 1 + 1e-12))
    assert inst.solve("highs").objective == pytest.approx(best)


PARTLY_UNCERTAIN = """
set I; param d{I} : uncertain; param u{I}; param need default 0;
var x{I} >= 0;
maximize o: sum{i in I} x[i];
s.t. c{i in I}: x[i] + 0.5 * x["a"] <= (if i == "b" then u[i] else d[i]);
s.t. m: sum{i in I} x[i] >= need;
"""
PARTLY_DATA = {"I": ["a", "b", "c"], "u": [1, 2, 3], "d": [[4, 5, 6], [7, 8, 9]]}


def test_a_partly_split_constraint_gets_one_dual_per_row_in_its_own_order():
    """`c[b]` holds no uncertain param and is kept once, `c[a]` and `c[c]` are copied per
    scenario: the duals come back over all three rows, `c[b]`'s own and the others the sum of
    their copies' (the duals were the kept part's alone, one number, unlabelled). x = (0, 2,
    6): c[b] and c[c]@0 bind, each worth 1; c[a]'s copies moved to bounds on x[a], which bind
    nothing: 0, from x[a]'s reduced cost, as CVXPY's with the rows kept (it was NaN)."""
    inst = bind(PARTLY_UNCERTAIN, PARTLY_DATA)
    sol = inst.solve("highs")
    assert sol.objective == pytest.approx(8.0)
    duals = sol.duals["c"]
    assert duals.shape == (3,)
    assert duals[1] == pytest.approx(1.0) and duals[2] == pytest.approx(1.0)
    assert duals[0] == 0.0
    cvx = inst.solve("cvxpy").duals["c"]
    np.testing.assert_allclose(cvx, [0.0, 1.0, 1.0], atol=1e-6)


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


def test_uncertain_params_in_atoms_of_constraints_hold_per_scenario():
    # |x_i - c_i| <= 1 in both scenarios: x_0 <= 2, x_1 <= 3
    inst = bind("set I; param c{I} : uncertain; var x{I} >= 0 <= 3;\n"
                "maximize o: sum{i in I} x[i];\n"
                "subject to r{i in I}: abs(x[i] - c[i]) <= 1;",
                {"I": [0, 1], "c": [[1, 2], [1.5, 2.5]]})
    assert inst.klass.name == "LP"
    for backend in ("highs", "cvxpy"):
        assert inst.solve(backend).objective == pytest.approx(5.0)


