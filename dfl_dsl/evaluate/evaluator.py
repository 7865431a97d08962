"""AST -> values, for all rows of a frame at once.

The same evaluator computes data (computed params, set expressions, filters, bounds) at bind
time and symbolic values (objective and constraint rows) at compile time: data stays numpy,
anything touching a variable or a predicted/uncertain param becomes a `Poly` or an `NL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import ast
from ..atoms.registry import ATOMS
from ..errors import DflError
from .conditions import ConditionRules, cross
from .elements import SetValue, intern, is_string_key, number_keys, whole_keys
from .entities import Domain, Entity
from .families import SetFamily, collect
from .frame import Frame, RowRanges, join
from .macros import uncached_uses
from .nonlinear import NL, AtomNode
from .ordered import OrderedRules
from .poly import Poly
from .pushdown import Pushdown
from .set_functions import SET_FUNCTIONS
from .sizes import check_count
from .subscripts import SubscriptRules
from .values import (
    EvalError,
    Val,
    add,
    aligned_array,
    divide,
    entrywise_sum,
    expand,
    integer_division,
    matmul,
    multiply,
    negate,
    out_shape,
    segment_prod,
    segment_sum,
    transpose,
)

# the largest |p| of `e ^ p` on variables that CVXPY's `power` takes (2048 fails there)
MAX_POWER = 2048


@dataclass
class Context:
    """What binding has produced so far: sets and entities, and the width of z = [x; θ]."""

    sets: dict[str, SetValue] = field(default_factory=dict)
    families: dict[str, SetFamily] = field(default_factory=dict)  # indexed sets
    entities: dict[str, Entity] = field(default_factory=dict)
    width: int = 0
    random: object = None  # the bind's stream of random draws (atoms/random.py)


class Evaluator(SubscriptRules, ConditionRules, OrderedRules):
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._macros: dict[str, Val] = {}
        # declarations written over the same index (`param cost{ORIG, DEST}`, `var
        # ship{ORIG, DEST}`) share one Domain: its frame is the costly part of a big product
        self._domains: dict[str, Domain] = {}

    @property
    def width(self) -> int:
        """The columns of z = [x; θ] symbolic values range over."""
        return self.ctx.width

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
            return join(frame, index.items, index.filter, self.set_of, self.mask,
                        self.match_keys, self._pushdown(index))
        except EvalError as exc:  # (a product or ranges over the cap)
            raise DflError(str(exc), index.pos, hint=exc.hint) from None

    def _pushdown(self, index: ast.SetIndex) -> Pushdown | None:
        """What the filter says about the dummies, for the joins (evaluate/pushdown.py)."""
        if index.filter is None:
            return None

        def is_scalar_data(name: str) -> bool:
            entity = self.ctx.entities.get(name)
            return entity is not None and entity.kind == "data" and entity.shape == ()

        push = Pushdown(index, self.element_keys, self.set_of, is_scalar_data)
        return push if push else None

    def match_keys(self, part: ast.Expr, frame: Frame) -> np.ndarray | None:
        """A tuple component's keys per frame row when it matches (a param, a literal, an
        expression), None when it is a fresh dummy (a name that is no declared entity)."""
        if isinstance(part, ast.Name) and part.id not in self.ctx.entities:
            return None
        return np.broadcast_to(self.element_keys(part, frame), (frame.n,))

    def element_keys(self, node: ast.Expr, frame: Frame) -> np.ndarray:
        """An element-valued expression's keys (numbers that are no element: `NO_KEY`)."""
        v = self.value(node, frame)
        keys = np.asarray(v.payload)
        return keys if v.kind == "elem" else number_keys(keys)

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
                size = self.int_scalar(dim, root, "a shape's size")
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
        dummies = set(index.dummies)
        for item in index.items:
            # a set over an earlier dummy (`{s in S, t in s..n}`) is no one set: sparse
            fixed = not any(isinstance(n, ast.Name) and n.id in dummies
                            for n in ast.walk(item.set))
            the_set = self.set_of(item.set, root) if fixed else None
            if not isinstance(the_set, SetValue):
                dense = False
            width = the_set.dim if isinstance(the_set, SetValue) else 1
            names.append(list(item.names) or [f"#{id(item)}:{k}" for k in range(width)])
            if isinstance(the_set, SetValue):
                components.append(the_set)
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
        if node.id in self.ctx.families:
            raise EvalError(f"the set `{node.id}` is indexed: write `{node.id}[...]`")
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

    # ------------------------------------------------------------------ arithmetic
    def _v_BinOp(self, node: ast.BinOp, frame: Frame) -> Val:
        left = self.value(node.left, frame)
        right = self.value(node.right, frame)
        if node.op in ("*", "cross") and left.kind == "set" and right.kind == "set":
            return Val(cross(left.payload, right.payload), kind="set")
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
        if node.op in ("mod", "div"):
            return integer_division(left, right, n, node.op)
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
            shape = out_shape(base, exponent)
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
        return ATOMS["power"].elementwise(self, [base], param=p)

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
        if node.op == "prod":  # (data only, the checker says)
            flat = np.asarray(body.payload, dtype=float).reshape(child.n, g)
            return Val(segment_prod(flat, starts).reshape((n,) + body.shape), True, body.shape)
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

    # ------------------------------------------------------------------ atoms
    def _v_Call(self, node: ast.Call, frame: Frame) -> Val:
        if node.func in SET_FUNCTIONS:
            return self._set_call(node, frame)
        return ATOMS[node.func].evaluate(self, node, frame)

    # ------------------------------------------------------------------ AMPL's set forms
    def _v_SetOf(self, node: ast.SetOf, frame: Frame) -> Val:
        child = self.index(node.index, frame)
        parts = node.body.items if isinstance(node.body, ast.Tuple) else (node.body,)
        columns = []
        for part in parts:
            v = self.value(part, child)
            if v.symbolic or v.shape != ():
                raise DflError("`setof` collects elements", part.pos)
            keys = np.broadcast_to(np.asarray(v.payload), (child.n,))
            if v.kind != "elem":
                keys = whole_keys(keys)
                if keys is None:
                    raise DflError("`setof` collects elements: whole numbers or strings",
                                   part.pos)
            columns.append(keys.astype(np.int64))
        table = np.stack(columns, axis=1) if columns else np.zeros((child.n, 0), np.int64)
        return Val(collect(child, frame, table), frame.n > 1, (), "set")

    def _v_Tuple(self, node: ast.Tuple, frame: Frame) -> Val:
        raise EvalError("a tuple `(a, b)` can't be used here")


# ---------------------------------------------------------------------- helpers
