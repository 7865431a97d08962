"""Smooth elementwise atoms: `sqrt`, `log`, `log1p` (concave), `exp` and `x ^ p` (written with
`^`; its curvature is the checker's power rule)."""

from __future__ import annotations

import numpy as np

from ..check.info import Curv, Sign
from .base import INCR, Elementwise, Named


class Sqrt(Named):
    name, curvature, scm = "sqrt", Curv.CONCAVE, True

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR


class Log(Named):
    name, curvature = "log", Curv.CONCAVE

    def monotonicity(self, i, args):
        return INCR


class Log1p(Log):
    name, scm = "log1p", True

    def sign(self, args):
        return Sign.NONNEG if args[0].sign.nonneg else Sign.UNKNOWN


class Exp(Named):
    name, curvature = "exp", Curv.CONVEX

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR


class Power(Elementwise):
    """x ^ p for a data exponent p (the checker's `_e_Power` holds its DCP rule)."""

    name, written = "power", False

    def numpy(self, args, param):
        return np.power(args[0], param)

    def torch(self, args, param):
        return args[0] ** param

    def cvxpy(self, args, param):
        import cvxpy as cp

        return cp.power(args[0], param)


ATOMS = [Sqrt(), Log(), Log1p(), Exp(), Power()]
