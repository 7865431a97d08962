"""Equalities and memberships of an index's filter pushed into its joins.

`sum{(i, j) in ARCS: j == k} x[i, j]` inside `{k in NODES}` means the arcs into k. Read as
written — every arc for every node, then the filter — it is a |NODES| × |ARCS| cross join
(200 M rows for 5,000 nodes and 40,000 arcs), where `sum{(i, k) in ARCS}` is one sort-merge
join of |ARCS| rows. Likewise `sum{i in NODES: (i, k) in ARCS}` crosses NODES with NODES
(25 M rows) to keep the 40,000 that are arcs. So a top-level conjunct of the filter is used
while the dummies are bound:

* `name == e` (or `e == name`), `e` known when `name`'s item is joined (an outer or earlier
  dummy, a scalar element param, a literal): that component matches `e`'s keys instead of
  binding freely — the same join as the pattern form;
* `(.., name, ..) in S` with the tuple's other parts known: `name`'s candidates are read off
  S's matching rows (a sort-merge join), kept where they are in `name`'s own set, in that
  set's order — the rows, order and columns the filtered cross join has.

The filter is still evaluated on the joined rows, so a push-down only drops rows the filter
would drop: it changes how much is built, never what the index holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import ast
from .elements import SetValue
from .frame import Frame


def conjuncts(node: ast.Expr | None) -> list[ast.Expr]:
    """The top-level `and` operands of a filter."""
    if node is None:
        return []
    if isinstance(node, ast.BoolOp) and node.op == "and":
        return conjuncts(node.left) + conjuncts(node.right)
    return [node]


def _simple(node: ast.Expr) -> bool:
    """An expression whose keys are read without evaluating anything that could fail on rows
    the filter's other conjuncts would have skipped: a name or a literal."""
    return isinstance(node, (ast.Name, ast.String, ast.Number))


def equalities(index: ast.SetIndex) -> dict[str, list[ast.Expr]]:
    """For each dummy of `index`, the simple expressions a filter conjunct says it equals."""
    dummies = set(index.dummies)
    found: dict[str, list[ast.Expr]] = {}
    for node in conjuncts(index.filter):
        if not (isinstance(node, ast.Compare) and node.ops == ("==",)):
            continue
        left, right = node.operands
        for name, other in ((left, right), (right, left)):
            if (isinstance(name, ast.Name) and name.id in dummies and _simple(other)
                    and not (isinstance(other, ast.Name) and other.id == name.id)):
                found.setdefault(name.id, []).append(other)
    return found


def memberships(index: ast.SetIndex) -> dict[str, list[ast.Member]]:
    """For each dummy of `index`, the conjuncts `(.., dummy, ..) in SET` (parts all simple)."""
    dummies = set(index.dummies)
    found: dict[str, list[ast.Member]] = {}
    for node in conjuncts(index.filter):
        if not (isinstance(node, ast.Member) and isinstance(node.set, ast.Name)):
            continue
        parts = node.element.items if isinstance(node.element, ast.Tuple) else (node.element,)
        if not all(_simple(p) for p in parts):
            continue
        for name in dict.fromkeys(p.id for p in parts if isinstance(p, ast.Name)):
            if name in dummies:
                found.setdefault(name, []).append(node)
    return found


@dataclass
class Match:
    """`name`'s candidates from a membership: the set, where `name` sits in its tuples, and
    the keys per frame row of its other components."""

    the_set: SetValue
    at: list[int]
    fixed: dict[int, np.ndarray]


class Pushdown:
    """What an index's filter says about its dummies, read while they are bound."""

    def __init__(self, index: ast.SetIndex,
                 element_keys: Callable[[ast.Expr, Frame], np.ndarray],
                 set_of: Callable[[ast.Expr, Frame], object],
                 is_scalar_data: Callable[[str], bool]) -> None:
        self._equal = equalities(index)
        self._member = memberships(index)
        self._element_keys, self._set_of = element_keys, set_of
        self._is_scalar_data = is_scalar_data

    def __bool__(self) -> bool:
        return bool(self._equal or self._member)

    def _keys(self, node: ast.Expr, frame: Frame, pending: frozenset) -> np.ndarray | None:
        """`node`'s keys per frame row, or None when it isn't known yet."""
        if isinstance(node, ast.Name):
            column = frame.get(node.id)
            if column is not None:
                return column.keys
            if node.id in pending or not self._is_scalar_data(node.id):
                return None
        return np.broadcast_to(self._element_keys(node, frame), (frame.n,))

    def equal(self, name: str, frame: Frame, pending: frozenset) -> np.ndarray | None:
        """The keys, per frame row, that the filter says the fresh dummy `name` equals."""
        for other in self._equal.get(name, ()):
            keys = self._keys(other, frame, pending)
            if keys is not None:
                return keys
        return None

    def member(self, name: str, frame: Frame, pending: frozenset) -> Match | None:
        """A membership that lists the fresh dummy `name`'s candidates, its other parts known."""
        for node in self._member.get(name, ()):
            if node.set.id in pending or frame.get(node.set.id) is not None:
                continue
            parts = node.element.items if isinstance(node.element, ast.Tuple) else (node.element,)
            the_set = self._set_of(node.set, frame)
            if not isinstance(the_set, SetValue) or the_set.dim != len(parts):
                continue
            at = [k for k, p in enumerate(parts) if isinstance(p, ast.Name) and p.id == name]
            fixed = {}
            for k, part in enumerate(parts):
                if k not in at:
                    fixed[k] = self._keys(part, frame, pending)
            if all(keys is not None for keys in fixed.values()):
                return Match(the_set, at, fixed)
        return None
