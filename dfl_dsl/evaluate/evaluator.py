"""AST -> values, for all rows of a frame at once.

The same evaluator computes data (computed params, set expressions, filters, bounds) at bind
time and symbolic values (objective and constraint rows) at compile time: data stays numpy,
anything touching a variable or a predicted/uncertain param becomes a `Poly` or an `NL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .. import ast
from ..errors import DflError
from .elements import (
    ELEMENT_RANGE,
    STRING_BASE,
    SetValue,
    format_key,
    intern,
    is_string_key,
    number_keys,
    whole_keys,
)
from .entities import Domain, Entity
from .frame import Column, Frame, RowRanges, join
from .macros import uncached_uses
from .nonlinear import NL, AtomNode
from .poly import Poly
from .sizes import check_count
from .values import (
    EvalError,
    Val,
    add,
    aligned_array,
    divide,
    entrywise_sum,
    expand,
    flat_data,
    index_map,
    inner,
    matmul,
    multiply,
    negate,
    reduce_shape,
    segment_sum,
    transpose,
)

_ELEMENTWISE = {
    "abs": np.abs,
    "pos": lambda a: np.maximum(a, 0.0),
    "sqrt": np.sqrt,
    "log": np.log,
    "exp": np.exp,
    "log1p": np.log1p,
}
_COMPARE = {
    "==": np.equal,
    "!=": np.not_equal,
    "<=": np.less_equal,
    ">=": np.greater_equal,
    "<": np.less,
    ">": np.greater,
}


# the largest |p| of `e ^ p` on variables that CVXPY's `power` takes (2048 fails there)
MAX_POWER = 2048


@dataclass
class Context:
    """What binding has produced so far: sets and entities, and the width of z = [x; θ]."""

    sets: dict[str, SetValue] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    width: int = 0


class Evaluator:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._macros: dict[str, Val] = {}
        # declarations written over the same index (`param cost{ORIG, DEST}`, `var
        # ship{ORIG, DEST}`) share one Domain: its frame is the costly part of a big product
        self._domains: dict[str, Domain] = {}

    # ------------------------------------------------------------------ entry points
    def value(self, node: ast.Expr, frame: Frame) -> Val:
        try:
            method = getattr(self, "_v_" + type(node).__name__)
            return method(node, frame)
        except EvalError as exc:
            raise DflError(str(exc), node.pos, hint=exc.hint) from None

    def number(self, node: ast.Expr, frame: Frame) -> Val:
        """A value usable in arithmetic: element keys must be integers."""
        v = self.value(node, frame)
        if v.kind == "elem":
            keys = np.asarray(v.payload)
            if np.any(is_string_key(keys)):
                raise DflError(
                    "this holds string elements; it can't be used as a number", node.pos
                )
            return Val(keys, v.framed, v.shape)
        if v.kind in ("bool", "set"):
            raise DflError(f"expected a number, got a {v.kind}", node.pos)
        return v

    def mask(self, node: ast.Expr, frame: Frame) -> np.ndarray:
        """A condition as a boolean array over the frame's rows."""
        v = self.value(node, frame)
        if v.symbolic:
            raise DflError("a condition can't depend on variables", node.pos)
        arr = np.asarray(v.payload, dtype=bool)
        return np.broadcast_to(arr, (frame.n,)) if not v.framed else arr

    def set_of(self, node: ast.Expr, frame: Frame) -> SetValue | RowRanges:
        v = self.value(node, frame)
        if v.kind != "set":
            raise DflError("expected a set", node.pos)
        return v.payload

    def index(self, index: ast.SetIndex, frame: Frame) -> Frame:
        try:
            return join(frame, index.items, index.filter, self.set_of, self.mask)
        except EvalError as exc:  # (a product or ranges over the cap)
            raise DflError(str(exc), index.pos, hint=exc.hint) from None

    def domain(self, index: ast.Index | None) -> Domain:
        """The entries of a declaration's index."""
        if index is None:
            return Domain.scalar()
        key = repr(index)  # the index as written, positions aside: sets are bound for good
        if key not in self._domains:
            self._domains[key] = self._domain(index)
        return self._domains[key]

    def _domain(self, index: ast.Index) -> Domain:
        root = Frame.root()
        if isinstance(index, ast.ShapeIndex):
            sets = []
            for dim in index.dims:
                size = self._int_scalar(dim, root, "a shape's size")
                if size < 0:
                    raise DflError(f"a shape's size must be >= 0, got {size}", dim.pos)
                try:
                    check_count(size, "this axis")
                    check_count(math.prod(s.n for s in sets) * size, "this shape")
                except EvalError as exc:
                    raise DflError(str(exc), dim.pos, hint=exc.hint) from None
                sets.append(SetValue(np.arange(size, dtype=np.int64)))
            items = tuple(
                ast.IndexItem((f"#axis{k}",), ast.Name(f"#axis{k}"), pos=d.pos)
                for k, d in enumerate(index.dims)
            )
            frame = join(root, items, None, lambda node, fr: sets[int(node.id[5:])], self.mask)
            names = [[f"#axis{k}"] for k in range(len(sets))]
            return Domain(sets, frame, names, True)
        frame = self.index(index, root)
        components, names, dense = [], [], index.filter is None
        for item in index.items:
            the_set = self.set_of(item.set, root) if dense else None
            if not isinstance(the_set, SetValue):
                dense = False
            item_names = list(item.names) or [f"#{id(item)}:{k}" for k in range(the_set.dim)]
            if the_set is not None and isinstance(the_set, SetValue):
                components.append(the_set)
            names.append(item_names)
        if len({n for ns in names for n in ns}) != sum(len(ns) for ns in names):
            dense = False  # a repeated dummy filters
        if dense and frame.n != math.prod(c.n for c in components):
            dense = False
        return Domain(components if dense else [], frame, names, dense)

    # ------------------------------------------------------------------ leaves
    def _v_Number(self, node: ast.Number, frame: Frame) -> Val:
        return Val(np.asarray(node.value))

    def _v_String(self, node: ast.String, frame: Frame) -> Val:
        return Val(np.asarray(intern(node.value), dtype=np.int64), kind="elem")

    def _v_Name(self, node: ast.Name, frame: Frame) -> Val:
        column = frame.get(node.id)
        if column is not None:
            return Val(column.keys, True, (), kind="elem")
        if node.id in self.ctx.sets:
            return Val(self.ctx.sets[node.id], kind="set")
        entity = self.ctx.entities.get(node.id)
        if entity is None:
            raise EvalError(f"`{node.id}` has no value here")
        return self.whole(entity)

    def whole(self, entity: Entity) -> Val:
        """An entity as an array (numpy style)."""
        shape = entity.shape
        if entity.kind == "data":
            if entity.missing is not None and entity.missing.any():
                first = int(np.nonzero(entity.missing)[0][0])
                raise EvalError(
                    f"param `{entity.name}` has no value for {entity.entry_label(first)}",
                    "give it in the data, or declare a `default`",
                )
            kind = "elem" if entity.elem else "num"
            return Val(entity.array(), False, shape, kind)
        if entity.kind in ("var", "theta"):
            return Val(Poly.symbols(entity.columns(), self.ctx.width), False, shape)
        if entity.decl.index is not None:
            raise EvalError(f"`{entity.name}` is indexed: write `{entity.name}[...]`")
        return self._macro(entity)

    def _macro(self, entity: Entity) -> Val:
        cached = self._macros.get(entity.name)
        if cached is None:
            # the exprs this one uses first, earliest first: each then finds its own in the
            # cache, so a chain of 160 `expr`s costs no deeper recursion than one
            for used in uncached_uses(entity, self.ctx.entities, self._macros):
                self._macros[used.name] = self.value(used.decl.body, used.domain.frame)
            cached = self.value(entity.decl.body, entity.domain.frame)
            self._macros[entity.name] = cached
        return cached

    # ------------------------------------------------------------------ subscripts
    def _v_Subscript(self, node: ast.Subscript, frame: Frame) -> Val:
        base = node.base
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
        coords: list[np.ndarray] = []
        out_axes: list[int] = []
        framed = whole.framed
        n = frame.n
        ints = []
        for axis, arg in enumerate(node.args):
            size = whole.shape[axis]
            if isinstance(arg, ast.Range):
                lo = self._int_scalar(arg.lo, frame, "a slice bound")
                hi = self._int_scalar(arg.hi, frame, "a slice bound")
                if lo < 0 or hi >= size or lo > hi:
                    raise DflError(f"slice {lo}..{hi} is outside 0..{size - 1}", arg.pos)
                ints.append(("slice", lo, hi))
                out_axes.append(hi - lo + 1)
                continue
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
            framed = framed or v.framed
            ints.append(("int", k, v.framed))
        rest = list(whole.shape[len(node.args):])
        out_shape = tuple(out_axes + rest)
        lead = (n,) if framed else ()
        ndim_out = len(lead) + len(out_shape)

        def place(values: np.ndarray, axis: int) -> np.ndarray:
            shape = [1] * ndim_out
            shape[axis] = len(values)
            return values.reshape(shape)

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
        flat = np.ravel_multi_index(grids, src_shape).ravel() if grids else np.zeros(1, np.int64)
        if whole.symbolic:
            return Val(whole.payload.take(flat), framed, out_shape)
        data = np.asarray(whole.payload).ravel()[flat].reshape(target)
        return Val(data, framed, out_shape, whole.kind)

    def _int_scalar(self, node: ast.Expr, frame: Frame, what: str) -> int:
        v = self.number(node, frame)
        if v.symbolic or v.framed or v.shape != ():
            raise DflError(f"{what} must be one integer from data", node.pos)
        value = float(np.asarray(v.payload))
        if not value.is_integer():  # (inf and nan too)
            raise DflError(f"{what} must be an integer, got {value:g}", node.pos)
        return int(value)

    # ------------------------------------------------------------------ arithmetic
    def _v_BinOp(self, node: ast.BinOp, frame: Frame) -> Val:
        left = self.value(node.left, frame)
        right = self.value(node.right, frame)
        if node.op == "*" and left.kind == "set" and right.kind == "set":
            return Val(_cross(left.payload, right.payload), kind="set")
        left = self._as_number(left, node.left)
        right = self._as_number(right, node.right)
        n, width = frame.n, self.ctx.width
        if node.op == "+":
            return add(left, right, n, width)
        if node.op == "-":
            return add(left, right, n, width, sign=-1.0)
        if node.op == "*":
            return multiply(left, right, n, width)
        if node.op == "/":
            return divide(left, right, n, width)
        return matmul(left, right, n, width)

    def _as_number(self, v: Val, node: ast.Expr) -> Val:
        if v.kind == "elem":
            keys = np.asarray(v.payload)
            if np.any(is_string_key(keys)):
                raise DflError("this holds string elements; it can't be used as a number", node.pos)
            return Val(keys, v.framed, v.shape)
        if v.kind != "num":
            raise DflError(f"expected a number, got a {v.kind}", node.pos)
        return v

    def _v_Neg(self, node: ast.Neg, frame: Frame) -> Val:
        return negate(self.number(node.operand, frame))

    def _v_Transpose(self, node: ast.Transpose, frame: Frame) -> Val:
        return transpose(self.number(node.operand, frame), frame.n)

    def _v_Power(self, node: ast.Power, frame: Frame) -> Val:
        base = self.number(node.base, frame)
        exponent = self.number(node.exponent, frame)
        if exponent.symbolic:
            raise EvalError("an exponent must be data")
        if not base.symbolic:
            shape = _broadcast(base, exponent)
            framed = base.framed or exponent.framed
            b = aligned_array(base, framed, len(shape), frame.n).astype(float)
            e = aligned_array(exponent, framed, len(shape), frame.n)
            with np.errstate(all="ignore"):
                out = np.power(b, e)
            if not np.all(np.isfinite(out)) and np.all(np.isfinite(b)) and np.all(np.isfinite(e)):
                if np.isnan(out).any():
                    raise EvalError("`^` is undefined for some of these values",
                                    "a negative base needs a whole exponent")
                if np.any((b == 0) & (e < 0)):
                    raise EvalError("division by zero: 0 to a negative power")
                raise EvalError("`^` overflows: the result is too large for a float")
            return Val(out, framed, shape)
        p = float(np.asarray(exponent.payload).ravel()[0])
        if not abs(p) < MAX_POWER:
            raise DflError(f"an exponent on variables must be below {MAX_POWER} in size, got "
                           f"{p:g}", node.exponent.pos,
                           hint="CVXPY writes x^p as a rational power (denominator up to "
                                "1024), and fails beyond this")
        if p == 1:
            return base
        if p == 0:  # a constant (the checker calls it one): no atom for a backend to refuse
            lead = (frame.n,) if base.framed else ()
            return Val(np.ones(lead + tuple(base.shape)), base.framed, base.shape)
        if p == 2 and isinstance(base.payload, Poly) and base.payload.degree <= 1:
            return multiply(base, base, frame.n, self.ctx.width)
        return self._atom("power", [base], frame, param=p)

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
            shape = _broadcast(a, b)
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
        shape = _broadcast(then, orelse, cond)
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
        shape = _broadcast(*(v for _, _, v in parts)) if parts else ()
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

    # ------------------------------------------------------------------ reductions
    def _v_Reduce(self, node: ast.Reduce, frame: Frame) -> Val:
        child = self.index(node.index, frame)
        body = self.number(node.body, child)
        starts = child.starts()
        n, width = frame.n, self.ctx.width
        if not body.framed:  # the body doesn't vary with the index: count it
            body = Val(expand(body, True, body.shape, child.n, width) if body.symbolic
                       else np.broadcast_to(np.asarray(body.payload), (child.n,) + body.shape),
                       True, body.shape)
        g = body.size
        row_starts = starts * g
        if node.op == "sum":
            if body.symbolic and g != 1:  # entry c of group p sums entry c of its rows
                return Val(entrywise_sum(body.payload, starts, g), True, body.shape)
            if body.symbolic:
                return Val(body.payload.segment_sum(row_starts), True, body.shape)
            flat = np.asarray(body.payload).reshape(child.n, g)
            summed = np.stack([segment_sum(flat[:, c], starts) for c in range(g)],
                              axis=1) if g else np.zeros((n, 0))
            return Val(summed.reshape((n,) + body.shape), True, body.shape)
        if body.shape != ():
            raise DflError(f"`{node.op}{{...}}` needs a scalar body", node.body.pos)
        empty = starts[:-1] == starts[1:]
        if empty.any():
            raise DflError(f"`{node.op}` over an empty set", node.pos)
        if body.symbolic:
            atom = AtomNode(node.op, (body.payload,), n, starts)
            return Val(NL.of(atom, width), True, ())
        fn = np.maximum if node.op == "max" else np.minimum
        return Val(fn.reduceat(np.asarray(body.payload, dtype=float), starts[:-1]), True, ())

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
        if isinstance(left, RowRanges) or isinstance(right, RowRanges):
            raise DflError(
                f"`{node.op}` of ranges that depend on dummies is not supported", node.pos
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
        return Val(SetValue(left.keys[keep]), kind="set")

    # ------------------------------------------------------------------ atoms
    def _v_Call(self, node: ast.Call, frame: Frame) -> Val:
        name = node.func
        if name in ("eye", "ones", "zeros"):
            size = self._int_scalar(node.args[0], frame, f"the size of `{name}`")
            data = {"eye": np.eye, "ones": np.ones, "zeros": np.zeros}[name](size)
            return Val(data, False, data.shape)
        if name == "cvar":
            alpha = self.number(node.args[0], frame)
            if alpha.symbolic or alpha.framed or alpha.shape != ():
                raise DflError("cvar's level must be one number from data", node.args[0].pos)
            level = float(np.asarray(alpha.payload))
            if not 0 <= level < 1:
                raise DflError(f"cvar's level must be in [0, 1), got {level:g}", node.args[0].pos)
            args = [self.number(node.args[1], frame)]
            return self._risk("cvar", args[0], frame, level)
        if name == "trace" and isinstance(node.args[0], ast.BinOp) and node.args[0].op == "@":
            return self._trace_of_product(node, frame)
        args = [self.number(a, frame) for a in node.args]
        n, width = frame.n, self.ctx.width
        if name == "sum":
            return reduce_shape(args[0], n, width)
        if name == "trace":
            return self._trace(node, args[0], frame)
        if name == "diag":
            return self._diag(args[0], frame)
        if name in ("mean", "worst"):
            return self._risk(name, args[0], frame, None)
        if name == "sum_squares":
            return self._sum_squares(args[0], frame)
        if name == "quad_form":
            return self._quad_form(node, args, frame)
        if name in ("norm1", "norm2", "norm_inf", "nnz"):
            return self._norm(name, args[0], frame)
        if name in ("max", "min"):
            return self._pairwise(name, args, frame)
        return self._atom(name, args, frame)

    def _atom(self, name: str, args: list[Val], frame: Frame, param=None) -> Val:
        (arg,) = args
        if not arg.symbolic:
            data = np.asarray(arg.payload, dtype=float)
            with np.errstate(all="ignore"):
                out = np.power(data, param) if name == "power" else _ELEMENTWISE[name](data)
            if not np.all(np.isfinite(out)) and np.all(np.isfinite(data)):
                raise EvalError(f"`{name}` is undefined for some of these values")
            return Val(out, arg.framed, arg.shape)
        rows = arg.payload.rows
        node = AtomNode(name, (arg.payload,), rows, None, param)
        return Val(NL.of(node, self.ctx.width), arg.framed, arg.shape)

    def _pairwise(self, name: str, args: list[Val], frame: Frame) -> Val:
        shape = _broadcast(*args)
        framed = any(a.framed for a in args)
        n, width = frame.n, self.ctx.width
        if not any(a.symbolic for a in args):
            fn = np.maximum if name == "max" else np.minimum
            out = flat_data(args[0], framed, shape, n)
            for a in args[1:]:
                out = fn(out, flat_data(a, framed, shape, n))
            return Val(out.reshape(((n,) if framed else ()) + shape), framed, shape)
        payloads = tuple(
            expand(a, framed, shape, n, width) if a.symbolic else
            flat_data(a, framed, shape, n).astype(float)
            for a in args
        )
        rows = math.prod(shape) * (n if framed else 1)
        node = AtomNode(name, payloads, rows)
        return Val(NL.of(node, width), framed, shape)

    def _norm(self, name: str, arg: Val, frame: Frame) -> Val:
        n, width = frame.n, self.ctx.width
        if not arg.symbolic:
            data = np.asarray(arg.payload, dtype=float)
            axes = tuple(range(1 if arg.framed else 0, data.ndim))
            if name == "norm1":
                out = np.abs(data).sum(axis=axes)
            elif name == "norm2":
                out = np.sqrt((data**2).sum(axis=axes))
            elif name == "norm_inf":
                out = np.abs(data).max(axis=axes) if data.size else np.zeros(())
            else:
                out = (data != 0).sum(axis=axes).astype(float)
            return Val(out, arg.framed, ())
        g = arg.size
        lead = n if arg.framed else 1
        starts = np.arange(0, lead * g + 1, max(g, 1), dtype=np.int64)
        node = AtomNode(name, (arg.payload,), lead, starts)
        return Val(NL.of(node, width), arg.framed, ())

    def _sum_squares(self, arg: Val, frame: Frame) -> Val:
        n, width = frame.n, self.ctx.width
        if not arg.symbolic:
            data = np.asarray(arg.payload, dtype=float)
            axes = tuple(range(1 if arg.framed else 0, data.ndim))
            return Val((data**2).sum(axis=axes), arg.framed, ())
        payload = arg.payload
        if isinstance(payload, Poly) and payload.degree <= 1:
            if not arg.framed:
                return Val(payload.square_sum(), False, ())
            squared = multiply(arg, arg, n, width)
            return reduce_shape(squared, n, width)
        return self._norm("sum_squares", arg, frame)

    def _quad_form(self, node: ast.Call, args: list[Val], frame: Frame) -> Val:
        x, p = args
        if p.symbolic or p.framed:
            raise DflError("quad_form's matrix must be fixed data", node.args[1].pos)
        matrix = np.asarray(p.payload, dtype=float)
        if len(x.shape) != 1 or matrix.shape != (x.shape[0], x.shape[0]):
            raise DflError(
                f"quad_form needs x of length n and P of n x n; got {list(x.shape)} and "
                f"{list(matrix.shape)}",
                node.pos,
            )
        sym = 0.5 * (matrix + matrix.T)
        if not x.symbolic:
            xv = np.asarray(x.payload, dtype=float)
            out = np.einsum("...i,ij,...j->...", xv, sym, xv)
            return Val(out, x.framed, ())
        if isinstance(x.payload, Poly) and x.payload.degree <= 1 and not x.framed:
            return Val(x.payload.square_sum(sym), False, ())
        raise DflError("quad_form of this argument is not supported", node.args[0].pos)

    def _trace(self, node: ast.Call, arg: Val, frame: Frame) -> Val:
        if len(arg.shape) != 2 or arg.shape[0] != arg.shape[1]:
            raise DflError(f"trace needs a square matrix, got {list(arg.shape)}", node.pos)
        k = arg.shape[0]
        if not arg.symbolic:
            data = np.asarray(arg.payload)
            return Val(np.trace(data, axis1=-2, axis2=-1), arg.framed, ())
        lead = frame.n if arg.framed else 1
        diag = (np.arange(lead)[:, None] * k * k + np.arange(k)[None, :] * (k + 1)).ravel()
        starts = np.arange(0, lead * k + 1, max(k, 1), dtype=np.int64)
        return Val(arg.payload.take(diag).segment_sum(starts), arg.framed, ())

    def _trace_of_product(self, node: ast.Call, frame: Frame) -> Val:
        """trace(A @ B) = Σ_ik A[i, k] B[k, i]: the product's diagonal alone. Forming A @ B first
        costs p times more (p = its side): for trace(Xᵀ C X), X n × r, the r² entries of XᵀCX
        hold r²n² quadratic terms, the diagonal only rn²."""
        product = node.args[0]
        a = self.number(product.left, frame)
        b = self.number(product.right, frame)
        if len(a.shape) == 2 and len(b.shape) == 2 and a.shape == tuple(reversed(b.shape)):
            return inner(a, transpose(b, frame.n), frame.n, self.ctx.width)
        # not square (or not matrices): the ordinary path reports the error where it is
        return self._trace(node, self.number(product, frame), frame)

    def _diag(self, arg: Val, frame: Frame) -> Val:
        if len(arg.shape) == 2:
            k = min(arg.shape)
            if not arg.symbolic:
                diagonal = np.diagonal(np.asarray(arg.payload), axis1=-2, axis2=-1)
                return Val(diagonal, arg.framed, (k,))
            lead = frame.n if arg.framed else 1
            cols = arg.shape[1]
            idx = (np.arange(lead)[:, None] * arg.shape[0] * cols
                   + np.arange(k)[None, :] * (cols + 1))
            return Val(arg.payload.take(idx.ravel()), arg.framed, (k,))
        if len(arg.shape) != 1:
            raise EvalError("diag takes a vector or a matrix")
        k = arg.shape[0]
        if not arg.symbolic:
            data = np.asarray(arg.payload)
            out = np.zeros(data.shape + (k,))
            idx = np.arange(k)
            out[..., idx, idx] = data
            return Val(out, arg.framed, (k, k))
        lead = frame.n if arg.framed else 1
        rows = (np.arange(lead)[:, None] * k * k + np.arange(k)[None, :] * (k + 1)).ravel()
        cols = np.arange(lead * k)
        m = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(lead * k * k, lead * k))
        return Val(arg.payload.rowmap(m), arg.framed, (k, k))

    def _risk(self, name: str, arg: Val, frame: Frame, level: float | None) -> Val:
        if arg.shape != ():
            raise EvalError(f"`{name}` aggregates a scalar over the scenarios")
        if not arg.symbolic:
            return arg  # no uncertain param inside: every scenario agrees
        node = AtomNode(name, (arg.payload,), arg.payload.rows, None, level)
        return Val(NL.of(node, self.ctx.width), arg.framed, ())


# ---------------------------------------------------------------------- helpers
def _broadcast(*vals: Val) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(v.shape for v in vals)))
    except ValueError:
        raise EvalError(
            "shapes " + " and ".join(str(list(v.shape)) for v in vals) + " don't match"
        ) from None


def _has_strings(v: Val) -> bool:
    return v.kind == "elem" and bool(np.any(np.asarray(v.payload) >= STRING_BASE))


def _logical(fn, a: Val, b: Val, frame: Frame) -> Val:
    framed = a.framed or b.framed
    shape = _broadcast(a, b)
    out = fn(
        aligned_array(a, framed, len(shape), frame.n),
        aligned_array(b, framed, len(shape), frame.n),
    )
    return Val(out, framed, shape, "bool")


def _cross(a: SetValue | RowRanges, b: SetValue | RowRanges) -> SetValue:
    if isinstance(a, RowRanges) or isinstance(b, RowRanges):
        raise EvalError("a cross product of ranges that depend on dummies is not supported")
    check_count(a.n * b.n, "this product")
    left = np.repeat(a.keys, b.n, axis=0)
    right = np.tile(b.keys, (a.n, 1))
    return SetValue(np.concatenate([left, right], axis=1))


def _positions(domain, cols: list[Column], frame: Frame) -> tuple[np.ndarray, bool]:
    """domain.positions(cols), remembered on the frame: `c[i, j] * x[i, j]` looks up the same
    positions of the same dummies twice (a million-entry gather each at scale)."""
    key = (id(domain), *map(id, cols))
    hit = frame.memo.get(key)
    if hit is None:  # the entry holds domain and cols: their ids can't be reused meanwhile
        hit = frame.memo[key] = (domain, cols, domain.positions(cols))
    return hit[2]
