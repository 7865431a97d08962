"""`#most(e)` and `#least(e)`: the largest and the smallest value a linear expression of the
variables reaches within their bounds, as data. No model writes them: the rewrite of AMPL's
logical constraints (`a <= b or c <= d`, `x != y`: grammar/disjunctions.py) relaxes each part
by them, so a part switched off by its binary holds for every point in the bounds (the big-M
of the textbook rewrite, taken as small as the bounds allow). A second argument, the `!=` or
`<>` the row comes from, also asks that e be integer-valued (it excludes one value, which needs
a next integer on each side).
"""

from __future__ import annotations

import numpy as np

from ..check.info import Curv, Info
from ..errors import DflError
from .base import Atom


def _column_facts(ev) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper bounds and integrality of every column of z; columns that are no
    variable (predicted or uncertain params) are unbounded."""
    width = ev.width
    lower, upper = np.full(width, -np.inf), np.full(width, np.inf)
    integer = np.zeros(width, dtype=bool)
    for entity in ev.ctx.entities.values():
        if entity.kind == "var" and entity.lower is not None:
            cols = entity.columns()
            lower[cols], upper[cols] = entity.lower, entity.upper
            integer[cols] = entity.integer
    return lower, upper, integer


class Reach(Atom):
    nargs = (1, 2)
    written = False
    curvature = Curv.CONST

    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self, args, sense="minimize"):
        return Info(kind="num", shape=())  # data, known once the bounds are bound

    def evaluate(self, ev, node, frame):
        from ..evaluate.poly import Poly
        from ..evaluate.values import Val

        v = ev.number(node.args[0], frame)
        if not v.symbolic:
            return v
        poly = v.payload
        if isinstance(poly, Poly):
            _refuse_params(ev, poly, node)
        if not isinstance(poly, Poly) or poly.quad is not None:
            raise DflError("a part of a logical constraint must be linear in the variables",
                           node.args[0].pos)
        lower, upper, integer = _column_facts(ev)
        lin = poly.lin.tocsr()
        cols, data = lin.indices, lin.data
        if len(node.args) > 1:
            _require_integral(poly, cols, data, integer, node)
        high = data > 0 if self.name == "#most" else data < 0
        reach = np.where(high, data * upper[cols], data * lower[cols])
        rows = np.repeat(np.arange(lin.shape[0]), np.diff(lin.indptr))
        out = poly.const + np.bincount(rows, reach, minlength=lin.shape[0])
        if not np.all(np.isfinite(out)):
            raise DflError(
                "a constraint with `or` or `!=` needs every variable in it bounded from below "
                "and above: each part is switched on or off by a binary, within the bounds",
                node.args[0].pos, hint="give the variables finite bounds (`>= 0, <= 100`)")
        return Val(out if v.framed else out.reshape(()), v.framed, ())


def _refuse_params(ev, poly, node) -> None:
    """A predicted or uncertain param takes a new value per sample (or scenario), after the
    relaxations were fixed from the bound data: named here, where it would otherwise read as an
    unbounded variable, a product of variables or a non-integer side."""
    used = poly.columns()
    for entity in ev.ctx.entities.values():
        if entity.kind == "theta" and np.isin(entity.columns(), used).any():
            kind = "a predicted" if entity.decl.is_predicted else "an uncertain"
            raise DflError(
                f"`{entity.name}` is {kind} param: a constraint with `or` or `!=` can't "
                "hold one (each part is switched by a binary within bounds fixed when the "
                "data is bound)", node.args[0].pos,
                hint="use data params there; a predicted or uncertain value may be in the "
                     "objective or in a plain constraint")


def _require_integral(poly, cols, data, integer, node) -> None:
    """`!=` excludes one value: e <= v - 1 or e >= v + 1 is exact only for integer e."""
    if not (np.all(integer[cols]) and np.all(data == np.round(data))
            and np.all(poly.const == np.round(poly.const))):
        op = node.args[1].value
        raise DflError(f"`{op}` as a constraint needs both sides integer-valued (integer "
                       "variables, whole coefficients): it is written as `<= -1 or >= 1` of "
                       "their difference", node.args[0].pos,
                       hint="for continuous values write the disjunction you mean with `or`")


ATOMS = [Reach("#most"), Reach("#least")]
