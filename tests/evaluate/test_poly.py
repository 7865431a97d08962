"""Vectorized polynomials over z: every operation checked against dense numpy at random points."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import poly_at

from dfl_dsl.compile.substitute import substitute
from dfl_dsl.evaluate.poly import Poly, segment_sum_values

W = 7


def _linear(rng, rows, density=0.4):
    lin = sp.random_array((rows, W), density=density, rng=rng, format="csr")
    return Poly(rng.normal(size=rows), sp.csr_array(lin))


def _points(rng, k=4):
    return [rng.normal(size=W) for _ in range(k)]


def test_constructors():
    z = np.arange(W, dtype=float)
    assert poly_at(Poly.zeros(3, W), z).tolist() == [0, 0, 0]
    assert poly_at(Poly.constant([1.5, -2], W), z).tolist() == [1.5, -2]
    assert poly_at(Poly.symbols([4, 0, 4], W), z).tolist() == [4, 0, 4]
    assert Poly.symbols([2], W).degree == 1 and Poly.constant([1], W).degree == 0


def test_times_matches_dense_products():
    rng = np.random.default_rng(0)
    p, q = _linear(rng, 5), _linear(rng, 5)
    prod = p.times(q)
    assert prod.degree == 2
    for z in _points(rng):
        assert np.allclose(poly_at(prod, z), poly_at(p, z) * poly_at(q, z))


def test_times_by_a_constant_and_squares():
    rng = np.random.default_rng(1)
    p = _linear(rng, 4)
    c = Poly.constant([2.0, -1.0, 0.0, 3.0], W)
    for z in _points(rng):
        assert np.allclose(poly_at(c.times(p), z), poly_at(p, z) * [2, -1, 0, 3])
        assert np.allclose(poly_at(p.times(p), z), poly_at(p, z) ** 2)


def test_times_refuses_degree_three():
    rng = np.random.default_rng(2)
    p = _linear(rng, 3)
    with pytest.raises(ValueError, match="degree"):
        p.times(p).times(p)


def test_add_merges_quadratic_pairs():
    rng = np.random.default_rng(3)
    a, b, c = _linear(rng, 3), _linear(rng, 3), _linear(rng, 3)
    total = a.times(b) + b.times(c) - a + c.times(c)
    for z in _points(rng):
        pa, pb, pc = poly_at(a, z), poly_at(b, z), poly_at(c, z)
        assert np.allclose(poly_at(total, z), pa * pb + pb * pc - pa + pc * pc)
    assert np.all(total.pairs[:, 0] <= total.pairs[:, 1])


def test_square_sum_without_weight():
    rng = np.random.default_rng(4)
    p = _linear(rng, 6)
    s = p.square_sum()
    assert s.rows == 1
    for z in _points(rng):
        assert poly_at(s, z)[0] == pytest.approx(np.sum(poly_at(p, z) ** 2))


@pytest.mark.parametrize("sparse_weight", [False, True])
def test_square_sum_with_a_symmetric_weight(sparse_weight):
    rng = np.random.default_rng(5)
    p = _linear(rng, 4)
    m = rng.normal(size=(4, 4))
    weight = m @ m.T  # symmetric
    s = p.square_sum(sp.csr_array(weight) if sparse_weight else weight)
    for z in _points(rng):
        v = poly_at(p, z)
        assert poly_at(s, z)[0] == pytest.approx(v @ weight @ v)


@pytest.mark.parametrize("starts", [[0, 6], [0, 2, 2, 6], [0, 1, 3, 6]])
def test_inner_sum_is_grouped_products(starts):
    rng = np.random.default_rng(9)
    p, q = _linear(rng, 6), _linear(rng, 6)
    q.const[2] = 0.0
    starts = np.array(starts)
    s = p.inner_sum(q, starts)
    want = p.times(q).segment_sum(starts)
    assert s.rows == len(starts) - 1
    for z in _points(rng):
        assert np.allclose(poly_at(s, z), poly_at(want, z))


def test_inner_sum_with_constants_and_zero_constants():
    rng = np.random.default_rng(10)
    p = Poly(np.zeros(4), _linear(rng, 4).lin)  # no constant: no affine part from it
    c = Poly.constant([1.0, 0.0, 2.0, -1.0], W)
    starts = np.array([0, 4])
    for z in _points(rng):
        assert np.allclose(poly_at(p.inner_sum(p, starts), z), np.sum(poly_at(p, z) ** 2))
        assert np.allclose(poly_at(c.inner_sum(p, starts), z), poly_at(p, z) @ [1, 0, 2, -1])
    assert p.inner_sum(p, starts).lin.nnz == 0


def test_add_keeps_one_sides_pairs():
    rng = np.random.default_rng(11)
    q = _linear(rng, 3).times(_linear(rng, 3))
    total = _linear(rng, 3) + q
    assert total.pairs is q.pairs
    for z in _points(rng):
        assert np.allclose(poly_at(total - q, z), poly_at(total, z) - poly_at(q, z))


def test_square_sum_with_a_dense_weight_over_few_symbols():
    p = Poly.symbols([5, 1], W).add_constant(np.array([1.0, 0.0]))
    weight = np.array([[2.0, 1.0], [1.0, 3.0]])
    s = p.square_sum(weight)
    assert set(s.columns().tolist()) == {1, 5}
    z = np.arange(W, dtype=float)
    v = np.array([z[5] + 1, z[1]])
    assert poly_at(s, z)[0] == pytest.approx(v @ weight @ v)


def test_square_sum_of_constants_only():
    p = Poly.constant([3.0, 4.0], W)
    assert poly_at(p.square_sum(), np.zeros(W))[0] == pytest.approx(25.0)


def test_segment_sum_with_empty_groups():
    rng = np.random.default_rng(6)
    p = _linear(rng, 5).times(_linear(rng, 5))
    starts = np.array([0, 0, 2, 2, 5, 5])  # groups: {}, {0,1}, {}, {2,3,4}, {}
    s = p.segment_sum(starts)
    assert s.rows == 5
    for z in _points(rng):
        v = poly_at(p, z)
        want = [0.0, v[0] + v[1], 0.0, v[2:].sum(), 0.0]
        assert np.allclose(poly_at(s, z), want)


def test_segment_sum_of_nothing():
    p = Poly.zeros(0, W)
    s = p.segment_sum(np.array([0, 0, 0]))
    assert s.rows == 2 and poly_at(s, np.ones(W)).tolist() == [0.0, 0.0]


def test_take_scale_rowmap():
    rng = np.random.default_rng(7)
    p = _linear(rng, 4).times(_linear(rng, 4))
    m = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, -1, 0, 1]]))
    for z in _points(rng):
        v = poly_at(p, z)
        assert np.allclose(poly_at(p.take(np.array([3, 0, 3])), z), v[[3, 0, 3]])
        assert np.allclose(poly_at(p.scale(np.array([1, 2, 3, 4.0])), z), v * [1, 2, 3, 4])
        assert np.allclose(poly_at(p.rowmap(m), z), m @ v)
        assert np.allclose(poly_at(-p, z), -v)


def test_columns_lists_used_symbols():
    lin = Poly.symbols([1, 5], W)
    q = Poly.symbols([2, 2], W).times(Poly.symbols([6, 2], W))
    assert (lin + q).columns().tolist() == [1, 2, 5, 6]


def test_substitute_fixes_symbols():
    rng = np.random.default_rng(8)
    p = _linear(rng, 5).times(_linear(rng, 5)) + _linear(rng, 5)
    cols = np.array([1, 4, 6])
    values = rng.normal(size=3)
    fixed = substitute(p, cols, values)
    for z in _points(rng):
        full = z.copy()
        full[cols] = values
        assert np.allclose(poly_at(fixed, z), poly_at(p, full))
    # what is left never mentions the fixed symbols
    assert not set(fixed.columns().tolist()) & set(cols.tolist())


@pytest.mark.parametrize("dtype", [float, np.int64, bool])
def test_segment_sum_values_matches_a_plain_loop_with_empty_groups(dtype) -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        counts = rng.integers(0, 4, rng.integers(0, 7))
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        values = (rng.standard_normal(starts[-1]) * 5).astype(dtype)
        expected = [float(np.sum(values[a:b].astype(float)))
                    for a, b in zip(starts[:-1], starts[1:], strict=True)]
        got = segment_sum_values(values, starts)
        assert got.shape == (len(counts),)
        np.testing.assert_allclose(got, expected, atol=1e-12)


def test_a_selections_shortcuts_give_the_general_paths_values():
    """A variable's entries (`selection`: one symbol a row, constant 0) are scaled, taken and
    summed without testing for that; each result equals the same Poly's without the flag."""
    rng = np.random.default_rng(4)
    factor = rng.normal(size=4)
    starts = np.array([0, 1, 1, 4])  # (an empty group)
    ops = (lambda p: p.scale(factor), lambda p: p.take([3, 0, 0]),
           lambda p: p.segment_sum(starts), lambda p: p.scale(factor).segment_sum(starts))
    for columns in ([4, 0, 4, 6], range(2, 6)):
        fast = Poly.symbols(columns, W)
        slow = Poly(fast.const.copy(), fast.lin.copy())
        assert fast.selection and not slow.selection
        for op in ops:
            for z in _points(rng):
                assert np.allclose(poly_at(op(fast), z), poly_at(op(slow), z))
    assert Poly.symbols(range(3), W).scale(np.ones(3)).selection  # scaled: still one a row
    assert not Poly.symbols(range(3), W).segment_sum(np.array([0, 3])).selection
