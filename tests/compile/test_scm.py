"""The SCM form: what build_scm recognizes in a model, values, and errors for what it can't."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind, spec_dir

import dfl_dsl as dfl
from dfl_dsl.compile.scm import LOG1P, MIN, SQRT, SCMForm, build_scm, concave
from dfl_dsl.errors import DflError


@pytest.mark.parametrize(("name", "kind"), [("coverage", "cardinality"),
                                            ("coverage_knapsack", "knapsack"),
                                            ("coverage_partition", "partition")])
def test_spec_models_are_recognized(name, kind):
    spec = spec_dir()
    form = build_scm(dfl.load(spec / f"{name}.opt").bind(spec / f"{name}.json"))
    assert form.kind == kind
    assert form.A.shape[1] == form.n and (form.A.data >= 0).all()
    if kind == "partition":
        assert (form.groups >= 0).all() and len(form.group_caps) == form.groups.max() + 1


def test_zeros_of_dense_data_are_not_stored():
    """feat given densely with most entries 0: A keeps only the nonzeros (it kept all 24)."""
    X = np.zeros((6, 4))
    X[[0, 2, 5], [1, 3, 0]] = [1.0, 2.0, 3.0]
    inst = bind("set I; set F; param feat{I, F} >= 0; param k : int;\nvar x{I} binary;\n"
                "maximize c: sum{f in F} sqrt(sum{i in I} feat[i, f] * x[i]);\n"
                "s.t. card: sum{i in I} x[i] <= k;\n",
                {"I": list(range(6)), "F": list(range(4)), "feat": X.tolist(), "k": 2})
    form = build_scm(inst)
    assert form.A.nnz == 3 and np.allclose(form.A.toarray(), X.T)


def test_value_matches_the_formula():
    X = np.random.default_rng(0).random((6, 4))
    form = SCMForm.from_features(X, k=2)
    x = np.array([1, 0, 1, 0, 0, 1.0])
    assert form.value(x)[0] == pytest.approx(np.sqrt(x @ X).sum())
    assert not form.feasible(x) and form.feasible(np.array([1, 0, 1, 0, 0, 0.0]))


def test_numpy_style_model_with_a_subtracted_modular_part():
    """`sum(log1p(A @ x)) - 0.4 * sum(x)` was refused as "a nonlinear objective" (the
    classifier knew only `sum{...}` and `+`); it is c0 + gᵀx + Σ_r φ(a_rᵀx), g = -0.4."""
    A = np.random.default_rng(3).random((3, 5))
    inst = bind("param A[3, 5] >= 0;\nvar x[5] binary;\n"
                "maximize v: sum(log1p(A @ x)) - 0.4 * sum(x);\ns.t. k: sum(x) <= 2;\n",
                {"A": A.tolist()})
    form = build_scm(inst)
    x = np.array([1, 0, 0, 1, 0.0])
    assert form.kind == "cardinality" and np.allclose(form.g, -0.4)
    assert form.value(x)[0] == pytest.approx(np.log1p(A @ x).sum() - 0.8)


def test_an_item_fixed_at_zero_is_out_of_every_feasible_set():
    """`x[2] <= 0` makes item 2's upper bound 0 and its cost inf; a set without it is
    feasible (inf · 0 made the cost a nan, and the solve an internal error), one with it not."""
    inst = bind("set I; param a{I} >= 0;\nvar x{I} binary;\n"
                "maximize f: sum{i in I} sqrt(a[i] * x[i] + 1);\n"
                "s.t. k: sum{i in I} x[i] <= 2;\ns.t. out: x[2] <= 0;\n",
                {"I": [1, 2, 3, 4], "a": [1.0, 5.0, 3.0, 2.0]})
    form = build_scm(inst)
    assert form.upper.tolist() == [1.0, 0.0, 1.0, 1.0]
    assert form.feasible(np.array([0, 0, 1, 1.0])) and not form.feasible(np.array([0, 1, 1, 0.0]))
    sol = inst.solve("aapga", seed=0)
    assert sol.x.tolist() == [0.0, 0.0, 1.0, 1.0]  # the optimum: sqrt 1 + 1 + 4 + 3
    assert sol.objective == pytest.approx(1.0 + 1.0 + 2.0 + np.sqrt(3.0))


def test_concave_by_row_kind():
    t = np.array([[4.0, 3.0, 5.0, -1.0]])
    phi = np.array([SQRT, LOG1P, MIN, SQRT])
    cap = np.array([0.0, 0.0, 2.0, 0.0])
    assert np.allclose(concave(t, phi, cap), [[2.0, np.log1p(3.0), 2.0, 0.0]])


def test_overlapping_groups_are_a_user_error():
    text = """
    set I; param a{I} >= 0;
    var x{I} binary;
    maximize f: sqrt(sum{i in I} a[i] * x[i]);
    subject to c1: x[1] + x[2] <= 1;
    subject to c2: x[2] + x[3] <= 1;
    """
    inst = bind(text, {"I": [1, 2, 3], "a": [1.0, 2.0, 3.0]})
    with pytest.raises(DflError, match="disjoint"):
        build_scm(inst)


@pytest.mark.parametrize("tiny", [1e-320, 1e-200, 1e200])
def test_a_knapsack_cost_beyond_the_relaxations_arithmetic_is_a_located_error(tiny):
    # fuzz (`solved` 4011412): a cost of 1e-320 (next to a budget of 10) made the projection's
    # 1/c inf, and the answer broke the budget
    text = """set I; param a{I} >= 0; param c{I} > 0;
var x{I} binary;
maximize f: sqrt(sum{i in I} a[i] * x[i]);
subject to spend: sum{i in I} c[i] * x[i] <= 10;
"""
    inst = bind(text, {"I": [1, 2, 3], "a": [1.0, 2.0, 3.0], "c": [2.0, tiny, 3.0]})
    with pytest.raises(DflError, match=r"constraint `spend`: the cost \S+ of x\[2\] is outside"
                       ) as info:
        inst.solve("aapga")
    assert (info.value.pos.line, info.value.pos.column) == (4, 12)
    assert info.value.filename == "m.opt"


def test_knapsack_costs_within_the_range_solve():
    text = """set I; param a{I} >= 0; param c{I} > 0;
var x{I} binary;
maximize f: sqrt(sum{i in I} a[i] * x[i]);
subject to spend: sum{i in I} c[i] * x[i] <= 1e-100;
"""
    inst = bind(text, {"I": [1, 2, 3], "a": [1.0, 2.0, 3.0], "c": [1e-100, 2e-100, 4e-100]})
    sol = inst.solve("aapga")
    assert sol.status == "feasible" and sol.objective == pytest.approx(3 ** 0.5)
