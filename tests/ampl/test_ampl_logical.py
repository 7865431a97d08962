"""AMPL's logical constraints as MILP rows: `a <= b or c <= d` (a part may be an `and` of
comparisons, `==` included) and `x != y` between integer-valued sides, each part switched by a
binary within the variables' bounds; what can't be written so is a located error."""

from __future__ import annotations

import numpy as np
import pytest

import dfl_dsl as dfl

SEQUENCE = """\
set J;
param d{J} > 0;
var s{J} >= 0, <= 20;
var span >= 0, <= 30;
minimize o: span;
s.t. ends{j in J}: s[j] + d[j] <= span;
s.t. apart{i in J, j in J: i < j}: s[i] + d[i] <= s[j] or s[j] + d[j] <= s[i];
data;
set J := a b c;
param d := a 3 b 2 c 4;
"""

COLOURS = """\
set V := 1..4;
set E within V cross V := {(1, 2), (2, 3), (1, 3), (3, 4)};
var c{V} integer >= 1, <= 4;
var k >= 0, <= 4;
minimize o: k;
s.t. top{v in V}: c[v] <= k;
s.t. differ{(u, v) in E}: c[u] != c[v];
"""


def test_one_machine_runs_one_job_at_a_time():
    solution = dfl.parse(SEQUENCE).bind().solve()
    assert solution.objective == pytest.approx(3 + 2 + 4)
    s = solution.value("s")
    order = sorted(zip(np.ravel(s), [3, 2, 4], strict=True))
    assert all(a + d <= b + 1e-6 for (a, d), (b, _) in zip(order, order[1:], strict=False))


def test_unequal_integers_colour_a_triangle_with_three():
    solution = dfl.parse(COLOURS).bind().solve()
    assert solution.objective == pytest.approx(3)
    c = np.ravel(solution.value("c"))
    assert len({c[0], c[1], c[2]}) == 3 and c[2] != c[3]


@pytest.mark.parametrize("cap, best", [("3", 2), ("0.5", 5)])
def test_a_part_may_be_a_conjunction_with_an_equation(cap, best):
    text = (f"var x >= 0, <= 10;\nvar y >= 0, <= {cap};\nminimize o: x;\n"
            "s.t. c: (x = 2 and y >= 1) or x >= 5;\n")
    assert dfl.parse(text).bind().solve().objective == pytest.approx(best)


@pytest.mark.parametrize("text, message", [
    ("var x >= 0;\nvar y >= 0, <= 1;\nminimize o: y;\ns.t. c: x <= 1 or y >= 1;\n",
     r"m.mod:4:9: error: a constraint with `or` or `!=` needs every variable in it bounded"),
    ("var x >= 0, <= 3;\nvar y >= 0, <= 3;\nminimize o: x;\ns.t. c: x != y;\n",
     r"m.mod:4:9: error: `!=` as a constraint needs both sides integer-valued"),
])
def test_what_the_rewrite_cant_take_is_a_located_error(text, message):
    with pytest.raises(dfl.DflError) as caught:
        dfl.parse(text, "m.mod").bind().solve()
    assert caught.match(message)


def test_numberof_is_refused_at_the_word_with_the_binaries_to_write():
    text = ("set I := 1..3;\nvar a{I} integer >= 1, <= 2;\nvar m;\nminimize o: m;\n"
            "s.t. c: m >= numberof 1 in ({i in I} a[i]);\n")
    with pytest.raises(dfl.DflError) as caught:
        dfl.parse(text, "m.mod")
    assert caught.match(r"m.mod:5:14: error: AMPL's `numberof`")
    assert "sum{i in I} z[i,v]" in caught.value.hint


def test_an_or_with_a_part_the_rewrite_cant_take_says_what_a_part_may_be():
    with pytest.raises(dfl.DflError) as caught:
        dfl.parse("var x >= 0, <= 3;\nminimize o: x;\ns.t. c: x < 1 or x >= 2;\n", "m.mod")
    assert caught.match("m.mod:3:9: error: a constraint must be a comparison")
    assert "`or` joins parts that are comparisons" in caught.value.hint


def test_an_index_that_matches_a_tuple_component_declares_its_binaries_with_a_filter():
    text = ("set ARCS within {1..3} cross {1..3} := {(1,2), (1,3), (2,3)};\n"
            "var f{ARCS} integer >= 0, <= 5;\nminimize o: sum{(i,j) in ARCS} f[i,j];\n"
            "s.t. c{(1, j) in ARCS}: f[1, j] >= 2 or f[1, j] <= -1;\n"
            "s.t. d{(i, j) in ARCS}: f[i, j] != 0;\n")
    solution = dfl.parse(text).bind().solve()
    assert solution.objective == pytest.approx(2 + 2 + 1)


@pytest.mark.parametrize("kind, body", [
    ("predicted", "x >= p or x >= 3"), ("uncertain", "p*x <= 3 or x >= 4"),
    ("predicted", "x != p"),
])
def test_a_predicted_or_uncertain_param_in_a_logical_constraint_is_named(kind, body):
    """It was refused as an unbounded variable, a product or a non-integer side."""
    text = (f"param p {kind};\nvar x integer >= 0, <= 5;\nminimize o: x;\ns.t. d: {body};\n")
    data = {"p": [2.0, 3.0] if kind == "uncertain" else 2.0}
    with pytest.raises(dfl.DflError) as caught:
        dfl.parse(text, "m.mod").bind(data).solve()
    assert caught.match(rf"m.mod:4:9: error: `p` is an? {kind} param: a constraint with `or`")


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
def test_a_part_switched_on_holds_exactly_however_far_its_reach(backend):
    """HiGHS took L0's binary at 0.9999992 as integral; times the part's reach (-30006 within
    x2's bounds) that let x2 = 1.992 pass `x2 >= 2`, at objective 9999998.008: the integer
    columns are now rounded and the continuous ones solved again (backends/highs.polished)."""
    text = ("var x1 in [-10000, 10000000];\nvar x2 <= 10, >= -10000;\nmaximize o: x1 - x2;\n"
            "s.t. L0: 3*x2 >= 6 or -x2 >= x1;\n"
            "s.t. L1: -4*x1 <= -x2 or (x2 <= 0 and x2 + 3*x1 = 4);\n")
    solution = dfl.parse(text).bind().solve(backend=backend)
    assert solution.objective == pytest.approx(9999998, abs=1e-6)
    assert float(solution.value("x2")) >= 2 - 1e-9
    assert float(solution.value("L0#on1")) == 1.0


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
def test_a_point_whose_rounded_binaries_leave_none_is_solved_again_more_tightly(backend):
    """HiGHS answered -999996.25 at binaries 0.999999 and 1e-6; rounded, they leave x2 and x3
    no feasible values: the MIP is solved again with integrality to 1e-10 (the optimum is
    -10/3)."""
    text = ("var x1 integer >= 5, <= 5;\nvar x2 <= 10000000, >= -1000000;\n"
            "var x3 in [-10000000, 10000000];\nminimize o: x2 + 3*x3;\n"
            "s.t. L0{i in 1..3: i != 1}: ((-2 + (-1 - i)*x2 - x2 <= x1) and "
            "x1 - 4 + (-1 + i)*x1 <= (2.5 - i)*x3) or "
            "((1 + i) - 3*x3 + (2 - i)*x1 == -x1 + x3 - 1) or 3*x2 - i == (1 + i)*x3;\n")
    solution = dfl.parse(text).bind().solve(backend=backend)
    assert solution.status == "optimal"
    assert solution.objective == pytest.approx(-10 / 3, abs=1e-6)
