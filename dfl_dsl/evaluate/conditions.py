"""The evaluator's conditions and sets: comparisons, `and`/`or`/`not`, membership, `if` (each
branch only where it is chosen), ranges, set literals and set operations."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import ast
from ..errors import DflError
from .elements import ELEMENT_RANGE, STRING_BASE, SetValue, number_keys, whole_keys
from .frame import Frame, RowRanges, RowSets
from .nonlinear import NL
from .sizes import check_count
from .values import EvalError, Val, aligned_array, expand, flat_data, out_shape

_COMPARE = {
    "==": np.equal,
    "!=": np.not_equal,
    "<=": np.less_equal,
    ">=": np.greater_equal,
    "<": np.less,
    ">": np.greater,
}


class ConditionRules:
    """Mixed into `Evaluator`."""

    # ------------------------------------------------------------------ logic
    def _v_Compare(self, node: ast.Compare, frame: Frame) -> Val:
        vals = [self.value(o, frame) for o in node.operands]
        for o, v in zip(node.operands, vals, strict=True):
            if v.symbolic:
                raise DflError("a condition can't depend on variables", o.pos)
        result = None
        for k, op in enumerate(node.ops):
            a, b = vals[k], vals[k + 1]
            if op not in ("==", "!=") and (_has_strings(a) or _has_strings(b)):
                raise DflError(f"`{op}` can't order string elements", node.operands[k].pos)
            shape = out_shape(a, b)
            framed = a.framed or b.framed
            test = _COMPARE[op](
                aligned_array(a, framed, len(shape), frame.n),
                aligned_array(b, framed, len(shape), frame.n),
            )
            link = Val(test, framed, shape, "bool")
            result = link if result is None else _logical(np.logical_and, result, link, frame)
        return result

    def _v_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Val:
        left = self.value(node.left, frame)
        right = self.value(node.right, frame)
        fn = np.logical_and if node.op == "and" else np.logical_or
        return _logical(fn, left, right, frame)

    def _v_Not(self, node: ast.Not, frame: Frame) -> Val:
        v = self.value(node.operand, frame)
        return Val(np.logical_not(v.payload), v.framed, v.shape, "bool")

    def _v_Member(self, node: ast.Member, frame: Frame) -> Val:
        element = self.value(node.element, frame)
        the_set = self.set_of(node.set, frame)
        keys = np.asarray(element.payload)
        if isinstance(the_set, RowSets):
            if element.kind != "elem":
                keys = number_keys(keys)
            keys = np.broadcast_to(keys, (frame.n,)).reshape(-1, 1)
            return Val(the_set.contains(keys), True, (), "bool")
        if isinstance(the_set, RowRanges):
            keys = np.broadcast_to(keys, (frame.n,))
            inside = (keys >= the_set.lo) & (keys <= the_set.hi)
            return Val(inside, True, (), "bool")
        if element.kind != "elem":  # 2.5 is in no set (a cast would truncate it to 2)
            keys = number_keys(keys)
        inside = the_set.position(np.atleast_1d(keys).ravel()) >= 0
        return Val(inside.reshape(keys.shape), element.framed, element.shape, "bool")

    def _v_IfThenElse(self, node: ast.IfThenElse, frame: Frame) -> Val:
        cond = self.value(node.cond, frame)
        if cond.shape == () and not cond.symbolic:
            # each branch only where it is chosen: `if d[i] != 0 then 1 / d[i] else 0` must
            # not divide by the zeros the condition rules out
            if not cond.framed:
                return self.value(node.then if bool(np.asarray(cond.payload)) else node.orelse,
                                  frame)
            return self._chosen(node, flat_data(cond, True, (), frame.n).astype(bool), frame)
        then = self.value(node.then, frame)
        orelse = self.value(node.orelse, frame)
        if then.kind == "elem" and orelse.kind == "elem":
            kind = "elem"
        else:
            then, orelse, kind = self._as_number(then, node.then), self._as_number(
                orelse, node.orelse
            ), "num"
        shape = out_shape(then, orelse, cond)
        framed = then.framed or orelse.framed or cond.framed
        n = frame.n
        mask = flat_data(cond, framed, shape, n).astype(bool)
        if not then.symbolic and not orelse.symbolic:
            a = flat_data(then, framed, shape, n)
            b = flat_data(orelse, framed, shape, n)
            target = ((n,) if framed else ()) + shape
            return Val(np.where(mask, a, b).reshape(target), framed, shape, kind)
        width = self.ctx.width
        a = expand(then, framed, shape, n, width).scale(mask.astype(float))
        b = expand(orelse, framed, shape, n, width).scale((~mask).astype(float))
        return Val(b + a if isinstance(b, NL) and not isinstance(a, NL) else a + b, framed, shape)

    def _chosen(self, node: ast.IfThenElse, mask: np.ndarray, frame: Frame) -> Val:
        """`if` with one condition per frame row: each branch evaluated on its own rows."""
        n, width = frame.n, self.ctx.width
        parts = []
        for branch, rows in ((node.then, np.nonzero(mask)[0]), (node.orelse, np.nonzero(~mask)[0])):
            if len(rows):
                parts.append((branch, rows, self.value(branch, frame.take(rows))))
        if len(parts) == 2 and not all(v.kind == "elem" for _, _, v in parts):
            parts = [(b, r, self._as_number(v, b)) for b, r, v in parts]
        kind = parts[0][2].kind if parts else "num"
        shape = out_shape(*(v for _, _, v in parts)) if parts else ()
        size = math.prod(shape)
        if not any(v.symbolic for _, _, v in parts):
            dtype = np.int64 if kind == "elem" else float
            out = np.zeros((n, *shape), dtype=dtype)
            for _, rows, v in parts:
                out[rows] = flat_data(v, True, shape, len(rows)).reshape((len(rows), *shape))
            return Val(out, True, shape, kind)
        total = None
        for _, rows, v in parts:  # each part's rows, placed at its frame rows
            sub = expand(v, True, shape, len(rows), width)
            targets = (rows[:, None] * size + np.arange(size)).ravel()
            place = sp.csr_array((np.ones(len(targets)), (targets, np.arange(len(targets)))),
                                 shape=(n * size, len(targets)))
            placed = sub.rowmap(place)
            total = placed if total is None else (
                total + placed if isinstance(total, NL) or not isinstance(placed, NL)
                else placed + total)
        return Val(total, True, shape)

    # ------------------------------------------------------------------ sets
    def _v_Range(self, node: ast.Range, frame: Frame) -> Val:
        lo = self.number(node.lo, frame)
        hi = self.number(node.hi, frame)
        bounds = []
        for side, v in ((node.lo, lo), (node.hi, hi)):
            if v.symbolic or v.shape != ():
                raise DflError("a range's bounds must be integers from data", side.pos)
            keys = whole_keys(np.asarray(v.payload))
            if keys is None:
                raise DflError(f"a range's bounds must be {ELEMENT_RANGE}", side.pos)
            bounds.append(keys)
        if not lo.framed and not hi.framed:
            a, b = int(bounds[0]), int(bounds[1])
            check_count(max(b - a + 1, 0), f"the range {a}..{b}")
            return Val(SetValue(np.arange(a, b + 1, dtype=np.int64)), kind="set")
        n = frame.n
        lo_arr = np.broadcast_to(bounds[0], (n,))
        hi_arr = np.broadcast_to(bounds[1], (n,))
        return Val(RowRanges(lo_arr, hi_arr), True, (), "set")

    def _v_SetLiteral(self, node: ast.SetLiteral, frame: Frame) -> Val:
        if node.elements and self.value(node.elements[0], frame).kind == "set":
            product = self.set_of(node.elements[0], frame)  # AMPL's `{ORIG, DEST}`
            for element in node.elements[1:]:
                product = cross(product, self.set_of(element, frame))
            return Val(product, kind="set")
        keys = []
        for element in node.elements:
            v = self.value(element, frame)
            if v.framed or v.symbolic or v.shape != ():
                raise DflError("a set literal lists fixed elements", element.pos)
            key = np.asarray(v.payload)
            if v.kind != "elem":
                key = whole_keys(key)
                if key is None:
                    raise DflError(f"a set element must be a string or one of the "
                                   f"{ELEMENT_RANGE}", element.pos)
            keys.append(int(key))
        the_set = SetValue(np.asarray(keys, dtype=np.int64).reshape(-1, 1))
        if len(the_set.duplicates()):
            raise DflError("a set literal repeats an element", node.pos)
        return Val(the_set, kind="set")

    def _v_SetOp(self, node: ast.SetOp, frame: Frame) -> Val:
        left = self.set_of(node.left, frame)
        right = self.set_of(node.right, frame)
        if isinstance(left, RowSets) and isinstance(right, SetValue) and node.op in (
                "diff", "inter") and left.dim == right.dim:  # `S[i] diff T`: each row's
            return Val(left.keep(right, inside=node.op == "inter"), True, (), "set")
        if not isinstance(left, SetValue) or not isinstance(right, SetValue):
            raise DflError(
                f"`{node.op}` of sets that depend on dummies is not supported", node.pos
            )
        if left.dim != right.dim:
            raise DflError(f"`{node.op}` of sets of different tuple widths", node.pos)
        if node.op == "union":
            keys = np.concatenate([left.keys, right.keys])
            merged = SetValue(keys)
            dup = merged.duplicates()
            keep = np.setdiff1d(np.arange(len(keys)), dup)
            return Val(SetValue(keys[keep]), kind="set")
        inside = right.position(left.keys) >= 0
        keep = inside if node.op == "inter" else ~inside
        if node.op == "symdiff":  # in one but not both: left's, then right's, in order
            theirs = ~(left.position(right.keys) >= 0)
            return Val(SetValue(np.concatenate([left.keys[keep], right.keys[theirs]])),
                       kind="set")
        return Val(SetValue(left.keys[keep]), kind="set")


def _has_strings(v: Val) -> bool:
    return v.kind == "elem" and bool(np.any(np.asarray(v.payload) >= STRING_BASE))


def _logical(fn, a: Val, b: Val, frame: Frame) -> Val:
    framed = a.framed or b.framed
    shape = out_shape(a, b)
    out = fn(
        aligned_array(a, framed, len(shape), frame.n),
        aligned_array(b, framed, len(shape), frame.n),
    )
    return Val(out, framed, shape, "bool")


def cross(a: SetValue | RowRanges, b: SetValue | RowRanges) -> SetValue:
    if not isinstance(a, SetValue) or not isinstance(b, SetValue):
        raise EvalError("a cross product of sets that depend on dummies is not supported")
    check_count(a.n * b.n, "this product")
    left = np.repeat(a.keys, b.n, axis=0)
    right = np.tile(b.keys, (a.n, 1))
    return SetValue(np.concatenate([left, right], axis=1))


