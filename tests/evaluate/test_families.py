"""Indexed sets and `setof` (evaluate/families.py): one CSR key table per family, `S[i]` per
frame row, `setof` keeping the first occurrence of each tuple in index order."""

from __future__ import annotations

import numpy as np
from _helpers import bind

from dfl_dsl.evaluate.elements import SetValue, element_of
from dfl_dsl.evaluate.families import as_family
from dfl_dsl.evaluate.frame import RowRanges, RowSets

NET = {"NODES": ["a", "b", "c"], "ARCS": [["a", "b"], ["a", "c"], ["b", "c"]]}


def members(family, p: int) -> list:
    got = family.members(np.array([p]), framed=False)
    return [element_of(k) for k in got.keys[:, 0]]


def test_a_computed_family_per_element() -> None:
    inst = bind("set NODES; set ARCS within NODES cross NODES;\n"
                "set OUT{i in NODES} = setof{(i2, j) in ARCS : i2 = i} j;\n"
                "set IN{j in NODES} = setof{(i, j2) in ARCS : j2 = j} i;", NET)
    out = inst.ctx.families["OUT"]
    assert [members(out, p) for p in range(3)] == [["b", "c"], ["c"], []]
    assert members(inst.ctx.families["IN"], 2) == ["a", "b"]


def test_setof_keeps_first_occurrences_in_order() -> None:
    inst = bind("set ARCS dimen 2; set HEADS = setof{(i, j) in ARCS} j;\n"
                "set REV = setof{(i, j) in ARCS} (j, i);", {"ARCS": [[1, 3], [2, 3], [2, 1]]})
    assert inst.sets["HEADS"].elements() == [3, 1]
    assert inst.sets["REV"].elements() == [(3, 1), (3, 2), (1, 2)]


def test_a_set_built_from_an_index() -> None:
    inst = bind("set I; param a{I};\nset P = {i in I : a[i] > 0};\n"
                "set Q = {i in I, j in P : i <> j};\nparam n = card({i in I : a[i] = 0});\n"
                "param m{i in I} = card({j in I : a[j] > a[i]});",
                {"I": [1, 2, 3], "a": [0, 1, 2]})
    assert inst.sets["P"].elements() == [2, 3]
    assert inst.sets["Q"].elements() == [(1, 2), (1, 3), (2, 3), (3, 2)]
    assert inst.entity("n").array() == 1 and inst.entity("m").array().tolist() == [2, 1, 0]


def test_iterating_members_of_each_set() -> None:
    inst = bind("set NODES; set ARCS within NODES cross NODES;\n"
                "set OUT{i in NODES} = setof{(i2, j) in ARCS : i2 = i} j;\n"
                "param n{i in NODES} = card(OUT[i]);\n"
                "param deg{i in NODES} = sum{j in OUT[i]} 1 + sum{k in NODES : k in OUT[i]} 1;",
                NET)
    assert inst.entity("n").array().tolist() == [2, 1, 0]
    assert inst.entity("deg").array().tolist() == [4, 2, 0]


def test_a_bound_dummy_over_a_member_set_filters() -> None:
    inst = bind("set NODES; set ARCS within NODES cross NODES;\n"
                "set OUT{i in NODES} = setof{(i2, j) in ARCS : i2 = i} j;\n"
                "param hits{j in NODES} = sum{i in NODES, j in OUT[i]} 1;",
                NET)
    assert inst.entity("hits").array().tolist() == [0, 1, 2]


def test_diff_and_inter_of_each_set_with_a_fixed_one() -> None:
    inst = bind("set I; set T; set S{I};\nparam n{i in I} = card(S[i] diff T);\n"
                "param m{i in I} = sum{j in S[i] inter T} j;",
                {"I": ["a", "b"], "T": [1, 2], "S": {"a": [1, 3, 5], "b": [2]}})
    assert inst.entity("n").array().tolist() == [2, 0]
    assert inst.entity("m").array().tolist() == [1, 2]


def test_as_family_of_each_kind_of_set() -> None:
    same = SetValue(np.array([5, 6]))
    keys, starts = as_family(same, 2)
    assert keys[:, 0].tolist() == [5, 6, 5, 6] and starts.tolist() == [0, 2, 4]
    keys, starts = as_family(RowRanges(np.array([1, 3]), np.array([2, 2])), 2)
    assert keys[:, 0].tolist() == [1, 2] and starts.tolist() == [0, 2, 2]
    table = np.array([[7], [8], [9]])
    keys, starts = as_family(RowSets(table, np.array([1, 0]), np.array([3, 1])), 2)
    assert keys[:, 0].tolist() == [8, 9, 7] and starts.tolist() == [0, 2, 3]
