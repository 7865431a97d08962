"""AMPL's network (`node`, `arc`) and column-wise (`obj`, `coeff`, `cover`, `to_come`)
declarations, rewritten into rows (grammar/columns.py): each model here was refused, "network
declarations are not supported"; now each solves to the optimum of its row-wise twin."""

from __future__ import annotations

import pytest
from _helpers import bind

from dfl_dsl.errors import DflError
from dfl_dsl.grammar.parser import parse

_DATA = """
set CITIES = {"P", "A", "B", "C"};
set LINKS within CITIES cross CITIES;
param supply {c in CITIES} = if c == "P" then 10 else 0;
param demand {c in CITIES} = if c == "C" then 6 else if c == "B" then 3 else 0;
param cost {(i,j) in LINKS} = if i == "P" then 2 else if j == "C" then 3 else 1;
param cap {LINKS} default 5;
"""

_NETWORK = _DATA + """
minimize Total_Cost;
node Balance {k in CITIES}: net_out <= supply[k] - demand[k];
arc Ship {(i,j) in LINKS} >= 0, <= cap[i,j], from Balance[i], to Balance[j],
    obj Total_Cost cost[i,j];
"""

_ROWS = _DATA + """
var Ship {(i,j) in LINKS} >= 0, <= cap[i,j];
minimize Total_Cost: sum {(i,j) in LINKS} cost[i,j] * Ship[i,j];
subject to Balance {k in CITIES}:
    sum {(k,j) in LINKS} Ship[k,j] - sum {(i,k) in LINKS} Ship[i,k] <= supply[k] - demand[k];
"""


_LINKS = {"LINKS": [["P", "A"], ["P", "B"], ["A", "C"], ["B", "C"], ["A", "B"]],
          "ROADS": [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"], ["b", "c"]]}


def _solve(text):
    used = {k: v for k, v in _LINKS.items() if f"set {k}" in text}
    sol = bind(text, used).solve("highs")
    assert sol.status == "optimal"
    return sol


def test_a_network_is_its_flow_balance_rows():
    net, rows = _solve(_NETWORK), _solve(_ROWS)
    assert net.objective == pytest.approx(rows.objective) == pytest.approx(2 * 9 + 3 * 6)
    assert net.value("Ship").tolist() == pytest.approx(rows.value("Ship").tolist())


def test_nodes_without_a_body_conserve_flow_and_scalar_arcs_feed_one_node():
    # the AMPL book's max flow (netmax3): entrance and exit arcs, conservation at each node
    sol = _solve("""
        set INTER = {"a", "b", "c", "d"};
        param entr symbolic in INTER = "a";
        param exit symbolic in INTER = "d";
        set ROADS within INTER cross INTER;
        param cap {ROADS} = 4;
        node Intersection {k in INTER};
        arc Traff_In >= 0, to Intersection[entr];
        arc Traff_Out >= 0, from Intersection[exit];
        arc Traff {(i,j) in ROADS} >= 0, <= cap[i,j], from Intersection[i], to Intersection[j];
        maximize Entering_Traff: Traff_In;
    """)
    assert sol.objective == pytest.approx(8)


def test_coefficients_on_from_and_to_and_net_in_between_bounds():
    # a generalized network: what leaves P arrives at Q as 0.5 per unit; `net_in` between bounds
    sol = _solve("""
        minimize Cost;
        node P: net_out <= 10;
        node Q: 3 <= net_in <= 3;
        arc X >= 0, from P 1, to Q 0.5, obj Cost 2;
    """)
    assert sol.objective == pytest.approx(12) and sol.value("X") == pytest.approx(6)


def test_cover_and_coeff_fill_to_come_column_by_column():
    # the AMPL book's sched: schedules cover shifts; `coeff` over an index of the clause
    text = """
        set SHIFTS = 1..3;
        set SCHEDS = 1..3;
        set SHIFT_LIST {SCHEDS} within SHIFTS;
        param rate {j in SCHEDS} = j + 1;
        param required {i in SHIFTS} = 2 * i;
        minimize Total_Cost;
        subject to Shift_Needs {i in SHIFTS}: to_come >= required[i];
        var Work {j in SCHEDS} >= 0, obj Total_Cost rate[j],
            coeff {i in SHIFT_LIST[j]} Shift_Needs[i] 1;
    """
    data = {"SHIFT_LIST": {"1": [1, 2], "2": [2, 3], "3": [1, 3]}}
    rows = """
        set SHIFTS = 1..3;
        set SCHEDS = 1..3;
        set SHIFT_LIST {SCHEDS} within SHIFTS;
        param rate {j in SCHEDS} = j + 1;
        param required {i in SHIFTS} = 2 * i;
        var Work {j in SCHEDS} >= 0;
        minimize Total_Cost: sum {j in SCHEDS} rate[j] * Work[j];
        subject to Shift_Needs {i in SHIFTS}:
            sum {j in SCHEDS: i in SHIFT_LIST[j]} Work[j] >= required[i];
    """
    a = bind(text, data).solve("highs")
    b = bind(rows, data).solve("highs")
    assert a.objective == pytest.approx(b.objective)
    covered = bind(text.replace("coeff {i in SHIFT_LIST[j]} Shift_Needs[i] 1",
                                "cover {i in SHIFT_LIST[j]} Shift_Needs[i]"), data)
    assert covered.solve("highs").objective == pytest.approx(b.objective)


def test_to_come_among_other_terms_and_an_empty_objective():
    sol = _solve("""
        var y >= 0;
        minimize Cost: to_come + 3 * y;
        subject to Need: y + to_come >= 4;
        var x >= 0, obj Cost 1, coeff Need 2;
    """)
    assert sol.objective == pytest.approx(2)
    assert _solve("minimize Nothing; var x >= 0, <= 1;").objective == 0


def test_the_words_are_names_elsewhere():
    model = parse("set node; param arc {node} default 1; param obj; param from; "
                  "var coeff {n in node} >= 0, <= arc[n] * obj * from; "
                  "minimize cover: sum {n in node} coeff[n];")
    assert [s.name for s in model.statements] == ["node", "arc", "obj", "from", "coeff", "cover"]


@pytest.mark.parametrize(("text", "message"), [
    ("var x >= 0, obj Cost 1;", "`Cost` is no objective, constraint or node"),
    ("minimize Cost; var x >= 0, coeff Cost 1;", "`coeff` names a constraint"),
    ("node N: net_in = 1; var x >= 0, obj N 1;", "`obj` names an objective"),
    ("set S; node N {k in S}; arc x >= 0, from N;", "`N` takes 1 subscript"),
    ("set S; minimize Cost; var x {S} >= 0, obj Cost 1;", "its index names its dummies"),
    ("var y; minimize Cost: y; var x >= 0, obj Cost 1;", "its body must say where: `to_come`"),
])
def test_mistakes_are_located(text, message):
    with pytest.raises(DflError, match=message) as info:
        parse(text)
    assert info.value.pos.line == 1 and info.value.pos.column > 0


def test_the_context_words_stay_out_of_a_syntax_errors_expected_list():
    # the postlexer's terminals once showed as "expected ARC, NODE, `;`, ..."
    with pytest.raises(DflError) as info:
        parse("param N = 2;\nq\nvar x;")
    assert "NODE" not in info.value.message and "ARC" not in info.value.message
    with pytest.raises(DflError) as info:
        parse("var x >= 0, <= 1 j;")
    assert "COEFF" not in info.value.message and "OBJ" not in info.value.message
