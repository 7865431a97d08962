"""Epigraphs: every atom left in the objective or in a row replaced by its lowering
(`Atom.lower`: an epigraph variable and rows for a piecewise-linear atom, a QP's for `huber`),
in the objective and in constraints alike.

A row `body <= hi` whose body holds convex atoms with nonnegative weights (concave ones with
nonpositive weights) keeps its name and bounds, each atom replaced by a variable t with rows
`t >= arg`; `body >= lo` mirrors it. The user's row is then `poly + Σ w t <= hi`, whose dual
is the multiplier of the original convex constraint.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ...atoms.registry import ATOMS
from ...check.info import Curv
from ...errors import DflError
from ...evaluate.nonlinear import NL, AtomNode
from ...evaluate.poly import Poly
from ..problem import Aux, Origin, Problem, RowBlock, widen
from .base import Inverse, Reduction


class Lowering:
    """The `atoms.epigraph.Lowering` a step hands the atoms: auxiliary columns from `aux`,
    rows appended to `out` in the name of `owner`, arguments lowered with their nested
    atoms."""

    def __init__(self, aux: Aux, out: list[RowBlock], owner: str = "",
                 structures: list | None = None) -> None:
        self.aux, self.out, self.owner = aux, out, owner
        self.structures = structures if structures is not None else []
        self.width = aux.end

    def new(self, k: int, lower: float = -np.inf, upper: float = np.inf) -> np.ndarray:
        return self.aux.new(k, lower, upper)

    def rows(self, atom: str, body: Poly, lo: float, hi: float) -> None:
        origin = Origin("risk" if ATOMS[atom].risk else "epigraph", atom)
        self.out.append(RowBlock(self.owner, body, np.full(body.rows, lo),
                                 np.full(body.rows, hi), origin=origin))

    def argument(self, arg, sign: float) -> Poly:
        """An atom's argument as a Poly. Atoms nested in it (`max{i in I} pos(x[i] - 1)`)
        become epigraph variables in their turn, for a bound from above (sign +1: an inner
        convex atom may be replaced by a variable above it) or below (-1)."""
        if isinstance(arg, Poly):
            return widen(arg, self.width)
        if isinstance(arg, NL):
            poly = widen(arg.poly, self.width)
            for matrix, inner in arg.terms:
                poly = poly + self.lower(inner, matrix, sign)
            return poly
        return Poly.constant(np.asarray(arg, dtype=float), self.width)

    def lower(self, node: AtomNode, weights, sign: float) -> Poly:
        return ATOMS[node.name].lower(node, weights, sign, self)

    def convex(self, node: AtomNode) -> bool:
        return ATOMS[node.name].curvature is Curv.CONVEX

    def declare(self, structure) -> None:
        self.structures.append(structure)


def aux_columns(payload, scenarios: int = 1) -> int:
    """The auxiliary columns lowering every atom in `payload` takes (the nested ones too)."""
    if not isinstance(payload, NL):
        return 0
    return sum(node_columns(node, scenarios) for _, node in payload.terms)


def node_columns(node: AtomNode, scenarios: int = 1) -> int:
    """A node's own auxiliaries and its arguments' (a risk measure's nested atoms once per
    scenario)."""
    atom = ATOMS[node.name]
    nested = sum(aux_columns(a) for a in node.args)
    return atom.aux_columns(node, scenarios) + nested * (scenarios if atom.risk else 1)


class Epigraphs(Reduction):
    name = "epigraphs"

    def accepts(self, problem: Problem) -> bool:
        return any(isinstance(p, NL) and p.terms
                   for p in [problem.objective, *(b.body for b in problem.rows)])

    def apply(self, problem: Problem) -> tuple[Problem, Inverse]:
        rows = list(problem.rows)
        # the rows with atoms in them: which rows bound their body from above (+1), from
        # below (-1) or not at all (0)
        plans = {k: _row_plan(b) for k, b in enumerate(rows) if isinstance(b.body, NL)}
        count = (sum(aux_columns(part) for plan in plans.values() for _, sign, part in plan
                     if sign) + aux_columns(problem.objective))
        aux = Aux(problem.width, count)
        structures = list(problem.structures)
        for k, plan in plans.items():
            block = rows[k]
            rows[k] = RowBlock(block.name, _linear_rows(block, plan, aux, rows, structures),
                               block.lo, block.hi, block.labels, block.origin)
        objective = problem.objective
        if isinstance(objective, NL):
            sign = 1.0 if problem.sense == "minimize" else -1.0
            low = Lowering(aux, rows, structures=structures)
            poly = widen(objective.poly, aux.end)
            for matrix, node in objective.terms:
                poly = poly + low.lower(node, np.asarray(matrix.toarray()).ravel(), sign)
            objective = poly
        aux.check()
        kept = len(problem.rows)  # each block in its place; the epigraphs' rows after them
        inverse = Inverse(problem.width, kept, list(range(kept)) + [None] * (len(rows) - kept))
        lowered = replace(problem.widened(rows, objective, aux), structures=structures)
        return lowered, inverse


def _row_plan(block: RowBlock) -> list[tuple[np.ndarray | None, float, NL]]:
    """How the rows of a block with atoms in its body are lowered: (rows, sign, their body)
    for the rows bounded above (sign +1: `body <= hi`, convex), below (-1: `body >= lo`,
    concave) and not at all (0: an infinite data bound, the atoms are dropped). rows is None
    when one sign covers the block. The checker let no atom into an `==` row or a chain; a
    row bounded on both sides here is refused all the same."""
    body = block.body.restricted()
    upper = np.isfinite(np.asarray(block.hi, dtype=float))
    lower = np.isfinite(np.asarray(block.lo, dtype=float))
    if (upper & lower).any():
        atoms = ", ".join(sorted({node.name for _, node in body.terms}))
        raise DflError(f"constraint `{block.name}` bounds an expression with `{atoms}` from "
                       "both sides: only one side of it is convex",
                       hint="bound it from one side only (`<=` for abs, pos, max, norm1, "
                            "norm_inf; `>=` for min)")
    if upper.all():
        return [(None, 1.0, body)]
    if lower.all():
        return [(None, -1.0, body)]
    plan = []
    for mask, sign in ((upper, 1.0), (lower, -1.0), (~upper & ~lower, 0.0)):
        idx = np.flatnonzero(mask)
        if len(idx):
            part = body.take(idx)
            plan.append((idx, sign, part.restricted() if sign else part))
    return plan


def _linear_rows(block: RowBlock, plan, aux: Aux, rows: list[RowBlock],
                 structures: list) -> Poly:
    """The block's body with every atom replaced by its epigraph (hypograph) variable, the
    epigraphs' rows appended to `rows` in the block's name (an IIS names their owner)."""
    low = Lowering(aux, rows, block.name, structures)
    total = None
    for idx, sign, part in plan:
        try:
            poly = low.argument(part, sign) if sign else widen(part.poly, aux.end)
        except DflError as exc:
            raise DflError(f"constraint `{block.name}`: {exc.message}", hint=exc.hint) from None
        if idx is not None:
            place = sp.csr_array((np.ones(len(idx)), (idx, np.arange(len(idx)))),
                                 shape=(block.body.rows, len(idx)))
            poly = poly.rowmap(place)
        total = poly if total is None else total + poly
    return total
