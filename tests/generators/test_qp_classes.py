"""The OSQP benchmark QP classes: shapes, PSD objectives, feasible problems that FlexQP solves
to the optimum HiGHS finds, and shared matrices for the layer benchmark."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dfl_dsl.backends.flexqp import QPBatch, Settings, default_policy, solve
from dfl_dsl.backends.highs import new_highs
from dfl_dsl.generators.qp_classes import CLASSES, random_qp


def _highs_objective(P, q, A, lo, hi) -> float:
    import highspy

    h = new_highs()
    n, m = len(q), len(lo)
    inf = highspy.kHighsInf
    Acsc = sp.csc_array(A)
    Pl = sp.tril(sp.csc_array(P), format="csc")
    h.passModel(n, m, Acsc.nnz, Pl.nnz, highspy.MatrixFormat.kColwise,
                highspy.HessianFormat.kTriangular, highspy.ObjSense.kMinimize, 0.0, q,
                np.full(n, -inf), np.full(n, inf), np.clip(lo, -inf, inf), np.clip(hi, -inf, inf),
                Acsc.indptr.astype(np.int32), Acsc.indices.astype(np.int32), Acsc.data,
                Pl.indptr.astype(np.int32), Pl.indices.astype(np.int32), Pl.data,
                np.zeros(n, dtype=np.int32))
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return h.getInfo().objective_function_value


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_each_class_is_a_feasible_convex_qp_flexqp_solves(name):
    data = CLASSES[name](5, batch=3, seed=2)
    B, n, m = 3, data.n, data.m
    assert data.P.shape == (B, n, n) and data.A.shape == (B, m, n)
    assert data.lo.shape == data.hi.shape == (B, m) and np.all(data.lo <= data.hi)
    assert np.linalg.eigvalsh(data.P).min() > -1e-9
    qp = QPBatch.from_numpy(*data.arrays())
    result = solve(qp, default_policy(), Settings(eps_abs=1e-8, eps_rel=1e-8))
    assert result.status == ["optimal"] * B
    got = QPBatch.from_numpy(*data.arrays()).objective(result.x).numpy()
    want = [_highs_objective(*(a[b] for a in data.arrays())) for b in range(B)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_seeds_repeat_and_shared_matrices_vary_only_the_vectors():
    a, b = random_qp(7, batch=4, seed=3, shared=True), random_qp(7, batch=4, seed=3, shared=True)
    for x, y in zip(a.arrays(), b.arrays(), strict=True):
        np.testing.assert_array_equal(x, y)
    assert a.P.shape == (7, 7) and a.A.shape == (14, 7) and a.q.shape == (4, 7)
    assert not np.allclose(a.q[0], a.q[1])
