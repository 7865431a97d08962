"""A solution's tables: key columns named by their sets, codes into a vocabulary of elements."""

from __future__ import annotations

import numpy as np
from _helpers import bind

from dfl_dsl.solution_tables import variable_table


def _table(text, data, name):
    inst = bind(text, data)
    entity = inst.entity(name)
    return variable_table(entity, np.arange(entity.size, dtype=float))


def test_key_columns_are_named_by_set_and_hold_the_elements():
    table = _table("set I; set J; var x{I, J};", {"I": ["a", "b"], "J": [7, 9]}, "x")
    assert [k.name for k in table.keys] == ["I", "J"] and table.grouped
    assert table.keys[0].column().tolist() == ["a", "a", "b", "b"]
    assert table.keys[1].column().tolist() == [7, 9, 7, 9]  # integers stay integers
    assert table.columns["value"].tolist() == [0, 1, 2, 3]


def test_repeated_sets_tuples_axes_and_reserved_names():
    data = {"N": [1, 2], "A": [[2, 1], [1, 2]]}
    assert [k.name for k in _table("set N; var x{N, N};", data, "x").keys] == ["N", "N_2"]
    tuples = _table("set N; set A within N * N; var f{(i, j) in A};", data, "f")
    assert [k.name for k in tuples.keys] == ["i", "j"] and not tuples.grouped
    assert [k.column().tolist() for k in tuples.keys] == [[2, 1], [1, 2]]
    anonymous = _table("set N; set A within N * N; var f{A};", data, "f")
    assert [k.name for k in anonymous.keys] == ["A_1", "A_2"]
    axes = _table("var u[2, 3];", {}, "u")
    assert [k.name for k in axes.keys] == ["axis0", "axis1"] and all(k.axis for k in axes.keys)
    assert axes.keys[1].column().tolist() == [0, 1, 2, 0, 1, 2]
    reserved = _table("set S; var x{value in S};", {"S": ["p"]}, "x")
    assert [k.name for k in reserved.keys] == ["S"]
    ranged = _table("param n; var y{value in 1..n};", {"n": 2}, "y")
    assert [k.name for k in ranged.keys] == ["value_2"]  # not the value column's name


def test_nonzero_keeps_rows_and_keys_positions():
    axes = _table("var u[2, 2];", {}, "u").nonzero("value")
    assert axes.columns["value"].tolist() == [1, 2, 3]
    assert [k.column().tolist() for k in axes.keys] == [[0, 1, 1], [1, 0, 1]]
    assert not any(k.axis for k in axes.keys)


def test_negative_zero_is_zero_in_every_column():
    inst = bind("set S; var x{S};", {"S": ["a", "b"]})
    table = variable_table(inst.entity("x"), np.array([-0.0, 1.0]), np.array([-0.0, -0.0]))
    assert not np.signbit(table.columns["value"]).any()
    assert not np.signbit(table.columns["reduced_cost"]).any()
