"""JSON text of a keyed table, written from whole columns.

`json.dumps` of a nested dict costs a Python object per key and per value and formats every
number on its own; for a million-entry solution that is seconds. Here the entries are grouped
by key prefix, each distinct number and each distinct key is formatted once, and the text is
one join of three string columns (separator, key, value): the separator is `", "` inside a
group and, where a group changes, the closing and opening brackets and the keys of the levels
that changed — computed for all group starts at once."""

from __future__ import annotations

import json

import numpy as np

from .solution_tables import KeyColumn, Table


def number_texts(values: np.ndarray) -> list[str]:
    """JSON text per number: `null` where not finite (JSON has no NaN or infinity), `0.0` for
    both zeros, else Python's shortest round-trip repr — made once per distinct value when
    values repeat (a solution's entries do: most are 0)."""
    values = np.asarray(values, dtype=float).ravel()
    nonzero = np.flatnonzero(values != 0)  # (NaN != 0: formatted here, then nulled)
    if len(nonzero) > len(values) // 2:  # dense: format all, no bookkeeping
        out = list(map(float.__repr__, values.tolist()))
        zeros = np.flatnonzero(values == 0).tolist()  # -0.0 among them
    else:
        out = ["0.0"] * len(values)
        distinct, inverse = np.unique(values[nonzero], return_inverse=True)
        texts = list(map(float.__repr__, distinct.tolist()))
        for at, which in zip(nonzero.tolist(), inverse.tolist(), strict=True):
            out[at] = texts[which]
        zeros = []
    for at in zeros:
        out[at] = "0.0"
    for at in np.flatnonzero(~np.isfinite(values)).tolist():
        out[at] = "null"
    return out


def number_text(value) -> str:
    """One number as JSON (`null` when missing or not finite)."""
    return "null" if value is None else number_texts(np.array([value]))[0]


def table_text(table: Table, column: str) -> str:
    """`table[column]` as JSON nested by the table's keys: objects keyed by element for set
    indices, lists for numpy-style axes, a bare number for a scalar."""
    values = table.columns[column]
    keys = table.keys
    if not keys:
        return number_text(values[0]) if len(values) else "null"
    if not len(values):
        return json.dumps(np.zeros(table.shape).tolist()) if table.shape else "{}"
    if not table.grouped:
        table = table.take(_grouping_order(keys))
        keys, values = table.keys, table.columns[column]
    n, depth = len(values), len(keys)
    labels = [_labels(key) for key in keys]
    sep = [", "] * n
    sep[0] = _open(keys[0]) + "".join(labels[level][0] + _open(keys[level + 1])
                                      for level in range(depth - 1))
    levels = _first_changed_level(keys)
    starts = np.flatnonzero(levels[1:] < depth - 1) + 1  # entries that open a group
    for at, text in zip(starts.tolist(), _group_starts(keys, labels, levels[starts], starts),
                        strict=True):
        sep[at] = text
    parts: list = [None] * (3 * n)
    parts[0::3] = sep
    parts[1::3] = labels[-1]
    parts[2::3] = number_texts(values)
    return "".join(parts) + "".join(_close(k) for k in reversed(keys))


def _open(key: KeyColumn) -> str:
    return "[" if key.axis else "{"


def _close(key: KeyColumn) -> str:
    return "]" if key.axis else "}"


def _labels(key: KeyColumn) -> list[str]:
    """`"GARY": ` per entry (`""` on a list axis: its entries have no labels)."""
    if key.axis:
        return [""] * len(key.codes)
    texts = [json.dumps(t) + ": " for t in key.texts()]
    return list(map(texts.__getitem__, key.codes.tolist()))


def _first_changed_level(keys: list[KeyColumn]) -> np.ndarray:
    """Per entry, the first key level at which it differs from the entry before (a repeat of
    the previous key: the leaf level; entry 0's is meaningless)."""
    n, depth = len(keys[0].codes), len(keys)
    levels = np.full(n, depth - 1, dtype=np.int64)
    for level in range(depth - 2, -1, -1):
        codes = keys[level].codes
        changed = np.flatnonzero(codes[1:] != codes[:-1]) + 1
        levels[changed] = level
    return levels


def _group_starts(keys: list[KeyColumn], labels: list[list[str]], levels: np.ndarray,
                  rows: np.ndarray) -> list[str]:
    """The separator before each entry that starts a group at `levels`: close the levels below
    it, then open each level from there down with its key."""
    depth = len(keys)
    closing = ["".join(_close(k) for k in reversed(keys[level + 1:])) + ", "
               for level in range(depth)]
    opening = [_open(k) for k in keys]
    out = []
    for level, row in zip(levels.tolist(), rows.tolist(), strict=True):
        out.append(closing[level] + "".join(labels[inner][row] + opening[inner + 1]
                                            for inner in range(level, depth - 1)))
    return out


def _grouping_order(keys: list[KeyColumn]) -> np.ndarray:
    """An order of the entries that makes every key prefix contiguous, keeping first
    appearances first at each level (as inserting into nested dicts in entry order does)."""
    n = len(keys[0].codes)
    prefix = np.zeros(n, dtype=np.int64)
    sort_keys = []
    for key in keys[:-1]:
        prefix = prefix * np.int64(len(key.vocab)) + key.codes
        _, first, prefix = np.unique(prefix, return_index=True, return_inverse=True)
        sort_keys.append(first[prefix])
    sort_keys.append(np.arange(n))
    return np.lexsort(sort_keys[::-1])
