"""What the checker knows about an expression before any data is seen.

Curvature and sign follow CVXPY's disciplined convex programming (DCP) rules; `vdeg` is the
polynomial degree in the decision variables (None once a nonlinear atom touches a variable),
which is what tells LP from QP; `pdeg`/`udeg` are the degrees in `predicted` and `uncertain`
params, which must stay affine (DPP-style) for the problem to remain a parametrized LP/QP.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

Dim = int | str | None  # a literal size, a symbolic size (param name or "#SET"), or unknown


class Curv(Enum):
    CONST = "constant"
    AFFINE = "affine"
    CONVEX = "convex"
    CONCAVE = "concave"
    UNKNOWN = "unknown"

    def negate(self) -> Curv:
        return {Curv.CONVEX: Curv.CONCAVE, Curv.CONCAVE: Curv.CONVEX}.get(self, self)

    def plus(self, other: Curv) -> Curv:
        if self is Curv.CONST:
            return other
        if other is Curv.CONST:
            return self
        if Curv.UNKNOWN in (self, other):
            return Curv.UNKNOWN
        if self is Curv.AFFINE:
            return other
        if other is Curv.AFFINE or other is self:
            return self
        return Curv.UNKNOWN

    @property
    def is_convex(self) -> bool:
        return self in (Curv.CONST, Curv.AFFINE, Curv.CONVEX)

    @property
    def is_concave(self) -> bool:
        return self in (Curv.CONST, Curv.AFFINE, Curv.CONCAVE)


class Sign(Enum):
    ZERO = "zero"
    NONNEG = "nonnegative"
    NONPOS = "nonpositive"
    UNKNOWN = "unknown"

    def negate(self) -> Sign:
        return {Sign.NONNEG: Sign.NONPOS, Sign.NONPOS: Sign.NONNEG}.get(self, self)

    def plus(self, other: Sign) -> Sign:
        if self is Sign.ZERO:
            return other
        if other is Sign.ZERO or other is self:
            return self
        return Sign.UNKNOWN

    def times(self, other: Sign) -> Sign:
        if Sign.ZERO in (self, other):
            return Sign.ZERO
        if Sign.UNKNOWN in (self, other):
            return Sign.UNKNOWN
        return Sign.NONNEG if self is other else Sign.NONPOS

    @property
    def nonneg(self) -> bool:
        return self in (Sign.ZERO, Sign.NONNEG)

    @property
    def nonpos(self) -> bool:
        return self in (Sign.ZERO, Sign.NONPOS)

    @staticmethod
    def of(value: float) -> Sign:
        if value == 0:
            return Sign.ZERO
        return Sign.NONNEG if value > 0 else Sign.NONPOS


@dataclass(frozen=True)
class Info:
    """Static facts about one expression node."""

    kind: str = "num"  # "num" | "elem" (a set element) | "bool" | "set"
    shape: tuple[Dim, ...] = ()
    integer: bool = False  # integer-valued data (usable in ranges and shapes)
    curv: Curv = Curv.CONST
    sign: Sign = Sign.UNKNOWN
    vdeg: int | None = 0  # degree in variables; None = not a polynomial
    pdeg: int = 0  # degree in predicted params
    udeg: int = 0  # degree in uncertain params
    nonsmooth: bool = False  # a nonsmooth atom touches a variable
    # the degree in the variables once the reductions have replaced its atoms by epigraph
    # variables (when the DCP rules hold): 1 linear rows, 2 a QP objective term, None only a
    # conic backend takes it
    ldeg: int | None = 1
    set_dim: int | None = None  # for kind == "set": tuple width (None = from data)
    value: float | None = None  # a literal's value, when known statically
    dim: Dim = None  # this scalar as an array size: a literal int or an int param's name

    @property
    def is_data(self) -> bool:
        """No variables and no predicted/uncertain params: computable at bind time."""
        return self.vdeg == 0 and self.pdeg == 0 and self.udeg == 0

    @property
    def has_vars(self) -> bool:
        return self.vdeg != 0

    @property
    def pwl(self) -> bool:
        """Piecewise linear in the variables: LP-representable when DCP-valid."""
        return self.ldeg is not None and self.ldeg <= 1

    def but(self, **changes) -> Info:
        return replace(self, **changes)


NUMBER = Info()
BOOL = Info(kind="bool")
