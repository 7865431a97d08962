"""AMPL's piecewise-linear term `<<b1, ..., bn; s1, ..., sn+1>> x`: slope s1 up to b1, s2 from
b1 to b2, ..., sn+1 past bn, and 0 at x = 0 (at z for `(x, z)`).

A convex one (slopes that never fall) is the largest of its affine pieces, so it is written here
as `max` of them and the rest of the pipeline sees a convex expression that an LP holds (AMPL
gives such a term to the solver as linear pieces too). Each step between slopes passes through
the internal atom `#rising`, which stops binding, at the `<<`, where data make a slope fall: a
nonconvex term needs integer variables, which this rewrite doesn't add."""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any

from .. import ast
from ..errors import DflError

RISING = "#rising"
_FRESH = itertools.count()


@dataclasses.dataclass(frozen=True)
class Indexed:
    """An indexed list item `{p in S: c} body`: body once per member of the index, in order."""

    index: ast.SetIndex
    body: ast.Expr


def piecewise(breaks: list, slopes: list, arg: ast.Expr, pos: ast.Pos) -> ast.Expr:
    """The term as the `max` of its affine pieces."""
    x, zero = (arg.items if isinstance(arg, ast.Tuple) and len(arg.items) == 2
               else (arg, ast.Number(0, pos=pos)))
    indexed = [isinstance(item, Indexed) for item in (*breaks, *slopes)]
    if any(indexed):
        if len(breaks) != 1 or len(slopes) != 1 or not all(indexed):
            raise DflError("a piecewise-linear term's lists are plain lists, or one indexed "
                           "item each: `<<{p in 1..n-1} b[p]; {p in 1..n} s[p]>> x`", pos,
                           hint="write both lists indexed, or both as lists of expressions")
        return _indexed(breaks[0], slopes[0], x, zero, pos)
    if len(slopes) != len(breaks) + 1:
        raise DflError(f"a piecewise-linear term with {len(breaks)} breakpoint(s) needs "
                       f"{len(breaks) + 1} slopes, not {len(slopes)}", pos,
                       hint="`<<b1, ..., bn; s1, ..., sn+1>> x`: one slope more than breakpoints")

    op = functools.partial(_op, pos=pos)

    steps = [ast.Call(RISING, (op("-", slopes[m + 1], slopes[m]),), pos=pos)
             for m in range(len(breaks))]
    # the value at the zero point, which every piece subtracts: s1 z + sum d_m pos(z - b_m)
    at_zero = op("*", slopes[0], zero)
    for step, b in zip(steps, breaks, strict=True):
        at_zero = op("+", at_zero, op("*", step, ast.Call("pos", (op("-", zero, b),), pos=pos)))
    term: ast.Expr | None = None
    offset: ast.Expr = ast.Number(0, pos=pos)  # piece k: s_k x - sum_{m<k} d_m b_m - at_zero
    for k, slope in enumerate(slopes):
        if k:
            offset = op("+", offset, op("*", steps[k - 1], breaks[k - 1]))
        piece = op("-", op("*", slope, x), op("+", offset, at_zero))
        term = piece if term is None else ast.Call("max", (term, piece), pos=pos)
    return term


def _indexed(breaks: Indexed, slopes: Indexed, x: ast.Expr, zero: ast.Expr,
             pos: ast.Pos) -> ast.Expr:
    """`<<{p in P} b[p]; {q in Q} s[q]>> x`: the same pieces, positions found with `ord`.
    Each use of a list binds a dummy of its own (a dummy bound twice would only filter)."""
    for family in (breaks, slopes):
        if len(family.index.items) != 1 or len(family.index.items[0].names) != 1:
            raise DflError("an indexed list of a piecewise-linear term has one dummy over one "
                           "set: `{p in 1..n} b[p]`", family.index.pos)

    op = functools.partial(_op, pos=pos)

    def fresh(family: Indexed) -> tuple[ast.SetIndex, ast.Expr, ast.Name]:
        old, new = family.index.items[0].names[0], f"_pw{next(_FRESH)}"
        return (_renamed(family.index, old, new), _renamed(family.body, old, new),
                ast.Name(new, pos=pos))

    def ord_in(family: Indexed, element: ast.Expr) -> ast.Expr:
        index, _, name = fresh(family)
        return ast.Call("ord", (element, ast.SetOf(index, name, pos=pos)), pos=pos)

    def slope_at(position: ast.Expr) -> ast.Expr:
        index, body, name = fresh(slopes)
        only = ast.Compare(("==",), (ord_in(slopes, name), position), pos=pos)
        return ast.Reduce("sum", _filtered(index, only), body, pos=pos)

    def over_breaks(term, before: ast.Expr | None = None) -> ast.Expr:
        """sum over the breakpoints p (those before position `before`) of term(p, b[p])."""
        index, body, name = fresh(breaks)
        place = ord_in(breaks, name)
        if before is not None:
            index = _filtered(index, ast.Compare(("<",), (place, before), pos=pos))
        step = ast.Call(RISING, (op("-", slope_at(op("+", place, ast.Number(1, pos=pos))),
                                     slope_at(ord_in(breaks, name))),), pos=pos)
        return ast.Reduce("sum", index, op("*", step, term(body)), pos=pos)

    def at_zero() -> ast.Expr:
        first = op("*", slope_at(ast.Number(1, pos=pos)), zero)
        return op("+", first, over_breaks(
            lambda b: ast.Call("pos", (op("-", zero, b),), pos=pos)))

    index, body, name = fresh(slopes)
    offset = over_breaks(lambda b: b, before=ord_in(slopes, name))
    piece = op("-", op("*", body, x), op("+", offset, at_zero()))
    return ast.Reduce("max", index, piece, pos=pos)


def _op(sign: str, left: ast.Expr, right: ast.Expr, pos: ast.Pos) -> ast.Expr:
    return ast.BinOp(sign, left, right, pos=pos)


def _filtered(index: ast.SetIndex, condition: ast.Expr) -> ast.SetIndex:
    both = condition if index.filter is None else ast.BoolOp(
        "and", index.filter, condition, pos=condition.pos)
    return dataclasses.replace(index, filter=both)


def _renamed(node: Any, old: str, new: str) -> Any:
    """A copy of `node` with the name `old` written `new` (dummies bound and used)."""
    if isinstance(node, tuple):
        return tuple(_renamed(item, old, new) for item in node)
    if not isinstance(node, ast.Node):
        return node
    if isinstance(node, ast.Name):
        return dataclasses.replace(node, id=new if node.id == old else node.id)
    changes = {f.name: _renamed(getattr(node, f.name), old, new)
               for f in dataclasses.fields(node) if f.name != "pos"}
    if isinstance(node, ast.IndexItem):
        changes["names"] = tuple(new if n == old else n for n in node.names)
    return dataclasses.replace(node, **changes)
