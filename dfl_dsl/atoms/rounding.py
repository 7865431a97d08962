"""AMPL's rounding functions of data, `floor(e)` and `ceil(e)`: a step function
of a variable has no curvature, so the checker refuses one applied to a decision."""

from __future__ import annotations

from .base import Named


class Floor(Named):
    name = "floor"


class Ceil(Named):
    name = "ceil"


ATOMS = [Floor(), Ceil()]
