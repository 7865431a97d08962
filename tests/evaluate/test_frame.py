"""Frames and joins: cross joins, ragged range expansion, tuple-pattern (sort-merge) joins and
filters, checked against plain Python loops."""

from __future__ import annotations

import numpy as np
import pytest

from dfl_dsl import ast
from dfl_dsl.evaluate.elements import SetValue
from dfl_dsl.evaluate.frame import Frame, RowRanges, RowSets, join


def _item(names, set_name):
    return ast.IndexItem(tuple(names), ast.Name(set_name))


def _join(parent, items, sets, mask=None):
    def eval_set(node, frame):
        value = sets[node.id]
        return value(frame) if callable(value) else value

    def eval_mask(node, frame):
        return mask(frame)

    return join(parent, items, object() if mask else None, eval_set, eval_mask)


def _rows(frame, names):
    return list(zip(*(frame.get(n).keys.tolist() for n in names), strict=True))


def test_cross_join_keeps_parent_grouping():
    sets = {"I": SetValue(np.array([10, 20])), "J": SetValue(np.array([1, 2, 3]))}
    outer = _join(Frame.root(), [_item(["i"], "I")], sets)
    inner = _join(outer, [_item(["j"], "J")], sets)
    assert inner.n == 6
    assert _rows(inner, ["i", "j"]) == [(10, 1), (10, 2), (10, 3), (20, 1), (20, 2), (20, 3)]
    assert inner.starts().tolist() == [0, 3, 6]
    # a column knows its position in the set it came from
    assert inner.get("j").pos.tolist() == [0, 1, 2, 0, 1, 2]


def test_ranges_that_depend_on_the_row():
    sets = {"J": SetValue(np.array([0, 1, 2]))}
    outer = _join(Frame.root(), [_item(["j"], "J")], sets)
    lo = np.array([1, 5, 3])
    hi = np.array([2, 4, 5])  # the middle range is empty
    sets["R"] = RowRanges(lo, hi)
    inner = _join(outer, [_item(["u"], "R")], sets)
    assert _rows(inner, ["j", "u"]) == [(0, 1), (0, 2), (2, 3), (2, 4), (2, 5)]
    assert inner.starts().tolist() == [0, 2, 2, 5]


def test_bound_dummy_in_a_range_filters():
    sets = {"T": SetValue(np.arange(1, 7))}
    outer = _join(Frame.root(), [_item(["t"], "T")], sets)
    sets["R"] = RowRanges(np.array(2), np.array(4))
    inner = _join(outer, [_item(["t"], "R")], sets)
    assert inner.get("t").keys.tolist() == [2, 3, 4]


def test_filter_drops_rows():
    sets = {"I": SetValue(np.arange(6))}
    frame = _join(Frame.root(), [_item(["i"], "I")], sets,
                  mask=lambda fr: fr.get("i").keys % 2 == 0)
    assert frame.get("i").keys.tolist() == [0, 2, 4]


def _random_graph(rng, n):
    arcs = [(a, b) for a in range(n) for b in range(n) if a != b and rng.random() < 0.35]
    order = rng.permutation(len(arcs))
    return [arcs[k] for k in order]


@pytest.mark.parametrize("seed", range(6))
def test_tuple_pattern_join_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    arcs = _random_graph(rng, n)
    sets = {
        "V": SetValue(np.arange(n)),
        "ARCS": SetValue(np.array(arcs, dtype=np.int64).reshape(-1, 2)),
    }
    outer = _join(Frame.root(), [_item(["v"], "V")], sets)
    into = _join(outer, [_item(["i", "v"], "ARCS")], sets)  # (i, v) with v bound
    out_of = _join(outer, [_item(["v", "j"], "ARCS")], sets)
    assert _rows(into, ["v", "i"]) == [(v, a) for v in range(n) for (a, b) in arcs if b == v]
    assert _rows(out_of, ["v", "j"]) == [(v, b) for v in range(n) for (a, b) in arcs if a == v]
    counts = np.diff(into.starts())
    assert counts.tolist() == [sum(b == v for _, b in arcs) for v in range(n)]
    # the joined columns point back into ARCS
    pos = into.get("i").pos
    assert [arcs[p] for p in pos] == [(i, v) for v, i in _rows(into, ["v", "i"])]


def test_pattern_with_every_component_bound_is_a_membership_test():
    sets = {"V": SetValue(np.arange(3)),
            "ARCS": SetValue(np.array([[0, 1], [1, 2], [2, 0]]))}
    frame = _join(Frame.root(), [_item(["a"], "V"), _item(["b"], "V")], sets)
    both = _join(frame, [_item(["a", "b"], "ARCS")], sets)
    assert both.n == 3
    assert sorted(_rows(both, ["a", "b"])) == [(0, 1), (1, 2), (2, 0)]


def test_take_and_inherited_columns():
    sets = {"I": SetValue(np.array([1, 2, 3])), "J": SetValue(np.array([7, 8]))}
    outer = _join(Frame.root(), [_item(["i"], "I")], sets)
    inner = _join(outer, [_item(["j"], "J")], sets)
    sub = inner.take(np.array([1, 4]))
    assert _rows(sub, ["i", "j"]) == [(1, 8), (3, 7)]
    assert inner.names() == ["i", "j"]


def test_repeated_new_name_in_a_pattern_picks_equal_components():
    arcs = np.array([[1, 1], [1, 2], [2, 2], [3, 1]])
    sets = {"ARCS": SetValue(arcs), "V": SetValue(np.array([1, 2, 3]))}
    loops = _join(Frame.root(), [_item(["v", "v"], "ARCS")], sets)
    assert loops.get("v").keys.tolist() == [1, 2] and loops.get("v").pos.tolist() == [0, 2]
    outer = _join(Frame.root(), [_item(["a"], "V")], sets)
    triples = SetValue(np.array([[1, 5, 5], [1, 5, 6], [2, 7, 7], [1, 8, 8]]))
    sets["T"] = triples
    joined = _join(outer, [_item(["a", "w", "w"], "T")], sets)
    assert _rows(joined, ["a", "w"]) == [(1, 5), (1, 8), (2, 7)]


def _member_sets(frame):
    """Row r of the frame -> the members of S[r's i] (S = {10: [1, 2], 20: [], 30: [3]}),
    as `S[i]` is evaluated: begin/end into one shared table."""
    table = np.array([[1], [2], [3]])
    begin = {10: 0, 20: 2, 30: 2}
    end = {10: 2, 20: 2, 30: 3}
    keys = frame.get("i").keys
    return RowSets(table, np.array([begin[k] for k in keys]), np.array([end[k] for k in keys]))


def test_member_sets_expand_each_row_by_its_own_set():
    sets = {"I": SetValue(np.array([10, 20, 30])), "S": _member_sets}
    outer = _join(Frame.root(), [_item(["i"], "I")], sets)
    inner = _join(outer, [_item(["j"], "S")], sets)
    loops = [(i, j) for i, js in ((10, [1, 2]), (20, []), (30, [3])) for j in js]
    assert _rows(inner, ["i", "j"]) == loops
    assert inner.starts().tolist() == [0, 2, 2, 3]


def test_a_bound_dummy_over_member_sets_filters():
    sets = {"I": SetValue(np.array([10, 20, 30])), "J": SetValue(np.array([1, 3])),
            "S": _member_sets}
    frame = _join(Frame.root(), [_item(["i"], "I"), _item(["j"], "J")], sets)
    kept = _join(frame, [_item(["j"], "S")], sets)
    assert _rows(kept, ["i", "j"]) == [(10, 1), (30, 3)]
