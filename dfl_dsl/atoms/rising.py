"""`#rising(d)`: the step between two slopes of a piecewise-linear term (grammar/piecewise.py),
passed through unchanged where it is >= 0 and refused where a slope falls. Internal: its name
is no name a model can write."""

from __future__ import annotations

import numpy as np

from ..check.info import Sign
from .base import INCR, Elementwise


class Rising(Elementwise):
    name, written = "#rising", False

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR

    def numpy(self, args, param):
        from ..evaluate.values import EvalError

        if np.any(args[0] < 0):
            raise EvalError(
                f"a piecewise-linear term's slopes fall here (by {-np.min(args[0]):g}), so it "
                "isn't convex", hint="its slopes must not fall from one piece to the next: "
                "a convex term, minimized (or subtracted from what is maximized); AMPL "
                "solves other terms with integer variables")
        return args[0]

    def torch(self, args, param):
        return args[0]

    def cvxpy(self, args, param):
        return args[0]


ATOMS = [Rising()]
