"""AMPL's and MathProg's trigonometric functions of data, `sin cos tan atan` (GLPK's toto and
graph examples compute with them): neither convex nor concave, so the checker refuses one
applied to a decision, as it does `floor`."""

from __future__ import annotations

import numpy as np

from .base import Named


class _DataOnly(Named):
    def cvxpy(self, args, param):
        return None  # (CVXPY has none: the checker keeps these to data)


class Sin(_DataOnly):
    name = "sin"


class Cos(_DataOnly):
    name = "cos"


class Tan(_DataOnly):
    name = "tan"


class Atan(_DataOnly):
    name = "atan"

    def numpy(self, args, param):
        return np.arctan(args[0])


ATOMS = [Sin(), Cos(), Tan(), Atan()]
