"""The numerical PSD check of quadratic objectives written as sums of products: its
eigenvalues against numpy's, the models it admits solved alike by every QP backend and by an
independent CVXPY model, and the located error for data that make the objective nonconvex."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import dfl_dsl as dfl
from dfl_dsl.compile import convexity
from dfl_dsl.compile.convexity import smallest_eigenvalue


def _block_diagonal(rng, sizes, gaps=3):
    """A symmetric sparse matrix of random blocks (indefinite ones too), interleaved with
    unused rows and columns, its rows shuffled."""
    blocks = []
    for k in sizes:
        m = rng.normal(size=(k, k))
        blocks.append((m + m.T) / 2)
        blocks.append(np.zeros((gaps, gaps)))
    dense = sp.block_diag(blocks).toarray()
    perm = rng.permutation(len(dense))
    return dense[np.ix_(perm, perm)]


@pytest.mark.parametrize("seed", range(4))
def test_smallest_eigenvalue_against_numpy(seed, monkeypatch):
    monkeypatch.setattr(convexity, "DENSE_LIMIT", 40)  # the 70-block goes through ARPACK
    rng = np.random.default_rng(seed)
    dense = _block_diagonal(rng, [1, 1, 2, 2, 2, 5, 9, 70][: 5 + seed])
    used = np.flatnonzero(np.abs(dense).sum(axis=0))
    want = np.linalg.eigvalsh(dense[np.ix_(used, used)])[0]
    assert smallest_eigenvalue(sp.csr_array(dense)) == pytest.approx(want, abs=1e-7)


MARKOWITZ = """
set S;
param mu{S};
param cov{S, S};
param target;
var x{S} >= 0;
minimize risk: sum{i in S, j in S} cov[i, j] * x[i] * x[j];
subject to budget: sum{i in S} x[i] == 1;
subject to gain: sum{i in S} mu[i] * x[i] >= target;
"""


def _markowitz_data(rng, n=6):
    f = rng.normal(size=(n, 3))
    cov = f @ f.T + np.diag(rng.uniform(0.01, 0.1, n))
    names = [f"s{k}" for k in range(n)]
    return {"S": names, "mu": rng.uniform(0.02, 0.12, n).tolist(), "cov": cov.tolist(),
            "target": 0.07}, cov


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy", "flexqp"])
def test_a_sum_of_products_is_a_qp_on_every_backend(backend):
    rng = np.random.default_rng(7)
    data, cov = _markowitz_data(rng)
    x = cp.Variable(len(cov), nonneg=True)
    ref = cp.Problem(cp.Minimize(cp.quad_form(x, cov)),
                     [cp.sum(x) == 1, np.array(data["mu"]) @ x >= data["target"]])
    ref.solve()
    inst = dfl.parse(MARKOWITZ).bind(data)
    assert inst.klass.name == "QP"
    sol = inst.solve(backend)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(ref.value, rel=1e-5, abs=1e-7)


def test_products_and_norm1_stay_a_qp_for_highs_and_pyomo():
    """A concave utility (maximized) with an L1 penalty: one QP with the penalty's epigraph
    rows, for HiGHS and Pyomo, as an independent CVXPY model finds it."""
    text = """set S; param cov{S, S}; param lam >= 0; var x{S};
              maximize util: sum{i in S} x[i] - sum{i in S, j in S} cov[i, j] * x[i] * x[j]
                             - lam * norm1(x);"""
    rng = np.random.default_rng(3)
    data, cov = _markowitz_data(rng, 5)
    data = {"S": data["S"], "cov": data["cov"], "lam": 0.3}
    x = cp.Variable(5)
    ref = cp.Problem(cp.Maximize(cp.sum(x) - cp.quad_form(x, cov) - 0.3 * cp.norm1(x)))
    ref.solve()
    inst = dfl.parse(text).bind(data)
    form = inst.linear_form()
    assert inst.klass.name == "QP" and form.P is not None and form.n > 5  # epigraph columns
    for backend in ("highs", "pyomo"):
        assert inst.solve(backend).objective == pytest.approx(ref.value, rel=1e-6)


@pytest.mark.parametrize(("sense", "sign", "words"), [
    ("minimize", 1, "is not convex: the Q of its products of variables has a negative "
                    "eigenvalue (the smallest is {:.6g})"),
    ("maximize", -1, "is not concave: the Q of its products of variables has a positive "
                     "eigenvalue (the largest is {:.6g})"),
])
def test_data_that_make_it_nonconvex_are_an_error_at_the_objective(sense, sign, words):
    cov = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]) * sign
    text = (f"set S;\nparam cov{{S, S}};\nvar x{{S}} in [0, 1];\n"
            f"{sense} o: sum{{i in S, j in S}} cov[i, j] * x[i] * x[j];\n")
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(text, "m.opt").bind({"S": [1, 2, 3], "cov": cov.tolist()})
    extreme = np.linalg.eigvalsh(cov * sign)[0] * sign
    assert f"objective `o` {words.format(extreme)}" in info.value.message
    assert (info.value.pos.line, info.value.pos.column) == (4, len(sense) + 5)
    assert str(info.value).startswith("m.opt:4:")


def test_a_psd_q_with_zero_eigenvalues_is_accepted():
    """x'Qx = (x1 - x2)^2 written out: Q is PSD and singular (eigenvalues 0 and 2)."""
    text = """set S = 1..2; var x{S} in [0, 1];
              minimize o: x[1] * x[1] - 2 * x[1] * x[2] + x[2] * x[2] - x[1];"""
    sol = dfl.parse(text).bind({}).solve()
    assert sol.objective == pytest.approx(-1) and sol.value("x")[0] == pytest.approx(1)
