"""log_sum_exp(x): CVXPY's values, stable forms, and a solve on every backend its forms
reach — conic (cvxpy: exponential cone), in an objective and a row, and a smooth term of a
STIEFEL objective (obcd, in torch)."""

from __future__ import annotations

import re

import cvxpy as cp
import numpy as np
import pytest
import torch
from _helpers import bind
from scipy.special import logsumexp

import dfl_dsl as dfl
from dfl_dsl.atoms.groups import Groups
from dfl_dsl.atoms.registry import ATOMS

rng = np.random.default_rng(11)


def test_values_and_a_computed_param():
    v = rng.normal(size=5)
    inst = bind("param v{1..5}; param l = log_sum_exp(v);", {"v": v.tolist()})
    assert inst.entity("l").array() == pytest.approx(logsumexp(v))
    assert cp.log_sum_exp(cp.Constant(v)).value == pytest.approx(logsumexp(v))


def test_the_torch_form_is_stable_and_its_gradient_is_the_softmax():
    v = torch.tensor([1000.0, 999.0, -5.0, 3.0], dtype=torch.float64, requires_grad=True)
    out = ATOMS["log_sum_exp"].torch_groups(v, Groups(np.array([0, 2, 4])), None)
    assert np.isfinite(out.detach().numpy()).all()
    assert out.detach().numpy() == pytest.approx([logsumexp([1000, 999]), logsumexp([-5, 3])])
    out.sum().backward()
    soft = np.concatenate([np.exp([0.0, -1.0]) / np.exp([0.0, -1.0]).sum(),
                           np.exp([-8.0, 0.0]) / np.exp([-8.0, 0.0]).sum()])
    assert v.grad.numpy() == pytest.approx(soft)


def test_an_objective_is_conic_and_cvxpy_solves_it():
    A, b = rng.normal(size=(6, 3)), rng.normal(size=6)
    inst = bind("param A[6, 3]; param b[6]; var x[3];\n"
                "minimize o: log_sum_exp(A @ x - b) + sum_squares(x);",
                {"A": A.tolist(), "b": b.tolist()})
    assert inst.klass.name == "SOCP"
    x = cp.Variable(3)
    want = cp.Problem(cp.Minimize(cp.log_sum_exp(A @ x - b) + cp.sum_squares(x))).solve()
    assert inst.solve("cvxpy").objective == pytest.approx(want, rel=1e-6)
    with pytest.raises(dfl.DflError, match="doesn't accept"):
        inst.solve("highs")


def test_a_soft_maximum_row():
    # log Σ exp(x_i) <= 1 with Σ x_i maximal: every x_i = 1 - log n
    inst = bind("param n : int; var x[n]; maximize o: sum(x);\n"
                "subject to soft: log_sum_exp(x) <= 1;", {"n": 3})
    assert inst.solve("cvxpy").objective == pytest.approx(3 * (1 - np.log(3)), abs=1e-6)


def test_log_sum_exp_in_a_stiefel_objective_is_smooth():
    C = rng.normal(size=(5, 2))
    inst = bind("param C[5, 2]; var X[5, 2] in stiefel;\n"
                "minimize o: log_sum_exp(3 * X - C);", {"C": C.tolist()})
    sol = inst.solve("obcd", seed=0, time_limit=10)
    X = sol.value("X")
    assert np.allclose(X.T @ X, np.eye(2), atol=1e-8)
    assert sol.objective == pytest.approx(logsumexp(3 * X - C))
    assert sol.objective < logsumexp(3 * np.eye(5, 2) - C)


def test_maximizing_it_is_refused():
    with pytest.raises(dfl.DflError, match="objective is not concave"):
        dfl.parse("var x{1..3}; maximize o: log_sum_exp(x);")


@pytest.mark.parametrize(("body", "shape"), [("log_sum_exp(v)", "[0]"),
                                             ("log_sum_exp(M)", "[0, 0]")])
def test_of_an_empty_array_is_a_located_error(body, shape):
    # log 0: scipy raised IndexError on the empty 0 x 0 param, CVXPY "Cannot combine empty
    # list of tensors" on the empty variable
    with pytest.raises(dfl.DflError, match=re.escape(f"of an empty array (shape {shape})")) as info:
        bind(f"param k : int; param M[k, k]; var v[k];\nminimize f: {body};\n",
             {"k": 0, "M": []}).compile()
    assert (info.value.pos.line, info.value.pos.column) == (2, 13)
