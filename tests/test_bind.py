"""bind: sets, params (given, computed, defaulted), checks, variables' bounds, predicted and
uncertain params."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.errors import DataError, DataWarning
from dfl_dsl.evaluate.elements import element_of


def test_computed_param_and_set():
    inst = bind("param m : int; param n : int; param A[m, n]; param C[n, n] = A.T @ A;"
                "param T : int; set H = 1..T; param half{t in H} = t / 2;",
                {"m": 2, "n": 2, "A": [[1, 2], [3, 4]], "T": 3})
    A = np.array([[1, 2], [3, 4]])
    assert inst.entity("C").array().tolist() == (A.T @ A).tolist()
    assert inst.sets["H"].elements() == [1, 2, 3]
    assert inst.entity("half").array().tolist() == [0.5, 1, 1.5]


def test_initial_values_of_variables():
    """AMPL's `var x{I} := e`: one start value per entry, by the index; None without any."""
    inst = bind("set I; param p{I}; var y; var x{i in I} >= 0, := 2 * p[i]; var z := 1.5;",
                {"I": ["a", "b", "c"], "p": [1, 2, 3]})
    columns, values = inst.start()
    x, z = inst.entity("x"), inst.entity("z")
    assert columns.tolist() == [*x.columns().tolist(), *z.columns().tolist()]
    assert values.tolist() == [2.0, 4.0, 6.0, 1.5]
    assert bind("var x; minimize o: x;").start() is None
    with pytest.raises(dfl.DflError, match="the initial value has shape"):
        bind("param n; param A[3]; var x[2] := A;", {"n": 1, "A": [1, 2, 3]})


def test_computed_things_must_not_come_from_the_data():
    with pytest.raises(DataError, match="param `C` is computed in the model"):
        bind("param C = 2;", {"C": 3})
    with pytest.raises(DataError, match="set `H` is computed in the model"):
        bind("set H = 1..3;", {"H": [1, 2, 3]})


def test_default_expression_uses_other_data():
    inst = bind("set I; param cap{I}; param u{i in I} default 2 * cap[i];",
                {"I": ["a", "b"], "cap": [1, 5], "u": {"b": 0}})
    assert inst.entity("u").array().tolist() == [2, 0]


def test_default_for_a_missing_param():
    inst = bind("param alpha default 0.9; param k : int default 3;")
    assert inst.entity("alpha").array().tolist() == 0.9 and inst.entity("k").array() == 3


def test_missing_set_hints_the_closest_key():
    with pytest.raises(dfl.DflError, match="set `NODES` has no value") as info:
        bind("set NODES;", {"NODE": [1]})
    assert info.value.hint == "did you mean `NODE`?"


def test_a_missing_param_is_reported_at_its_declaration_naming_the_data():
    """The data has no place to point at; the model's declaration has (FILE:LINE:COL)."""
    with pytest.raises(dfl.DflError) as info:
        dfl.parse("set I;\nparam cost{I};\nvar x{I} >= 0;\nminimize o: sum{i in I} cost[i] * "
                  "x[i];\n", "m.opt").bind({"I": [1], "Cost": [2]}, data_name="d.json")
    err = info.value
    assert err.filename == "m.opt" and (err.pos.line, err.pos.column) == (2, 7)
    assert err.message == 'param `cost` has no value: d.json has no "cost"'
    assert err.hint == "did you mean `Cost`?"  # a case slip is the closest match


def test_a_param_nothing_reads_needs_no_value():
    """As in MathProg, which computes a param where it is first read (GLPK's shiftcov declares
    one it never uses)."""
    inst = dfl.parse("set I;\nparam days;\nparam c{I};\nvar x{I} >= 1;\n"
                     "minimize o: sum{i in I} c[i] * x[i];\n").bind({"I": [1, 2], "c": [2, 3]})
    assert inst.solve().objective == pytest.approx(5)


def test_int_accepts_integral_floats():
    assert bind("param k : int;", {"k": 3.0}).entity("k").array() == 3


def test_psd_allows_round_off():
    v = np.array([[1.0, 1.0], [1.0, 1.0]]) - 1e-13 * np.eye(2)  # eigenvalue -1e-13
    bind("param P[2, 2] psd;", {"P": v.tolist()})


def test_shape_sizes_must_be_nonnegative():
    with pytest.raises(dfl.DflError, match="size must be >= 0"):
        bind("param n : int; param v[n];", {"n": -1, "v": []})


def test_variable_bounds_from_indexed_data():
    inst = bind("set I; param lo{I}; param hi{I}; var x{i in I} >= lo[i] <= hi[i];"
                "var y{I} in [-1, 2]; var b{I} binary >= 0.5;",
                {"I": [1, 2], "lo": [0, -3], "hi": [4, 5]})
    x, y, b = (inst.entity(n) for n in "xyb")
    assert x.lower.tolist() == [0, -3] and x.upper.tolist() == [4, 5]
    assert y.lower.tolist() == [-1, -1] and y.upper.tolist() == [2, 2]
    assert b.lower.tolist() == [0.5, 0.5] and b.upper.tolist() == [1, 1] and b.integer.all()


def test_lower_bound_above_upper_bound():
    with pytest.raises(dfl.DflError, match=r"`x\[b\]` has lower bound 3 above its upper bound 1"):
        bind("set I; param lo{I}; var x{i in I} >= lo[i] <= 1;",
             {"I": ["a", "b"], "lo": [0, 3]})


def test_predicted_value_in_the_data():
    inst = bind("set I; param c{I} : predicted; var x{I} in [0, 1];"
                "minimize f: sum{i in I} c[i] * x[i];", {"I": [1, 2], "c": [-1, 2]})
    assert inst.predicted[0].extra["value"].tolist() == [-1, 2]
    assert inst.theta_values().tolist() == [-1, 2]
    assert inst.solve().objective == pytest.approx(-1)


@pytest.mark.parametrize(("text", "given", "message"), [
    # fuzz (`solved`): a predicted cost of -inf reached CVXPY ("Problem data contains NaN or
    # Inf", exit 3) and HiGHS (`optimal`, objective inf): a θ is a symbol through compile, so
    # the compile-time refusal of an infinite coefficient never saw it
    ("param c{I} : predicted; var x{I} in [0, 1]; minimize f: sum{i in I} c[i] * x[i];",
     [1, -np.inf], r"param `c`\[b\]: value -inf isn't finite \(a predicted param"),
    ("param c{I} : uncertain; var x{I} in [0, 1]; minimize f: sum{i in I} c[i] * x[i];",
     [[1, 2], [np.inf, 2]], r"param `c`\[a\] in scenario 1: value inf isn't finite"),
])
@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_a_predicted_or_uncertain_value_must_be_finite(tmp_path, text, given, message, backend):
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"I": ["a", "b"], "c": given}))  # (inf: `Infinity`)
    with pytest.raises(DataError, match=message) as info:
        dfl.parse("set I; " + text, "m.opt").bind(data).solve(backend)
    assert info.value.filename == str(data) and info.value.pos is not None
    assert "leave a bound open" in info.value.hint


@pytest.mark.parametrize(("attrs", "given", "message"), [
    (">= b", np.inf, r"`x` has the lower bound inf: no number meets it"),
    ("<= b", -np.inf, r"`x` has the upper bound -inf: no number meets it"),
])
def test_a_variable_bound_of_inf_on_the_wrong_side(attrs, given, message):
    # HiGHS answered `var x >= inf` `optimal` with no point, CVXPY `unbounded`
    text = f"param b; var x {attrs}; minimize f: x;"
    with pytest.raises(dfl.DflError, match=message) as info:
        bind(text, {"b": given})
    assert info.value.pos.column == text.index("x ") + 1


def test_an_open_bound_of_inf_is_no_bound():
    inst = bind("param b; var x >= 0, <= b; minimize f: x;", {"b": np.inf})
    assert inst.solve("highs").objective == 0


def test_predicted_value_with_a_gap():
    with pytest.raises(DataError, match=r"predicted param `c` misses a value for \[2\]"):
        bind("set I; param c{I} : predicted;", {"I": [1, 2], "c": {"1": 3}})


def test_uncertain_scenarios():
    inst = bind("set I; param p{I} : uncertain >= 0;", {"I": ["a", "b"], "p": [[1, 2], [3, 4],
                                                                               [5, 6]]})
    ent = inst.uncertain[0]
    assert ent.extra["scenarios"].shape == (3, 2)
    assert inst.theta_values().tolist() == [1, 2]  # scenario 0


@pytest.mark.parametrize(("given", "message"), [
    (3, "give a list of scenarios"),
    ([], "give a list of scenarios"),
    ([[1, 2], [1]], r"param `p` \(scenario 1\): expected 2 values"),
    ([{"a": 1, "b": 2}, {"a": 1}], r"scenario 1 misses \[b\]"),
    ([[1, 2], [3, -4]], r"`p`\[b\] in scenario 1: value -4 breaks `>= 0`"),
])
def test_bad_scenarios(given, message):
    with pytest.raises(DataError, match=message):
        bind("set I; param p{I} : uncertain >= 0;", {"I": ["a", "b"], "p": given})


def test_element_params():
    inst = bind("set N; param s in N; param g{N} in N;",
                {"N": ["a", "b", 3], "s": 3, "g": {"a": "b", "b": "a", "3": 3}})
    assert inst.entity("s").elem
    assert [element_of(k) for k in inst.entity("g").array()] == ["b", "a", 3]


def test_unknown_data_keys_are_listed():
    inst = bind("set I;", {"I": [1], "extra": 2, "features": [1]})
    assert inst.unknown_data_keys() == ["extra"]


_DEFAULTED = ("set I; param name{I} default 1; var x{i in I} >= name[i];"
              "minimize o: sum{i in I} x[i];")


def test_a_dat_name_the_model_lacks_is_a_located_error(tmp_path):
    """AMPL stops at data for an undeclared name; reading on would leave `name` at its default
    (objective 2 instead of 11), a wrong answer with no error."""
    data = tmp_path / "d.dat"
    data.write_text("set I := a b;\nparam nme := a 5 b 6;\n")
    with pytest.raises(DataError) as caught:
        dfl.parse(_DEFAULTED, "m.mod").bind(data)
    text = caught.value.format()
    assert text.startswith(f"{data}:2:7: error: `nme` is not declared in m.mod")
    assert "did you mean `name`?" in text


@pytest.mark.parametrize(("line", "words"), [
    ("param: name zzz := a 1 2 b 3 4;", "2:13: error: `zzz` is not declared"),
    ("param x := a 1 b 2;", "2:7: error: `x` is a var in m.mod, and a data file gives only"),
    ("param o := 3;", "2:7: error: `o` is an objective"),
])
def test_every_dat_name_must_be_a_set_or_param(tmp_path, line, words):
    data = tmp_path / "d.dat"
    data.write_text(f"set I := a b;\n{line}\n")
    with pytest.raises(DataError, match=re.escape(words)):
        dfl.parse(_DEFAULTED, "m.mod").bind(data)


def test_a_model_files_own_data_is_held_to_its_names_too(tmp_path):
    model = dfl.parse(_DEFAULTED + "\ndata;\nset I := a;\nparam nme := a 5;\n", "m.mod")
    with pytest.raises(DataError, match=r"^m\.mod:4:7: error: `nme` is not declared"):
        model.bind(None)
    data = tmp_path / "d.json"  # a JSON file over it replaces I, and the .dat part still errs
    data.write_text('{"I": ["a"]}')
    with pytest.raises(DataError, match="`nme` is not declared"):
        model.bind(data)


def test_a_misspelled_key_warns_where_it_is(tmp_path):
    data = tmp_path / "d.json"
    data.write_text('{\n  "I": [1, 2],\n  "low": 5,\n  "shared_with_another_model": 1\n}')
    model = dfl.parse("set I; param lo default 0; var x{I} >= lo; minimize c: sum{i in I} x[i];")
    with pytest.warns(DataWarning) as caught:
        model.bind(data)
    assert len(caught) == 1  # the unrelated key stays silent
    text = str(caught[0].message)
    assert text.startswith(f"{data}:3:3: warning: the model has no set or param `low`")
    assert "did you mean `lo`?" in text


def test_a_key_the_model_reads_does_not_warn(recwarn):
    bind("set I; param lo default 0;", {"I": [1], "lo": 2, "lox": 1})
    assert not [w for w in recwarn if issubclass(w.category, DataWarning)]


def test_within_a_computed_superset():
    inst = bind("param n : int; set V = 1..n; set E within V * V;",
                {"n": 3, "E": [[1, 2], [3, 1]]})
    assert inst.sets["E"].elements() == [(1, 2), (3, 1)]
    with pytest.raises(DataError, match=r"element \(3, 4\) is not within"):
        bind("param n : int; set V = 1..n; set E within V * V;", {"n": 3, "E": [[3, 4]]})


def test_z_layout_variables_then_thetas():
    inst = bind("param a : predicted; var x{1..3}; param b{1..2} : uncertain; var y;",
                {"b": [[1, 2]]})
    assert [v.offset for v in inst.variables] == [0, 3]
    assert [t.offset for t in inst.thetas] == [4, 5] and inst.width == 7 and inst.n_vars == 4


def test_psd_check_accepts_singular_and_names_the_smallest_eigenvalue():
    bind("param P[2, 2] psd;", {"P": [[1, 1], [1, 1]]})  # eigenvalues 0 and 2
    with pytest.raises(dfl.DflError, match="smallest eigenvalue is -1"):
        bind("param P[3, 3] psd;", {"P": [[1, 0, 0], [0, -1, 0], [0, 0, 1]]})


def test_psd_check_on_entries_near_the_float_limit():
    # fuzz (pipeline seed 2036056): a -1e308 on a covariance's diagonal overflowed m + m.T to
    # -inf and LAPACK raised "Eigenvalues did not converge" (exit 3); an inf passed as psd
    with pytest.raises(DataError, match="smallest eigenvalue is -1e[+]308"):
        bind("param P[3, 3] psd;", {"P": [[1, 0, 0], [0, -1e308, 0], [0, 0, 1]]})
    with pytest.raises(DataError, match=r"declared `psd` but \[0, 0\] = inf"):
        bind("param P[2, 2] psd;", {"P": [["inf", 0], [0, 1]]})
    bind("param P[2, 2] psd;", {"P": [[1e308, 1e308], [1e308, 1e308]]})  # (0 and 2e308)
    with pytest.raises(DataError, match="not symmetric"):
        bind("param P[2, 2] symmetric;", {"P": [[0, 1e308], [-1e308, 0]]})


@pytest.mark.parametrize(("text", "data", "where", "message"), [
    ("param n : int = 3.5;", {}, (1, 17), "isn't an integer"),
    ("set I = 1..3; param p{i in I} >= 0 = 1 - i;", {}, (1, 38), "`p`[2]: value -1 breaks"),
    ("set I; param p{I} >= 0 default -1;", {"I": ["a", "b"], "p": {"a": 3}}, (1, 32),
     "`p`[b]: value -1 breaks `>= 0`"),
    ("set I = 1..2; param g{I} in I default 7;", {}, (1, 39), "value 7 is not in `I`"),
    ("param P[2, 2] psd = -eye(2);", {}, (1, 21), "not positive semidefinite"),
])
def test_a_check_broken_by_the_models_own_value_is_reported_in_the_model(text, data, where,
                                                                         message):
    # a computed (`=`) or default value breaking a check used to be blamed on the data file
    # ("<no data>: error: ...", no line)
    with pytest.raises(dfl.DflError, match=re.escape(message)) as info:
        bind(text, data, name="own.opt")
    assert info.value.filename == "own.opt" and not isinstance(info.value, DataError)
    assert (info.value.pos.line, info.value.pos.column) == where


def test_a_check_broken_by_a_data_value_is_still_reported_in_the_data():
    with pytest.raises(DataError) as info:
        bind("set I; param p{I} >= 0 default 1;", {"I": ["a", "b"], "p": {"a": -3}})
    assert "`p`[a]: value -3" in info.value.message


@pytest.mark.parametrize(("text", "data", "hint"), [
    ("set N; set A within N * N;", {"N": [1, 2], "A": [["1", "2"]]},
     '"1" is text, but the set holds the number 1'),
    ("set N; set A within N * N;", {"N": ["1", "2"], "A": [[1, 2]]},
     '1 is a number, but the set holds the text "1"'),
    ("set N; param s in N;", {"N": [1, 2], "s": "2"}, '"2" is text, but the set holds the number'),
])
def test_an_element_that_is_text_where_the_set_holds_a_number_gets_a_hint(text, data, hint):
    with pytest.raises(DataError) as info:
        bind(text, data)
    assert hint in (info.value.hint or "")


def test_a_set_too_large_for_memory_is_an_error_at_its_declaration(monkeypatch):
    # a data typo (n = 10^12) used to end in "internal error: MemoryError"; the size cap
    # (evaluate/sizes.py) now refuses it at the range, before allocating
    with pytest.raises(dfl.DflError, match="the range 1..1000000000000 would have "
                       "1,000,000,000,000 entries") as info:
        bind("param n : int; set S = 1..n; var x{S} >= 0;", {"n": 10**12})
    assert info.value.pos.line == 1 and info.value.pos.column == 24
    monkeypatch.setenv("DFL_MAX_ENTRIES", "0")  # no cap: numpy's MemoryError, still located
    with pytest.raises(dfl.DflError, match="out of memory binding `S`") as info:
        bind("param n : int; set S = 1..n; var x{S} >= 0;", {"n": 10**12})
    assert info.value.pos.line == 1 and info.value.pos.column == 20


def test_a_variable_bound_of_the_wrong_shape_says_variable():
    # it said "the value has shape [3], the param is declared [2]" about a variable's bound
    with pytest.raises(dfl.DflError, match=re.escape(
            "the bound has shape [3], the variable is declared [2]")):
        bind("set I; param lo{I}; var x[2] >= lo;", {"I": [1, 2, 3], "lo": [1, 2, 3]})


def test_a_model_bound_without_any_data_is_told_to_get_some():
    with pytest.raises(dfl.DflError) as info:
        dfl.parse("set I; var x{I} >= 0;", "m.opt").bind(None)
    assert info.value.message == "set `I` has no value: no data file was given"
    assert info.value.filename == "m.opt" and "--data" in info.value.hint


# ---------------------------------------------------------------------- AMPL's param attributes
def test_symbolic_params_and_a_differs_from_check() -> None:
    inst = bind("set NODES; param s symbolic in NODES; param t in NODES, <> s;\n"
                "param label symbolic default \"none\";",
                {"NODES": ["a", "b"], "s": "a", "t": "b"})
    assert element_of(int(inst.entity("t").array())) == "b"
    assert element_of(int(inst.entity("label").array())) == "none"
    with pytest.raises(DataError, match=r"param `t`: value 'a' breaks `!= 'a'`"):
        bind("set NODES; param s symbolic in NODES; param t in NODES, <> s;",
             {"NODES": ["a", "b"], "s": "a", "t": "a"})


def test_a_number_differs_from_check() -> None:
    with pytest.raises(DataError, match=r"param `d`\[2\]: value 0 breaks `!= 0`"):
        bind("set I; param d{I} <> 0;", {"I": [1, 2], "d": [3, 0]})


def test_integer_and_binary_params() -> None:
    inst = bind("set I; param n integer, >= 0; param b{I} binary, default 0;",
                {"I": [1, 2], "n": 3, "b": {"2": 1}})
    assert inst.entity("b").array().tolist() == [0, 1]
    with pytest.raises(DataError, match=r"`b`\[1\]: value 2 isn't 0 or 1 \(declared `binary`\)"):
        bind("set I; param b{I} binary;", {"I": [1], "b": [2]})
    with pytest.raises(DataError, match="isn't an integer"):
        bind("param n integer;", {"n": 2.5})


def test_a_stiefel_variable_needs_a_column():
    # fuzz (spec sparse_pca with r = 0): X[30, 0] reached OBCD, which raised IndexError
    with pytest.raises(dfl.DflError, match="needs n >= r >= 1; `X` is 3 x 0") as info:
        bind("param r : int;\nvar X[3, r] in stiefel;\nminimize f: sum(X);", {"r": 0})
    assert info.value.pos.line == 2
