"""How the checker's facts about parts make the facts about a whole (sums, scalings,
compositions by the DCP rules) and how a part is named in a message."""

from __future__ import annotations

from collections.abc import Mapping

from .. import ast
from ..atoms.shapes import fmt
from .info import Curv, Info, Sign
from .symbols import Dummy

Scope = Mapping[str, Dummy]


def higher(a: int | None, b: int | None) -> int | None:
    """The degree of a sum (None, no degree, wins)."""
    return None if a is None or b is None else max(a, b)


def which_param(info: Info) -> str:
    return "a predicted param" if info.pdeg else "an uncertain param"


def combine(left: Info, right: Info, op: str) -> Info:
    rcurv = right.curv.negate() if op == "-" else right.curv
    rsign = right.sign.negate() if op == "-" else right.sign
    if left.vdeg is None or right.vdeg is None:
        vdeg = None
    else:
        vdeg = max(left.vdeg, right.vdeg)
    value = None
    if left.value is not None and right.value is not None:
        value = left.value + right.value if op == "+" else left.value - right.value
    return Info(
        kind="num",
        integer=left.integer and right.integer,
        curv=left.curv.plus(rcurv),
        sign=left.sign.plus(rsign),
        vdeg=vdeg,
        pdeg=max(left.pdeg, right.pdeg),
        udeg=max(left.udeg, right.udeg),
        nonsmooth=left.nonsmooth or right.nonsmooth,
        ldeg=higher(left.ldeg, right.ldeg),
        value=value,
        dim=int(value) if value is not None and float(value).is_integer() else None,
    )


def scale(curv: Curv, sign: Sign) -> Curv:
    if curv in (Curv.CONST, Curv.AFFINE) or sign.nonneg:
        return curv
    if sign.nonpos:
        return curv.negate()
    return Curv.UNKNOWN


def compose(f: Curv, arg: Info, *, incr: bool | None, decr: bool) -> Curv:
    if arg.curv is Curv.CONST:
        return Curv.CONST
    if arg.curv is Curv.AFFINE:
        return f
    same = f
    if (arg.curv is same and incr) or (arg.curv is same.negate() and decr):
        return f
    return Curv.UNKNOWN


def degree(info: Info) -> int:
    return 3 if info.vdeg is None else info.vdeg


def kind_of(info: Info) -> str:
    return {"num": "number", "elem": "set element", "bool": "condition", "set": "set"}[info.kind]


def describe(info: Info) -> str:
    if info.kind == "set":
        return "a set"
    if info.kind == "bool":
        return "a condition"
    if info.kind == "elem":
        return "a set element"
    if info.shape:
        return f"an array of shape {fmt(info.shape)}"
    return "a scalar"


def statement_kind(stmt: ast.Statement) -> str:
    return {
        ast.SetDecl: "set",
        ast.ParamDecl: "param",
        ast.VarDecl: "var",
        ast.ExprDecl: "expr",
        ast.Objective: "objective",
        ast.Constraint: "constraint",
    }.get(type(stmt), "name")


def between(node: ast.Compare, right: ast.Expr) -> ast.Pos:
    return right.pos

