"""Evaluator semantics on small hand-checked models, and against brute-force Python."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _helpers import bind, poly_at

from dfl_dsl import DflError
from dfl_dsl.compile.bridges import build_linear
from dfl_dsl.evaluate.frame import Frame
from dfl_dsl.evaluate.values import expand


def _value(inst, name):
    """An unindexed `expr` as a flat Poly (or array) over z."""
    v = inst.evaluator.whole(inst.entity(name))
    if v.symbolic:
        return expand(v, False, v.shape, 1, inst.width)
    return np.asarray(v.payload)


def _objective_vector(inst):
    form = build_linear(inst, reduce=False)
    return form.sign * form.c


# ---------------------------------------------------------------------- joins
GRAPH = """
set NODES; set ARCS within NODES * NODES;
param w{ARCS};
var flow{ARCS} >= 0;
var slack{NODES};
minimize f: sum{(i, j) in ARCS} w[i, j] * flow[i, j];
subject to balance{v in NODES}:
    sum{(i, v) in ARCS} w[i, v] * flow[i, v] - sum{(v, j) in ARCS} flow[v, j] == slack[v];
"""


@pytest.mark.parametrize("seed", range(5))
def test_tuple_pattern_join_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    nodes = [f"n{k}" for k in range(n)] if seed % 2 else list(range(10, 10 + n))
    arcs = [(a, b) for a in nodes for b in nodes if a != b and rng.random() < 0.4]
    arcs = [arcs[k] for k in rng.permutation(len(arcs))]
    w = rng.normal(size=len(arcs))
    inst = bind(GRAPH, {"NODES": nodes, "ARCS": [list(a) for a in arcs], "w": w.tolist()})
    A = build_linear(inst, reduce=False).A.toarray()
    want = np.zeros((n, len(arcs) + n))
    for k, (a, b) in enumerate(arcs):
        want[nodes.index(b), k] += w[k]
        want[nodes.index(a), k] -= 1
    want[:, len(arcs):] -= np.eye(n)
    assert np.allclose(A, want)


def test_repeated_dummy_in_a_tuple_pattern_is_an_equality():
    text = """set N; set A within N * N; var f{A} in [0, 1];
              maximize o: sum{(v, v) in A} f[v, v] + 10 * sum{v in N, (w, v) in A} v * f[w, v];"""
    inst = bind(text, {"N": [1, 2], "A": [[1, 1], [1, 2], [2, 2]]})
    assert _objective_vector(inst).tolist() == [1 + 10, 20, 1 + 20]


def test_dependent_ranges():
    text = """
    set J; param d{J} : int >= 1; param T : int;
    var y{J, 1..T} >= 0 <= 1;
    maximize f: sum{j in J, t in 1..T, u in t .. t + d[j] - 1} u * y[j, t];
    """
    d = {"a": 1, "b": 3, "c": 2}
    inst = bind(text, {"J": list(d), "d": d, "T": 4})
    want = [sum(range(t, t + d[j])) for j in d for t in range(1, 5)]
    assert _objective_vector(inst).tolist() == want
    assert inst.solve().objective == pytest.approx(sum(want))


def test_filters_and_conditionals():
    text = """
    set I = 1..6; var x{I} in [0, 10];
    minimize f: sum{i in I: i != 3 and not i == 5} (if i <= 2 then i else -1) * x[i];
    """
    assert _objective_vector(bind(text)).tolist() == [1, 2, 0, -1, 0, -1]


def test_conditional_on_elements_picks_elements():
    text = """
    set N; param s in N; param t in N;
    var x{N} in [0, 1];
    maximize f: sum{v in N} (if v == s then 2 else if v == t then -1 else 0.5) * x[v];
    """
    inst = bind(text, {"N": ["a", "b", "c"], "s": "b", "t": "c"})
    assert _objective_vector(inst).tolist() == [0.5, 2, -1]


# ---------------------------------------------------------------------- macros
MACRO = """
set I = 1..4; var x{I} in [0, 1];
expr g{i in I: i >= 2} = i * x[i];
maximize f: %s;
"""


def test_macro_with_an_index_filter():
    inst = bind(MACRO % "sum{i in I: i >= 2} g[i]")
    assert _objective_vector(inst).tolist() == [0, 2, 3, 4]
    assert inst.solve().objective == pytest.approx(9)


def test_macro_used_outside_its_filter_is_a_clear_error():
    with pytest.raises(DflError) as info:
        bind(MACRO % "sum{i in I} g[i]").compile()
    err = info.value
    assert "g[1]" in err.message and "outside the index set of `g`" in err.message
    assert err.filename == "m.opt" and err.pos.line == 4
    assert "g[i]" in str(err)  # the source line is shown


def test_macro_used_twice_is_not_changed_by_its_first_use():
    text = """
    param A[3, 3]; var x[3] in [0, 1];
    expr y = A @ x;
    maximize f: sum(y) + sum(y);
    """
    A = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 1.0]])
    inst = bind(text, {"A": A.tolist()})
    assert _objective_vector(inst) == pytest.approx(2 * A.sum(axis=0))
    assert inst.solve().objective == pytest.approx(10)


def test_scalar_macro_in_objective_and_constraint():
    text = """
    set I; var x{I} in [0, 1];
    expr total = sum{i in I} x[i];
    maximize f: total; subject to cap: total <= 1.5;
    """
    assert bind(text, {"I": [1, 2]}).solve().objective == pytest.approx(1.5)


# ---------------------------------------------------------------------- numpy style
rng = np.random.default_rng(0)
A = rng.normal(size=(3, 4))
B = rng.normal(size=4)
X0 = rng.normal(size=4)
XX = rng.normal(size=(4, 3))

DATA_CASES = {
    "A.T @ A + eye(4)": A.T @ A + np.eye(4),
    "A @ b": A @ B,
    "b @ A.T @ A": B @ A.T @ A,
    "A[1]": A[1],
    "A[0, 1..2]": A[0, 1:3],
    "A[0..2, 3]": A[:, 3],
    "A[1..2, 0..1]": A[1:3, 0:2],
    "(A.T @ A)[2]": (A.T @ A)[2],
    "sum(A) + sum_squares(b)": A.sum() + (B**2).sum(),
    "trace(A @ A.T)": np.trace(A @ A.T),
    "diag(A @ A.T)": np.diag(A @ A.T),
    "diag(b)": np.diag(B),
    "norm1(A) + norm2(b) + norm_inf(b)":
        np.abs(A).sum() + np.linalg.norm(B) + np.abs(B).max(),
    "abs(b) + pos(b) + max(b, 0.1) + min(b, 0.2)":
        np.abs(B) + np.maximum(B, 0) + np.maximum(B, 0.1) + np.minimum(B, 0.2),
    "quad_form(b, A.T @ A)": B @ A.T @ A @ B,
    "b ^ 2 - 2 * b / 4 + 1": B**2 - B / 2 + 1,
    "-2 ^ 2": -4.0,
}


@pytest.mark.parametrize("text", list(DATA_CASES))
def test_numpy_style_data(text):
    inst = bind(f"param A[3, 4]; param b[4]; expr e = {text};",
                {"A": A.tolist(), "b": B.tolist()})
    assert np.allclose(_value(inst, "e"), DATA_CASES[text])


SYMBOLIC_CASES = {
    "A @ x": A @ X0,
    "x @ A.T": A @ X0,
    "x[1..2]": X0[1:3],
    "X[1]": XX[1],
    "X.T[1]": XX[:, 1],
    "X[0..1, 2]": XX[0:2, 2],
    "X.T @ b": XX.T @ B,
    "A @ X": A @ XX,
    "x.T @ X": X0 @ XX,
    "trace(A @ X)": np.trace(A @ XX),
    "diag(X[0..2])": np.diag(XX[0:3]),
    "diag(x)": np.diag(X0),
    "x * b - 2 * x / 4 + 1": X0 * B - X0 / 2 + 1,
    "sum_squares(A @ x - 1)": ((A @ X0 - 1) ** 2).sum(),
    "quad_form(x, A.T @ A)": X0 @ A.T @ A @ X0,
    "x @ x + (x[0] - 1) ^ 2": X0 @ X0 + (X0[0] - 1) ** 2,
    "sum{i in 0..2, j in 0..3} A[i, j] * X[j, i]": np.trace(A @ XX),
    # numpy-style values that vary with an index (framed) meeting fixed ones
    "sum{k in 0..2} A[k] @ x": (A @ X0).sum(),
    "sum{k in 0..2} (A[k] @ x) * k": (A @ X0) @ np.arange(3),
    "sum{k in 0..2} x @ X[0..3, k]": (X0 @ XX).sum(),
    "sum{k in 0..2} A[k] @ X[0..3, k]": np.trace(A @ XX),
    "sum{k in 0..2} X.T[k] @ A[k]": np.trace(XX.T @ A.T),
    "sum{k in 0..2} sum_squares(A[k] @ X)": ((A @ XX) ** 2).sum(),
    "sum{k in 0..2} (A @ x)[k] ^ 2": ((A @ X0) ** 2).sum(),
    # quadratic matrix forms: a trace of a product is its diagonal alone, a symbolic matmul a
    # grouped bilinear sum
    "trace(X.T @ A.T @ A @ X)": np.trace(XX.T @ A.T @ A @ XX),
    "trace(X.T @ (A.T @ A @ X)) - 1": np.trace(XX.T @ A.T @ A @ XX) - 1,
    "trace(X @ X.T)": np.trace(XX @ XX.T),
    "trace((A @ X + 1) @ (A @ X - 2).T)": np.trace((A @ XX + 1) @ (A @ XX - 2).T),
    "trace(X.T @ X @ eye(3))": np.trace(XX.T @ XX),
    "X.T @ A.T @ A @ X": XX.T @ A.T @ A @ XX,
    "(x + 1) @ A.T @ A @ (x - b)": (X0 + 1) @ A.T @ A @ (X0 - B),
    "sum_squares(A @ X - 1)": ((A @ XX - 1) ** 2).sum(),
    "quad_form(x - b, A.T @ A + eye(4))": (X0 - B) @ (A.T @ A + np.eye(4)) @ (X0 - B),
    "sum{k in 0..2} trace(X.T @ X) * k": 3 * np.trace(XX.T @ XX),
}


@pytest.mark.parametrize("text", list(SYMBOLIC_CASES))
def test_numpy_style_symbolic(text):
    inst = bind(f"param A[3, 4]; param b[4]; var x[4]; var X[4, 3]; expr e = {text};",
                {"A": A.tolist(), "b": B.tolist()})
    z = np.concatenate([X0, XX.ravel()])
    assert np.allclose(poly_at(_value(inst, "e"), z), np.ravel(SYMBOLIC_CASES[text]))


def test_trace_of_a_product_that_is_not_square():
    with pytest.raises(DflError, match=r"trace needs a square matrix, got \[3, 4\]"):
        bind("param A[3, 4]; var X[4, 3]; minimize f: trace(A @ X @ A);",
             {"A": A.tolist()}).compile()
    with pytest.raises(DflError, match=r"shape mismatch in `@`"):
        bind("param A[3, 4]; var X[4, 3]; minimize f: trace(A @ A);",
             {"A": A.tolist()}).compile()


def test_slices_and_indices_out_of_range():
    with pytest.raises(DflError, match=r"slice 0\.\.2 is outside 0\.\.1"):
        bind("param n : int; var x[n]; minimize f: sum(x[0..n]);", {"n": 2}).compile()
    with pytest.raises(DflError, match=r"index 2 is outside 0\.\.1"):
        bind("param n : int; var x[n]; minimize f: x[n];", {"n": 2}).compile()


# ---------------------------------------------------------------------- reductions
def test_max_min_of_data():
    inst = bind("""set I; param w{I}; var x in [0, 1];
        minimize f: (max{i in I} w[i] - min{i in I: i != 2} w[i]) * x;""",
                {"I": [1, 2, 3], "w": [5, -1, 3]})
    assert _objective_vector(inst).tolist() == [2.0]


def test_max_over_an_empty_set_is_an_error():
    with pytest.raises(DflError, match="`max` over an empty set"):
        bind("set I; param p{I}; var x; minimize f: x * max{i in I} p[i];",
             {"I": [], "p": []}).compile()


def test_sum_over_empty_sets_is_zero():
    text = """
    set E; set I; var x{I} in [0, 1];
    maximize f: sum{e in E} 3 + sum{e in E} x[e] + sum{i in I: i > 5} x[i] + 1;
    subject to never{e in E}: x[e] <= 0;
    """
    inst = bind(text, {"E": [], "I": [1, 2]})
    assert inst.compile().row_counts() == {"never": 0}
    sol = inst.solve()
    assert sol.status == "optimal" and sol.objective == pytest.approx(1.0)


# ---------------------------------------------------------------------- elements
def test_string_elements_in_arithmetic_are_an_error():
    with pytest.raises(DflError, match="string elements; it can't be used as a number") as info:
        bind("set I; var x{I} >= 0; minimize f: sum{i in I} i * x[i];",
             {"I": ["a", "b"]}).compile()
    assert info.value.pos.line == 1 and info.value.filename == "m.opt"


def test_integer_elements_in_arithmetic_are_numbers():
    inst = bind("set I; var x{I} in [0, 1]; minimize f: sum{i in I} i * x[i];", {"I": [3, -2]})
    assert _objective_vector(inst).tolist() == [3, -2]


def test_ordering_strings_is_an_error():
    with pytest.raises(DflError, match="can't order string elements"):
        bind('set I; var x{I}; minimize f: sum{i in I: i >= "a"} x[i];',
             {"I": ["a", "b"]}).compile()


def test_element_params_subscript_variables():
    inst = bind('set I; param s in I; var x{I} in [0, 1]; maximize f: x[s] - x["b"];',
                {"I": ["a", "b"], "s": "a"})
    assert _objective_vector(inst).tolist() == [1, -1]


def test_subscript_outside_the_set():
    with pytest.raises(DflError, match=r"`x\[c\]` is outside the index set of `x`"):
        bind('set I; var x{I}; minimize f: x["c"];', {"I": ["a", "b"]}).compile()


# ---------------------------------------------------------------------- objective, rows
def test_maximize_flips_the_canonical_sign():
    inst = bind("var x in [0, 2]; var y in [0, 1]; maximize f: 3 * x - y + 4;")
    form = inst.linear_form()
    assert form.sign == -1 and form.c.tolist() == [-3, 1] and form.c0 == -4
    sol = inst.solve()
    assert sol.objective == pytest.approx(10.0) and sol.value("x") == pytest.approx(2)


def test_chained_constraints():
    text = """
    var x; var y;
    maximize f: x + y;
    subject to band: 1 <= x - y <= 3;
    subject to top: 4 >= x + y >= -2;
    """
    inst = bind(text)
    rows = {r.name: r for r in inst.compile().constraints}
    assert rows["band"].lo.tolist() == [1] and rows["band"].hi.tolist() == [3]
    assert rows["top"].lo.tolist() == [-2] and rows["top"].hi.tolist() == [4]
    assert inst.solve().objective == pytest.approx(4.0)


def test_vector_chained_constraint():
    inst = bind("param n : int; var x[n]; maximize f: sum(x); subject to box: 0 <= x <= 2;",
                {"n": 3})
    assert inst.compile().row_counts() == {"box": 3}
    sol = inst.solve()
    assert sol.objective == pytest.approx(6) and sol.value("x").tolist() == [2, 2, 2]


def test_division_by_zero_data():
    with pytest.raises(DflError, match="division by zero"):
        bind("var x; minimize f: x / 0;").compile()


def test_frame_of_a_constraint_is_its_index():
    inst = bind("set I; var x{I}; subject to c{i in I: i > 1}: x[i] >= i;", {"I": [1, 2, 3]})
    rows = inst.compile().constraints[0]
    assert rows.labels() == ["c[2]", "c[3]"]
    assert isinstance(inst.constraint_frames["c"], Frame)


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_an_indexed_expr_over_an_empty_set(backend):
    # the expr's rows over no entries used to fail to reshape (an internal error)
    inst = bind("set I; param c{I} default 1; var x{I} in [0, 1];"
                "expr e{i in I : c[i] > 0} = c[i] * x[i];"
                "maximize o: sum{i in I : c[i] > 0} e[i]; subject to k{i in I}: e[i] <= 1;",
                {"I": []})
    sol = inst.solve(backend)
    assert sol.status == "optimal" and sol.objective == pytest.approx(0)


@pytest.mark.parametrize(("formula", "message"), [
    ("(-8)^(1/3)", "`^` is undefined for some of these values"),
    ("(i - 1)^-1", "division by zero: 0 to a negative power"),
    ("10^(100 * i)", "`^` overflows"),
])
def test_a_power_of_data_without_a_value_is_an_error_at_the_formula(formula, message):
    # it used to leave NaN or inf in the param (and a RuntimeWarning on stderr)
    with pytest.raises(DflError, match=re.escape(message)) as info:
        bind(f"param p{{i in 1..4}} = {formula};")
    assert info.value.pos.column == len("param p{i in 1..4} = ") + 1


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_if_evaluates_each_branch_only_where_it_is_chosen(backend):
    # the guard idiom `if d[i] != 0 then 1 / d[i] else 0` used to fail with "division by zero"
    # (both branches were evaluated on every entry), for data, variables and atoms alike
    inst = bind("""
        set I = 1..4;
        param d{i in I} = i - 2;
        param n default 0;
        param w{i in I} = if d[i] < 0 then -1 else if d[i] == 0 then 0 else 1 / d[i];
        param s = if n != 0 then 1 / n else 5;
        var x{I} >= -3 <= 3;
        minimize o: sum{i in I} (if d[i] != 0 then abs(x[i] - 1 / d[i]) else x[i]) + s;
        subject to c{i in I}: (if d[i] != 0 then x[i] / d[i] else 2 * x[i]) <= 1;
        subject to e: sum{i in I} w[i] * x[i] >= -100;
    """)
    assert inst.evaluator.ctx.entities["w"].data.tolist() == [-1, 0, 1, 0.5]
    sol = inst.solve(backend)
    assert sol.objective == pytest.approx(-3 + 5, abs=1e-7)
    assert sol.value("x").tolist() == pytest.approx([-1, -3, 1, 0.5], abs=1e-6)


def test_if_picks_elements_per_entry():
    inst = bind('set I = 1..3; set N = {"a", "b"}; param g{i in I} in N = '
                'if i == 2 then "b" else "a"; var y{N} in [0, 1]; '
                'maximize o: sum{i in I} (if g[i] == "a" then y[g[i]] else -y[g[i]]);')
    sol = inst.solve("highs")
    assert sol.objective == pytest.approx(2) and sol.value("y").tolist() == [1, 0]


@pytest.mark.parametrize(("formula", "example"), [
    ("u - u", "inf - inf"), ("0 * u", "0 * inf"), ("u / u", "inf / inf")])
def test_arithmetic_on_infinite_data_without_a_value_is_an_error(formula, example):
    # it used to leave NaN in the param: `x <= p` then read as no bound ("unbounded")
    with pytest.raises(DflError, match=re.escape(example)):
        bind(f"param u default inf; param p = {formula}; var x >= 0 <= p; maximize o: x;")


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_a_variable_to_the_power_zero_is_one(backend):
    # the checker classed `x^0 + x` LP, but the evaluator made a `power` atom of it, which
    # the LP backends refused ("`power` can't be turned into linear constraints")
    inst = bind("var x >= 0.5 <= 5; var v[2] in [0, 1];"
                "minimize o: x^0 + x + sum{i in 0..1} v[i]^0 + sum(v^0) + sum(v);")
    assert inst.model.klass.name == "LP"
    assert inst.solve(backend).objective == pytest.approx(5.5, abs=1e-7)


# ---------------------------------------------------------------------- hardening (#19)
@pytest.mark.parametrize(("text", "message", "at"), [
    ('set S = {-1e308, 2}; var x{S};', "a set element must be a string or one of the integers",
     "-1e308"),
    ("set S = 1..9223372036854775810; var x{S};", "a range's bounds must be integers between",
     "922"),
    ("var x[3]; minimize f: x[1e20];", r"index 1e\+20 is outside 0..2", "1e20"),
    ("set S = 1..3; var x{S}; minimize f: x[1e20];", "a subscript must be an element", "1e20"),
    ("var x >= 0; minimize f: x ^ 1e308;", "an exponent on variables must be below 2048",
     "1e308"),
])
def test_numbers_too_large_for_their_place_are_located_errors(text, message, at):
    with pytest.raises(DflError, match=message) as info:
        bind(text).compile()
    assert info.value.pos.column == text.index(at) + 1


def test_a_number_that_is_no_integer_is_in_no_set():
    inst = bind("set S = 1..3; var x; minimize f: (if 2.5 in S then 1 else 0) * x + "
                "(if 2 in S then 10 else 0) * x; subject to c: x == 1;")
    assert inst.solve("highs").objective == pytest.approx(10.0)


def test_a_sum_whose_body_is_a_vector_sums_each_entry():
    # the body x[i] * b has shape [2]: its two entries were summed into one row (or crashed)
    inst = bind("param b{1..2}; var x{1..4} >= 0; minimize f: sum{i in 1..4} x[i];"
                "subject to c: sum{i in 1..4} x[i] * b >= b * 3;"
                "subject to d{j in 1..2}: sum{i in 1..4} (i * x[i]) * b >= 1;",
                {"b": [1, 2]})
    rows = {r.name: r for r in inst.compile().constraints}
    assert rows["c"].count == 2 and rows["d"].count == 4
    z = np.array([1.0, 2.0, 3.0, 4.0])
    assert poly_at(rows["c"].body, z) == pytest.approx([10.0 - 3.0, 20.0 - 6.0])
    assert poly_at(rows["d"].body, z) == pytest.approx([29.0, 59.0, 29.0, 59.0])  # minus 1
    assert inst.solve("highs").objective == pytest.approx(3.0)


@pytest.mark.parametrize("objective", ["(M @ y) ^ 0", "if 0.5 <= a then y[0] else 2 * y[1]"])
def test_an_objective_whose_data_makes_it_a_vector_is_a_located_error(objective):
    text = f"param n : int; param M[n, n]; param a[n]; var y[n]; minimize f: {objective};"
    with pytest.raises(DflError, match=r"must be a scalar number, got an array of shape \[2\]") \
            as info:
        bind(text, {"n": 2, "M": [[1, 2], [3, 4]], "a": [1, 2]}).compile()
    assert info.value.pos.column == text.index(objective) + 1


def test_a_long_chain_of_exprs_evaluates_without_deep_recursion():
    # 160 chained exprs passed `dfl check` and hit RecursionError in `dfl solve`
    lines = ["var x >= 0;", "expr e0 = x;"]
    lines += [f"expr e{k} = e{k - 1} + 1;" for k in range(1, 3000)]
    inst = bind("\n".join(lines + ["minimize f: e2999;"]))
    assert inst.solve("highs").objective == pytest.approx(2999.0)


def test_a_declaration_index_over_a_range_of_an_earlier_dummy() -> None:
    """`{s in 1..n, t in s..n}` has no one set per position: its entries are listed (sparse),
    and an unnamed filtered item keeps its width (both failed before: `s` had no value)."""
    inst = bind("param n; param p{s in 1..n, t in s..n} = 10 * s + t;\n"
                     "set I; param q{I : 1 > 0} default 0;", {"n": 2, "I": [1]})
    assert inst.entity("p").array().tolist() == [11, 12, 22]
    assert inst.entity("q").array().tolist() == [0]
