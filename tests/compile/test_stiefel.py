"""The Stiefel form: f split into a Kronecker quadratic (or a torch function), h into λ₁, λ₀ and
X >= 0; `nnz` in the language."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind

from dfl_dsl.compile.stiefel import KronQuadratic, TorchSmooth, build_stiefel
from dfl_dsl.errors import DflError

_HEAD = """
param n : int;
param r : int;
param A[n, n];
param B[n, r];
param D[r, r];
param lam >= 0;
"""


def _inst(var: str, objective: str, n: int = 6, r: int = 2, sense: str = "minimize"):
    rng = np.random.default_rng(1)
    data = {"n": n, "r": r, "A": rng.standard_normal((n, n)).tolist(),
            "B": rng.standard_normal((n, r)).tolist(), "D": np.diag([1.0, 3.0]).tolist(),
            "lam": 0.25}
    inst = bind(_HEAD + var + f"\n{sense} loss: {objective};\n", data)
    return inst, {k: np.asarray(v) for k, v in data.items()}


def _point(n: int = 6, r: int = 2, seed: int = 2) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((n, r)))[0]


@pytest.mark.parametrize(("objective", "reference"), [
    ("-0.5 * trace(X.T @ A.T @ A @ X) + lam * norm1(X)",
     lambda X, d: -0.5 * np.trace(X.T @ d["A"].T @ d["A"] @ X) + 0.25 * np.abs(X).sum()),
    ("sum_squares(A @ X - B) + 2 * lam * nnz(X)",
     lambda X, d: ((d["A"] @ X - d["B"]) ** 2).sum() + 0.5 * np.count_nonzero(X)),
    ("trace(X.T @ A.T @ A @ X @ D) + sum(B * X)",
     lambda X, d: np.trace(X.T @ d["A"].T @ d["A"] @ X @ d["D"]) + (d["B"] * X).sum()),
])
def test_kronecker_quadratics_and_penalties(objective, reference):
    inst, data = _inst("var X[n, r] in stiefel;", objective)
    form = build_stiefel(inst)
    assert isinstance(form.smooth, KronQuadratic)
    X = _point()
    X[0, 0] = 0.0  # an exact zero for nnz
    assert form.value(X) == pytest.approx(reference(X, data), rel=1e-12)


def test_weights_and_nonnegativity():
    inst, _ = _inst("var X[n, r] >= 0 in stiefel;",
                    "sum_squares(A @ X) + 3 * norm1(X) + lam * nnz(X) + lam * norm1(X)")
    form = build_stiefel(inst)
    assert (form.l1, form.l0, form.nonneg) == (3.25, 0.25, True)
    assert form.h(-np.abs(_point())) == np.inf


def test_not_quadratic_goes_to_torch_and_matches_numpy():
    inst, data = _inst("var X[n, r] in stiefel;", "sum(exp(A @ X)) + sum_squares(X.T @ X @ D)")
    form = build_stiefel(inst)
    assert isinstance(form.smooth, TorchSmooth)
    X = _point()
    want = np.exp(data["A"] @ X).sum() + ((X.T @ X @ data["D"]) ** 2).sum()
    assert form.value(X) == pytest.approx(want, rel=1e-12)
    Xt = torch.tensor(X, requires_grad=True)
    form.smooth.fn(Xt).backward()
    assert Xt.grad is not None and torch.isfinite(Xt.grad).all()


@pytest.mark.parametrize("objective", [
    "0.5 * trace(X.T @ A.T @ A @ X) - lam * norm1(X)",  # a Kronecker quadratic
    "sum(exp(A @ X)) - 2 * lam * nnz(X)",  # through torch
])
def test_a_maximized_model_is_held_as_its_negation(objective):
    """OBCD minimizes: the form holds −(f − h), h's weights stay nonnegative, and `maximize`
    tells the backend to report the value in the model's sense."""
    maxed = build_stiefel(_inst("var X[n, r] in stiefel;", objective, sense="maximize")[0])
    negated = build_stiefel(_inst("var X[n, r] in stiefel;", f"-({objective})")[0])
    assert maxed.maximize and not negated.maximize
    assert (maxed.l1, maxed.l0) == (negated.l1, negated.l0) and maxed.l1 + maxed.l0 > 0
    X = _point()
    assert maxed.value(X) == pytest.approx(negated.value(X), rel=1e-12)


def test_a_bound_other_than_zero_is_refused_in_the_model_file():
    """Only the data says the bound is 1: the error is raised here, and (it was `<input>:8:5`)
    names the model's file like the checker's errors."""
    inst, _ = _inst("var X[n, r] >= 1 in stiefel;", "sum_squares(A @ X)")
    with pytest.raises(DflError, match=">= 0") as info:
        build_stiefel(inst)
    assert info.value.filename == inst.model.filename and info.value.pos.line == 8


def test_nnz_in_the_language():
    """`nnz` counts nonzero entries of data and is the L0 atom of a stiefel objective."""
    inst = bind("param A[2, 3];\nparam k = nnz(A);\nvar X[3, 2] in stiefel;\n"
                "minimize loss: k * nnz(X);\n", {"A": [[0, 1, 2], [0, 0, 3]]})
    assert float(inst.entity("k").data[0]) == 3.0
    form = build_stiefel(inst)
    assert form.l0 == 3.0 and form.l1 == 0.0
    assert form.value(np.eye(3)[:, :2]) == 6.0
