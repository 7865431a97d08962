"""`max(a, b, ...)` (convex) and `min(a, b, ...)` (concave), elementwise over broadcast
arguments; the same atoms reduce each row group of `max{i in I} ...` / `min{...}`."""

from __future__ import annotations

import math

import numpy as np

from ..check.info import Curv, Sign
from .base import INCR, AtomError, PiecewiseLinear
from .shapes import broadcast


class Extreme(PiecewiseLinear):
    nargs = (2, 8)  # (and MathProg's `min(a)` of one scalar, a itself: `apply`)

    def __init__(self, name: str) -> None:
        self.name = name
        self.curvature = Curv.CONVEX if name == "max" else Curv.CONCAVE
        self.scm = name == "min"  # min(a'x, c) caps a modular function
        self._np = np.maximum if name == "max" else np.minimum

    def apply(self, args, sense="minimize"):
        """MathProg takes `min(a)` of one scalar, which is a (GLPK's osemosys writes it)."""
        if len(args) == 1:
            if args[0].shape != ():
                raise AtomError(f"`{self.name}` of one argument takes a scalar (and is that "
                                f"value); an array's {self.name} is `{self.name}{{i in I}} "
                                "a[i]`", 0)
            return args[0]
        return super().apply(args, sense)

    def shape(self, args):
        return broadcast([a.shape for a in args])

    def sign(self, args):
        signs = [a.sign for a in args]
        if self.name == "max":
            return Sign.NONNEG if any(s.nonneg for s in signs) else Sign.UNKNOWN
        return Sign.NONPOS if any(s.nonpos for s in signs) else Sign.UNKNOWN

    def monotonicity(self, i, args):
        return INCR

    def evaluate(self, ev, node, frame):
        from ..evaluate.nonlinear import NL, AtomNode
        from ..evaluate.values import Val, expand, flat_data, out_shape

        args = [ev.number(a, frame) for a in node.args]
        if len(args) == 1:
            return args[0]
        shape = out_shape(*args)
        framed = any(a.framed for a in args)
        n, width = frame.n, ev.width
        if not any(a.symbolic for a in args):
            out = flat_data(args[0], framed, shape, n)
            for a in args[1:]:
                out = self._np(out, flat_data(a, framed, shape, n))
            return Val(out.reshape(((n,) if framed else ()) + shape), framed, shape)
        payloads = tuple(
            expand(a, framed, shape, n, width) if a.symbolic else
            flat_data(a, framed, shape, n).astype(float)
            for a in args
        )
        rows = math.prod(shape) * (n if framed else 1)
        return Val(NL.of(AtomNode(self.name, payloads, rows), width), framed, shape)

    def numpy(self, args, param):
        out = args[0]
        for a in args[1:]:
            out = self._np(out, a)
        return out

    def torch(self, args, param):
        import torch

        pick = torch.maximum if self.name == "max" else torch.minimum
        out = args[0]
        for v in args[1:]:
            out = pick(out, v)
        return out

    def torch_groups(self, value, groups, param):
        return groups.max(value) if self.name == "max" else groups.min(value)

    def cvxpy(self, args, param):
        import cvxpy as cp

        return cp.maximum(*args) if self.name == "max" else cp.minimum(*args)

    def cvxpy_group(self, arg, param):
        import cvxpy as cp

        return cp.max(arg) if self.name == "max" else cp.min(arg)


ATOMS = [Extreme("max"), Extreme("min")]
