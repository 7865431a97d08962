"""`abs(x)` and `pos(x)` = max(x, 0), elementwise: convex, piecewise linear."""

from __future__ import annotations

import numpy as np

from ..check.info import Curv, Sign
from .base import INCR, Elementwise, Named, PiecewiseLinear, by_sign


class Abs(PiecewiseLinear, Named):
    name, curvature, two_sided = "abs", Curv.CONVEX, True

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return by_sign(args[i])


class Pos(PiecewiseLinear, Elementwise):
    name, curvature, floor = "pos", Curv.CONVEX, 0.0

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR

    def numpy(self, args, param):
        return np.maximum(args[0], 0.0)

    def torch(self, args, param):
        return args[0].clamp_min(0.0)

    def cvxpy(self, args, param):
        import cvxpy as cp

        return cp.pos(args[0])


ATOMS = [Abs(), Pos()]
