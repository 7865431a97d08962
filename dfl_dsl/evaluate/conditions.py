"""The evaluator's conditions and sets: comparisons, `and`/`or`/`not`, membership, `if` (each
branch only where it is chosen), ranges, set literals and set operations."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import ast
from ..errors import DflError
from .calendar import CalendarError, str2time, time2str
from .elements import (
    ELEMENT_RANGE,
    STRING_BASE,
    SetValue,
    element_of,
    intern_all,
    number_keys,
    whole_keys,
)
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
            shape = out_shape(a, b)
            framed = a.framed or b.framed
            if op not in ("==", "!=") and (_has_strings(a) or _has_strings(b)):
                test = _text_order(op, a, b, framed, frame.n, node.operands[k])
            else:
                test = _COMPARE[op](
                    aligned_array(a, framed, len(shape), frame.n),
                    aligned_array(b, framed, len(shape), frame.n),
                )
            link = Val(test, framed, shape, "bool")
            result = link if result is None else _logical(np.logical_and, result, link, frame)
        return result

    def _v_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Val:
        """`and`/`or` as AMPL evaluates them: the right side only where the left doesn't decide
        (`d <> w and not msr[d,w]` reads no `msr` entry for d = w, which the data may omit)."""
        left = self.value(node.left, frame)
        fn = np.logical_and if node.op == "and" else np.logical_or
        decided = node.op == "or"  # the left value that decides alone
        if left.shape == () and not left.symbolic:
            if not left.framed:
                if bool(np.asarray(left.payload)) == decided:
                    return Val(np.asarray(decided), False, (), "bool")
                return _logical(fn, left, self.value(node.right, frame), frame)
            mask = flat_data(left, True, (), frame.n).astype(bool)
            rows = np.nonzero(mask != decided)[0]
            if len(rows) < frame.n:
                out = np.full(frame.n, decided)
                if len(rows):
                    right = self.value(node.right, frame.take(rows))
                    if right.shape != ():
                        return _logical(fn, left, self.value(node.right, frame), frame)
                    out[rows] = flat_data(right, True, (), len(rows)).astype(bool)
                return Val(out, True, (), "bool")
        return _logical(fn, left, self.value(node.right, frame), frame)

    def _v_Not(self, node: ast.Not, frame: Frame) -> Val:
        v = self.value(node.operand, frame)
        return Val(np.logical_not(v.payload), v.framed, v.shape, "bool")

    def _v_Member(self, node: ast.Member, frame: Frame) -> Val:
        the_set = self.set_of(node.set, frame)
        if isinstance(node.element, ast.Tuple):
            return self._tuple_member(node.element, the_set, frame)
        element = self.value(node.element, frame)
        keys = np.asarray(element.payload)
        if isinstance(the_set, RowSets):
            keys = np.broadcast_to(self.element_keys(node.element, frame), (frame.n,))
            return Val(the_set.contains(keys.reshape(-1, 1)), True, (), "bool")
        if isinstance(the_set, RowRanges):
            keys = np.broadcast_to(keys, (frame.n,))
            inside = (keys >= the_set.lo) & (keys <= the_set.hi)
            return Val(inside, True, (), "bool")
        if element.kind != "elem":  # 2.5 is in no set (a cast would truncate it to 2)
            keys = number_keys(keys)
        inside = the_set.position(np.atleast_1d(keys).ravel()) >= 0
        return Val(inside.reshape(keys.shape), element.framed, element.shape, "bool")

    def _v_Subset(self, node: ast.Subset, frame: Frame) -> Val:
        """`A within B`: B holds every member of A (row by row where either depends on a
        dummy: A diff B is empty)."""
        left, right = self.set_of(node.left, frame), self.set_of(node.right, frame)
        if isinstance(left, SetValue) and isinstance(right, SetValue):
            if left.dim != right.dim:
                raise DflError("`within` compares sets of different tuple widths", node.pos)
            return Val(np.asarray(bool(np.all(right.position(left.keys) >= 0))), kind="bool")
        return Val(_row_set_op("diff", left, right, frame.n).counts == 0, True, (), "bool")

    def _v_Concat(self, node: ast.Concat, frame: Frame) -> Val:
        """MathProg's `a & b`: the element whose text joins a's and b's."""
        sides = [self.value(side, frame) for side in (node.left, node.right)]
        framed = any(v.framed for v in sides)
        n = frame.n if framed else 1
        left, right = (_texts(v, n) for v in sides)
        keys = intern_all([a + b for a, b in zip(left, right, strict=True)])
        return Val(keys if framed else np.asarray(keys[0]), framed, (), "elem")

    def _text_call(self, node: ast.Call, frame: Frame) -> Val:
        """MathProg's `length(s)` and `substr(s, k[, n])` (k from 1) of an element's text."""
        vals = [self.value(arg, frame) for arg in node.args]
        framed = any(v.framed for v in vals)
        n = frame.n if framed else 1
        if node.func in ("str2time", "time2str"):
            return calendar_call(node.func, vals, framed, n)
        texts = _texts(vals[0], n)
        if node.func == "length":
            out = np.array([len(t) for t in texts], dtype=np.int64)
            return Val(out if framed else out[0], framed, ())
        start, size = (np.broadcast_to(np.asarray(v.payload), (n,)) for v in (vals + vals[1:])[1:3])
        if len(vals) < 3:
            size = np.array([len(t) for t in texts]) - start + 1
        bad = (start < 1) | (start > [len(t) + 1 for t in texts]) | (size < 0)
        if np.any(bad):
            k = int(np.nonzero(bad)[0][0])
            raise EvalError(f"`substr` of \"{texts[k]}\" from {start[k]:g} for {size[k]:g} "
                            "characters is outside it")
        keys = intern_all([t[int(a) - 1:int(a) - 1 + int(b)]
                           for t, a, b in zip(texts, start, size, strict=True)])
        return Val(keys if framed else np.asarray(keys[0]), framed, (), "elem")

    def _tuple_member(self, node: ast.Tuple, the_set: SetValue | RowRanges | RowSets,
                      frame: Frame) -> Val:
        """`(a, b) in PAIRS`: one lookup of the stacked component keys per frame row."""
        if isinstance(the_set, RowRanges) or the_set.dim != len(node.items):
            raise DflError(f"the set holds {_set_dim(the_set)}-tuples, tested here with "
                           f"{len(node.items)}-tuples", node.pos)
        parts = [self.element_keys(part, frame) for part in node.items]
        framed = isinstance(the_set, RowSets) or any(np.ndim(keys) for keys in parts)
        n = frame.n if framed else 1
        query = np.stack([np.broadcast_to(keys, (n,)) for keys in parts], axis=1)
        if isinstance(the_set, RowSets):
            return Val(the_set.contains(query), True, (), "bool")
        inside = the_set.position(query) >= 0
        return Val(inside if framed else np.asarray(inside[0]), framed, (), "bool")

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
        parts = [(node.lo, "bound"), (node.hi, "bound")]
        if node.step is not None:
            parts.append((node.step, "step"))
        values, framed = [], False
        for side, what in parts:
            v = self.number(side, frame)
            keys = None if v.symbolic or v.shape != () else whole_keys(np.asarray(v.payload))
            if keys is None:
                raise DflError(f"a range's {what}s must be {ELEMENT_RANGE}", side.pos)
            if what == "step" and np.any(keys == 0):
                raise DflError("a range's step must not be 0", side.pos)
            values.append(keys)
            framed = framed or v.framed
        if not framed:
            a, b, *k = (int(x) for x in values)
            step = k[0] if k else 1
            count = max((b - a) // step + 1, 0)  # AMPL: a, a + k, ... up to b (down, k < 0)
            check_count(count, f"the range {a}..{b}" + (f" by {step}" if k else ""))
            return Val(SetValue(a + step * np.arange(count, dtype=np.int64)), kind="set")
        lo, hi, *k = (np.broadcast_to(x, (frame.n,)).astype(np.int64) for x in values)
        if not k:
            return Val(RowRanges(lo, hi), True, (), "set")
        return Val(_stepped(lo, hi, k[0]), True, (), "set")

    def _v_SetLiteral(self, node: ast.SetLiteral, frame: Frame) -> Val:
        if node.elements and isinstance(node.elements[0], ast.Tuple):
            return self._tuple_literal(node, frame)
        if node.elements and self.value(node.elements[0], frame).kind == "set":
            product = self.set_of(node.elements[0], frame)  # AMPL's `{ORIG, DEST}`
            for element in node.elements[1:]:
                product = cross(product, self.set_of(element, frame))
            return Val(product, kind="set")
        values = [self.value(element, frame) for element in node.elements]
        if any(v.framed for v in values):  # `{i, s}` with a dummy: a set per frame row
            return Val(self._row_literal(node, frame), True, (), "set")
        keys = [_literal_key(e, v) for e, v in zip(node.elements, values, strict=True)]
        return _literal_set(node, np.asarray(keys, dtype=np.int64).reshape(-1, 1))

    def _tuple_literal(self, node: ast.SetLiteral, frame: Frame) -> Val:
        """`{(0, 1), (1, 0)}` (the checker saw one width): fixed tuples."""
        rows = []
        for element in node.elements:
            values = [self.value(part, frame) for part in element.items]
            if any(v.framed for v in values):
                raise DflError("a set literal of tuples lists fixed elements", element.pos)
            rows.append([_literal_key(p, v) for p, v in zip(element.items, values, strict=True)])
        width = len(node.elements[0].items)
        return _literal_set(node, np.asarray(rows, dtype=np.int64).reshape(-1, width))

    def _row_literal(self, node: ast.SetLiteral, frame: Frame) -> RowSets:
        """`{i, s}` listing a dummy: each row's own set, a repeat counted once (`i == s`)."""
        listed = np.stack([np.broadcast_to(self.element_keys(e, frame), (frame.n,))
                           for e in node.elements], axis=1)
        first = np.ones(listed.shape, dtype=bool)
        for c in range(1, listed.shape[1]):
            first[:, c] = ~(listed[:, :c] == listed[:, c:c + 1]).any(axis=1)
        rows, cols = np.nonzero(first)
        return RowSets.of_rows(rows.astype(np.int64), listed[rows, cols], frame.n)

    def _v_SetOp(self, node: ast.SetOp, frame: Frame) -> Val:
        left = self.set_of(node.left, frame)
        right = self.set_of(node.right, frame)
        if isinstance(left, RowSets) or isinstance(right, RowSets):
            return Val(_row_set_op(node.op, left, right, frame.n), True, (), "set")
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


def _set_dim(the_set: SetValue | RowRanges | RowSets) -> int:
    return 1 if isinstance(the_set, RowRanges) else the_set.dim


def _row_set_op(op: str, left, right, n: int) -> RowSets:
    """`S diff {i}`, `S[i] union T`, ...: the operation row by row, on tables of (row, member)
    (a fixed set is every row's)."""
    lrows, lkeys = _per_row(left, n)
    rrows, rkeys = _per_row(right, n)
    if lkeys.shape[1] != rkeys.shape[1]:
        raise EvalError(f"`{op}` of sets of different tuple widths")
    if op == "union":
        new = SetValue(np.column_stack([lrows, lkeys])).position(
            np.column_stack([rrows, rkeys])) < 0
        rows = np.concatenate([lrows, rrows[new]])
        order = np.argsort(rows, kind="stable")  # each row: the left's members, then the new
        return RowSets.of_rows(rows[order], np.concatenate([lkeys, rkeys[new]])[order], n)
    inside = SetValue(np.column_stack([rrows, rkeys])).position(
        np.column_stack([lrows, lkeys])) >= 0
    keep = inside if op == "inter" else ~inside
    return RowSets.of_rows(lrows[keep], lkeys[keep], n)


def _per_row(the_set, n: int) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(the_set, RowSets):
        return the_set.members()
    if isinstance(the_set, RowRanges):
        raise EvalError("a set operation on ranges that depend on dummies is not supported")
    check_count(n * the_set.n, "this set operation")
    return np.repeat(np.arange(n, dtype=np.int64), the_set.n), np.tile(the_set.keys, (n, 1))


def _literal_key(element: ast.Expr, v: Val) -> int:
    """The key of one fixed element a set literal lists."""
    if v.symbolic or v.shape != ():
        raise DflError("a set literal lists fixed elements", element.pos)
    key = np.asarray(v.payload)
    if v.kind != "elem":
        key = whole_keys(key)
        if key is None:
            raise DflError(f"a set element must be a string or one of the {ELEMENT_RANGE}",
                           element.pos)
    return int(key)


def _literal_set(node: ast.SetLiteral, keys: np.ndarray) -> Val:
    """The set of a literal's rows of keys; a repeat of equal params (`{s, t}` with s = t) is
    one member, as in AMPL, and a repeated literal element an error."""
    the_set = SetValue(keys)
    repeats = the_set.duplicates()
    if not len(repeats):
        return Val(the_set, kind="set")
    if all(isinstance(p, (ast.Number, ast.String)) for e in node.elements
           for p in (e.items if isinstance(e, ast.Tuple) else (e,))):
        raise DflError("a set literal repeats an element", node.pos)
    keep = np.setdiff1d(np.arange(len(keys)), repeats)
    return Val(SetValue(the_set.keys[keep]), kind="set")


def _text_order(op: str, a: Val, b: Val, framed: bool, n: int, node: ast.Expr) -> np.ndarray:
    """`<`, `<=`, ... where a string element takes part: the texts in alphabetical (code
    point) order, a number written as MathProg writes it (`"10" < "9"`), as AMPL and MathProg
    compare them."""
    if a.shape != () or b.shape != ():
        raise DflError(f"`{op}` orders single elements", node.pos)
    rows = n if framed else 1
    test = _COMPARE[op](np.array(_texts(a, rows)), np.array(_texts(b, rows)))
    return test if framed else test[0]


def calendar_call(name: str, vals: list[Val], framed: bool, n: int) -> Val:
    """MathProg's `str2time(s, f)` and `time2str(t, f)` (evaluate/calendar.py), row by row."""
    formats = _texts(vals[1], n)
    try:
        if name == "str2time":
            out = np.array([str2time(t, f) for t, f in zip(_texts(vals[0], n), formats,
                                                             strict=True)])
            return Val(out if framed else out[0], framed, ())
        seconds = np.broadcast_to(np.asarray(vals[0].payload, dtype=float), (n,))
        keys = intern_all([time2str(t, f) for t, f in zip(seconds, formats, strict=True)])
    except CalendarError as exc:
        raise EvalError(f"`{name}`: {exc}") from None
    return Val(keys if framed else np.asarray(keys[0]), framed, (), "elem")


def _texts(v: Val, n: int) -> list[str]:
    """Each row's text of an element or number (a number as MathProg writes it, `%.15g`)."""
    values = np.broadcast_to(np.asarray(v.payload), (n,))
    if v.kind == "elem":
        return [str(element_of(key)) for key in values]
    return [f"{x:.15g}" for x in values.astype(float)]


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


def _stepped(lo: np.ndarray, hi: np.ndarray, step: np.ndarray) -> RowSets:
    """`lo .. hi by step` per frame row: row r's members lo[r], lo[r] + step[r], ..."""
    counts = np.maximum((hi - lo) // step + 1, 0)
    check_count(int(counts.sum(dtype=float)), "this index")
    rows = np.repeat(np.arange(len(lo), dtype=np.int64), counts)
    ends = np.cumsum(counts)
    offsets = np.arange(len(rows), dtype=np.int64) - np.repeat(ends - counts, counts)
    return RowSets((lo[rows] + step[rows] * offsets)[:, None], ends - counts, ends)


def cross(a: SetValue | RowRanges, b: SetValue | RowRanges) -> SetValue:
    if not isinstance(a, SetValue) or not isinstance(b, SetValue):
        raise EvalError("a cross product of sets that depend on dummies is not supported")
    check_count(a.n * b.n, "this product")
    left = np.repeat(a.keys, b.n, axis=0)
    right = np.tile(b.keys, (a.n, 1))
    return SetValue(np.concatenate([left, right], axis=1))


