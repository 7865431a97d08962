"""Property-based fuzzing: random and mutated model texts must end in a checked model or a
`DflError` located in the text; spec and example models with mutated text or data must end in a
compiled instance or a located `DflError`; small generated LPs, MILPs and QPs must get the
same answer from HiGHS and CVXPY -- never another exception, never a hang. The inputs and
judges live in `_fuzz.py`; benchmarks/fuzz.py runs them by the hundred thousand."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from _fuzz import (
    VOCAB,
    Crash,
    Mismatch,
    cases,
    cross_check,
    front_end,
    mutate,
    mutated_case,
    random_model,
    solved_case,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import dfl_dsl as dfl

SPEC = Path(__file__).parents[1] / ".." / "shared" / "spec"

# A few models of our own, so the fuzzer has seeds even where ../shared/spec is absent.
SEEDS = [
    """model transport;
set ORIG; set DEST;
param supply{ORIG} >= 0; param demand{DEST} >= 0; param cost{ORIG, DEST} >= 0;
var ship{ORIG, DEST} >= 0;
minimize total_cost: sum{i in ORIG, j in DEST} cost[i, j] * ship[i, j];
subject to supply_limit{i in ORIG}: sum{j in DEST} ship[i, j] <= supply[i];
s.t. meet_demand{j in DEST}: sum{i in ORIG} ship[i, j] >= demand[j];
""",
    """set NODES;
set ARCS within NODES * NODES;
param source in NODES; param sink in NODES;
param cost{ARCS} : predicted;
var flow{ARCS} in [0, 1];
minimize length: sum{(i, j) in ARCS} cost[i, j] * flow[i, j];
subject to balance{v in NODES}:
    sum{(i, v) in ARCS} flow[i, v] - sum{(v, j) in ARCS} flow[v, j]
        == (if v == sink then 1 else if v == source then -1 else 0);
""",
    """param n : int; param m : int;
param P[n, n] psd; param q[n] : predicted; param A[m, n]; param u[m];
param C[n, n] = A.T @ A; param lam >= 0 default 1;
var x[n] >= 0;
expr r = A @ x - u;
minimize f: 0.5 * quad_form(x, P) + q @ x + lam * norm1(x) + sum_squares(r[0 .. 1]);
subject to box: 0 <= x <= 1;
""",
    """param horizon : int;
set T = 1..horizon; set JOBS; set GROUPS = {"a", "b", 3} union {4} diff {5};
param duration{JOBS} : int >= 1;
param price{T} : uncertain;
param group{JOBS} in GROUPS;
var start{JOBS, T} binary;
expr run_cost{j in JOBS, t in T: t + duration[j] - 1 <= horizon} =
    sum{u in t .. t + duration[j] - 1} price[u];
minimize cost: cvar(0.9, sum{j in JOBS, t in T: t + duration[j] - 1 <= horizon}
    run_cost[j, t] * start[j, t]);
s.t. once{j in JOBS}: sum{t in T} start[j, t] == 1;
s.t. grp{g in GROUPS}: sum{j in JOBS, t in T: group[j] == g and not t > 3} start[j, t] <= 2;
""",
    """set ITEMS; set FEATURES;
param feat{ITEMS, FEATURES} >= 0; param k : int >= 1;
var x{ITEMS} binary;
maximize covered: sum{f in FEATURES} sqrt(sum{i in ITEMS} feat[i, f] * x[i]);
subject to cardinality: sum{i in ITEMS} x[i] <= k;
""",
    """param m : int; param n : int; param r : int; param A[m, n];
var X[n, r] in stiefel;
minimize loss: -0.5 * trace(X.T @ A.T @ A @ X) + 0.1 * norm1(X);
""",
]
CORPUS = SEEDS + ([p.read_text() for p in sorted(SPEC.glob("*.opt"))] if SPEC.is_dir() else [])

# DFL_FUZZ_EXAMPLES=20000 fuzzes longer (the default keeps the whole file near 20 s)
FUZZ = settings(
    max_examples=int(os.environ.get("DFL_FUZZ_EXAMPLES", "1000")),
    deadline=2000,  # ms per example: a hang or a blow-up is a failure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def outcome(text: str) -> str:
    """Parse and check; anything but a model or a well-located `DflError` fails the test."""
    try:
        model = dfl.parse(text, "fuzz.opt")
    except dfl.DflError as error:
        report = str(error)
        assert report.startswith("fuzz.opt:"), report
        assert error.message and "\n" not in error.message, report
        assert 1 <= error.pos.line <= text.count("\n") + 1, report
        assert error.pos.column >= 1, report
        return "error"
    assert model.klass.label
    return f"model: {model.klass.label}"


@pytest.fixture(scope="module", autouse=True)
def _warm_up() -> None:
    """Build the parser tables once, outside the per-example deadline."""
    dfl.parse(CORPUS[0])


# ---------------------------------------------------------------------- mutations
OPS = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        st.sampled_from(VOCAB),
    ),
    min_size=1,
    max_size=6,
)


@FUZZ
@given(st.sampled_from(CORPUS), OPS)
def test_mutated_models(text: str, ops) -> None:
    event(outcome(mutate(text, ops, CORPUS)))


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=25))
def test_spliced_lines(picks) -> None:
    """Lines drawn from different models, in any order."""
    lines = []
    for a, b in picks:
        source = CORPUS[a % len(CORPUS)].splitlines()
        lines.append(source[b % len(source)])
    event(outcome("\n".join(lines) + "\n"))


@FUZZ
@given(st.lists(st.sampled_from(VOCAB), max_size=60))
def test_keyword_soup(words) -> None:
    event(outcome(" ".join(words)))


CHARACTERS = "set param var x{}[]();:,=<>!+-*/^@.T0123456789 \n\"#\tine\x00\f\u00e9"


@FUZZ
@given(st.text(alphabet=CHARACTERS, max_size=120))
def test_random_characters(text: str) -> None:
    event(outcome(text))


# ---------------------------------------------------------------------- generated models
HEADER = """set I;
set J = 1..3;
set P within I * I;
param n : int;
param a >= 0;
param c{I};
param A[n, n] psd;
param b[n];
param p : predicted;
param pc{I} : predicted;
param u{I} : uncertain;
param g{I} in J;
var x{I} >= 0;
var y;
var v[n] >= 0;
var z{I} binary;
"""
LEAVES = st.sampled_from(
    ["0", "1", "2", "0.5", "-1", "inf", "1e-3", '"s"', "a", "n", "y", "v", "b", "A", "p", "x[i]",
     "c[i]", "pc[i]", "u[i]", "z[i]", "g[i]", "i", "I", "J", "P", "x", "X", "e"]
)
ATOMS = (
    "abs pos sqrt log exp log1p min max norm1 norm2 norm_inf sum_squares quad_form trace diag "
    "eye ones zeros sum mean cvar worst nnz foo"
).split()


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(children, children)
    return st.one_of(
        st.tuples(children, st.sampled_from("+ - * / @".split()), children).map(
            lambda t: f"{t[0]} {t[1]} {t[2]}"
        ),
        children.map(lambda e: f"-{e}"),
        children.map(lambda e: f"({e})"),
        st.tuples(children, st.sampled_from(["2", "0.5", "3", "-1", "x"])).map(
            lambda t: f"({t[0]})^{t[1]}"
        ),
        st.tuples(st.sampled_from(ATOMS), st.lists(children, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        ),
        st.tuples(
            st.sampled_from(["sum", "max", "min"]),
            st.sampled_from(
                ["i in I", "i in J", "(i, j) in P", "i in P", "i in 1..n", "i in I : c[i] >= 0",
                 "i in I : x[i] >= 0", "(i, k) in I * J", "i in I union J"]
            ),
            children,
        ).map(lambda t: f"{t[0]}{{{t[1]}}} {t[2]}"),
        st.tuples(children, st.sampled_from(["==", "<=", ">", "!="]), two).map(
            lambda t: f"(if {t[0]} {t[1]} 1 then {t[2][0]} else {t[2][1]})"
        ),
        children.map(lambda e: f"{e}.T"),
        two.map(lambda t: f"({t[0]})[{t[1]}]"),
        two.map(lambda t: f"{t[0]}[{t[1]} .. 1]"),
        st.tuples(children, st.sampled_from(["union", "diff", "inter", "*"]), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        two.map(lambda t: f"{{{t[0]}, {t[1]}}}"),
        two.map(lambda t: f"({t[0]} in {t[1]})"),
        children.map(lambda e: f"(not {e})"),
    )


EXPRS = st.recursive(LEAVES, _extend, max_leaves=12)


@FUZZ
@given(
    st.lists(EXPRS, max_size=2),
    st.one_of(st.none(), st.tuples(st.sampled_from(["minimize", "maximize"]), EXPRS)),
    st.lists(
        st.tuples(
            st.sampled_from(["", "{i in I}", "{i in I: c[i] >= 0}", "{(i, j) in P}", "[n]"]),
            EXPRS,
            st.sampled_from(["<=", ">=", "==", "<", "!=", ""]),
            EXPRS,
        ),
        max_size=3,
    ),
)
def test_generated_models(exprs, objective, constraints) -> None:
    text = HEADER
    for k, e in enumerate(exprs):
        text += f"expr e{k if k else ''} = {e};\n"
    if objective is not None:
        text += f"{objective[0]} obj: {objective[1]};\n"
    for k, (index, left, op, right) in enumerate(constraints):
        body = f"{left} {op} {right}" if op else left
        text += f"subject to c{k}{index}: {body};\n"
    event(outcome(text))


# ---------------------------------------------------------------------- corner cases
@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n\n",
        "# only a comment",
        ";",
        ";;;",
        "\x00",
        "\ufeffvar x;",
        "var x;\r\nminimize z: x;\r\n",
        "var\tx;\fminimize z:\tx;",
        "param n : int;\nparam A[99999999999999999999999];",
        "param a = 1e999;\nvar x[1e999];",
        "var x;\nminimize z: x^1e999;",
        "var x;\nminimize z: x^-0.0;",
        "var x;\nminimize z: x[0 .. 1e999];",
        "var x{1..inf};",
        "var x{-inf..0};",
        "param n : int;\nvar v[n];\nminimize z: sum(v[3 .. 1]);",
        "set S = {};\nvar x{S};",
        "param q = ones(-3);",
        "param é;",
        "var x;\nminimize z: " + "(" * 1000,
        "var x;\nminimize z: " + ")" * 1000,
        "var x;\nminimize z: " + "x" * 100000 + ";",
        "set I;\n" * 2000,
        "var x;\nminimize z: " + "1 + " * 300 + "x;",
        '"' * 50,
        "model m; model m;",
        "model set;",
        "s.t.",
        "s.t. s.t.: x;",
    ],
)
def test_corner_cases(text: str) -> None:
    outcome(text)


# ---------------------------------------------------------------------- the whole front end
# Spec and example models with their data, mutated (model text, data values, JSON text),
# through load -> check -> bind -> compile: a compiled model or a located DflError, nothing
# else. benchmarks/fuzz.py runs the same inputs by the hundred thousand (docs/reliability.md).
MODEL_CASES = cases()
PIPELINE = settings(
    max_examples=int(os.environ.get("DFL_FUZZ_PIPELINE", "300")),
    deadline=10_000,  # ms: a bind or compile that hangs is a failure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.skipif(not MODEL_CASES, reason="no spec or example models with data")
@PIPELINE
@given(st.randoms(use_true_random=False))
def test_mutated_models_and_data_through_the_front_end(rng: random.Random) -> None:
    text, data = mutated_case(rng, MODEL_CASES)
    try:
        event(front_end(text, data))
    except Crash as crash:
        raise AssertionError(f"{crash}\n--- model ---\n{text}\n--- data ---\n"
                             f"{data!r:.2000}") from crash


# The same inputs on to a solve (the backend `auto` picks; HiGHS against CVXPY for an LP, MILP
# or QP): a third as many, a solve costs more than the front end.
SOLVED = settings(PIPELINE, max_examples=max(1, PIPELINE.max_examples // 3), deadline=20_000)


@pytest.mark.skipif(not MODEL_CASES, reason="no spec or example models with data")
@SOLVED
@given(st.randoms(use_true_random=False))
def test_mutated_models_and_data_solved(rng: random.Random) -> None:
    text, data = mutated_case(rng, MODEL_CASES)
    try:
        event(solved_case(text, data))
    except (Crash, Mismatch) as finding:
        raise AssertionError(f"{type(finding).__name__}: {finding}\n--- model ---\n{text}\n"
                             f"--- data ---\n{data!r:.2000}") from finding


# ---------------------------------------------------------------------- HiGHS against CVXPY
# Small generated LPs, MILPs and QPs: both backends must agree on the status and, when both
# solve, on the objective (1e-5 relative; 1e-4 for MILPs, HiGHS's default MIP gap).
@PIPELINE
@given(st.randoms(use_true_random=False))
def test_generated_models_get_the_same_answer_from_highs_and_cvxpy(rng: random.Random) -> None:
    text, data = random_model(rng)
    try:
        event(cross_check(text, data))
    except (Crash, Mismatch) as finding:
        raise AssertionError(f"{type(finding).__name__}: {finding}\n--- model ---\n{text}\n"
                             f"--- data ---\n{data}") from finding
