"""RiskMeasures: `mean(L)`, `cvar(α, L)` and `worst(L)` over the scenarios of `uncertain`
params, in the objective and in constraints, replaced by their lowerings (`Risk.aggregate`:
the average, Rockafellar & Uryasev's rows, an epigraph), the loss fixed at each scenario and
the atoms nested in it lowered per scenario.

It runs before the scenario split: what stays uncertain outside a risk measure must then hold
in every scenario."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...atoms.registry import ATOMS
from ...errors import DflError
from ...evaluate.nonlinear import NL, AtomNode
from ...evaluate.poly import Poly
from ..problem import Aux, Problem, RowBlock, widen
from ..substitute import fix
from .base import Inverse, Reduction
from .epigraphs import Lowering, node_columns


def _risky(payload) -> list[tuple[object, AtomNode]]:
    return [t for t in payload.terms if ATOMS[t[1].name].risk] if isinstance(payload, NL) else []


class RiskMeasures(Reduction):
    name = "risk measures"

    def accepts(self, problem: Problem) -> bool:
        return any(_risky(p) for p in [problem.objective, *(b.body for b in problem.rows)])

    def apply(self, problem: Problem) -> tuple[Problem, Inverse]:
        s_count = len(problem.scenarios)
        payloads = [problem.objective, *(b.body for b in problem.rows)]
        aux = Aux(problem.width, sum(node_columns(node, s_count) for p in payloads
                                     for _, node in _risky(p)))
        rows: list[RowBlock] = []
        sources: list[int | None] = []
        for k, block in enumerate(problem.rows):
            if _risky(block.body):  # (its risk rows come before it)
                body = _risk_rows(block, aux, rows, problem)
                sources += [None] * (len(rows) - len(sources))
                block = RowBlock(block.name, body, block.lo, block.hi, block.labels,
                                 block.origin)
            rows.append(block)
            sources.append(k)
        objective = problem.objective
        if _risky(objective):
            sign = 1.0 if problem.sense == "minimize" else -1.0
            low = Lowering(aux, rows)
            poly = widen(objective.poly, aux.end)
            kept = []
            for matrix, node in objective.terms:
                if ATOMS[node.name].risk:
                    weights = np.asarray(matrix.toarray()).ravel()
                    poly = poly + _aggregate(node, weights, sign, low, problem)
                else:
                    kept.append((matrix, node))
            objective = NL(poly, kept) if kept else poly
            sources += [None] * (len(rows) - len(sources))
        aux.check()
        return problem.widened(rows, objective, aux), Inverse(problem.width,
                                                              len(problem.rows), sources)


def _risk_rows(block: RowBlock, aux: Aux, rows: list[RowBlock], problem: Problem) -> Poly | NL:
    """A constraint's body with its risk measures replaced by their lowerings (the rows that
    hold one are bounded from above, or all from below: the checker let `cvar` and `worst`
    bound from above only, as convex functions)."""
    body = block.body
    used = np.zeros(body.rows, dtype=bool)
    for matrix, _ in _risky(body):
        used |= np.diff(sp.csr_array(matrix).indptr) > 0
    upper = np.isfinite(np.asarray(block.hi, dtype=float))[used]
    lower = np.isfinite(np.asarray(block.lo, dtype=float))[used]
    if (upper & lower).any() or not (upper.all() or lower.all()):
        raise DflError(f"constraint `{block.name}` bounds a risk aggregator from both sides",
                       hint="bound it from one side only")
    sign = 1.0 if upper.all() else -1.0
    low = Lowering(aux, rows, block.name)
    poly = widen(body.poly, aux.end)
    kept = []
    for matrix, node in body.terms:
        if ATOMS[node.name].risk:
            poly = poly + _aggregate(node, sp.csr_array(matrix), sign, low, problem)
        else:
            kept.append((matrix, node))
    return NL(poly, kept) if kept else poly


def _aggregate(node: AtomNode, weights, sign: float, low: Lowering, problem: Problem) -> Poly:
    """`weights` combines the node's rows into one row (a vector, the objective's) or into
    a constraint's rows (a sparse matrix, rows x node.rows)."""
    w = weights.data if sp.issparse(weights) else weights
    # minimized loss or a bound from above: the upper tail; maximized, bounded below: lower
    upper = (w * sign >= 0).all()
    if node.name != "mean" and not upper and not (w * sign <= 0).all():
        raise DflError(f"`{node.name}` enters with mixed signs")
    # piecewise-linear atoms in the loss (`cvar(a, c * x + b * pos(d - x))`) get epigraph
    # variables per scenario: the loss is bounded from above (upper tail) or from below
    unc, arg = problem.uncertain, node.args[0]
    per = [low.argument(fix(arg, unc, v) if len(unc) else arg, 1.0 if upper else -1.0)
           for v in problem.scenarios]
    return ATOMS[node.name].aggregate(node, per, weights, upper, low)
