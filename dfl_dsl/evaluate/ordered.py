"""AMPL's functions of sets: `card`, and of a set's order `first last next prev ord member`.

Every set keeps the order its data or definition gives, so these work on any set (AMPL asks
for `ordered` sets; declaring one so is accepted). Each is vectorized over a frame's rows: a
position lookup in the set, arithmetic on positions, a gather of keys. `next` and `prev` past
either end are errors, as in AMPL, except on a `circular` set, where they wrap around (as
`nextw` and `prevw` do on any set); `ord0` is 0 for an element not in the set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import ast
from .elements import SetValue, element_of, number_keys
from .frame import Frame, RowRanges, RowSets
from .set_functions import SET_FUNCTIONS
from .values import EvalError, Val, aligned_array


class OrderedRules:
    """Mixed into `Evaluator`: `_set_call` evaluates one of `SET_FUNCTIONS`."""

    def _set_call(self, node: ast.Call, frame: Frame) -> Val:
        name = node.func
        if SET_FUNCTIONS[name].text:
            return self._text_call(node, frame)
        if name == "card":
            return _card(self.set_of(node.args[0], frame), frame)
        if name in ("first", "last"):
            return _end(self.set_of(node.args[0], frame), name)
        if name == "member":
            the_set = _fixed(self.set_of(node.args[1], frame), name)
            k = self.number(node.args[0], frame)
            pos = np.asarray(k.payload) - 1
            bad = (pos < 0) | (pos >= the_set.n) | (pos != np.round(pos))
            if np.any(bad):
                raise EvalError(f"`member`: position {_first(k.payload, bad):g} is not in "
                                f"1..{the_set.n}")
            return Val(the_set.keys[pos.astype(np.int64), 0], k.framed, (), "elem")
        return self._step(node, frame)

    def _step(self, node: ast.Call, frame: Frame) -> Val:
        """`next`, `prev` and `ord`: the element's position in its set, moved or counted."""
        name, args = node.func, node.args
        element = self.value(args[0], frame)
        the_set = (self.set_of(args[1], frame) if len(args) > 1
                   else _own_set(args[0], frame, name))
        keys = np.asarray(element.payload)
        if element.kind != "elem":
            keys = number_keys(keys)
        step = self.number(args[2], frame) if len(args) > 2 else Val(np.asarray(1))
        framed = element.framed or step.framed or isinstance(the_set, RowSets)
        size = frame.n if framed else 1
        flat = np.broadcast_to(np.atleast_1d(keys).ravel(), (size,))
        order = _Order.of(the_set, flat, name)
        if name == "ord0":
            out = order.pos + 1
            return Val(out if framed else out.reshape(()), framed, ())
        if np.any(order.pos < 0):
            bad = _first(flat, order.pos < 0)
            raise EvalError(f"`{name}`: {element_of(bad)!r} is not in the set")
        if name == "ord":
            out = order.pos + 1
            return Val(out if framed else out.reshape(()), framed, ())
        moves = np.broadcast_to(aligned_array(step, framed, 0, frame.n), (size,))
        if np.any(moves != np.round(moves)):
            raise EvalError(f"`{name}`'s step must be a whole number")
        sign = 1 if name.startswith("next") else -1
        moved = order.pos + sign * moves.astype(np.int64)
        if order.circular or name.endswith("w"):  # `nextw`/`prevw` wrap on any set
            moved = moved % np.maximum(order.n, 1)
        out = (moved < 0) | (moved >= order.n)
        if np.any(out):
            end = "last" if sign > 0 else "first"
            raise EvalError(f"`{name}` goes past the {end} element of the set, from "
                            f"{element_of(_first(flat, out))!r}",
                            f"exclude it with a condition, e.g. `{{t in T: t <> {end}(T)}}`,"
                            " or declare the set `circular` to wrap around")
        result = order.gather(moved)
        return Val(result if framed else result.reshape(()), framed, (), "elem")


@dataclass
class _Order:
    """Where elements sit in their set (or in each row's set of `S[i]`): positions from 0,
    the set sizes, and how to read the element at a position."""

    pos: np.ndarray
    n: np.ndarray | int
    circular: bool
    gather: Callable[[np.ndarray], np.ndarray]

    @staticmethod
    def of(the_set, keys: np.ndarray, name: str) -> _Order:
        if isinstance(the_set, RowSets):
            if the_set.dim != 1:
                raise EvalError(f"`{name}` needs a set of single elements")
            return _Order(the_set.locate(keys.reshape(-1, 1)), the_set.counts,
                          the_set.circular, lambda at: the_set.keys[the_set.begin + at, 0])
        fixed = _fixed(the_set, name)
        return _Order(fixed.position(keys), fixed.n, fixed.circular,
                      lambda at: fixed.keys[at, 0])


def _end(the_set: SetValue | RowRanges | RowSets, name: str) -> Val:
    """`first(S)`, `last(S)`; of `S[i]`, one per frame row."""
    if isinstance(the_set, RowSets):
        if the_set.dim != 1:
            raise EvalError(f"`{name}` needs a set of single elements")
        if np.any(the_set.counts == 0):
            raise EvalError(f"`{name}` of an empty set")
        at = the_set.begin if name == "first" else the_set.end - 1
        return Val(the_set.keys[at, 0], True, (), "elem")
    if isinstance(the_set, RowRanges):
        if np.any(the_set.hi < the_set.lo):
            raise EvalError(f"`{name}` of an empty set")
        return Val(np.asarray(the_set.lo if name == "first" else the_set.hi), True, (), "elem")
    the_set = _fixed(the_set, name)
    if the_set.n == 0:
        raise EvalError(f"`{name}` of an empty set")
    return Val(np.asarray(the_set.keys[0 if name == "first" else -1, 0]), kind="elem")


def _card(the_set: SetValue | RowRanges | RowSets, frame: Frame) -> Val:
    if isinstance(the_set, SetValue):
        return Val(np.asarray(the_set.n))
    if isinstance(the_set, RowSets):
        return Val(the_set.counts, True, ())
    counts = np.maximum(np.broadcast_to(the_set.hi - the_set.lo + 1, (frame.n,)), 0)
    return Val(counts.astype(np.int64), True, ())


def _fixed(the_set, name: str) -> SetValue:
    if not isinstance(the_set, SetValue):
        raise EvalError(f"`{name}` of a set that changes with the index is not supported",
                        "name the set with a `set` declaration")
    if the_set.dim != 1:
        raise EvalError(f"`{name}` needs a set of single elements")
    return the_set


def _own_set(arg: ast.Expr, frame: Frame, name: str) -> SetValue:
    """The set a dummy runs over (`next(t)` for `t in T`)."""
    column = frame.get(arg.id) if isinstance(arg, ast.Name) else None
    if column is None or column.origin is None or column.origin.dim != 1:
        raise EvalError(f"`{name}` can't tell which set this element belongs to",
                        f"name the set: `{name}(e, SET)`")
    return column.origin


def _first(values, mask: np.ndarray):
    """The first of `values` where `mask` holds (for a message)."""
    return np.broadcast_to(np.asarray(values), mask.shape)[mask].ravel()[0]
