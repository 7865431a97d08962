"""Solutions mapped back to the model's names: values, keyed JSON, duals and extras."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.solution import Solution, keyed

TEXT = """
set I; set J;
param c{I, J};
var s{I, J} in [0, 1];
var t{i in I, j in J: c[i, j] > 0} in [0, 2];
var u[2] in [0, 3];
var k in [0, 4];
maximize f: sum{i in I, j in J} c[i, j] * s[i, j] + sum{i in I, j in J: c[i, j] > 0} t[i, j]
            + sum(u) + k;
subject to cap{i in I}: sum{j in J} s[i, j] <= 1;
"""
DATA = {"I": ["a", "b"], "J": [1, 2], "c": [[1, -1], [2, 3]]}


@pytest.fixture(scope="module")
def sol():
    return bind(TEXT, DATA).solve("highs")


def test_value_layouts(sol):
    assert sol.ok and sol.status == "optimal"
    assert sol.objective == pytest.approx(1 + 3 + 2 * 3 + 6 + 4)
    assert sol.value("s").shape == (2, 2)
    assert sol.value("s").tolist() == [[1, 0], [0, 1]]
    assert sol.value("t").tolist() == [2, 2, 2]  # sparse: entry order (a,1), (b,1), (b,2)
    assert sol.value("u").tolist() == [3, 3]
    assert sol.value("k") == 4.0 and isinstance(sol.value("k"), float)


def test_value_has_no_negative_zeros():
    """A solver's -0.0 (HiGHS's 0-1 knapsack picks) printed as `-0.` from `sol.value`."""
    sol = bind("set I; var x{I} binary; maximize f: sum{i in I} x[i]; s.t. k: sum{i in I} x[i]"
               " <= 1;", {"I": [1, 2, 3]}).solve("highs")
    sol.x = np.array([-0.0, 1.0, -0.0])
    assert not np.signbit(sol.value("x")).any()


def test_value_of_a_name_that_is_no_variable_is_refused(sol):
    """`value("c")` (a param, at offset 0 of the data) returned the first variable's values."""
    with pytest.raises(KeyError, match="`c` is a param, not a variable; the model's variables: "
                                       "`s`, `t`, `u`, `k`"):
        sol.value("c")
    with pytest.raises(KeyError, match="no variable `ss`; did you mean `s`"):
        sol.value("ss")


def test_values_are_keyed_by_element(sol):
    values = sol.values()
    assert values["s"] == {"a": {"1": 1.0, "2": 0.0}, "b": {"1": 0.0, "2": 1.0}}
    assert values["t"] == {"a": {"1": 2.0}, "b": {"1": 2.0, "2": 2.0}}
    assert values["u"] == [3.0, 3.0] and values["k"] == 4.0


def test_to_json_is_json(sol):
    payload = sol.to_json()
    assert json.loads(json.dumps(payload)) == payload
    assert set(payload) >= {"status", "objective", "variables", "backend", "time_s"}
    assert payload["backend"] == "highs" and set(payload["duals"]["cap"]) == {"a", "b"}


def test_no_solution():
    sol = bind("var x >= 0; minimize f: x; subject to c: x <= -1;").solve("highs")
    assert not sol.ok and sol.x is None
    with pytest.raises(ValueError, match="no solution values"):
        sol.value("x")
    payload = sol.to_json()
    assert payload["objective"] is None and payload["variables"] == {}
    assert payload.get("iis") in (None, ["c"])  # `c` became a bound: the conflict is in bounds


def test_non_finite_numbers_become_null():
    inst = bind("var x; minimize f: x; subject to c: x >= 1;")
    sol = Solution("optimal", float("inf"), np.array([np.nan]), "test", 0.0, inst,
                   gap=0.5, duals={"c": np.array([np.nan])}, message="m")
    sol.extra["note"] = "kept"
    payload = sol.to_json()
    assert payload["objective"] is None and payload["variables"] == {"x": None}
    assert payload["duals"] == {"c": None} and payload["gap"] == 0.5  # a scalar row: a number
    assert payload["message"] == "m" and payload["note"] == "kept"


def test_keyed_tuples_nest():
    inst = bind("set N; set A within N * N; var f{A};",
                {"N": ["x", "y", 3], "A": [["x", "y"], ["y", 3], ["x", 3]]})
    out = keyed(inst.entity("f"), np.array([1.0, 2.0, -0.0]))
    assert out == {"x": {"y": 1.0, "3": 0.0}, "y": {"3": 2.0}}


def test_statuses_that_count_as_ok():
    for status, ok in [("optimal", True), ("feasible", True), ("relaxed", True),
                       ("infeasible", False), ("unbounded", False), ("error", False)]:
        assert Solution(status, None, None, "t", 0.0).ok is ok


TRANSPORT = """
set ORIG; set DEST;
param supply{ORIG}; param demand{DEST}; param cost{ORIG, DEST};
var ship{ORIG, DEST} >= 0;
minimize total: sum{i in ORIG, j in DEST} cost[i, j] * ship[i, j];
subject to supply_limit{i in ORIG}: sum{j in DEST} ship[i, j] <= supply[i];
subject to meet_demand{j in DEST}: sum{i in ORIG} ship[i, j] >= demand[j];
subject to pair{i in ORIG, j in DEST: cost[i, j] > 5}: ship[i, j] + ship[i, 1] <= 100;
"""
TRANSPORT_DATA = {"ORIG": ["A", "B"], "DEST": [1, 2, 3], "supply": [60, 50],
                  "demand": [30, 40, 20], "cost": [[4, 6, 9], [5, 3, 8]]}


@pytest.fixture(scope="module")
def transport():
    return bind(TRANSPORT, TRANSPORT_DATA).solve("highs")


def test_duals_are_keyed_like_their_constraints(transport):
    duals = transport.to_json()["duals"]
    assert set(duals["supply_limit"]) == {"A", "B"} and set(duals["meet_demand"]) == {"1", "2", "3"}
    assert duals["supply_limit"]["B"] == transport.duals["supply_limit"][1]
    # a filtered index: only the rows that exist, nested by element
    assert duals["pair"] == {"A": {"2": 0.0, "3": 0.0}, "B": {"3": 0.0}}


def test_duals_of_ampl_indices_are_keyed_by_element():
    """A tuple set, a set less a literal of dummies, a tuple-membership filter and an index
    that binds no dummy (`{A}`): each constraint's duals are nested by its set elements."""
    text = """set N; set A within N * N; param s in N;
    var f{A} >= 0; var y{N, N} >= 0;
    minimize o: sum{(i, j) in A} 2 * f[i, j] + sum{i in N, j in N} y[i, j];
    subject to arc{(i, j) in A}: f[i, j] + y[i, j] >= 1;
    subject to other{i in N, j in N diff {i}}: y[i, j] + y[j, i] >= 1;
    subject to each{A}: sum{i in N} y[i, i] >= 1;
    subject to from_s{i in N : (s, i) in A}: f[s, i] + y[s, i] >= 2;
    """
    sol = bind(text, {"N": ["a", "b", "c"], "A": [["a", "b"], ["b", "c"]], "s": "a"}).solve()
    duals = sol.to_json()["duals"]
    assert set(duals) == {"arc", "other", "each", "from_s"}
    assert {i: set(v) for i, v in duals["arc"].items()} == {"a": {"b"}, "b": {"c"}}
    assert {i: set(v) for i, v in duals["each"].items()} == {"a": {"b"}, "b": {"c"}}
    assert {i: set(v) for i, v in duals["other"].items()} == {
        "a": {"b", "c"}, "b": {"a", "c"}, "c": {"a", "b"}}
    assert set(duals["from_s"]) == {"b"}
    flat = {name: sol.duals[name] for name in duals}
    assert duals["each"]["b"]["c"] == flat["each"][1]
    assert duals["from_s"]["b"] == flat["from_s"][0]


def test_a_constraint_index_that_matches_keys_its_rows_by_its_new_dummies():
    text = """set N; set A within N * N; param s in N; var f{A} >= 0;
    maximize o: sum{(i, j) in A} f[i, j];
    subject to out{(s, j) in A}: f[s, j] <= 2;
    subject to rest{(i, j) in A : i != s}: f[i, j] <= 1;
    subject to via{("b", j) in A, (j, k) in A}: f["b", j] + f[j, k] <= 1.5;
    """
    data = {"N": ["a", "b", "c"], "A": [["a", "b"], ["a", "c"], ["b", "c"], ["c", "a"]],
            "s": "a"}
    sol = bind(text, data).solve()
    assert sol.objective == pytest.approx(2 + 2 + 1.5)
    duals = sol.to_json()["duals"]
    assert set(duals["out"]) == {"b", "c"} and duals["via"] == {"c": {"a": 1.0}}


def test_reduced_costs_price_out_against_the_duals(transport):
    """An LP's reduced cost is its cost less the duals of the rows it enters (c - Aᵀy): zero
    for a basic column, >= 0 for one at its lower bound in a minimization."""
    reduced = transport.reduced_costs.reshape(2, 3)
    y_supply, y_demand = transport.duals["supply_limit"], transport.duals["meet_demand"]
    assert np.all(transport.duals["pair"] == 0)  # the pair rows don't bind here
    expected = np.array(TRANSPORT_DATA["cost"]) - y_supply[:, None] - y_demand[None, :]
    assert np.allclose(reduced, expected)
    assert np.all(reduced >= -1e-9) and np.allclose(reduced[transport.value("ship") > 1e-9], 0)


def test_nonzeros_keeps_only_nonzero_entries(transport):
    full = json.loads(transport.json_text())
    sparse = json.loads(transport.json_text(nonzeros=True))
    kept = {(i, j): v for i, row in full["variables"]["ship"].items() for j, v in row.items()
            if v != 0}
    assert {(i, j): v for i, row in sparse["variables"]["ship"].items()
            for j, v in row.items()} == kept
    assert sparse["duals"]["pair"] == {}
    assert all(v != 0 for v in sparse["duals"]["meet_demand"].values())


def test_nonzeros_keys_numpy_style_arrays_by_position():
    sol = bind("var u[2, 2] in [0, 1]; maximize f: u[1, 0];").solve("highs")
    assert sol.to_json()["variables"]["u"] == [[0.0, 0.0], [1.0, 0.0]]
    assert json.loads(sol.json_text(nonzeros=True))["variables"]["u"] == {"1": {"0": 1.0}}
