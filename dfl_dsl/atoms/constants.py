"""`eye(n)`, `ones(n)`, `zeros(n)`: constant arrays whose size is int data."""

from __future__ import annotations

import numpy as np

from ..check.info import Curv, Sign
from .base import Atom, AtomError
from .shapes import dim_of


class Constant(Atom):
    curvature = Curv.CONST
    data_args = (0,)

    def __init__(self, name: str) -> None:
        self.name = name
        self._make = {"eye": np.eye, "ones": np.ones, "zeros": np.zeros}[name]

    def shape(self, args):
        n = dim_of(args[0])
        return (n, n) if self.name == "eye" else (n,)

    def sign(self, args):
        return Sign.ZERO if self.name == "zeros" else Sign.NONNEG

    def validate(self, args):
        if args[0].shape != ():
            raise AtomError(f"`{self.name}` takes a scalar size", 0)

    def evaluate(self, ev, node, frame):
        from ..evaluate.values import Val

        size = ev.int_scalar(node.args[0], frame, f"the size of `{self.name}`")
        data = self._make(size)
        return Val(data, False, data.shape)


ATOMS = [Constant(name) for name in ("eye", "ones", "zeros")]
