"""MathProg (GLPK's AMPL) as its published models write it, in small models of our own: a
run-script tail after `solve;` (read, not run, and counted in one warning), `end;`, a model
file's `data;` part with data for a param declared after `solve;`, and MathProg's spellings:
`check` without a colon, `set S{...}, in T;`, a reduction over an `if` without parentheses."""

from __future__ import annotations

import math
import warnings

import pytest

import dfl_dsl as dfl
from dfl_dsl.errors import ModelWarning

TAIL_MODEL = """\
set I;
param c{I} > 0;
printf "reading %d items\\n", card(I);
var x{I} >= 0, <= 4;
maximize value: sum{i in I} c[i] * x[i];
s.t. cap: sum{i in I} x[i] <= 6;
solve;
display x;
param best := max{i in I} c[i];
param label symbolic;
printf "%s: %g\\n", label, value;
for {i in I: x[i] > 0} {
   printf "%s %g\\n", i, x[i];
   for {j in I} printf " %s", j;
}
table out {i in I} OUT "CSV" "x.csv": i, x[i];
data;
set I := a b c;
param c := a 3 b 5 c 1;
param label := "plan";
end;
this text is past `end;` and not read
"""


def _parse(text: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = dfl.parse(text, "m.mod")
    return model, [w for w in caught if issubclass(w.category, ModelWarning)]


def test_a_run_script_tail_is_read_not_run_and_counted():
    model, caught = _parse(TAIL_MODEL)
    assert model.bind().solve().objective == pytest.approx(4 * 5 + 2 * 3)
    assert [str(w.message) for w in caught] == [
        "m.mod:3:1: warning: 7 output statements are not run (printf 2, param 2, display 1, "
        "for 1, table 1): `dfl solve` prints the solution (`--json` or `--output` for every "
        "value)"]


def test_output_statements_among_the_model_and_end_without_solve():
    text = 'var x >= 2;\ndisplay "start";\nminimize o: x;\nfor {k in 1..2} printf "%d", k;\nend;\n'
    model, caught = _parse(text)
    assert model.bind().solve().objective == pytest.approx(2)
    assert str(caught[0].message).startswith("m.mod:2:1: warning: 2 output statements are not "
                                             "run (display 1, for 1)")


def test_solve_alone_is_quiet():
    model, caught = _parse("var x >= 1;\nminimize o: x;\nsolve;\n")
    assert model.bind().solve().objective == pytest.approx(1) and caught == []


@pytest.mark.parametrize("tail, line, col, word", [
    ("let x := 3;\n", 4, 1, "let"),
    ("display x;\nsolve;\n", 5, 1, "solve"),
    ('for {k in 1..2} { printf "%d", k; fix x; }\n', 4, 35, "fix"),
    ("for {k in 1..2} for {j in 1..k} reset;\n", 4, 33, "reset"),
])
def test_a_statement_that_changes_the_model_after_solve_is_refused(tail, line, col, word):
    with pytest.raises(dfl.DflError) as raised:
        dfl.parse("var x >= 1;\nminimize o: x;\nsolve;\n" + tail, "m.mod")
    text = str(raised.value)
    assert text.startswith(f"m.mod:{line}:{col}: error: `{word}` after `solve;` would change")


def test_words_of_a_script_are_names_in_a_model():
    model, caught = _parse("param solve := 2;\nvar display >= solve;\nminimize end: display;\n")
    assert model.bind().solve().objective == pytest.approx(2) and caught == []


def test_a_data_file_replaces_the_model_files_data_by_name(tmp_path):
    data = tmp_path / "other.dat"
    data.write_text("param c := a 1 b 1 c 9;\n")
    model, _ = _parse(TAIL_MODEL)
    assert model.bind(str(data)).solve().objective == pytest.approx(4 * 9 + 2 * 1)


CHECKS = """\
set C;
set E within C cross C;
param n{C} >= 0;
check card(C) = 3;
check {(i, j) in E} i <> j;
check {i in C: n[i] > 1} n[i] >= 2;
check card{i in C: n[i] > 0} = 3;
check positive {i in C}: n[i] > 0;
check: card(E) >= 1;
var x{C} >= 0;
minimize z: sum{i in C} n[i] * x[i];
s.t. cover: sum{i in C} x[i] >= 1;
data;
set C := a b c;
set E := (a, b) (b, c);
param n := a 1 b 2 c 3;
"""


def test_check_without_a_colon():
    assert dfl.parse(CHECKS).bind().solve().objective == pytest.approx(1)


@pytest.mark.parametrize("old, new, line", [
    ("check card(C) = 3;", "check card(C) = 4;", 4),
    ("(a, b) (b, c)", "(a, b) (b, b)", 5),
    ("check card{i in C: n[i] > 0} = 3;", "check card{i in C: n[i] > 1} = 3;", 7),
])
def test_a_check_without_a_colon_still_checks(old, new, line):
    with pytest.raises(dfl.DflError) as raised:
        dfl.parse(CHECKS.replace(old, new), "m.mod").bind()
    assert str(raised.value).startswith(f"m.mod:{line}:") and "fails" in str(raised.value)


PRED = """\
set J;
set P{j in J}, in J, default {};
param t{J} >= 0;
var start{J} >= 0;
minimize finish: sum{j in J} start[j];
s.t. after{j in J, k in P[j]}: start[j] >= start[k] + t[k];
data;
set J := 1 2 3;
set P[2] := 1;
set P[3] := 2;
param t := 1 3 2 4 3 5;
"""


def test_an_indexed_set_with_in_as_its_superset():
    assert dfl.parse(PRED).bind().solve().objective == pytest.approx(0 + 3 + 7)
    with pytest.raises(dfl.DflError, match="not within the declared superset"):
        dfl.parse(PRED.replace("set P[3] := 2;", "set P[3] := 5;")).bind()


SUM_IF = """\
set I := 1..5;
param w{i in I} := i;
param big := sum{i in I} if w[i] >= 3 then 1;
param mixed := sum{i in I} if w[i] >= 4 then w[i] else if w[i] = 1 then 100 else 0 + 1;
param nested := sum{i in I} if i > 2 then sum{j in I} if j < i then 1 else 0;
param top := max{i in I} if i < 3 then 10 * i else 0;
var x{I} >= 0;
minimize z: sum{i in I} x[i] + (sum{i in I: i > 1} if w[i] > 4 then 7) * 0;
s.t. c: sum{i in I} if w[i] >= 4 then x[i] >= big;
"""


def test_a_reduction_over_an_if_without_parentheses():
    inst = dfl.parse(SUM_IF).bind()
    assert [inst.entity(p).array() for p in ("big", "mixed", "nested", "top")] == [
        3, 4 + 5 + 100 + 1 + 1, 2 + 3 + 4, 20]
    solution = inst.solve()
    assert solution.objective == pytest.approx(3)
    assert solution.value("x")[3:].sum() == pytest.approx(3)


WORDS = """\
set I := 1..4;
set PAIRS := {i in I, j in I: j = i + 1};
set NAMES := setof{i in I} ("n" & i);
param label{i in I} symbolic := "item" & "-" & i + 1;
param w{I} := 1.5;
set W := setof{i in I} (w[i] & "");
check card(NAMES) = 4 && "n3" in NAMES && !("n5" in NAMES);
check label[2] = "item-3" || 1 = 0;
check card(W) = 1 and "1.5" in W;
set SHIFTS := setof{(i, j) in PAIRS: setof{k in 0..1} (i + k, j + k) within PAIRS} (i, j);
check card(SHIFTS) = 2;
check {i in I} {i} within I;
check PAIRS within I cross I;
var x{I} >= 0;
minimize z: sum{(i, j) in SHIFTS} x[i] + sum{i in I: "n" & i in NAMES} x[i];
s.t. c: sum{i in I} x[i] >= 1;
"""


def test_mathprog_concatenation_logic_words_and_within():
    solution = dfl.parse(WORDS).bind().solve()
    assert solution.objective == pytest.approx(1)
    assert solution.value("x")[2:].sum() == pytest.approx(1)


@pytest.mark.parametrize("check", [
    "check {i in I} {i + 1} within I;", "check card(SHIFTS) = 3;",
    "check (I cross I) within PAIRS;", 'check label[2] = "item-2";', "check I within {1, 2};",
    'check "n" & 5 in NAMES || !(1 in I);',
])
def test_each_of_them_can_fail(check):
    with pytest.raises(dfl.DflError, match="the check on line 13 fails"):
        dfl.parse(WORDS.replace("check PAIRS within I cross I;", check)).bind()


def test_within_compares_sets_of_one_width():
    with pytest.raises(dfl.DflError, match="a set of 2-tuples with one of 1-tuples"):
        dfl.parse(WORDS.replace("check PAIRS within I cross I;", "check PAIRS within I;"))


TUPLES = """\
set STEPS := {(0, 1), (1, 0), (-1, 0), (0, -1)};
set CELLS := 0..2 cross 0..2;
set TAGS := {("a", 1), ("b", 2)};
check card(STEPS) = 4 && (1, 0) in STEPS && !((1, 1) in STEPS) && ("b", 2) in TAGS;
var x{CELLS} binary;
minimize z: sum{(i, j) in CELLS} x[i, j];
s.t. near{(i, j) in CELLS}: x[i, j] + sum{(di, dj) in STEPS: (i + di, j + dj) in CELLS}
    x[i + di, j + dj] >= 1;
"""


def test_a_set_literal_of_tuples():
    solution = dfl.parse(TUPLES).bind().solve()
    assert solution.objective == pytest.approx(3)  # (a dominating set of the 3x3 grid)


@pytest.mark.parametrize("literal, message", [
    ("{(0, 1), (1, 0, 2)}", "a set literal of 2-tuples lists 2-tuples only"),
    ("{(0, 1), 2}", "a set literal of 2-tuples lists 2-tuples only"),
    ("{(0, 1), (0, 1)}", "a set literal repeats an element"),
])
def test_a_set_literal_of_tuples_is_checked(literal, message):
    with pytest.raises(dfl.DflError, match=message):
        dfl.parse(TUPLES.replace("{(0, 1), (1, 0), (-1, 0), (0, -1)}", literal)).bind()


RECURSIVE = """\
set N := 1..6;
param fib{n in N} := if n <= 2 then 1 else fib[n - 1] + fib[n - 2];
param pair{n in N, k in 0..1} := if k = 0 then pair[n, 1] * 2 else
    (if n = 1 then 1 else pair[n - 1, 0]);
param cap{N} default 5;
param room{n in N} default if n = 1 then cap[n] else room[n - 1] + cap[n];
param used{n in N} := if exists{m in N: m < n} used[m] then 0 else 1;
var x{N} >= 0;
maximize z: sum{n in N} x[n];
s.t. c{n in N}: x[n] <= fib[n] + pair[n, 0] + room[n] - n + used[n];
data;
param cap := 3 10;
param room := 2 1;
"""


def test_a_param_computed_from_its_own_entries():
    inst = dfl.parse(RECURSIVE).bind()
    assert inst.entity("fib").array().tolist() == [1, 1, 2, 3, 5, 8]
    assert inst.entity("pair").array()[:, 0].tolist() == [2, 4, 8, 16, 32, 64]
    assert inst.entity("room").array().tolist() == [5, 1, 11, 16, 21, 26]
    assert inst.entity("used").array().tolist() == [1, 0, 0, 0, 0, 0]
    assert inst.solve().objective == pytest.approx(
        sum([1, 1, 2, 3, 5, 8]) + sum([2, 4, 8, 16, 32, 64]) + sum([5, 1, 11, 16, 21, 26])
        - 21 + 1)


def test_an_entry_that_needs_itself_is_an_error():
    text = RECURSIVE.replace("pair[n - 1, 0]", "pair[n, 0]")
    with pytest.raises(dfl.DflError, match=r"param `pair` needs itself to compute entry "
                       r"\[2, 0\]: \[2, 0\] -> \[2, 1\] -> \[2, 0\]"):
        dfl.parse(text).bind()


def test_a_scalar_param_still_may_not_name_itself():
    with pytest.raises(dfl.DflError, match="`p` refers to itself"):
        dfl.parse("param p := p + 1;")


def test_mathprog_data_may_leave_out_the_colon_equals():
    text = "set I;\nparam c{I};\nvar x{I} >= 0;\nminimize z: sum{i in I} c[i] * x[i];\n" \
           "s.t. one: sum{i in I} x[i] = 1;\ndata;\nset I 'a', 'b' c;\nparam c := a 3 b 2 c 4;\n"
    assert dfl.parse(text).bind().solve().objective == pytest.approx(2)


TEXT_AND_TRIG = """\
set W := {"SEND", "MORE", "AB"};
set L := setof{w in W, k in 1..length(w)} substr(w, k, 1);
check card(L) = 9 && length("SEND") = 4 && substr("MORE", 2) = "ORE";
check substr(12345, 2, 3) = "234" && substr("MORE", 5) = "";
param c{k in 0..3} := floor(abs(cos(k)) * 10) + sin(0) + tan(0) + atan(1) * 4;
var x{L} >= 0;
var y{0..3} >= 0;
minimize z: sum{w in W, k in 1..length(w)} x[substr(w, k, 1)] + sum{k in 0..3} c[k] * y[k];
s.t. each{l in L}: x[l] >= 1;
s.t. one: sum{k in 0..3} y[k] = 1;
"""


def test_text_and_trigonometric_functions_of_data():
    solution = dfl.parse(TEXT_AND_TRIG).bind().solve()
    assert solution.objective == pytest.approx(10 + 4 + math.pi)  # (|cos 2| is the least)


@pytest.mark.parametrize("old, new, message", [
    ('substr("MORE", 5) = ""', 'substr("MORE", 6) = ""', r'`substr` of "MORE" from 6'),
    ("c[k] * y[k]", "cos(y[k])", "`cos` of an affine expression has no DCP curvature"),
])
def test_text_and_trigonometric_functions_are_checked(old, new, message):
    with pytest.raises(dfl.DflError, match=message):
        dfl.parse(TEXT_AND_TRIG.replace(old, new)).bind().solve()


def test_a_constraint_named_like_a_command_is_a_constraint():
    text = "set I := 1..2;\nvar x{I} >= 0;\nminimize o: sum{i in I} x[i];\n" \
           "display{i in I}: x[i] >= i;\nprint: x[1] >= 5;\n"
    model, caught = _parse(text)
    assert model.bind().solve().objective == pytest.approx(5 + 2) and caught == []
    with pytest.raises(dfl.DflError, match="`display` after `solve;` would change"):
        dfl.parse(text.replace("display{", "solve;\ndisplay{"))
    # an indexed printf's `:` opens its format: output after `solve;`, not a constraint
    tail = ('solve;\nprintf{i in I: x[i] > 0}: "%d %g\\n", i, x[i];\n'
            'for {i in I}: { printf "%d\\n", i; }\n')  # (MathProg's `for` takes a `:` too)
    model, caught = _parse(text + tail)
    assert model.bind().solve().objective == pytest.approx(5 + 2)
    assert [str(w.message).count("not run") for w in caught] == [1]


def test_a_set_the_data_gives_does_not_read_its_default():
    text = ("param n integer > 0;\nset V default 1..n;\nparam w{V};\nvar x{V} >= 0, <= 1;\n"
            "maximize o: sum{v in V} w[v] * x[v];\ndata;\nparam: V: w := a 2 b 3;\n")
    assert dfl.parse(text).bind().solve().objective == pytest.approx(5)
    # without V in the data, its default is read, and so is n
    with pytest.raises(dfl.DflError, match="param `n` has no value"):
        dfl.parse(text.replace("param: V: w := a 2 b 3;", "param w := 1 2 2 3;")).bind()
    assert dfl.parse(text.replace("param: V: w := a 2 b 3;", "param n := 2;\nparam w := 1 2 2 3;")
                     ).bind().solve().objective == pytest.approx(5)


STORE = """\
set Y := 1..3;
param inflow{Y};
var s{Y} >= 0;
minimize o: sum{y in Y} s[y];
s.t. start{y in Y}: if y = min{yy in Y} min(yy) then 5 else s[y-1] + inflow[y] = s[y];
s.t. cap{y in Y}: if y > 1 then s[y] - 7 <= 0;
data;
param inflow := 1 0 2 1 3 1;
"""


def test_a_comparison_after_an_if_closes_the_whole_if():
    # MathProg's branches are arithmetic: `(if .. else s[y-1] + inflow[y]) = s[y]`, and
    # `(if y > 1 then s[y] - 7 else 0) <= 0`; `min(yy)` of one scalar is yy
    assert dfl.parse(STORE).bind().solve().objective == pytest.approx(5 + 6 + 7)
    assert dfl.parse(STORE.replace("3 1;", "3 2;")).bind().solve().status == "infeasible"


def test_min_of_one_array_is_refused_with_the_reduction_to_write():
    with pytest.raises(dfl.DflError, match=r"`min` of one argument takes a scalar"):
        dfl.parse("param a{1..3} := 1;\nvar x >= min(a);\nminimize o: x;\n")
