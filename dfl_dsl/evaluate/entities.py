"""Bound params, variables and exprs: their index domains and where their values live."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import ast
from .digits import Digit, consecutive, transposed
from .elements import SetValue, format_key
from .frame import Column, Frame


@dataclass
class Domain:
    """The entries of an indexed entity, in order: a dense product of sets (array layout)
    or, with a filter or dependent ranges, a sparse list of key tuples."""

    components: list[SetValue]
    frame: Frame  # one row per entry; its columns are the index's dummies
    names: list[list[str]]  # column names per component
    dense: bool

    @staticmethod
    def scalar() -> Domain:
        return Domain([], Frame.root(), [], True)

    @property
    def n(self) -> int:
        return self.frame.n

    @property
    def shape(self) -> tuple[int, ...]:
        if self.dense:
            return tuple(c.n for c in self.components)
        return (self.n,)

    @property
    def arity(self) -> int:
        return sum(len(names) for names in self.names)

    def keys(self) -> np.ndarray:
        """(n, arity) key table of the entries."""
        cols = [self.frame.get(name).keys for names in self.names for name in names]
        if not cols:
            return np.zeros((self.n, 0), dtype=np.int64)
        return np.stack(cols, axis=1)

    def label(self, entry: int) -> str:
        return format_key(self.keys()[entry]) if self.arity else ""

    def positions(self, args: list[Column]) -> tuple[np.ndarray, bool]:
        """Entry positions of the key tuples in `args` (one Column per subscript; -1 =
        absent), and whether none can be absent (every position came straight from the
        columns' own positions in the domain's sets: nothing to check)."""
        if not self.dense:
            table = self._table()
            return table.position(np.stack([a.keys for a in args], axis=1)), False
        digits = self._digits(args)
        if digits:
            digit = consecutive(digits, self.shape)
            flat = digit.array() if digit is not None else transposed(digits, self.shape)
            if flat is not None:
                return flat, True
        parts, exact, at = [], [], 0
        for comp, names in zip(self.components, self.names, strict=True):
            width = len(names)
            cols = args[at : at + width]
            at += width
            pos, direct = _component_positions(comp, cols)
            parts.append(pos)
            exact.append(direct)
        if len(parts) == 1:
            return parts[0], exact[0]
        # row-major flat position, one pass per component; only looked-up parts can hold -1
        flat = parts[0] * self.shape[1] + parts[1]  # fresh: the later parts add in place
        for pos, size in zip(parts[2:], self.shape[2:], strict=True):
            flat *= size
            flat += pos
        bad = [pos < 0 for pos, direct in zip(parts, exact, strict=True) if not direct]
        if bad:
            flat = np.where(np.logical_or.reduce(np.broadcast_arrays(*bad)), -1, flat)
        return flat, all(exact)

    def digit_positions(self, args: list[Column]) -> Digit | None:
        """The entry positions of `args` as a digit of the row number, when the columns are a
        cross join's over this domain's sets in its order (then no array need be built), else
        None."""
        digits = self._digits(args)
        return consecutive(digits, self.shape) if digits else None

    def _digits(self, args: list[Column]) -> list[Digit] | None:
        """Each component's digit, when every component's columns are one cross join digit
        over that component's set."""
        if not self.dense or not self.components:
            return None
        digits, at = [], 0
        for comp, names in zip(self.components, self.names, strict=True):
            cols = args[at : at + len(names)]
            at += len(names)
            first = cols[0]
            if first.digit is None or first.origin is not comp or any(
                    c.binding != first.binding or c.comp != k for k, c in enumerate(cols)):
                return None
            digits.append(first.digit)
        return digits

    def _table(self) -> SetValue:
        if not hasattr(self, "_lookup"):
            self._lookup = SetValue(self.keys())
        return self._lookup


def _component_positions(comp: SetValue, cols: list[Column]) -> tuple[np.ndarray, bool]:
    """Positions in `comp` of the keys in `cols` (-1 = absent), and whether they came straight
    from the columns' own positions in `comp` (then none is absent)."""
    first = cols[0]
    direct = (
        first.origin is comp
        and first.pos is not None
        and all(c.binding == first.binding and c.comp == k for k, c in enumerate(cols))
    )
    if direct:
        return first.pos, True
    keys = np.stack(np.broadcast_arrays(*[c.keys for c in cols]), axis=1)
    return comp.position(keys), False


@dataclass
class Entity:
    """A bound param (data or symbolic), var or expr."""

    name: str
    kind: str  # "data" | "var" | "theta" | "expr"
    decl: ast.Statement
    domain: Domain
    data: np.ndarray | None = None  # data params: one value per entry (keys for element params)
    missing: np.ndarray | None = None  # data params: entries without a value
    offset: int = 0  # var/theta: first column in z
    elem: bool = False  # data holds set-element keys
    shape_style: bool = False
    lower: np.ndarray | None = None  # vars: bounds per entry
    upper: np.ndarray | None = None
    integer: np.ndarray | None = None  # vars: integrality per entry
    extra: dict = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.domain.n

    @property
    def shape(self) -> tuple[int, ...]:
        return self.domain.shape

    def columns(self) -> np.ndarray:
        return self.offset + np.arange(self.size, dtype=np.int64)

    def entry_label(self, entry: int) -> str:
        if self.shape_style:
            index = np.unravel_index(entry, self.shape) if self.shape else ()
            return "[" + ", ".join(str(int(i)) for i in index) + "]" if index else ""
        return self.domain.label(entry)

    def array(self) -> np.ndarray:
        """Data values in array layout (dense domains) or entry order (sparse)."""
        assert self.data is not None
        return self.data.reshape(self.shape) if self.domain.dense else self.data

    def count(self) -> int:
        return math.prod(self.shape)
