"""The quadratic-pairs kernel against dense numpy, on the sparse path, on dense blocks found
as connected components, and on mixes of both."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dfl_dsl.evaluate import gram
from dfl_dsl.evaluate.gram import assemble, dense_triplets, quadratic_pairs


def _value(pairs, values, z):
    return float(values @ (z[pairs[:, 0]] * z[pairs[:, 1]]))


def _check(l1, l2, rng):
    pairs, values = quadratic_pairs(l1, l2)
    codes = pairs[:, 0] * l1.shape[1] + pairs[:, 1]
    assert np.all(pairs[:, 0] <= pairs[:, 1]) and np.all(np.diff(codes) > 0)  # sorted, unique
    assert np.all(values != 0)
    for _ in range(3):
        z = rng.normal(size=l1.shape[1])
        assert _value(pairs, values, z) == pytest.approx(float((l1 @ z) @ (l2 @ z)), rel=1e-12)


def _block_rows(rng, blocks, rows, width, stride):
    """Rows in `blocks` independent dense blocks: block c touches symbols c, c + stride, ...
    (the layout of A @ X for X n × r, row-major)."""
    out = []
    for c in range(blocks):
        dense = np.zeros((rows, width))
        dense[:, c::stride] = rng.normal(size=(rows, len(range(c, width, stride))))
        out.append(dense)
    return sp.csr_array(np.vstack(out))


@pytest.fixture
def eager_dense(monkeypatch):
    """Small blocks go dense too, so the dense path runs on test-sized data; counts the dense
    blocks multiplied."""
    monkeypatch.setattr(gram, "MIN_SPARSE_COST", 2.0)  # single-entry rows stay sparse
    monkeypatch.setattr(gram, "DENSE_SPEEDUP", 1.0)  # dense only where no zeros get multiplied
    monkeypatch.setattr(gram, "CHUNK_ENTRIES", 16)  # several row chunks per block
    calls = []
    real = gram._dense_block

    def counted(*args):
        calls.append(len(args[3]))
        return real(*args)

    monkeypatch.setattr(gram, "_dense_block", counted)
    return calls


@pytest.mark.parametrize("same", [True, False])
def test_sparse_path(same):
    rng = np.random.default_rng(0)
    l1 = sp.random_array((30, 12), density=0.2, rng=rng, format="csr")
    l2 = l1 if same else sp.random_array((30, 12), density=0.3, rng=rng, format="csr")
    _check(l1, l2, rng)


@pytest.mark.parametrize("same", [True, False])
def test_dense_blocks_from_components(eager_dense, same):
    rng = np.random.default_rng(1)
    l1 = _block_rows(rng, 3, 8, 12, 3)
    l2 = l1 if same else sp.csr_array(l1 * rng.normal(size=l1.shape))
    _check(l1, l2, rng)
    assert eager_dense == [8, 8, 8]  # one BLAS product per block of 8 rows


def test_one_dense_block_and_lopsided_rows(eager_dense):
    rng = np.random.default_rng(2)
    dense = sp.csr_array(rng.normal(size=(10, 6)))
    _check(dense, dense, rng)
    assert eager_dense == [10]
    selection = sp.csr_array((np.ones(10), np.arange(10) % 6, np.arange(11)), shape=(10, 6))
    _check(dense, selection, rng)  # one symbol per row on the right: stays sparse
    assert eager_dense == [10]


def test_dense_blocks_next_to_sparse_rows(eager_dense):
    rng = np.random.default_rng(3)
    blocks = _block_rows(rng, 2, 6, 10, 5)  # symbols 0,5 / 1,6 in dense blocks
    loose = sp.csr_array((rng.normal(size=4), [2, 3, 4, 9], [0, 1, 2, 3, 4]), shape=(4, 10))
    both = sp.csr_array(sp.vstack([blocks, loose]))
    _check(both, both, rng)
    assert eager_dense == [6, 6]


def test_non_canonical_input_is_left_alone():
    rng = np.random.default_rng(4)
    l1 = sp.csr_array((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])),
                      shape=(1, 3))
    assert not l1.has_canonical_format
    before = (l1.data.copy(), l1.indices.copy())
    _check(l1, l1, rng)
    assert np.array_equal(l1.data, before[0]) and np.array_equal(l1.indices, before[1])


def test_dense_triplets_and_assemble_sum_duplicates():
    rng = np.random.default_rng(5)
    g = rng.normal(size=(3, 3))
    cols = np.array([1, 4, 6])
    pairs, values = assemble([dense_triplets(g, cols), (np.array([1]), np.array([4]),
                                                        np.array([0.5]))], 8)
    z = rng.normal(size=8)
    zc = z[cols]
    assert _value(pairs, values, z) == pytest.approx(zc @ g @ zc + 0.5 * z[1] * z[4])
