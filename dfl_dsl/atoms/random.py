"""AMPL's and MathProg's random functions of data, `Uniform01() Uniform(a, b) Normal01()
Normal(mu, sigma) Irand224()`, drawn from GLPK's generator with glpsol's default seed.

Published models compute test data with them (a random graph, noisy capacities). A model here
must stay one model, the same numbers at every bind, so the draws come from one fixed stream
that restarts at each bind. The stream is the one glpsol uses (Knuth's subtractive generator
from the Stanford GraphBase, seed 1; GLPK's polar method for normals), so a model gives the
numbers glpsol gives wherever both draw in the same order: here each computed param draws
when it is bound (declaration order), its entries in index order, and a filter draws only
for the rows its left side of `and`/`or` leaves open, as glpsol does.
"""

from __future__ import annotations

import math

import numpy as np

from ..check.info import Curv, Sign
from .base import Atom, AtomError

_MASK = 0x7FFFFFFF  # values are kept modulo 2^31
_TWO_31 = 2.0**31


class KnuthStream:
    """Knuth's portable subtractive generator (SGB's gb_flip): integers in [0, 2^31)."""

    def __init__(self, seed: int = 1) -> None:
        a = [0] * 56
        prev = s = seed & _MASK
        following = 1
        a[55] = prev
        i = 21
        while i:
            a[i] = following
            following = (prev - following) & _MASK
            s = 0x40000000 + (s >> 1) if s & 1 else s >> 1
            following = (following - s) & _MASK
            prev = a[i]
            i = (i + 21) % 55
        a[0] = -1  # the sentinel that says a cycle is used up
        self._a = a
        self._next = 0
        for _ in range(5):  # warm-up, as the original does
            self._cycle()

    def _cycle(self) -> int:
        """55 more steps of the recurrence a[i] = a[i] - a[i + 31 (mod 55)]."""
        a = self._a
        for i in range(1, 25):
            a[i] = (a[i] - a[i + 31]) & _MASK
        for i in range(25, 56):
            a[i] = (a[i] - a[i - 24]) & _MASK
        self._next = 54
        return a[55]

    def integer(self) -> int:
        value = self._a[self._next]
        if value < 0:
            return self._cycle()
        self._next -= 1
        return value

    def below(self, m: int) -> int:
        """Uniform in [0, m), without the bias of a plain `% m` (rejection above a multiple)."""
        top = (1 << 31) - (1 << 31) % m
        while True:
            r = self.integer()
            if r < top:
                return r % m

    def uniform01(self) -> float:
        return self.integer() / _TWO_31

    def normal01(self) -> float:
        """The polar method: a point in the unit disc, then the Box-Muller transform."""
        while True:
            x = -1.0 + 2.0 * self.uniform01()
            y = -1.0 + 2.0 * self.uniform01()
            r2 = x * x + y * y
            if 0.0 < r2 <= 1.0:
                return y * math.sqrt(-2.0 * math.log(r2) / r2)


def stream_of(ev) -> KnuthStream:
    """The bind's one stream (a fresh bind starts it again, so the data are the same)."""
    ctx = ev.ctx
    if ctx.random is None:
        ctx.random = KnuthStream(1)
    return ctx.random


class Random(Atom):
    """A draw per row of the frame, in row order; its arguments are data."""

    curvature = Curv.CONST
    drawn = True

    def __init__(self, name: str, nargs: int, draw, sign: Sign = Sign.UNKNOWN) -> None:
        self.name = name
        self.nargs = (nargs, nargs)
        self.data_args = tuple(range(nargs))
        self._draw = draw
        self._sign = sign

    def shape(self, args):
        return ()

    def sign(self, args):
        return self._sign

    def validate(self, args):
        for i, a in enumerate(args):
            if a.shape != ():
                raise AtomError(f"`{self.name}` takes scalars", i)

    def evaluate(self, ev, node, frame):
        from ..evaluate.values import EvalError, Val, flat_data

        n = frame.n
        columns = [flat_data(ev.number(a, frame), True, (), n).astype(float) for a in node.args]
        stream = stream_of(ev)
        out = np.empty(n)
        for row in range(n):
            params = [float(c[row]) for c in columns]
            try:
                out[row] = self._draw(stream, *params)
            except ValueError as exc:
                raise EvalError(f"`{self.name}({', '.join(f'{p:g}' for p in params)})`: "
                                f"{exc}") from None
        return Val(out, True, ())


def _uniform(stream: KnuthStream, a: float, b: float) -> float:
    if a >= b:
        raise ValueError("the range is empty (a must be below b)")
    x = stream.uniform01()
    return a * (1.0 - x) + b * x


def _normal(stream: KnuthStream, mu: float, sigma: float) -> float:
    return mu + sigma * stream.normal01()


ATOMS = [
    Random("Uniform01", 0, KnuthStream.uniform01, Sign.NONNEG),
    Random("Uniform", 2, _uniform),
    Random("Normal01", 0, KnuthStream.normal01),
    Random("Normal", 2, _normal),
    Random("Irand224", 0, lambda s: float(s.below(1 << 24)), Sign.NONNEG),
]
