"""AMPL's piecewise-linear term `<<b1, ..., bn; s1, ..., sn+1>> x`: slope s1 up to b1, s2 from
b1 to b2, ..., sn+1 past bn, and 0 at x = 0 (at z for `(x, z)`).

A convex one (slopes that never fall) is the largest of its affine pieces, so it is written here
as `max` of them and the rest of the pipeline sees a convex expression that an LP holds (AMPL
gives such a term to the solver as linear pieces too). Each step between slopes passes through
the internal atom `#rising`, which stops binding, at the `<<`, where data make a slope fall: a
nonconvex term needs integer variables, which this rewrite doesn't add."""

from __future__ import annotations

from .. import ast
from ..errors import DflError

RISING = "#rising"


def piecewise(breaks: list[ast.Expr], slopes: list[ast.Expr], arg: ast.Expr,
              pos: ast.Pos) -> ast.Expr:
    """The term as the `max` of its affine pieces."""
    x, zero = (arg.items if isinstance(arg, ast.Tuple) and len(arg.items) == 2
               else (arg, ast.Number(0, pos=pos)))
    if len(slopes) != len(breaks) + 1:
        raise DflError(f"a piecewise-linear term with {len(breaks)} breakpoint(s) needs "
                       f"{len(breaks) + 1} slopes, not {len(slopes)}", pos,
                       hint="`<<b1, ..., bn; s1, ..., sn+1>> x`: one slope more than breakpoints")

    def op(sign: str, left: ast.Expr, right: ast.Expr) -> ast.Expr:
        return ast.BinOp(sign, left, right, pos=pos)

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
