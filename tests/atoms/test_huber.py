"""huber(x, M): CVXPY's values, its DCP facts, and a solve on every backend its forms reach —
a QP objective term (highs, pyomo, flexqp through the lowering; cvxpy natively), a conic row
(cvxpy), a smooth term of a STIEFEL objective (obcd, in torch)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.atoms.registry import ATOMS

rng = np.random.default_rng(5)
A = rng.normal(size=(15, 4))
B = A @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=15)
B[:3] += 6.0  # outliers: the tails are where huber differs from least squares
REGRESSION = ("param A[15, 4]; param b[15]; param M default 1;\nvar v[4];\n"
              "minimize fit: sum(huber(A @ v - b, M));")


def test_values_are_cvxpys():
    x = np.linspace(-3, 3, 13)
    for m in (0.5, 1.0, 2.0):
        want = cp.huber(cp.Constant(x), m).value
        assert np.allclose(ATOMS["huber"].numpy([x], m), want)
        inst = bind("param x{0..12}; param m; param h{i in 0..12} = huber(x[i], m);",
                    {"x": x.tolist(), "m": m})
        assert np.allclose(inst.entity("h").array(), want)
    assert np.allclose(ATOMS["huber"].numpy([x], None), cp.huber(cp.Constant(x)).value)


def test_a_minimized_huber_of_an_affine_argument_is_a_qp():
    model = dfl.parse(REGRESSION)
    assert model.klass.name == "QP"
    assert dfl.parse("var x; minimize o: huber(x - 1) + abs(x);").klass.name == "QP"


@pytest.mark.parametrize("m", [0.5, 1.0, 3.0])
def test_robust_regression_on_every_backend_its_forms_allow(m):
    inst = bind(REGRESSION, {"A": A.tolist(), "b": B.tolist(), "M": m})
    v = cp.Variable(4)
    want = cp.Problem(cp.Minimize(cp.sum(cp.huber(A @ v - B, m)))).solve()
    for backend in ("highs", "pyomo", "cvxpy", "flexqp"):
        sol = inst.solve(backend)
        assert sol.status == "optimal", backend
        assert sol.objective == pytest.approx(want, rel=1e-6), backend
        fit = ATOMS["huber"].numpy([A @ sol.value("v") - B], m).sum()
        assert fit == pytest.approx(want, rel=1e-5), backend  # the point, not only the value


def test_a_huber_row_is_conic():
    inst = bind("var x; maximize o: x; subject to c: huber(x - 1, 2) <= 1;")
    assert inst.klass.name == "SOCP"
    assert inst.solve("cvxpy").objective == pytest.approx(2.0, abs=1e-6)  # (x - 1)² <= 1
    with pytest.raises(dfl.DflError, match="doesn't accept"):
        inst.solve("highs")


def test_huber_in_a_stiefel_objective_is_smooth():
    C = rng.normal(size=(6, 2))
    inst = bind("param C[6, 2]; var X[6, 2] in stiefel;\n"
                "minimize o: sum(huber(X - C, 0.3));", {"C": C.tolist()})
    assert inst.klass.name == "STIEFEL"
    sol = inst.solve("obcd", seed=0, time_limit=10)
    X = sol.value("X")
    assert np.allclose(X.T @ X, np.eye(2), atol=1e-8)
    assert sol.objective == pytest.approx(ATOMS["huber"].numpy([X - C], 0.3).sum())
    start = ATOMS["huber"].numpy([np.eye(6, 2) - C], 0.3).sum()
    assert sol.objective < start


@pytest.mark.parametrize(("text", "message"), [
    ("var x; maximize o: huber(x);", "objective is not concave"),
    ("var x; param m; minimize o: huber(x, m);", "threshold M must be >= 0"),
    ("var x; param m{1..2}; minimize o: huber(x, m);", "must be a scalar"),
    ("var x; var y; minimize o: huber(x, y);", "argument 2 of `huber` must be data"),
])
def test_refusals_are_located(text, message):
    with pytest.raises(dfl.DflError, match=message) as info:
        bind(text, {"m": -1.0} if "param m;" in text else {"m": [1, 2]}).solve("cvxpy")
    assert info.value.pos is not None and info.value.pos.line == 1
