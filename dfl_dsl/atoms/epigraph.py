"""Epigraph lowerings: what lets an LP/QP backend take a convex atom. A convex atom that is
minimized (or bounded from above) is replaced by a variable t with rows t >= arg, its
hypograph for a concave one (maximized, bounded below): the optimum puts t on the atom's
value, so the lowered problem has the original's optimum (Boyd & Vandenberghe, "Convex
Optimization", §4.1.3).

The reduction that runs a lowering (compile/reductions/epigraphs.py) hands each atom a
`Lowering`: where auxiliary columns and rows go, and how an argument becomes a `Poly` (atoms
nested in it lowered in turn). The atoms import this module when they lower, not before: the
checker reads their DCP facts without scipy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from ..errors import DflError
from ..evaluate.nonlinear import NL, AtomNode
from ..evaluate.poly import Poly


@dataclass(frozen=True)
class L1Pairs:
    """|x_i| <= s_i for columns x and s (norm1's epigraph of plain variables): the structure of
    an L1 ball the lowering knows it wrote, so a backend reads it instead of finding it in the
    matrix (Frank–Wolfe's closed-form linear oracle)."""

    x: np.ndarray
    s: np.ndarray


class Lowering(Protocol):
    width: int  # the columns of z once every auxiliary of the reduction is placed

    def new(self, k: int, lower: float = -np.inf, upper: float = np.inf) -> np.ndarray:
        """k fresh auxiliary columns."""

    def rows(self, atom: str, body: Poly, lo: float, hi: float) -> None:
        """An epigraph's rows lo <= body <= hi, recorded as the atom's."""

    def argument(self, arg, sign: float) -> Poly:
        """An atom's argument as a Poly, atoms nested in it lowered for a bound from above
        (sign +1) or below (-1)."""

    def convex(self, node: AtomNode) -> bool:
        """Whether the atom of a nested node is convex (else concave)."""

    def declare(self, structure: L1Pairs) -> None:
        """A structure the rows just written have, for the backends to read."""


def weighted(p: Poly, weights, width: int) -> Poly:
    """Σ_r weights[r] * p[r] as a one-row Poly (`weights` a vector), or `weights @ p` (a
    sparse matrix)."""
    if sp.issparse(weights):
        return p.rowmap(sp.csr_array(weights))
    m = sp.csr_array(np.asarray(weights, dtype=float).reshape(1, -1))
    return p.rowmap(m)


def check_direction(node: AtomNode, weights, sign: float, convex: bool) -> None:
    weights = weights.data if sp.issparse(weights) else weights
    eff = weights * sign
    ok = np.all(eff[weights != 0] >= 0) if convex else np.all(eff[weights != 0] <= 0)
    if not ok:
        raise DflError(
            f"`{node.name}` enters in the wrong direction for an LP bridge (a convex atom "
            "must be minimized or bounded from above, a concave one maximized or bounded "
            "from below)"
        )


def sides(arg, low: Lowering) -> tuple[float, ...]:
    """Which of t >= e (+1) and t >= -e (-1) an epigraph of |e| needs. Both, for an affine e.
    With atoms in e only one side can hold them (a convex atom can be bounded from above
    only); the checker took |e| only for e of known sign, where that side alone is |e|:
    abs(pos(x) - 1) is refused, abs(-min(x, 0)) = -min(x, 0)."""
    if not isinstance(arg, NL) or not arg.terms:
        return (1.0, -1.0)
    fits = [side for side in (1.0, -1.0) if all(
        _direction_fits(inner, matrix, side, low.convex(inner)) for matrix, inner in arg.terms)]
    if len(fits) != 1:
        raise DflError("`abs` or a norm of this expression can't be turned into linear "
                       "constraints", hint="use --backend cvxpy")
    return tuple(fits)


def _direction_fits(node: AtomNode, matrix, sign: float, convex: bool) -> bool:
    eff = np.asarray(matrix.data if sp.issparse(matrix) else matrix) * sign
    eff = eff[eff != 0]
    return bool(np.all(eff >= 0) if convex else np.all(eff <= 0))


def lower_piecewise(node: AtomNode, weights, sign: float, low: Lowering, *, convex: bool,
                    two_sided: bool = False, floor: float = -np.inf) -> Poly:
    """The epigraph of a piecewise-linear atom (`base.PiecewiseLinear`): t bounds each
    argument from above (`convex`) or below, and its negation too where `two_sided` (|e|);
    `floor` is a lower bound t may take for granted (pos: 0). `weights` combines the node's
    rows into one row (a vector), or into the rows of the argument the atom is nested in (a
    sparse matrix, rows x node.rows)."""
    check_direction(node, weights, sign, convex)
    w = low.width
    t = low.new(node.rows, lower=floor)
    if node.starts is None:
        owner = np.arange(node.rows)
        args = list(node.args)
    else:
        owner = np.repeat(np.arange(node.rows), np.diff(node.starts))
        args = [node.args[0]]
    tt = Poly.symbols(t[owner], w)
    for arg in args:
        if convex:
            for side in sides(arg, low) if two_sided else (1.0,):
                a = low.argument(arg, side)
                low.rows(node.name, tt - a if side > 0 else tt + a, 0.0, np.inf)
        else:
            low.rows(node.name, tt - low.argument(arg, -1.0), -np.inf, 0.0)
    return weighted(Poly.symbols(t, w), weights, w)
