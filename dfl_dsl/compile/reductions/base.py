"""A reduction and a chain of them: `apply` rewrites a `Problem` and returns what its
`invert` needs, as `cvxpy.reductions.Reduction` does (Agrawal et al., "A rewriting system for
convex optimization problems", J. Control and Decision 2018)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..problem import Problem


@dataclass
class Inverse:
    """What `invert` needs: the problem's columns and row blocks before the step, and for each
    block after it the block it continues (None: one the step added)."""

    columns: int
    blocks: int
    sources: list[int | None]

    @staticmethod
    def same(problem: Problem) -> Inverse:
        """A step that keeps every block where it is."""
        count = len(problem.rows)
        return Inverse(problem.width, count, list(range(count)))


@dataclass
class BlockSolution:
    """A point over the columns of z (θ's entries included) and, per row block, its duals
    (None: the solver gave none)."""

    x: np.ndarray | None
    duals: list[np.ndarray] | None = None


class Reduction:
    name = ""

    def accepts(self, problem: Problem) -> bool:
        """Whether the problem holds what this step rewrites."""
        raise NotImplementedError

    def apply(self, problem: Problem) -> tuple[Problem, Inverse]:
        raise NotImplementedError

    def invert(self, solution: BlockSolution, inverse: Inverse) -> BlockSolution:
        """The solution of the problem before the step: its own columns dropped, and the
        duals of the blocks it added (a block's duals are the multipliers of the rows it
        continues: an epigraph leaves the user's row the dual of the convex constraint)."""
        x = None if solution.x is None else solution.x[: inverse.columns]
        if solution.duals is None:
            return BlockSolution(x)
        duals: list[np.ndarray] = [np.zeros(0)] * inverse.blocks
        for out, source in enumerate(inverse.sources):
            if source is not None:
                duals[source] = solution.duals[out]
        return BlockSolution(x, duals)


@dataclass
class Applied:
    """The steps a chain took, with what each needs to invert, and the names of the first
    problem's blocks (the model's constraints)."""

    names: list[str]
    steps: list[tuple[Reduction, Inverse]] = field(default_factory=list)

    def invert(self, solution: BlockSolution) -> BlockSolution:
        for reduction, inverse in reversed(self.steps):
            solution = reduction.invert(solution, inverse)
        return solution

    def duals(self, block_duals: list[np.ndarray]) -> dict[str, np.ndarray]:
        """The model's constraint duals by name, from the duals of the last problem's
        blocks."""
        first = self.invert(BlockSolution(None, block_duals))
        return dict(zip(self.names, first.duals, strict=True))


def run(problem: Problem, reductions: list[Reduction]) -> tuple[Problem, Applied]:
    """Every step that accepts the problem, in order."""
    applied = Applied([block.name for block in problem.rows])
    for reduction in reductions:
        if reduction.accepts(problem):
            problem, inverse = reduction.apply(problem)
            applied.steps.append((reduction, inverse))
    return problem, applied
