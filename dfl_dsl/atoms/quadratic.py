"""Quadratic atoms: `sum_squares(e)` (of a whole array) and `quad_form(x, P)` = xᵀPx, convex
when P is declared `psd`. Of affine arguments they are quadratic polynomials (the QP
objective's ½xᵀPx); otherwise `sum_squares` stays an atom (a second-order cone)."""

from __future__ import annotations

import numpy as np

from .. import ast
from ..check.info import Curv, Sign
from ..errors import DflError
from .base import Atom, AtomError, GroupReduction, by_sign
from .shapes import fmt, same_dim


def _squared_degree(d: int | None) -> int | None:
    return None if d is None or d > 1 else 2 * d


class SumSquares(GroupReduction):
    name, curvature = "sum_squares", Curv.CONVEX

    def sign(self, args):
        return Sign.NONNEG

    def vdeg(self, args):
        return _squared_degree(args[0].vdeg)

    def ldeg(self, args):
        return self.vdeg(args)

    def monotonicity(self, i, args):
        return by_sign(args[i])

    def evaluate(self, ev, node, frame):
        from ..evaluate.poly import Poly
        from ..evaluate.values import Val, multiply, reduce_shape

        arg = ev.number(node.args[0], frame)
        payload = arg.payload
        if arg.symbolic and isinstance(payload, Poly) and payload.degree <= 1:
            if not arg.framed:
                return Val(payload.square_sum(), False, ())
            squared = multiply(arg, arg, frame.n, ev.width)
            return reduce_shape(squared, frame.n, ev.width)
        return self.grouped(ev, arg, frame)

    def reduce(self, data, axes):
        return (data**2).sum(axis=axes)

    def torch_groups(self, value, groups, param):
        return groups.sum(value**2)

    def cvxpy_group(self, arg, param):
        import cvxpy as cp

        return cp.sum_squares(arg)


class QuadForm(Atom):
    name, nargs, curvature = "quad_form", (2, 2), Curv.CONVEX
    data_args = (1,)

    def shape(self, args):
        return ()

    def validate(self, args):
        x, p = args
        if len(p.shape) != 2:
            raise AtomError("the second argument of `quad_form` must be a square matrix", 1)
        if len(x.shape) != 1:
            raise AtomError("the first argument of `quad_form` must be a vector", 0)
        if not (same_dim(x.shape[0], p.shape[0]) and same_dim(p.shape[0], p.shape[1])):
            raise AtomError(
                f"`quad_form` needs x of length n and P of n x n; got x {fmt(x.shape)} "
                f"and P {fmt(p.shape)}",
                1,
            )

    def compose(self, args, sense):
        x, p = args
        if x.curv is Curv.CONST:
            return Curv.CONST
        if x.curv is Curv.AFFINE and p.sign is Sign.NONNEG:  # sign of P stands for `psd`
            return Curv.CONVEX
        return Curv.UNKNOWN

    def sign(self, args):
        return Sign.NONNEG if args[1].sign is Sign.NONNEG else Sign.UNKNOWN

    def vdeg(self, args):
        return _squared_degree(args[0].vdeg)

    def ldeg(self, args):
        return self.vdeg(args)

    def why_not_dcp(self, args, infos):
        if len(args) == 2 and not infos[1].sign.nonneg:
            name = args[1].id if isinstance(args[1], ast.Name) else "P"
            return ("is convex only when its matrix is declared `psd`",
                    f"declare it `param {name}[n, n] psd;`")
        return None

    def evaluate(self, ev, node, frame):
        from ..evaluate.poly import Poly
        from ..evaluate.values import Val

        x, p = (ev.number(a, frame) for a in node.args)
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


ATOMS = [SumSquares(), QuadForm()]
