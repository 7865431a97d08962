"""Model classes (LANGUAGE.md §4): the acceptance models and small hand-made ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dfl_dsl as dfl

SPEC = Path(__file__).parents[2] / ".." / "shared" / "spec"

# model -> (class name, tags, scenarios, predicted)
SPEC_CLASSES = {
    "transport": ("LP", (), False, False),
    "knapsack": ("MILP", (), False, True),
    "shortest_path": ("LP", (), False, True),
    "portfolio": ("SOCP", (), False, True),
    "qp": ("QP", (), False, True),
    "energy_schedule": ("MILP", (), True, False),
    "sparse_pca": ("STIEFEL", (), False, False),
    "coverage": ("SCM", (), False, False),
    "coverage_knapsack": ("SCM", (), False, False),
    "coverage_partition": ("SCM", (), False, False),
    "simplex_lsq": ("QP", ("SMOOTH-POLYTOPE",), False, False),
}
SPEC_LABELS = {
    "energy_schedule": "MILP with scenarios",
    "simplex_lsq": "QP (also SMOOTH-POLYTOPE)",
}


@pytest.mark.parametrize("name", sorted(SPEC_CLASSES))
def test_spec_model_class(name: str) -> None:
    path = SPEC / f"{name}.opt"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    klass = dfl.load(path).klass
    want_name, want_tags, scenarios, predicted = SPEC_CLASSES[name]
    assert klass.name == want_name
    assert klass.tags == want_tags
    assert klass.scenarios is scenarios
    assert klass.predicted is predicted
    assert klass.label == SPEC_LABELS.get(name, want_name)
    assert klass.description


def test_every_spec_model_is_listed() -> None:
    if not SPEC.is_dir():
        pytest.skip("the acceptance models (../shared/spec) are absent")
    assert {p.stem for p in SPEC.glob("*.opt")} <= set(SPEC_CLASSES)


# ---------------------------------------------------------------------- small models
HEAD = """\
set I;
param n : int;
param c{I};
param cw{I} >= 0;
param P[n, n] psd;
param A[n, n];
"""


@pytest.mark.parametrize(
    ("body", "label"),
    [
        # linear
        ("var x{I} >= 0;\nminimize o: sum{i in I} c[i] * x[i];\ns.t. k: sum{i in I} x[i] >= 1;",
         "LP"),
        ("var x{I} >= 0;\ns.t. k: sum{i in I} x[i] >= 1;", "LP"),  # feasibility only
        ("var x{I} binary;\nmaximize o: sum{i in I} c[i] * x[i];", "MILP"),
        ("var x{I} integer >= 0;\nminimize o: sum{i in I} c[i] * x[i];", "MILP"),
        # piecewise-linear objectives are LP-representable (epigraph)
        ("var x{I};\nminimize o: sum{i in I} abs(x[i] - c[i]);", "LP"),
        ("var v[n];\nminimize o: norm1(v) + norm_inf(v);", "LP"),
        ("var x{I};\nminimize o: max{i in I} x[i];", "LP"),
        ("var x{I};\nmaximize o: min{i in I} x[i];", "LP"),
        ("var x{I} binary;\nminimize o: sum{i in I} pos(c[i] - x[i]);", "MILP"),
        # quadratic
        ("var v[n];\nminimize o: quad_form(v, P) + sum(v);", "QP"),
        ("var v[n];\nminimize o: sum_squares(A @ v - 1);", "QP"),
        ("var x;\nminimize o: (x - 3)^2;", "QP"),
        ("var v[n];\nmaximize o: -quad_form(v, P);", "QP"),
        ("var v[n] binary;\nminimize o: quad_form(v, P);", "MIQP"),
        ("var v[n] >= 0;\nminimize o: sum_squares(v);\ns.t. k: sum(v) == 1;",
         "QP (also SMOOTH-POLYTOPE)"),
        ("var v[n] in [0, 1];\nminimize o: sum_squares(A @ v);", "QP (also SMOOTH-POLYTOPE)"),
        # a piecewise-linear term's epigraph leaves a QP (the lasso)
        ("var v[n];\nminimize o: sum_squares(A @ v - 1) + norm1(v);", "QP"),
        # conic / general convex
        ("var v[n];\nminimize o: norm2(A @ v - 1);", "SOCP"),
        ("var x >= 0;\nmaximize o: log(x) - x;", "SOCP"),
        ("var x;\nminimize o: exp(x);", "SOCP"),
        # smooth over the simplex, but not quadratic: the fw backend (quadratic forms) can't
        # take it, so no SMOOTH-POLYTOPE tag (it had one, and `--backend fw` failed later)
        ("var v[n] >= 0;\nminimize o: sum(exp(v));\ns.t. k: sum(v) == 1;", "SOCP"),
        ("var v[n];\nminimize o: sum(v);\ns.t. k: quad_form(v, P) <= 1;", "SOCP"),
        ("var x;\nminimize o: x;\ns.t. k: abs(x) <= 1;", "LP"),  # an epigraph: linear rows
        ("var v[n];\nminimize o: sum(v);\ns.t. k: norm2(v) <= 1;", "SOCP"),
        ("var x >= 0;\nminimize o: x;\ns.t. k: sqrt(x) >= 1;", "SOCP"),
        # submodular
        ("var x{I} binary;\nmaximize o: sqrt(sum{i in I} cw[i] * x[i]);\n"
         "s.t. k: sum{i in I} x[i] <= 2;", "SCM"),
        ("var x{I} binary;\nmaximize o: 2 * log1p(sum{i in I} cw[i] * x[i]) + "
         "min(sum{i in I} x[i], 3);", "SCM"),
        # the numpy style, weights by `@`, and a modular part added or subtracted
        ("param W[2, n] >= 0;\nvar x[n] binary;\nmaximize o: sum(log1p(W @ x)) - 0.4 * sum(x);",
         "SCM"),
        ("param W[2, n] >= 0;\nvar x[n] binary;\nmaximize o: ones(2) @ sqrt(W @ x) + c[1];",
         "SCM"),
        # stiefel
        ("var X[n, 2] in stiefel;\nminimize o: -trace(X.T @ A @ X) + 0.1 * norm1(X);", "STIEFEL"),
        ("var X[n, 2] >= 0 in stiefel;\nminimize o: sum_squares(A @ X);", "STIEFEL"),
        # PCA written as it is usually stated, the penalty subtracted; a weight of unknown sign
        # is checked against the data when the form is built
        ("var X[n, 2] in stiefel;\nmaximize o: trace(X.T @ A @ X) - 0.1 * norm1(X);", "STIEFEL"),
        ("param lam;\nvar X[n, 2] in stiefel;\nminimize o: -trace(X.T @ A @ X) + lam * nnz(X);",
         "STIEFEL"),
    ],
)
def test_small_model_class(body: str, label: str) -> None:
    assert dfl.parse(HEAD + body + "\n").klass.label == label


def test_predicted_and_scenario_flags() -> None:
    predicted = dfl.parse(HEAD + "param p{I} : predicted;\nvar x{I} >= 0;\n"
                          "minimize o: sum{i in I} p[i] * x[i];\n").klass
    assert predicted.predicted and not predicted.scenarios and predicted.label == "LP"
    scenarios = dfl.parse(HEAD + "param u{I} : uncertain;\nvar x{I} binary;\n"
                          "minimize o: cvar(0.9, sum{i in I} u[i] * x[i]);\n").klass
    assert scenarios.scenarios and scenarios.label == "MILP with scenarios"
    mean = dfl.parse(HEAD + "param u{I} : uncertain;\nvar x{I} >= 0;\n"
                     "minimize o: sum{i in I} u[i] * x[i];\n"
                     "s.t. k: sum{i in I} x[i] == 1;\n").klass
    assert mean.label == "LP with scenarios"


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("var x;\nminimize o:\n  sqrt(x);", 3, "objective is not convex"),
        ("var x;\nmaximize o:\n  x^2;", 3, "objective is not concave"),
        ("var x;\nminimize o: x^2\n  - x^4;", 3, "`x^4` is convex, subtracted from a minimized"),
        ("var x{I} binary;\nminimize o:\n  sum{i in I} exp(x[i]);", 2,
         "mixed-integer models with a nonlinear objective"),
        ("var x binary;\nminimize o: x;\ns.t. k:\n  x^2 <= 1;", 4,
         "mixed-integer models with nonlinear constraints"),
        ("var X[n, 2] in stiefel;\nvar y;\nminimize o: norm1(X);", 2,
         "can't have other variables"),
        ("var X[n, 2] in stiefel;\nmaximize o: trace(X.T @ A @ X)\n  + 0.5 * norm1(X);", 3,
         "subtracted from a maximized objective, and this one is added"),
        ("var X[n, 2] in stiefel;\nminimize o: -trace(X.T @ A @ X)\n  + -0.5 * norm1(X);", 3,
         "nonsmooth part"),
        ("var X[n, 2] in stiefel;\nminimize o:\n  norm1(X) + norm2(X);", 3, "nonsmooth part"),
        ("var X[n, 2] in stiefel;\nminimize o: -trace(X.T @ A @ X)\n  - 0.5 * norm1(X);", 3,
         "this one is subtracted"),
    ],
)
def test_refused_models(body: str, line: int, message: str) -> None:
    """`line` counts from the first line of `body`."""
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(HEAD + body + "\n", "m.opt")
    assert message in info.value.message
    assert info.value.pos.line == HEAD.count("\n") + line, str(info.value)


# ------------------------------------------------ piecewise-linear atoms in constraints
@pytest.mark.parametrize(
    ("body", "label"),
    [
        ("var v[n];\nmaximize o: sum(v);\ns.t. k: norm1(v) <= 2;", "LP"),
        ("var v[n];\nmaximize o: sum(v);\ns.t. k: norm_inf(v - 1) <= 2;", "LP"),
        ("var x;\nvar y;\nmaximize o: x + y;\ns.t. k: max(x, y) <= 3;", "LP"),
        ("var x;\nvar y;\nminimize o: x + y;\ns.t. k: min(x, y) >= 1;", "LP"),
        ("var x;\nvar y;\nminimize o: x + y;\ns.t. k: 1 <= min(x, y);", "LP"),
        ("var x;\nvar y;\nminimize o: x + y;\ns.t. k: -min(x, y) <= -1;", "LP"),
        ("var x{I};\nvar s{I} >= 0;\nminimize o: sum{i in I} s[i];\n"
         "s.t. k{i in I}: pos(1 - x[i]) <= s[i];", "LP"),
        ("var x{I};\nvar t;\nminimize o: t;\ns.t. k: max{i in I} abs(x[i] - 1) <= t;", "LP"),
        ("var x{I} integer;\nmaximize o: sum{i in I} x[i];\n"
         "s.t. k: sum{i in I} abs(x[i] - 0.5) <= 3;", "MILP"),
        ("var x binary;\nvar y;\nminimize o: abs(y);\ns.t. k: max(x, y) <= 3;", "MILP"),
        ("var v[n];\nminimize o: sum_squares(v);\ns.t. k: norm1(v - 1) <= 1;", "QP"),
        # not piecewise linear: still conic
        ("var v[n];\nminimize o: sum(v);\ns.t. k: norm2(v) <= 1;", "SOCP"),
        ("var v[n];\nminimize o: sum(v);\ns.t. k: norm1(v) + norm2(v) <= 1;", "SOCP"),
    ],
)
def test_piecewise_linear_constraints_are_linear(body: str, label: str) -> None:
    assert dfl.parse(HEAD + body + "\n").klass.label == label


@pytest.mark.parametrize(
    ("body", "line", "column", "message"),
    [
        # two-sided rows: the side that is not convex is named and pointed at
        ("var x;\nminimize o: x;\ns.t. k: -1 <= abs(x) <= 1;", 3, 9,
         "`abs(x)` is convex, so only its upper bound is; the lower bound (left side"),
        ("var x;\nminimize o: x;\ns.t. k: 3 >= abs(x) >= 1;", 3, 24,
         "the lower bound (right side of the chain) is not"),
        ("var x;\nvar y;\nminimize o: x;\ns.t. k: 1 <= min(x, y) <= 4;", 4, 27,
         "`min(x, y)` is concave, so only its lower bound is; the upper bound (right side"),
        # `==` with an atom is not convex
        ("var x;\nminimize o: x;\ns.t. k: abs(x) == 1;", 3, 9, "(left side of `==`)"),
        # the wrong direction
        ("var x;\nminimize o: x;\ns.t. k: abs(x) >= 1;", 3, 9, "constraint is not convex"),
        ("var x;\nvar y;\nminimize o: x;\ns.t. k: min(x, y) <= 1;", 4, 9,
         "constraint is not convex"),
        # integers with a constraint that is not piecewise linear
        ("var v[n] integer;\nminimize o: sum(v);\ns.t. k: norm2(v) <= 1;", 3, 9,
         "mixed-integer models with nonlinear constraints"),
    ],
)
def test_refused_piecewise_linear_constraints(body, line, column, message) -> None:
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(HEAD + body + "\n", "m.opt")
    assert message in info.value.message
    assert info.value.pos.line == HEAD.count("\n") + line, str(info.value)
    assert info.value.pos.column == column, str(info.value)


def test_chain_hint_keeps_the_convex_side() -> None:
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(HEAD + "var x;\nminimize o: x;\ns.t. k: -1 <= abs(x) <= 1;\n", "m.opt")
    assert "keep `abs(x) <= 1` (linear, by an epigraph)" in info.value.hint


def test_scm_objective_with_a_piecewise_linear_constraint_is_refused() -> None:
    body = ("var x{I} binary;\nmaximize o: sqrt(sum{i in I} x[i]);\n"
            "s.t. k: max(x[\"a\"], x[\"b\"]) <= 1;\n")
    with pytest.raises(dfl.DflError, match="takes affine constraints only"):
        dfl.parse(HEAD + body, "m.opt")


PRODUCTS = "set S;\nparam q{S, S};\nparam lam >= 0;\nparam p{S} : predicted;\nvar x{S};\n"


@pytest.mark.parametrize(("body", "label"), [
    ("minimize o: sum{i in S, j in S} q[i, j] * x[i] * x[j];", "QP"),
    ("maximize o: sum{i in S} x[i] - sum{i in S, j in S} q[i, j] * x[i] * x[j];", "QP"),
    ("minimize o: sum{i in S, j in S} q[i, j] * x[i] * x[j] + lam * norm1(x);", "QP"),
    ("minimize o: sum{i in S} (x[i] * x[i] + sum{j in S} q[i, j] * x[i] * x[j]) "
     "+ sum{i in S} p[i] * x[i];", "QP"),
])
def test_products_of_variables_are_checked_at_bind(body: str, label: str) -> None:
    model = dfl.parse(PRODUCTS + body)
    assert model.klass.name == label and model.klass.psd_at_bind


@pytest.mark.parametrize("body", [
    "var x;\nminimize o: x * x;",
    "param a;\nvar x;\nminimize o: a * x^2;",  # (a >= 0 is the data's to show)
    "param n : int;\nparam A[n, n];\nvar v[n];\nminimize o: quad_form(v, A);",
])
def test_quadratics_of_unknown_curvature_are_checked_at_bind(body: str) -> None:
    model = dfl.parse(body)
    assert model.klass.name == "QP" and model.klass.psd_at_bind


def test_a_quadratic_the_dcp_rules_prove_is_not_checked_again() -> None:
    model = dfl.parse(PRODUCTS + "minimize o: sum{i in S} x[i]^2 + lam * norm1(x);")
    assert model.klass.name == "QP" and not model.klass.psd_at_bind


@pytest.mark.parametrize(("body", "message"), [
    # a part the DCP rules prove wrong stays refused by them
    ("minimize o: sum{i in S, j in S} q[i, j] * x[i] * x[j] - sum{i in S} x[i]^2;",
     "`x[i]^2` is convex, subtracted from a minimized objective"),
    ("minimize o: sum{i in S, j in S} q[i, j] * x[i] * x[j] - norm1(x);",
     "`norm1` of an affine expression is convex, subtracted from a minimized objective"),
    # a product with a predicted param is no fixed Q
    ("minimize o: sum{i in S, j in S} p[i] * x[i] * x[j];", "predicted"),
])
def test_products_beside_a_wrong_part_are_refused(body: str, message: str) -> None:
    with pytest.raises(dfl.DflError, match=re.escape(message)) as info:
        dfl.parse(PRODUCTS + body)
    assert info.value.pos.line == 6


def test_an_atom_is_described_by_the_argument_that_holds_the_variables() -> None:
    """`maximize quad_form(w, Sigma)` read "`quad_form` of a constant expression is convex":
    the last argument (the constant matrix) was described, not the variables' one."""
    with pytest.raises(dfl.DflError, match=re.escape(
            "`quad_form` of an affine expression is convex, maximized here")):
        dfl.parse("param n : int;\nparam S[n, n] psd;\nvar w[n];\nmaximize r: quad_form(w, S);")
