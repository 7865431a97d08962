"""Explanations of DCP failures: find the sub-expression that breaks a curvature rule and say
why, in words that name the source text ("`sqrt(x)` of an affine expression is concave").

Used by the checker (constraints) and the classifier (objectives).
"""

from __future__ import annotations

from typing import Protocol

from .. import ast
from ..atoms.registry import FUNCTIONS
from ..words import article
from .info import Curv, Info

_SHORT = 40  # longest source snippet quoted in a message


class _HasInfos(Protocol):
    model: ast.Model

    def info(self, node: ast.Node) -> Info: ...


def fits(curv: Curv, want: str) -> bool:
    """Whether `curv` satisfies `want` ("convex", "concave" or "affine")."""
    if want == "convex":
        return curv.is_convex
    if want == "concave":
        return curv.is_concave
    return curv in (Curv.CONST, Curv.AFFINE)


def flip(want: str) -> str:
    return {"convex": "concave", "concave": "convex"}.get(want, want)


def snippet(checker: _HasInfos, node: ast.Node) -> str | None:
    """The source text of `node` when it is short and on one line."""
    pos = node.pos
    if not pos.line or pos.end_line != pos.line or pos.end_column <= pos.column:
        return None
    lines = checker.model.source.splitlines()
    if pos.line > len(lines):
        return None
    text = lines[pos.line - 1][pos.column - 1 : pos.end_column - 1].strip()
    if not text or len(text) > _SHORT:
        return None
    return text


def quoted(checker: _HasInfos, node: ast.Node) -> str:
    text = snippet(checker, node)
    return f"`{text}`" if text else "this expression"


def _is(curv: Curv) -> str:
    if curv is Curv.UNKNOWN:
        return "has no DCP curvature"
    return f"is {curv.value}"


def culprit(
    checker: _HasInfos, node: ast.Expr, want: str
) -> tuple[ast.Expr, str, str | None]:
    """The part of `node` (which does not fit `want`) that breaks the rule: (node, why, hint)."""
    info = checker.info(node)
    if isinstance(node, ast.BinOp) and node.op in "+-":
        for side, w in ((node.left, want), (node.right, want if node.op == "+" else flip(want))):
            if not fits(checker.info(side).curv, w):
                return culprit(checker, side, w)
    if isinstance(node, ast.Neg):
        if checker.info(node.operand).curv is Curv.UNKNOWN:
            return culprit(checker, node.operand, flip(want))
        return node, f"{quoted(checker, node)} {_is(info.curv)}", None
    if isinstance(node, ast.Reduce):
        body = checker.info(node.body)
        if node.op == "sum" and not fits(body.curv, want):
            return culprit(checker, node.body, want)
        if body.curv is Curv.UNKNOWN:
            return culprit(checker, node.body, "convex" if node.op == "max" else "concave")
    if isinstance(node, ast.BinOp) and node.op in "*/@":
        return _product(checker, node, want)
    if isinstance(node, ast.Call):
        return _call(checker, node, info)
    if isinstance(node, ast.Power):
        base = checker.info(node.base)
        exponent = checker.info(node.exponent).value
        if info.curv is Curv.UNKNOWN and base.curv is Curv.UNKNOWN:
            return culprit(checker, node.base, "convex")
        if (
            info.curv is Curv.UNKNOWN
            and exponent is not None
            and exponent > 1
            and not base.sign.nonneg
        ):
            return (
                node,
                f"{quoted(checker, node)} is convex only where its base is nonnegative",
                "declare the variable `>= 0`",
            )
    return node, f"{quoted(checker, node)} {_is(info.curv)}", None


def _product(checker: _HasInfos, node: ast.BinOp, want: str) -> tuple[ast.Expr, str, str | None]:
    left, right = checker.info(node.left), checker.info(node.right)
    if left.curv is Curv.CONST:
        const, const_node, other = left, node.left, node.right
    elif right.curv is Curv.CONST:
        const, const_node, other = right, node.right, node.left
    else:
        hint = None
        if snippet(checker, node.left) and snippet(checker, node.left) == snippet(
            checker, node.right
        ):
            hint = f"write `{snippet(checker, node.left)}^2` or use `sum_squares`"
        return (
            node,
            f"{quoted(checker, node)} multiplies two expressions with variables, "
            "which has no DCP curvature",
            hint,
        )
    inner = checker.info(other).curv
    if const.sign.nonneg:
        return culprit(checker, other, want)
    if const.sign.nonpos:
        if inner is Curv.UNKNOWN:
            return culprit(checker, other, flip(want))
        return node, f"{quoted(checker, node)} {_is(checker.info(node).curv)}", None
    return (
        node,
        f"the factor {quoted(checker, const_node)} has unknown sign, so "
        f"{quoted(checker, node)} has no DCP curvature",
        "declare the data it comes from `>= 0` (or `<= 0`)",
    )


def _call(checker: _HasInfos, node: ast.Call, info: Info) -> tuple[ast.Expr, str, str | None]:
    args = [checker.info(a) for a in node.args]
    reason = FUNCTIONS[node.func].why_not_dcp(node.args, args)
    if reason is not None:
        return node, f"{quoted(checker, node)} {reason[0]}", reason[1]
    bad = [a for a in args if a.curv not in (Curv.CONST, Curv.AFFINE)]
    # the argument that carries the variables: `quad_form(w, Sigma)` is "of an affine
    # expression", not of its constant matrix
    varied = [a for a in args if a.curv is not Curv.CONST]
    arg = (bad or varied or args[-1:] or [Info()])[0]
    described = f"{article(arg.curv.value)} {arg.curv.value}"
    return node, f"`{node.func}` of {described} expression {_is(info.curv)}", None
