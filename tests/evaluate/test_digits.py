"""Cross-join digits: the algebra against numpy's repeat/tile/gather, the flat positions
against brute force, and models whose sums run over their entities' sets in and out of order
compile to the coefficients a loop over the data gives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.compile.bridges import build_linear
from dfl_dsl.evaluate import subscripts
from dfl_dsl.evaluate.digits import Digit, consecutive, transposed


@pytest.mark.parametrize("size, reps, tiles", [(1, 1, 1), (3, 2, 4), (5, 1, 3), (4, 3, 1)])
def test_repeat_tile_and_gather_are_numpys(size, reps, tiles):
    base = Digit.rows(size)
    assert np.array_equal(base.array(), np.arange(size))
    repeated = base.repeat(reps)
    assert np.array_equal(repeated.array(), np.repeat(np.arange(size), reps))
    tiled = repeated.tile(tiles)
    assert np.array_equal(tiled.array(), np.tile(np.repeat(np.arange(size), reps), tiles))
    # a column over `tiled`'s rows, gathered by a frame whose rows repeat them
    idx = Digit.rows(tiled.n).repeat(2).tile(3)
    assert np.array_equal(tiled.at(idx).array(), tiled.array()[idx.array()])
    assert tiled.at(Digit.rows(tiled.n + 1)) is None  # not over its rows: no digit


def test_repeating_no_times_leaves_no_rows():
    """A cross join with an empty set: the frame's old columns and parent rows repeat 0 times."""
    empty = Digit.rows(3).repeat(0)
    assert empty.n == 0 and empty.array().tolist() == []
    assert empty.tile(4).array().tolist() == []


def _cross_digits(shape, order):
    """The digits of a cross join over the axes in `order` (outermost first), per axis."""
    digits, n = {}, 1
    for axis in order:  # each new set tiles; the columns made so far repeat
        digits = {a: d.repeat(shape[axis]) for a, d in digits.items()}
        digits[axis] = Digit.rows(shape[axis]).tile(n)
        n *= shape[axis]
    return [digits[a] for a in range(len(shape))]


@pytest.mark.parametrize("shape", [(2, 3), (3, 1, 4), (2, 3, 2)])
def test_flat_positions_in_any_axis_order(shape):
    grid = np.arange(int(np.prod(shape))).reshape(shape)
    for order in itertools.permutations(range(len(shape))):
        digits = _cross_digits(shape, order)
        rows = [d.array() for d in digits]
        want = np.ravel_multi_index(rows, shape)  # brute force: each row's entry
        in_order = consecutive(digits, shape)
        if list(order) == sorted(order):
            assert in_order is not None and in_order.identity
            assert np.array_equal(in_order.array(), want)
        else:
            assert in_order is None
        assert np.array_equal(transposed(digits, shape), want)
        assert np.array_equal(np.transpose(grid, order).ravel(), want)


def test_a_prefix_of_the_axes_is_one_digit():
    """`c[i, j]` in a frame over (i, j, k): each entry k-times in a row."""
    shape = (3, 4, 2)
    digits = _cross_digits(shape, (0, 1, 2))
    flat = consecutive(digits[:2], shape[:2])
    assert flat is not None and not flat.identity
    assert np.array_equal(flat.array(), np.repeat(np.arange(12), 2))


MODEL = """
set I; set J; set K;
param c{I, J, K}; param d{I, J} default 7; param cap{J};
var x{I, J, K} >= 0;
minimize o: sum{k in K, i in I, j in J} c[i, j, k] * x[i, j, k]
          + sum{i in I, j in J, k in K} d[i, j] * x[i, j, k];
subject to by_j{j in J}: sum{i in I, k in K} x[i, j, k] + sum{k in K, i in I} 2 * x[i, j, k]
    <= cap[j];
subject to by_ik{k in K, i in I}: sum{j in J} c[i, j, k] * x[i, j, k] >= 1;
"""


def test_sums_in_and_out_of_order_give_the_loops_coefficients(monkeypatch):
    whole = []  # the lookups that took the in-order path (rows are the entries)
    original = subscripts._whole_entity
    monkeypatch.setattr(subscripts, "_whole_entity",
                        lambda *a: whole.append(original(*a)) or whole[-1])
    rng = np.random.default_rng(3)
    c = rng.normal(size=(3, 4, 2))
    d = {"a": {"1": 1.5, "3": -2.0}}  # the others take the default
    data = {"I": ["a", "b", "c"], "J": [1, 2, 3, 4], "K": ["p", "q"], "c": c.tolist(), "d": d,
            "cap": [5.0, 6.0, 7.0, 8.0]}
    form = build_linear(bind(MODEL, data), reduce=False)
    col = {key: n for n, key in enumerate(itertools.product(range(3), range(4), range(2)))}
    dd = np.full((3, 4), 7.0)
    dd[0, 0], dd[0, 2] = 1.5, -2.0
    want_c = np.zeros(24)
    for (i, j, k), n in col.items():
        want_c[n] = c[i, j, k] + dd[i, j]
    assert np.allclose(form.c, want_c)
    A = form.A.toarray()
    want = np.zeros((4 + 6, 24))
    for (i, j, k), n in col.items():
        want[j, n] = 3.0
        want[4 + 3 * k + i, n] = c[i, j, k]
    assert np.allclose(A, want)
    assert np.array_equal(c, np.asarray(data["c"]))  # the data left as it was
    # x in the objective's second sum runs in order (the whole-entity path); `d` misses
    # entries and the other sums run out of order (the general path)
    assert sum(v is not None for v in whole) >= 2 and any(v is None for v in whole)


PAIRS = """
set N; set A within N * N; set K;
param w{A, K}; var y{A, K} >= 0;
minimize o: sum{(i, j) in A, k in K} w[i, j, k] * y[i, j, k];
subject to per_k{k in K}: sum{(i, j) in A} y[i, j, k] >= 1;
subject to loops{(v, v) in A, k in K}: y[v, v, k] <= 2;
"""


def test_a_tuple_sets_components_cross_as_one_digit():
    """`{(i, j) in A, k in K}`: the pair's two columns share one digit over A's rows; the
    self-loops `(v, v) in A` keep only some rows (the general path)."""
    A = [["a", "b"], ["b", "b"], ["c", "a"], ["a", "a"]]
    w = np.arange(8.0).reshape(4, 2) + 1
    data = {"N": ["a", "b", "c"], "A": A, "K": [1, 2], "w": w.tolist()}
    form = build_linear(bind(PAIRS, data), reduce=False)
    assert np.allclose(form.c, w.ravel())
    A_ = form.A.toarray()
    per_k = np.zeros((2, 8))
    per_k[0, 0::2] = per_k[1, 1::2] = 1.0
    assert np.allclose(A_[:2], per_k)
    loops = np.zeros((4, 8))  # (b, b) and (a, a) for k = 1, 2: columns 2, 3 and 6, 7
    loops[[0, 1, 2, 3], [2, 3, 6, 7]] = 1.0
    assert np.allclose(A_[2:], loops)
