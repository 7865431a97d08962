"""MathProg's and AMPL's reading of `if c then a else b = d` in a constraint: the branches of an
`if` are arithmetic, so the comparison closes the whole `if` (`(if c then a else b) = d`,
GLPK's osemosys). The grammar lets an `if` reach as far as it can, for the `if` of a condition
(`if c then x = 1 else y = 2` in a filter), and hands the constraint an `if` whose last branch
is a comparison; this moves the comparison out."""

from __future__ import annotations

from .. import ast


def comparison_out_of_if(body: ast.Expr) -> ast.Expr:
    """`if c then a else b OP d` (nested `else if`s too) as `(if c then a else b) OP d`, and
    `if c then a OP d` (no `else`: 0) as `(if c then a else 0) OP d`; any other body as it is
    (a constraint must be one comparison: the checker says so)."""
    if not isinstance(body, ast.IfThenElse):
        return body
    last = comparison_out_of_if(body.orelse)
    if isinstance(body.then, ast.Compare) and not isinstance(last, ast.Compare):
        then = body.then
        first = ast.IfThenElse(body.cond, then.operands[0], body.orelse, pos=body.pos)
        return ast.Compare(then.ops, (first, *then.operands[1:]), then.written, pos=body.pos)
    if isinstance(body.then, ast.Compare) or not isinstance(last, ast.Compare):
        return body
    first = ast.IfThenElse(body.cond, body.then, last.operands[0], pos=body.pos)
    return ast.Compare(last.ops, (first, *last.operands[1:]), last.written, pos=body.pos)
