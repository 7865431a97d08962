"""The evaluator's subscripts: an entity's entries by key (`cost[i, j]`, joins of the frame's
dummies with its domain) and numpy-style slices of arrays (`A[0 .. 2, k]`)."""

from __future__ import annotations

import math

import numpy as np

from .. import ast
from ..errors import DflError
from .elements import ELEMENT_RANGE, format_key, whole_keys
from .entities import Entity
from .families import SetFamily
from .frame import Column, Frame
from .lazy import MissingEntry
from .poly import Poly
from .values import EvalError, Val, flat_data, index_map


class SubscriptRules:
    """Mixed into `Evaluator`."""

    # ------------------------------------------------------------------ subscripts
    def _v_Subscript(self, node: ast.Subscript, frame: Frame) -> Val:
        base = node.base
        if isinstance(base, ast.Name) and base.id in self.ctx.families:
            return self._member_set(self.ctx.families[base.id], node, frame)
        if isinstance(base, ast.Name) and frame.get(base.id) is None:
            entity = self.ctx.entities.get(base.id)
            if entity is not None and not entity.shape_style and entity.decl.index is not None:
                return self._entry(entity, node, frame)
        whole = self.value(base, frame)
        return self._slice(whole, node, frame)

    def _key_columns(self, args: tuple[ast.Expr, ...], frame: Frame) -> tuple[list[Column], bool]:
        cols, framed = [], False
        for arg in args:
            if isinstance(arg, ast.Name) and frame.get(arg.id) is not None:
                cols.append(frame.get(arg.id))
                framed = True
                continue
            v = self.value(arg, frame)
            if v.symbolic or v.kind in ("set", "bool") or v.shape != ():
                raise DflError("a subscript must be one element", arg.pos)
            keys = np.asarray(v.payload)
            if v.kind != "elem":
                keys = whole_keys(keys)
                if keys is None:
                    raise DflError("a subscript must be an element: one of the "
                                   f"{ELEMENT_RANGE}, or a string", arg.pos)
            cols.append(Column(np.atleast_1d(keys).astype(np.int64)))
            framed = framed or v.framed
        n = frame.n if framed else 1
        cols = [c if c.n == n else Column(np.broadcast_to(c.keys, (n,))) for c in cols]
        return cols, framed

    def _entry(self, entity: Entity, node: ast.Subscript, frame: Frame) -> Val:
        cols, framed = self._key_columns(node.args, frame)
        if len(cols) != entity.domain.arity:
            raise EvalError(
                f"`{entity.name}` takes {entity.domain.arity} subscript(s), got {len(cols)}"
            )
        whole = _whole_entity(entity, cols, self.ctx.width)
        if whole is not None:
            return whole
        pos, complete = _positions(entity.domain, cols, frame)
        if not complete and np.any(pos < 0):
            bad = int(np.nonzero(pos < 0)[0][0])
            key = format_key([c.keys[bad] for c in cols])
            raise EvalError(
                f"`{entity.name}{key}` is outside the index set of `{entity.name}`",
                "check the subscripts (and the data's sets)",
            )
        if entity.kind == "data":
            if entity.missing is not None:
                gone = entity.missing[pos]
                if gone.any():
                    bad = int(pos[np.nonzero(gone)[0][0]])
                    if "lazy" in entity.extra:  # (computed when first read: evaluate/lazy.py)
                        raise MissingEntry(entity.name, bad)
                    raise EvalError(
                        f"param `{entity.name}` has no value for {entity.entry_label(bad)}",
                        "give it in the data, or declare a `default`",
                    )
            values = entity.data[pos]
            kind = "elem" if entity.elem else "num"
            return Val(values if framed else values[0], framed, (), kind)
        if entity.kind in ("var", "theta"):
            poly = Poly.symbols(pos, self.ctx.width, offset=entity.offset)
            return Val(poly, framed, ())
        macro = self._macro(entity)
        rows = index_map(macro, True, macro.shape, entity.domain.n).reshape(
            entity.domain.n, math.prod(macro.shape)  # (not -1: the index may be empty)
        )[pos].ravel()
        payload = macro.payload
        if macro.symbolic:
            payload = payload.take(rows)
        else:
            payload = flat_data(macro, True, macro.shape, entity.domain.n)[rows]
            payload = payload.reshape((len(pos),) + macro.shape)
            if not framed:
                payload = payload[0]
        return Val(payload, framed, macro.shape, macro.kind)

    def _member_set(self, family: SetFamily, node: ast.Subscript, frame: Frame) -> Val:
        """`S[i]` of an indexed set: its member set for each frame row."""
        cols, framed = self._key_columns(node.args, frame)
        if len(cols) != family.domain.arity:
            raise EvalError(f"`{family.name}` takes {family.domain.arity} subscript(s), got "
                            f"{len(cols)}")
        pos, complete = _positions(family.domain, cols, frame)
        if not complete and np.any(pos < 0):
            bad = int(np.nonzero(pos < 0)[0][0])
            key = format_key([c.keys[bad] for c in cols])
            raise EvalError(f"`{family.name}{key}` is outside the index set of "
                            f"`{family.name}`")
        return Val(family.members(pos, framed), framed, (), "set")

    def _slice(self, whole: Val, node: ast.Subscript, frame: Frame) -> Val:
        """numpy-style indexing with integers and `lo..hi` slices."""
        if whole.kind == "set":
            raise DflError("a set can't be subscripted", node.pos)
        if len(node.args) > len(whole.shape):
            raise DflError(
                f"too many subscripts ({len(node.args)}) for an array of shape "
                f"{list(whole.shape)}",
                node.pos,
            )
        framed = whole.framed
        ints, out_axes = [], []
        for axis, arg in enumerate(node.args):
            entry = self._subscript(arg, whole.shape[axis], frame)
            if entry[0] == "slice":
                out_axes.append(entry[2] - entry[1] + 1)
            else:
                framed = framed or entry[2]
            ints.append(entry)
        rest = list(whole.shape[len(node.args):])
        out_shape = tuple(out_axes + rest)
        lead = (frame.n,) if framed else ()
        flat = _flat_positions(whole, ints, rest, lead, out_shape, frame.n)
        if whole.symbolic:
            return Val(whole.payload.take(flat), framed, out_shape)
        data = np.asarray(whole.payload).ravel()[flat].reshape(lead + out_shape)
        return Val(data, framed, out_shape, whole.kind)

    def _subscript(self, arg: ast.Expr, size: int, frame: Frame) -> tuple:
        """("slice", lo, hi) for `lo..hi`, ("int", k, framed) for an integer (per frame row
        when framed), checked against the axis' size."""
        if isinstance(arg, ast.Range):
            lo = self.int_scalar(arg.lo, frame, "a slice bound")
            hi = self.int_scalar(arg.hi, frame, "a slice bound")
            # `lo..lo-1` is empty, as the range is (`v[0..k-1]` with k = 0): it may sit at
            # either end, 0..-1 or size..size-1; any other end beyond the axis is a mistake
            empty = hi == lo - 1 and 0 <= lo <= size
            if not empty and lo > hi + 1 and 0 <= hi < lo < size:
                raise DflError(f"slice {lo}..{hi} runs backwards", arg.pos,
                               hint=f"an empty slice is `lo..lo-1` with lo in 0..{size}")
            if not empty and (lo < 0 or hi >= size or lo > hi):
                raise DflError(f"slice {lo}..{hi} is outside 0..{size - 1}", arg.pos)
            return ("slice", lo, hi)
        v = self.number(arg, frame)
        if v.symbolic or v.shape != ():
            raise DflError("a subscript must be one integer", arg.pos)
        k = np.asarray(v.payload)
        if k.dtype.kind == "f" and not np.all(k == np.round(k)):
            raise DflError("a subscript must be an integer", arg.pos)
        outside = (k < 0) | (k >= size)  # compared before the cast, which would wrap
        if np.any(outside):
            raise DflError(f"index {np.ravel(k)[np.argmax(np.ravel(outside))]:g} is outside "
                           f"0..{size - 1}", arg.pos)
        k = k.astype(np.int64)
        return ("int", k, v.framed)

    def int_scalar(self, node: ast.Expr, frame: Frame, what: str) -> int:
        v = self.number(node, frame)
        if v.symbolic or v.framed or v.shape != ():
            raise DflError(f"{what} must be one integer from data", node.pos)
        value = float(np.asarray(v.payload))
        if not value.is_integer():  # (inf and nan too)
            raise DflError(f"{what} must be an integer, got {value:g}", node.pos)
        return int(value)


def _flat_positions(whole: Val, ints: list[tuple], rest: list[int], lead: tuple,
                    out_shape: tuple, n: int) -> np.ndarray:
    """The flat positions in `whole` (frame rows first when framed) of every entry of the
    result, from the subscripts `ints` and the axes left whole (`rest`)."""
    ndim_out = len(lead) + len(out_shape)

    def place(values: np.ndarray, axis: int) -> np.ndarray:
        shape = [1] * ndim_out
        shape[axis] = len(values)
        return values.reshape(shape)

    coords: list[np.ndarray] = []
    out_axis = len(lead)
    for entry in ints:
        if entry[0] == "slice":
            _, lo, hi = entry
            coords.append(place(np.arange(lo, hi + 1), out_axis))
            out_axis += 1
        else:
            _, k, k_framed = entry
            coords.append(place(k, 0) if k_framed else np.asarray(k))
    for size in rest:
        coords.append(place(np.arange(size), out_axis))
        out_axis += 1
    src_shape = ((n,) if whole.framed else ()) + tuple(whole.shape)
    if whole.framed:
        coords.insert(0, place(np.arange(n), 0))
    target = lead + out_shape
    grids = [np.broadcast_to(c, target) for c in coords]
    return np.ravel_multi_index(grids, src_shape).ravel() if grids else np.zeros(1, np.int64)


def _whole_entity(entity: Entity, cols: list[Column], width: int) -> Val | None:
    """`x[i, j]` over a cross join of x's own sets in x's order (`sum{i in I, j in J} c[i, j] *
    x[i, j]`): frame row r is entry r, so a param's values are its array as it stands (a
    read-only view: no gather) and a variable's symbols a range (no positions). None when the
    rows aren't the entries in order, or a param misses entries (the general path says
    which)."""
    if entity.kind not in ("data", "var", "theta"):
        return None
    digit = entity.domain.digit_positions(cols)
    if digit is None or not digit.identity:  # (identity: n is the domain's size)
        return None
    if entity.kind != "data":
        n = entity.domain.n
        return Val(Poly.symbols(range(entity.offset, entity.offset + n), width), True, ())
    if entity.missing is not None and entity.missing.any():
        return None
    values = entity.data.view()
    values.flags.writeable = False
    return Val(values, True, (), "elem" if entity.elem else "num")


def _positions(domain, cols: list[Column], frame: Frame) -> tuple[np.ndarray, bool]:
    """domain.positions(cols), remembered on the frame: `c[i, j] * x[i, j]` looks up the same
    positions of the same dummies twice (a million-entry gather each at scale)."""
    key = (id(domain), *map(id, cols))
    hit = frame.memo.get(key)
    if hit is None:  # the entry holds domain and cols: their ids can't be reused meanwhile
        hit = frame.memo[key] = (domain, cols, domain.positions(cols))
    return hit[2]
