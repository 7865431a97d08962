"""Evaluator semantics on small hand-checked models, and against brute-force Python."""

from __future__ import annotations

import math
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


MATCHES = """
set N; set A within N * N; param s in N; param w{A};
var f{A} >= 0;
expr out_s = sum{(s, j) in A} w[s, j] * f[s, j];
expr into_lit = sum{(i, "n1") in A} f[i, "n1"];
expr two_way = sum{(i, j) in A : (j, i) in A} f[i, j];
expr next_hop = sum{k in N, (k, j) in A, (j, l) in A : l != k} f[j, l];
"""


@pytest.mark.parametrize("seed", range(4))
def test_matched_tuple_components_against_brute_force(seed):
    """Params, literals and outer dummies in a tuple pattern match (joins), and `(j, i) in A`
    tests membership: each expr's coefficients against a loop over the arcs."""
    rng = np.random.default_rng(seed)
    nodes = [f"n{k}" for k in range(int(rng.integers(2, 7)))]
    arcs = [(a, b) for a in nodes for b in nodes if a != b and rng.random() < 0.5]
    arcs = [arcs[k] for k in rng.permutation(len(arcs))]
    w = rng.normal(size=len(arcs))
    s = nodes[int(rng.integers(len(nodes)))]
    inst = bind(MATCHES, {"N": nodes, "A": [list(a) for a in arcs], "s": s, "w": w.tolist()})
    z = rng.normal(size=inst.width)

    def at(name):
        return poly_at(_value(inst, name), z)

    f = dict(zip(arcs, z[: len(arcs)], strict=True))
    assert at("out_s") == pytest.approx([sum(w[k] * f[a] for k, a in enumerate(arcs)
                                             if a[0] == s)])
    assert at("into_lit") == pytest.approx([sum(f[a] for a in arcs if a[1] == "n1")])
    assert at("two_way") == pytest.approx([sum(f[a] for a in arcs if a[::-1] in f)])
    assert at("next_hop") == pytest.approx([sum(f[(j, m)] for (k, j) in arcs
                                                for (j2, m) in arcs if j2 == j and m != k)])


def test_an_expression_component_matches_per_row():
    text = """set T = 1..4; set P within T * T; var y{T} in [0, 1];
              maximize o: sum{t in 1..2, (t + 1, u) in P} 10 ^ t * y[u];"""
    inst = bind(text, {"P": [[2, 3], [3, 1], [4, 4], [2, 4]]})
    # t = 1 matches (2, 3) and (2, 4); t = 2 matches (3, 1); (4, 4) matches no t
    assert _objective_vector(inst).tolist() == [100, 0, 10, 10]


def test_a_number_that_is_no_element_matches_nothing():
    text = """set T = 1..3; set P within T * T; param h; var y{T} in [0, 1];
              maximize o: sum{(h, u) in P} y[u] + sum{t in T : (h, t) in P} 2 * y[t];"""
    assert _objective_vector(bind(text, {"P": [[1, 2]], "h": 1.5})).tolist() == [0, 0, 0]
    assert _objective_vector(bind(text, {"P": [[1, 2]], "h": 1})).tolist() == [0, 3, 0]


ROW_SETS = """
set N; param s in N; param d{N, N};
var x{N, N} >= 0;
expr others = sum{i in N, j in N diff {i, s}} d[i, j] * x[i, j];
expr pair = sum{i in N, j in {i, s}} d[i, j] * x[i, j];
expr not_mine = sum{i in N, j in N : not j in {i}} x[i, j];
expr bound_j = sum{i in N, j in N, j in {s, i}} x[i, j];
expr joined = sum{i in N, j in {s} union {i}} x[i, j];
expr common = sum{i in N, j in N inter {i, s}} x[i, j];
expr not_s = sum{i in N, j in {i, s} diff {s}} x[i, j];
expr ends = sum{j in N diff {s, s}} x[j, j];
"""


@pytest.mark.parametrize("seed", range(3))
def test_literal_sets_of_dummies_against_brute_force(seed):
    """`{i, s}` lists a dummy: a set per row (a repeat counts once), `N diff {i}` the set less
    it, and `j in {i}` a test per row."""
    rng = np.random.default_rng(seed)
    nodes = [f"n{k}" for k in range(int(rng.integers(2, 6)))]
    s = nodes[int(rng.integers(len(nodes)))]
    d = rng.normal(size=(len(nodes), len(nodes)))
    inst = bind(ROW_SETS, {"N": nodes, "s": s, "d": d.tolist()})
    z = rng.normal(size=inst.width)
    x = z[: len(nodes) ** 2].reshape(len(nodes), len(nodes))
    at = {name: poly_at(_value(inst, name), z)
          for name in ("others", "pair", "not_mine", "bound_j", "joined", "common", "not_s",
                       "ends")}
    k = nodes.index(s)
    n = range(len(nodes))
    assert at["others"] == pytest.approx([sum(d[i, j] * x[i, j] for i in n for j in n
                                              if j not in (i, k))])
    assert at["pair"] == pytest.approx([sum(d[i, j] * x[i, j] for i in n for j in {i, k})])
    assert at["not_mine"] == pytest.approx([sum(x[i, j] for i in n for j in n if j != i)])
    assert at["bound_j"] == pytest.approx([sum(x[i, j] for i in n for j in {i, k})])
    assert at["joined"] == pytest.approx(at["bound_j"])
    assert at["common"] == pytest.approx(at["bound_j"])
    assert at["not_s"] == pytest.approx([sum(x[i, i] for i in n if i != k)])
    assert at["ends"] == pytest.approx(at["not_s"])  # a literal of params: fixed, once each


def test_a_pattern_over_an_indexed_set_matches_some_components():
    """`(s, j) in R[k]` with a param, `(i, i)`, and `(j, m) in R[k]` with `j` bound by the
    item before: the members of each row's own set that match."""
    text = """set N; set K; set R{K} within N * N; param s in N; var f{N, N} in [0, 1];
    maximize o: sum{k in K, (s, j) in R[k]} f[s, j] + sum{k in K, (i, i) in R[k]} 10 * f[i, i]
              + sum{k in K, (i, j) in R[k], (j, m) in R[k]} 100 * f[i, m];"""
    routes = {1: [["a", "b"], ["b", "b"], ["b", "c"]], 2: [["a", "c"], ["c", "a"]]}
    inst = bind(text, {"N": ["a", "b", "c"], "K": [1, 2], "s": "a", "R": routes})
    want = np.zeros((3, 3))
    at = {"a": 0, "b": 1, "c": 2}
    for members in routes.values():
        for i, j in members:
            want[at[i], at[j]] += (i == "a") + 10 * (i == j)
            for j2, m in members:
                want[at[i], at[m]] += 100 * (j2 == j)
    assert _objective_vector(inst).reshape(3, 3).tolist() == want.tolist()


def test_a_literal_set_of_params_that_are_equal_has_one_element():
    text = """set N; param s in N; param t in N; var x{N} in [0, 1];
              maximize o: sum{i in {s, t}} x[i] + sum{i in N diff {s, t}} 10 * x[i];"""
    inst = bind(text, {"N": [1, 2, 3], "s": 2, "t": 2})
    assert _objective_vector(inst).tolist() == [10, 1, 10]
    with pytest.raises(DflError, match="a set literal repeats an element"):
        build_linear(bind("var x; minimize o: sum{i in {1, 2, 1}} i * x;"), reduce=False)


def test_an_operation_on_a_range_per_row_is_located():
    text = "set N; var x{N}; minimize o: sum{i in N, j in (i .. 3) union {i}} x[j];"
    inst = bind(text, {"N": [1, 2]})
    with pytest.raises(DflError, match="ranges that depend on dummies") as info:
        build_linear(inst, reduce=False)
    assert info.value.pos.column == text.index("(i ..") + 1


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


@pytest.mark.parametrize(("lo", "hi", "step"), [(1, 9, 2), (1, 10, 3), (10, 1, -3), (1, 0, 2),
                                                (0, 0, 5), (-4, 4, 4), (5, 1, 1)])
def test_ranges_with_a_step_are_pythons_ranges(lo, hi, step):
    """`lo .. hi by step` (AMPL): lo, lo + step, ... while within hi, in that order."""
    want = list(range(lo, hi + (1 if step > 0 else -1), step))
    inst = bind(f"set S = {lo} .. {hi} by {step}; param p{{i in S}} = i; var x; minimize o: x;")
    assert np.asarray(inst.evaluator.whole(inst.entity("p")).payload).tolist() == want


def test_ranges_with_a_step_that_change_with_the_index():
    text = """
    set I = 1..4;
    param up{i in I} = sum{j in i .. 9 by 2} j;
    param down{i in I} = sum{j in 10 .. 1 by -i} j;
    param size{i in I} = card(1 .. 9 by i);
    param hits{i in I} = sum{j in I: j in 1 .. 9 by i} j;
    """
    inst = bind(text)
    got = {p: np.asarray(inst.evaluator.whole(inst.entity(p)).payload).tolist()
           for p in ("up", "down", "size", "hits")}
    assert got == {"up": [sum(range(i, 10, 2)) for i in range(1, 5)],
                   "down": [sum(range(10, 0, -i)) for i in range(1, 5)],
                   "size": [len(range(1, 10, i)) for i in range(1, 5)],
                   "hits": [sum(j for j in range(1, 5) if j in range(1, 10, i))
                            for i in range(1, 5)]}
    with pytest.raises(DflError, match="a range's step must not be 0") as info:
        bind("set I = 0..2; param p{i in I} = sum{j in 1..3 by i} j;")
    assert info.value.pos.column == 50  # at the step


def test_filters_and_conditionals():
    text = """
    set I = 1..6; var x{I} in [0, 10];
    minimize f: sum{i in I: i != 3 and not i == 5} (if i <= 2 then i else -1) * x[i];
    """
    assert _objective_vector(bind(text)).tolist() == [1, 2, 0, -1, 0, -1]


def test_if_without_else_is_zero():
    """AMPL's `if c then e`: `else 0`, in data and around variables."""
    text = """
    set I = 1..4; param p{i in I} = if i <= 2 then 10; var x{I} in [0, 10];
    minimize f: sum{i in I} (p[i] * x[i] + (if i >= 3 then -x[i]));
    """
    assert _objective_vector(bind(text)).tolist() == [10, 10, -1, -1]


def test_mod_and_div_as_ampl_computes_them():
    """`a div b` truncates toward zero and `a mod b` keeps the dividend's sign, so that
    a = b * (a div b) + a mod b; against Python's integer arithmetic on every pair."""
    text = """
    set A = -7..7; set B = {-3, -2, 2, 5};
    param q{a in A, b in B} = a div b; param r{a in A, b in B} = a mod b;
    param h{a in A} = (a + 0.5) mod 2; param s = sum{a in A: a mod 3 = 0 and a div 2 >= 1} a;
    """
    inst = bind(text)
    whole = inst.evaluator.whole
    pairs = [(a, b) for a in range(-7, 8) for b in (-3, -2, 2, 5)]
    truncated = [abs(a) // abs(b) * (1 if a * b >= 0 else -1) for a, b in pairs]
    assert np.asarray(whole(inst.entity("q")).payload).ravel().tolist() == truncated
    assert np.asarray(whole(inst.entity("r")).payload).ravel().tolist() == [
        a - b * t for (a, b), t in zip(pairs, truncated, strict=True)]
    assert np.asarray(whole(inst.entity("h")).payload).tolist() == [
        math.fmod(a + 0.5, 2) for a in range(-7, 8)]
    assert float(np.asarray(whole(inst.entity("s")).payload)) == 3 + 6
    with pytest.raises(DflError, match="`mod` by zero"):
        bind("set I = 0..2; param p{i in I} = 3 mod i;")


def test_exists_and_forall_against_any_and_all():
    """Filters and data built from `exists{...}`/`forall{...}` over a random graph, with an
    outer dummy matched inside, against Python's any()/all() (empty: false / true)."""
    rng = np.random.default_rng(3)
    nodes = list(range(1, 8))
    arcs = [(i, j) for i in nodes for j in nodes if i != j and rng.random() < 0.3]
    cap = rng.integers(0, 3, size=len(arcs)).tolist()
    text = """set N; set A within N * N; param cap{A};
    set SOURCES = {i in N: not exists{(j, i) in A} cap[j, i] > 0};
    param s = sum{i in SOURCES} 2 ^ i;
    param blocked{i in N} = if forall{(i, j) in A} cap[i, j] = 0 then 1;
    param all_used = if forall{(i, j) in A: i < j} cap[i, j] > 0 or exists{k in N: k > 99} 1 = 1
                     then 1 else 0;"""
    inst = bind(text, {"N": nodes, "A": arcs, "cap": cap})
    c = dict(zip(arcs, cap, strict=True))
    sources = [i for i in nodes if not any(c[j, k] > 0 for (j, k) in arcs if k == i)]
    assert 0 < len(sources) < len(nodes)
    assert float(np.asarray(inst.evaluator.whole(inst.entity("s")).payload)) == (
        sum(2 ** i for i in sources))
    blocked = np.asarray(inst.evaluator.whole(inst.entity("blocked")).payload).tolist()
    assert blocked == [int(all(c[a] == 0 for a in arcs if a[0] == i)) for i in nodes]
    assert float(np.asarray(inst.evaluator.whole(inst.entity("all_used")).payload)) == int(
        all(c[a] > 0 for a in arcs if a[0] < a[1]))


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


def test_prod_of_data_against_numpy():
    """AMPL's `prod{...}`: per group of the index, 1 over an empty one; shaped bodies too."""
    rng = np.random.default_rng(7)
    w = rng.uniform(-2, 2, size=(5, 3)).round(2)
    text = """set I = 1..5; set J = 1..3; param w{I, J};
    param upto{i in I} = prod{k in I, j in J: k <= i and w[k, j] > 0} w[k, j];
    param none = prod{i in I: i > 9} 7;
    param cols{j in J} = prod{i in I} w[i, j];"""
    inst = bind(text, {"w": w.tolist()})
    got = {p: np.asarray(inst.evaluator.whole(inst.entity(p)).payload) for p in
           ("upto", "none", "cols")}
    want_upto = [np.prod(w[: i + 1][w[: i + 1] > 0]) for i in range(5)]
    np.testing.assert_allclose(got["upto"], want_upto, rtol=1e-12)
    assert float(got["none"]) == 1.0
    np.testing.assert_allclose(got["cols"], np.prod(w, axis=0), rtol=1e-12)


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


def test_strings_are_ordered_alphabetically_as_in_ampl():
    inst = bind('set I; var x{I} in [0, 1]; minimize f: sum{i in I: i > "b" and i <= "c2"} x[i]'
                ' - sum{i in I: 10 < i} x[i];', {"I": ["a", "b", "c", "c10", "9"]})
    # c and c10 pass the first filter; 10 is "10" beside a text, before "9" and every letter
    assert _objective_vector(inst).tolist() == [-1, -1, 0, 0, -1]


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


def test_and_or_read_the_right_side_only_where_the_left_does_not_decide():
    # AMPL evaluates `and`/`or` left to right: `d <> w and not msr[d,w]` reads no msr entry
    # that the left side rules out (the book's dist model leaves those out of its data);
    # both sides were read on every entry, a "has no value" error
    inst = bind("""
        set I = 1..4;
        param m{I};
        param z{i in I} = if i <= 2 then 1;
        set A = {i in I: i >= 3 and m[i] == 0};
        set B = {i in I: i <= 2 or m[i] > 0};
        param s = if 1 > 2 and m[1] > 0 then 1 else 2;
        param t = if 1 < 2 or m[1] > 0 then 1 else 2;
        param k{i in I} = if i <= 2 or z[i] * m[i] > 0 then 1 else 0;
        var x{I} in [0, 1];
        maximize o: sum{i in A} x[i] + sum{i in B} 2 * x[i];
    """, {"m": {"3": 0, "4": 5}})
    entities = inst.evaluator.ctx.entities
    assert entities["s"].data.tolist() == [2] and entities["t"].data.tolist() == [1]
    assert entities["k"].data.tolist() == [1, 1, 0, 0]
    assert inst.solve("highs").objective == pytest.approx(1 + 2 + 2 + 2)
    with pytest.raises(DflError, match="`q` has no value for"):
        bind("set I = 1..2; param q{I}; set A = {i in I: i >= 2 and q[i] > 0};"
             "var x{A} >= 0; minimize o: sum{i in A} x[i];", {"q": {"1": 1}})


def test_less_on_data_and_variables():
    inst = bind("set I = 1..3; param a{i in I} = 2 * i less 3; var x in [0, 10];"
                "minimize o: (5 less x) + x less 2;")
    assert inst.evaluator.ctx.entities["a"].data.tolist() == [0, 1, 3]
    assert inst.solve("highs").objective == pytest.approx(3)  # (5 less x) + x >= 5
