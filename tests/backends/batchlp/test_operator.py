"""K applied to a batch: the dense, the pattern (gather/scatter) and the per-sample forms
agree with numpy, products and Gram matrices alike."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from dfl_dsl.backends.batchlp import operator
from dfl_dsl.backends.batchlp.operator import RowOperator


@pytest.mark.parametrize("dense_limit", [10**9, 0])  # dense matmul, then gathers/scatters
def test_shared_products_and_gram(monkeypatch, dense_limit):
    monkeypatch.setattr(operator, "DENSE_ENTRIES", dense_limit)
    rng = np.random.default_rng(0)
    A = sp.random_array((7, 11), density=0.3, random_state=1, format="csr")
    K = RowOperator.from_scipy(A)
    assert (K.dense is not None) == (dense_limit > 0)
    x, y = rng.normal(size=(5, 11)), rng.normal(size=(5, 7))
    w = rng.uniform(0, 2, (5, 11))
    Ad = A.toarray()
    np.testing.assert_allclose(K.matvec(torch.as_tensor(x)).numpy(), x @ Ad.T, atol=1e-12)
    np.testing.assert_allclose(K.rmatvec(torch.as_tensor(y)).numpy(), y @ Ad, atol=1e-12)
    gram = K.gram(torch.as_tensor(w)).numpy()
    for b in range(5):
        np.testing.assert_allclose(gram[b], Ad @ np.diag(w[b]) @ Ad.T, atol=1e-12)


@pytest.mark.parametrize("dense_limit", [10**9, 0])
def test_per_sample_values(monkeypatch, dense_limit):
    monkeypatch.setattr(operator, "DENSE_ENTRIES", dense_limit)
    rng = np.random.default_rng(2)
    A = sp.random_array((6, 9), density=0.4, random_state=3, format="coo")
    values = A.data * rng.uniform(0.5, 1.5, (4, A.nnz))
    K = RowOperator.from_scipy(A, values=values)
    assert not K.shared and (K.dense is not None) == (dense_limit > 0)
    x, w = rng.normal(size=(4, 9)), rng.uniform(0, 1, (4, 9))
    gram = K.gram(torch.as_tensor(w)).numpy()
    y = rng.normal(size=(4, 6))
    for b in range(4):
        Ab = sp.coo_array((values[b], (A.row, A.col)), shape=A.shape).toarray()
        np.testing.assert_allclose(K.matvec(torch.as_tensor(x))[b].numpy(), Ab @ x[b],
                                   atol=1e-12)
        np.testing.assert_allclose(K.rmatvec(torch.as_tensor(y))[b].numpy(), y[b] @ Ab,
                                   atol=1e-12)
        np.testing.assert_allclose(gram[b], Ab @ np.diag(w[b]) @ Ab.T, atol=1e-12)
    sub = K.select(torch.tensor([2, 0]))
    np.testing.assert_allclose(sub.values.numpy(), values[[2, 0]])


def test_scaling_folds_into_the_entries():
    A = sp.csr_array(np.array([[1.0, 2.0], [0.0, -3.0]]))
    K = RowOperator.from_scipy(A).scaled(torch.tensor([2.0, 0.5], dtype=torch.float64),
                                         torch.tensor([1.0, 10.0], dtype=torch.float64))
    np.testing.assert_allclose(K.dense.numpy(), [[2.0, 40.0], [0.0, -15.0]])
