"""Evaluate the objective and every constraint over their frames: the first compile step.

A constraint `lhs OP rhs` becomes rows `lo <= body <= hi` with body = lhs - rhs (or, for a chain
`a <= e <= b`, body = e); an `expr` macro is expanded where it is used (the evaluator evaluates
it once over its own index and gathers the rows each use needs).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import ast
from ..errors import DflError
from ..evaluate.elements import format_key
from ..evaluate.frame import Frame
from ..evaluate.nonlinear import NL
from ..evaluate.poly import Poly
from ..evaluate.values import EvalError, Val, add, expand, flat_data, out_shape
from ..instance import Instance


@dataclass
class Rows:
    """One constraint's rows: lo <= body <= hi, row-wise."""

    name: str
    frame: Frame
    shape: tuple[int, ...]
    body: Poly | NL
    lo: np.ndarray | Poly
    hi: np.ndarray | Poly
    dummies: list[str]

    @property
    def count(self) -> int:
        return self.body.rows

    def labels(self) -> list[str]:
        """`name[GARY]`-style labels, one per row."""
        per = math.prod(self.shape)
        if self.dummies:
            keys = np.stack([self.frame.get(d).keys for d in self.dummies], axis=1)
            frame_labels = [format_key(k) for k in keys]
        else:
            frame_labels = [""] * self.frame.n
        if per == 1 and not self.shape:
            return [self.name + f for f in frame_labels]
        inner = [str(list(ix)) for ix in np.ndindex(*self.shape)] if self.shape else [""]
        return [self.name + f + i for f in frame_labels for i in inner]


@dataclass
class Expanded:
    sense: str  # "minimize" | "maximize"
    objective: Poly | NL
    constraints: list[Rows]

    def row_counts(self) -> dict[str, int]:
        return {r.name: r.count for r in self.constraints}


def compiled(inst: Instance) -> Expanded:
    """The instance's expanded objective and rows (built once: the data don't change)."""
    if "expanded" not in inst.memo:
        inst.memo["expanded"] = expand_model(inst)
    return inst.memo["expanded"]


def expand_model(inst: Instance) -> Expanded:
    try:
        return _expand(inst)
    except DflError as exc:  # point at the model file (the evaluator knows only positions)
        raise exc.located(inst.model.filename, inst.model.source) from None


def _expand(inst: Instance) -> Expanded:
    ev = inst.evaluator
    width = inst.width
    objective_decl = inst.model.objective
    root = Frame.root()
    if objective_decl is None:
        sense, objective = "minimize", Poly.zeros(1, width)
    else:
        sense = objective_decl.sense
        with _at(objective_decl.body):
            value = ev.number(objective_decl.body, root)
            if value.shape != ():  # (the checker can't tell where shapes come from data)
                raise DflError("the objective must be a scalar number, got an array of shape "
                               f"{list(value.shape)}", objective_decl.body.pos)
            objective = expand(value, False, (), 1, width)
        if not _finite(objective, constant=True).all():
            if _overflowed(inst, objective_decl.body):
                raise _overflow("the objective", objective_decl.body.pos)
            raise DflError("the objective has an infinite (or NaN) coefficient; `inf` in the "
                           "data can only bound something", objective_decl.body.pos)
    rows = []
    for c in inst.model.constraints:
        with _at(c.body):
            rows.append(_settle_infinite(inst, _constraint(inst, c), c))
    return Expanded(sense, objective, rows)


def _finite(payload: Poly | NL, constant: bool) -> np.ndarray:
    """Which rows of `payload` have only finite coefficients (and constant, if asked)."""
    poly = payload.poly if isinstance(payload, NL) else payload
    ok = np.isfinite(poly.const) if constant else np.ones(poly.rows, dtype=bool)
    for part in (poly.lin, poly.quad):
        if part is not None and part.nnz and not np.isfinite(part.data).all():
            coo = part.tocoo()  # (only to find the rows: the common case is one pass above)
            ok[coo.row[~np.isfinite(coo.data)]] = False
    if isinstance(payload, NL):
        for matrix, node in payload.terms:
            inner = np.ones(node.rows, dtype=bool)
            for arg in node.args:
                if isinstance(arg, (Poly, NL)):
                    bad = ~_finite(arg, constant=True)
                    if node.starts is None:
                        inner &= ~bad
                    else:
                        owner = np.repeat(np.arange(node.rows), np.diff(node.starts))
                        inner[owner[bad]] = False
            if inner.all() and np.isfinite(matrix.data).all():
                continue
            coo = sp.coo_array(matrix)
            ok[coo.row[~np.isfinite(coo.data) | ~inner[coo.col]]] = False
    return ok


def _settle_infinite(inst: Instance, rows: Rows, decl: ast.Constraint) -> Rows:
    """An infinite data side (`x[i] <= cap[i]` with cap `inf`) bounds nothing: it moves from
    the body's constant to the row's bound, where the backends take it. An infinite
    coefficient of a variable, or an infinite bound on the side that would need a finite one
    (`x >= inf`), is a data error at the constraint."""
    body = rows.body
    bad = ~_finite(body, constant=False)
    poly = body.poly if isinstance(body, NL) else body
    const = poly.const
    odd = ~np.isfinite(const)
    if odd.any() and not bad.any():
        if isinstance(rows.lo, Poly) or isinstance(rows.hi, Poly):
            bad = odd
        else:
            lo = np.broadcast_to(np.asarray(rows.lo, float), const.shape).copy()
            hi = np.broadcast_to(np.asarray(rows.hi, float), const.shape).copy()
            with np.errstate(invalid="ignore"):
                new_lo = np.where(lo == -np.inf, -np.inf, lo - const)
                new_hi = np.where(hi == np.inf, np.inf, hi - const)
            # +inf below or -inf above: no finite value of the body can satisfy the row
            bad = odd & (np.isnan(const) | (new_lo == np.inf) | (new_hi == -np.inf))
            if not bad.any():
                lo[odd], hi[odd] = new_lo[odd], new_hi[odd]
                poly = Poly(np.where(odd, 0.0, const), poly.lin, poly.quad, poly.pairs)
                body = NL(poly, body.terms) if isinstance(body, NL) else poly
                return Rows(rows.name, rows.frame, rows.shape, body, lo, hi, rows.dummies)
    if bad.any():
        label = rows.labels()[int(np.argmax(bad))]
        if _overflowed(inst, decl):
            raise _overflow(f"constraint `{label}`", decl.body.pos)
        raise DflError(
            f"constraint `{label}` has an infinite (or NaN) value where only a finite one "
            "makes sense; `inf` in the data can only leave a side unbounded",
            decl.body.pos,
        )
    return rows


def _overflowed(inst: Instance, node: ast.Node, seen: set[str] | None = None) -> bool:
    """Whether an infinite coefficient of `node` came from arithmetic, not from the data:
    no data param it reads (through `expr`s too) holds inf or NaN. (`quad_form(x, P)` with
    P entries near 1e308 sums P[i, j] + P[j, i] into one coefficient: inf, from finite data,
    which the message must not blame on an `inf` in the data.)"""
    seen = set() if seen is None else seen
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Name) or sub.id in seen:
            continue
        seen.add(sub.id)
        entity = inst.ctx.entities.get(sub.id)
        if entity is None:
            continue
        if entity.kind == "expr":
            if not _overflowed(inst, entity.decl, seen):
                return False
        elif entity.kind == "data" and entity.data is not None and not entity.elem:
            values = np.asarray(entity.data, dtype=float)
            if not np.isfinite(values[~entity.missing] if entity.missing is not None
                               else values).all():
                return False
    return True


def _overflow(what: str, pos) -> DflError:
    return DflError(f"{what} has a coefficient beyond a float's range (about 1.8e308): the "
                    "arithmetic on the data's numbers overflowed", pos,
                    hint="rescale the model's units (numbers this large lose every digit "
                    "in a solver anyway)")


@contextmanager
def _at(node: ast.Node):
    """Data-dependent failures between evaluated parts (shapes that only the data fixes) are
    reported at the statement they come from."""
    try:
        yield
    except EvalError as exc:
        raise DflError(str(exc), node.pos, hint=exc.hint) from None
    except MemoryError:
        raise DflError("out of memory expanding this: its index or shape is too large",
                       node.pos, hint="check the sizes the data gives") from None


def _constraint(inst: Instance, decl: ast.Constraint) -> Rows:
    ev = inst.evaluator
    frame = inst.constraint_frames[decl.name]
    body = decl.body
    assert isinstance(body, ast.Compare)
    n, width = frame.n, inst.width
    vals = [ev.number(o, frame) for o in body.operands]
    dummies = _dummies(decl.index, frame)
    if len(vals) == 3:
        middle = vals[1]
        lo_v, hi_v = (vals[0], vals[2]) if body.ops[0] == "<=" else (vals[2], vals[0])
        shape = out_shape(middle, lo_v, hi_v)
        framed = True
        payload = expand(middle, framed, shape, n, width)
        lo = _side(lo_v, shape, n, width)
        hi = _side(hi_v, shape, n, width)
        return Rows(decl.name, frame, shape, payload, lo, hi, dummies)
    diff = add(vals[0], vals[1], n, width, sign=-1.0)
    shape = diff.shape
    payload = expand(diff, True, shape, n, width)
    rows = payload.rows
    zero = np.zeros(rows)
    op = body.ops[0]
    lo = zero if op in ("==", ">=") else np.full(rows, -np.inf)
    hi = zero if op in ("==", "<=") else np.full(rows, np.inf)
    return Rows(decl.name, frame, shape, payload, lo, hi, dummies)


def _side(v: Val, shape, n: int, width: int) -> np.ndarray | Poly:
    if v.symbolic:
        return expand(v, True, shape, n, width)
    return flat_data(v, True, shape, n).astype(float)


def _dummies(index: ast.Index | None, frame: Frame) -> list[str]:
    """The frame columns that key a constraint's rows: its new dummies, and for an item that
    binds none (`{ARCS}`) the columns the join made for it, so that its duals are keyed by
    the set's elements too."""
    if index is None or isinstance(index, ast.ShapeIndex):
        return []
    seen: list[str] = []
    for item in index.items:
        hidden = f"#{id(item)}:"
        names = item.names or [name for name in frame.columns if name.startswith(hidden)]
        for name in names:  # (a component that matches, `(s, j)` with a param s, keys nothing)
            if name in frame.columns and name not in seen:
                seen.append(name)
    return seen
