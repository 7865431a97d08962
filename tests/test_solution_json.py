"""Column-wise JSON of keyed tables: the same objects as nesting dicts entry by entry."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.solution_json import number_text, number_texts, table_text
from dfl_dsl.solution_tables import KeyColumn, Table, variable_table


def _nested(table: Table, column: str):
    """The reference: insert entry by entry into nested dicts (lists for axes), as the JSON
    contract reads."""
    values = [None if not np.isfinite(v) else float(v) + 0.0
              for v in table.columns[column].tolist()]
    if not table.keys:
        return values[0]
    out: dict = {}
    for i, value in enumerate(values):
        node = out
        path = [str(k.texts()[k.codes[i]]) for k in table.keys]
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return _lists(out, [k.axis for k in table.keys])


def _lists(node, axes):
    if not axes:
        return node
    inner = [_lists(v, axes[1:]) for v in node.values()]
    return inner if axes[0] else dict(zip(node, inner, strict=True))


def test_numbers_round_trip_and_nulls():
    values = np.array([0.1, -0.0, 0.0, np.nan, np.inf, -np.inf, 1e300, 1 / 3, 2.0, 0.1])
    texts = number_texts(values)
    assert texts[1] == texts[2] == "0.0" and texts[3:6] == ["null"] * 3
    assert [float(t) for t in texts[:3] + texts[6:]] == [0.1, 0, 0, 1e300, 1 / 3, 2.0, 0.1]
    dense = np.random.default_rng(1).normal(size=50)
    dense[[3, 7]] = [-0.0, np.nan]
    assert json.loads("[" + ", ".join(number_texts(dense)) + "]")[:3] == dense[:3].tolist()
    assert number_text(None) == "null" and number_text(-0.0) == "0.0"


@pytest.mark.parametrize("seed", range(12))
def test_random_tables_match_the_nested_dict_reference(seed):
    """Sparse key tables in any order (groups not contiguous), with lists on some levels."""
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(1, 4))
    n = int(rng.integers(1, 40))
    vocab_sizes = rng.integers(1, 5, depth)
    rows = np.unique(np.stack([rng.integers(0, s, n) for s in vocab_sizes], axis=1), axis=0)
    rows = rows[rng.permutation(len(rows))]
    axes = [bool(rng.integers(0, 2)) and level > 0 for level in range(depth)]
    if any(axes):  # a list level holds every position: make the table a full product
        grids = np.meshgrid(*[np.arange(s) for s in vocab_sizes], indexing="ij")
        rows = np.stack([g.ravel() for g in grids], axis=1)
    keys = [KeyColumn(f"k{level}", np.arange(100, 100 + vocab_sizes[level], dtype=np.int64),
                      rows[:, level].astype(np.int64), axes[level]) for level in range(depth)]
    values = rng.choice([0.0, 1.5, -2.25, np.nan], len(rows))
    table = Table("t", keys, {"value": values}, grouped=any(axes))
    assert json.loads(table_text(table, "value")) == _nested(table, "value")


def test_variables_of_every_layout():
    inst = bind("set I; set J; set A within I * J; var s{I, J}; var f{A}; var u[2, 3]; var k;"
                "var e{i in I, j in J: i == \"b\"};",
                {"I": ["a", "b"], "J": [1, "x"], "A": [["b", 1], ["a", "x"], ["b", "x"]]})
    got = {}
    for entity in inst.variables:
        values = np.arange(entity.size, dtype=float) - 1
        got[entity.name] = json.loads(table_text(variable_table(entity, values), "value"))
    assert got["s"] == {"a": {"1": -1.0, "x": 0.0}, "b": {"1": 1.0, "x": 2.0}}
    assert got["f"] == {"b": {"1": -1.0, "x": 1.0}, "a": {"x": 0.0}}  # first appearance order
    assert got["u"] == [[-1.0, 0.0, 1.0], [2.0, 3.0, 4.0]]
    assert got["k"] == -1.0
    assert got["e"] == {"b": {"1": -1.0, "x": 0.0}}


def test_empty_tables_keep_their_shape():
    inst = bind("param n; var u[2, n]; set S; var x{S};", {"n": 0, "S": []})
    assert table_text(variable_table(inst.entity("u"), np.zeros(0)), "value") == "[[], []]"
    assert table_text(variable_table(inst.entity("x"), np.zeros(0)), "value") == "{}"
