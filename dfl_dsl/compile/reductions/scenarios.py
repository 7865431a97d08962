"""ScenarioSplit: uncertain params fixed at each scenario. A row that holds one must hold for
every scenario (one copy per scenario, its origin saying which); in the objective, what holds
one means its mean over the scenarios (risk measures are lowered before this step)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...evaluate.nonlinear import NL
from ..problem import Origin, Problem, RowBlock
from ..substitute import fix, fix_node, holds, substitute, uses
from .base import Inverse, Reduction


class ScenarioSplit(Reduction):
    name = "scenario split"

    def accepts(self, problem: Problem) -> bool:
        return len(problem.uncertain) > 0

    def apply(self, problem: Problem) -> tuple[Problem, Inverse]:
        rows: list[RowBlock] = []
        sources: list[int | None] = []
        for k, block in enumerate(problem.rows):
            copies = _split(block, problem)
            rows += copies
            sources += [k] + [None] * (len(copies) - 1)
        split = replace(problem, rows=rows, objective=_mean_objective(problem))
        return split, Inverse(problem.width, len(problem.rows), sources)


def _split(block: RowBlock, problem: Problem) -> list[RowBlock]:
    """The block's rows without uncertain params (kept in its place, possibly none), then
    each scenario's copy of the rest."""
    body, unc = block.body, problem.uncertain
    hit = uses(body, unc) if body.rows else np.zeros(0, dtype=bool)
    if not hit.any():
        return [block]
    labels = block.labels
    out = [RowBlock(block.name, body.take(np.nonzero(~hit)[0]), block.lo[~hit], block.hi[~hit],
                    [lb for lb, h in zip(labels, hit, strict=True) if not h] if labels else None,
                    block.origin)]
    picked = body.take(np.nonzero(hit)[0])
    picked = picked.restricted() if isinstance(picked, NL) else picked
    for s, values in enumerate(problem.scenarios):
        out.append(RowBlock(
            block.name, fix(picked, unc, values), block.lo[hit], block.hi[hit],
            [f"{lb}@scenario{s}" for lb, h in zip(labels, hit, strict=True) if h]
            if labels else None, Origin("scenario", scenario=s)))
    return out


def _mean_objective(problem: Problem):
    """The objective's polynomial at the scenarios' mean; each atom that holds an uncertain
    param as one copy per scenario, weighted 1/S."""
    objective, unc, scenarios = problem.objective, problem.uncertain, problem.scenarios
    poly = objective.poly if isinstance(objective, NL) else objective
    poly = substitute(poly, unc, scenarios.mean(axis=0))
    if not isinstance(objective, NL):
        return poly
    terms = []
    for matrix, node in objective.terms:
        if holds(node, unc):
            share = 1.0 / len(scenarios)
            terms += [(matrix * share, fix_node(node, unc, v)) for v in scenarios]
        else:
            terms.append((matrix, node))
    return NL(poly, terms)
