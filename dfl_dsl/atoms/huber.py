"""`huber(x, M)`, elementwise, CVXPY's semantics (M = 1 when left out):

    huber(x, M) = x²            for |x| <= M,
                  2M|x| - M²    for |x| >  M,

convex, smooth (C¹) and nonnegative: the squared error near zero, the absolute error in the
tails (Huber, "Robust estimation of a location parameter", Ann. Math. Statist. 1964).

Its lowering for the LP/QP backends is CVXPY's: huber(u, M) = min_n n² + 2M|u − n| — the
quadratic part n takes the residual up to M and t >= |u − n| the rest — so a minimized huber
of an affine u is a QP with auxiliary n (free) and t >= 0, rows t >= u − n and t >= n − u.
"""

from __future__ import annotations

import numpy as np

from ..check.info import Curv, Sign
from ..errors import DflError
from .base import AtomError, Elementwise, by_sign


class Huber(Elementwise):
    name, nargs, curvature = "huber", (1, 2), Curv.CONVEX
    data_args = (1,)

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return by_sign(args[i])

    def validate(self, args):
        if len(args) == 2 and args[1].shape != ():
            raise AtomError("`huber`'s threshold M must be a scalar", 1)

    def ldeg(self, args):
        """A QP objective term of an affine argument (its lowering's n²)."""
        if not args[0].has_vars:
            return 1
        return 2 if args[0].vdeg == 1 else None

    def param_of(self, ev, node, frame, args):
        if len(args) < 2:
            return _threshold(None)
        m = args[1]
        if m.symbolic or m.framed or m.shape != ():
            raise DflError("huber's threshold M must be one number from data", node.args[1].pos)
        value = float(np.asarray(m.payload))
        if not value >= 0:
            raise DflError(f"huber's threshold M must be >= 0, got {value:g}", node.args[1].pos)
        return value

    def numpy(self, args, param):
        m, x = _threshold(param), np.abs(args[0])
        return np.where(x <= m, x**2, 2 * m * x - m**2)

    def torch(self, args, param):
        import torch

        m, x = _threshold(param), args[0].abs()
        return torch.where(x <= m, x**2, 2 * m * x - m**2)

    def cvxpy(self, args, param):
        import cvxpy as cp

        return cp.huber(args[0], _threshold(param))

    def aux_columns(self, node, scenarios=1):
        return 2 * node.rows  # n and t per row

    def lower(self, node, weights, sign, low):
        from ..evaluate.poly import Poly
        from .epigraph import check_direction, weighted

        check_direction(node, weights, sign, True)
        w, m = low.width, _threshold(node.param)
        u = low.argument(node.args[0], 1.0)
        n = Poly.symbols(low.new(node.rows), w)
        t = Poly.symbols(low.new(node.rows, lower=0.0), w)
        low.rows(self.name, t - u + n, 0.0, np.inf)
        low.rows(self.name, t + u - n, 0.0, np.inf)
        return weighted(n.times(n) + t.scale(np.full(node.rows, 2.0 * m)), weights, w)


def _threshold(param) -> float:
    """M, 1 when the model leaves it out (as CVXPY)."""
    return 1.0 if param is None else float(param)


ATOMS = [Huber()]


def _threshold(param) -> float:
    """M, 1 when the model leaves it out (as CVXPY)."""
    return 1.0 if param is None else float(param)


ATOMS = [Huber()]
