"""ScenarioSplit: uncertain params fixed at each scenario. A row that holds one must hold for
every scenario (one copy per scenario, its origin saying which); in the objective, what holds
one means its mean over the scenarios (risk measures are lowered before this step)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...evaluate.nonlinear import NL
from ..problem import Origin, Problem, RowBlock
from ..substitute import fix, fix_node, holds, substitute, uses
from .base import BlockSolution, Inverse, Reduction


@dataclass
class SplitInverse(Inverse):
    """Also, per block that was split: which of its rows hold an uncertain param (`hit`), and
    the blocks after the step that hold its rows (the kept ones first, then one per
    scenario)."""

    splits: dict[int, tuple[np.ndarray, list[int]]] = field(default_factory=dict)


class ScenarioSplit(Reduction):
    name = "scenario split"

    def accepts(self, problem: Problem) -> bool:
        return len(problem.uncertain) > 0

    def apply(self, problem: Problem) -> tuple[Problem, Inverse]:
        rows: list[RowBlock] = []
        sources: list[int | None] = []
        splits: dict[int, tuple[np.ndarray, list[int]]] = {}
        for k, block in enumerate(problem.rows):
            copies, hit = _split(block, problem)
            if hit is not None:
                splits[k] = (hit, list(range(len(rows), len(rows) + len(copies))))
            rows += copies
            sources += [k] + [None] * (len(copies) - 1)
        split = replace(problem, rows=rows, objective=_mean_objective(problem))
        return split, SplitInverse(problem.width, len(problem.rows), sources, splits)

    def invert(self, solution: BlockSolution, inverse: Inverse) -> BlockSolution:
        """A split constraint's duals, row by row: a kept row's own, and for a row copied per
        scenario the sum of its copies' (the objective's rate of change when the row's bound
        moves in every scenario at once, as the constraint's bound does)."""
        before = super().invert(solution, inverse)
        if before.duals is None or not isinstance(inverse, SplitInverse):
            return before
        for k, (hit, outs) in inverse.splits.items():
            parts = [solution.duals[out] for out in outs]
            if any(part is None for part in parts):
                continue
            full = np.zeros(len(hit))
            full[~hit] = parts[0]
            full[hit] = np.sum(parts[1:], axis=0)
            before.duals[k] = full
        return before


def _split(block: RowBlock, problem: Problem) -> tuple[list[RowBlock], np.ndarray | None]:
    """The block's rows without uncertain params (kept in its place, possibly none), then
    each scenario's copy of the rest; and which rows were copied (None: the block holds no
    uncertain param and is kept whole). Each part's origin records its rows' positions in the
    block, which IIS labels and duals map back by."""
    body, unc = block.body, problem.uncertain
    hit = uses(body, unc) if body.rows else np.zeros(0, dtype=bool)
    if not hit.any():
        return [block], None
    labels = block.labels
    base = block.origin.rows if block.origin is not None else None
    kept_at, hit_at = np.nonzero(~hit)[0], np.nonzero(hit)[0]

    def positions(at: np.ndarray) -> tuple[int, ...]:
        return tuple(int(i) for i in (at if base is None else np.asarray(base)[at]))

    out = [RowBlock(block.name, body.take(kept_at), block.lo[~hit], block.hi[~hit],
                    [lb for lb, h in zip(labels, hit, strict=True) if not h] if labels else None,
                    Origin("scenario", rows=positions(kept_at)))]
    picked = body.take(hit_at)
    picked = picked.restricted() if isinstance(picked, NL) else picked
    rows = positions(hit_at)
    for s, values in enumerate(problem.scenarios):
        out.append(RowBlock(
            block.name, fix(picked, unc, values), block.lo[hit], block.hi[hit],
            [f"{lb}@scenario{s}" for lb, h in zip(labels, hit, strict=True) if h]
            if labels else None, Origin("scenario", scenario=s, rows=rows)))
    return out, hit


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
