"""Which integer models have an integral LP relaxation: network and bipartite matrices with
integer data pass; anything the sufficient condition can't show is refused with a reason."""

from __future__ import annotations

from _helpers import bind

from dfl_dsl.compile.unimodular import integral_relaxation

ASSIGNMENT = """
set W; set J;
param cost{W, J};
var a{W, J} binary;
minimize total: sum{w in W, j in J} cost[w, j] * a[w, j];
subject to each_worker{w in W}: sum{j in J} a[w, j] == 1;
subject to each_job{j in J}: sum{w in W} a[w, j] == 1;
"""
DATA = {"W": [1, 2, 3], "J": ["a", "b", "c"],
        "cost": [[4, 2, 8], [4, 3, 7], [3, 1, 6]]}


def test_an_assignment_model_has_an_integral_relaxation():
    assert integral_relaxation(bind(ASSIGNMENT, DATA).linear_form()) is None


def test_a_flow_model_with_integer_capacities_has_one():
    text = """
    set N; set ARCS within N * N;
    param cap{ARCS}; param supply{N};
    var f{ARCS} integer >= 0;
    minimize c: sum{(i, j) in ARCS} f[i, j];
    subject to cap_ok{(i, j) in ARCS}: f[i, j] <= cap[i, j];
    subject to bal{v in N}: sum{(v, j) in ARCS} f[v, j] - sum{(i, v) in ARCS} f[i, v] == supply[v];
    """
    data = {"N": [1, 2, 3], "ARCS": [[1, 2], [2, 3], [1, 3]], "cap": [2, 2, 1],
            "supply": [2, 0, -2]}
    assert integral_relaxation(bind(text, data).linear_form()) is None


def test_fractional_data_or_a_knapsack_row_are_refused():
    half = {**DATA, "cost": [[4, 2, 8], [4, 3, 7], [3, 1, 6]]}
    text = ASSIGNMENT.replace("== 1;\nsubject to each_job", "<= 1.5;\nsubject to each_job")
    assert "not integers" in integral_relaxation(bind(text, half).linear_form())
    knapsack = """
    set I; param w{I}; param v{I};
    var p{I} binary;
    maximize val: sum{i in I} v[i] * p[i];
    subject to cap: sum{i in I} w[i] * p[i] <= 5;
    """
    why = integral_relaxation(bind(knapsack, {"I": [1, 2, 3], "w": [2, 3, 4],
                                              "v": [1, 2, 3]}).linear_form())
    assert "entries other than" in why


def test_three_ones_in_a_column_with_no_split_are_not_recognized():
    text = """
    var x{1..3} binary;
    minimize f: x[1] + x[2] + x[3];
    subject to a: x[1] + x[2] >= 1;
    subject to b: x[2] + x[3] >= 1;
    subject to c: x[1] + x[3] >= 1;
    """
    # the triangle's odd cycle: the relaxation's optimum is (1/2, 1/2, 1/2)
    assert integral_relaxation(bind(text).linear_form()) is not None
