"""substitute / uses: fixing some symbols of a Poly at numbers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import poly_at

from dfl_dsl.compile.substitute import substitute, uses
from dfl_dsl.evaluate.poly import Poly

W = 5


def _poly():
    # rows: 2 z0 z3 + z1 + 1 ;  z3^2 - z2 ;  4
    x = Poly.symbols([0, 3], W)
    q = Poly.symbols([3, 3], W)
    bil = x.take(np.array([0])).times(q.take(np.array([0]))).scale(np.array([2.0]))
    row0 = bil + Poly.symbols([1], W) + Poly.constant([1.0], W)
    row1 = Poly.symbols([3], W).times(Poly.symbols([3], W)) - Poly.symbols([2], W)
    row2 = Poly.constant([4.0], W)
    def place(p, k):
        return p.rowmap(sp.csr_array(np.eye(3)[:, [k]]))

    return place(row0, 0) + place(row1, 1) + place(row2, 2)


def test_fix_one_side_of_a_product():
    p = _poly()
    fixed = substitute(p, np.array([3]), np.array([5.0]))
    z = np.array([1.0, 2.0, 3.0, 99.0, 7.0])  # z3 is ignored now
    assert np.allclose(poly_at(fixed, z), [2 * 1 * 5 + 2 + 1, 25 - 3, 4])
    assert fixed.degree == 1


def test_fix_both_sides_and_nothing_left():
    p = _poly()
    fixed = substitute(p, np.array([0, 1, 2, 3]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert fixed.degree == 0
    assert np.allclose(fixed.const, [2 * 4 + 2 + 1, 16 - 3, 4])


def test_fixing_unused_symbols_changes_nothing():
    p = _poly()
    z = np.array([1.0, -2.0, 0.5, 3.0, 7.0])
    assert np.allclose(poly_at(substitute(p, np.array([4]), np.array([9.0])), z), poly_at(p, z))


def test_random_against_full_evaluation():
    rng = np.random.default_rng(0)
    a = Poly(rng.normal(size=4), sp.csr_array(rng.normal(size=(4, W))))
    b = Poly(rng.normal(size=4), sp.csr_array(rng.normal(size=(4, W))))
    p = a.times(b)
    cols = np.array([0, 2])
    vals = rng.normal(size=2)
    for _ in range(3):
        z = rng.normal(size=W)
        full = z.copy()
        full[cols] = vals
        assert poly_at(substitute(p, cols, vals), z) == pytest.approx(poly_at(p, full))


def test_uses():
    p = _poly()
    assert uses(p, np.array([3])).tolist() == [True, True, False]
    assert uses(p, np.array([1])).tolist() == [True, False, False]
    assert uses(p, np.array([4])).tolist() == [False, False, False]
