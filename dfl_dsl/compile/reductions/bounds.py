"""SymbolicBounds: a row whose bound holds variables or params (`x[i] <= cap * y[i]`,
`s >= d` with d uncertain) becomes `body - bound` against a numeric bound, so the steps after
it and the solvers see `lo <= body <= hi` with numbers on both sides."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ...errors import DflError
from ...evaluate.nonlinear import NL
from ...evaluate.poly import Poly
from ..problem import Problem, RowBlock
from .base import Inverse, Reduction


def _symbolic(block: RowBlock) -> bool:
    return isinstance(block.lo, Poly) or isinstance(block.hi, Poly)


class SymbolicBounds(Reduction):
    name = "symbolic bounds"

    def accepts(self, problem: Problem) -> bool:
        return any(_symbolic(b) for b in problem.rows)

    def apply(self, problem: Problem) -> tuple[Problem, Inverse]:
        rows = [_normalized(b) if _symbolic(b) else b for b in problem.rows]
        return replace(problem, rows=rows), Inverse.same(problem)


def _normalized(block: RowBlock) -> RowBlock:
    """One row per finite side: `body - lo >= 0` (or `body >= lo`), then `body - hi <= 0`
    (or `body <= hi`), stacked; the duals of the constraint are those of both."""
    if isinstance(block.body, NL):
        raise DflError(f"constraint `{block.name}` is nonlinear; an LP/QP backend can't take it")
    body, rows = block.body, block.body.rows
    parts, los, his = [], [], []
    for bound, is_lo in ((block.lo, True), (block.hi, False)):
        if isinstance(bound, Poly):
            parts.append(body - bound)
            los.append(np.zeros(rows) if is_lo else np.full(rows, -np.inf))
            his.append(np.full(rows, np.inf) if is_lo else np.zeros(rows))
        else:
            parts.append(body)
            los.append(bound if is_lo else np.full(rows, -np.inf))
            his.append(np.full(rows, np.inf) if is_lo else bound)
    return RowBlock(block.name, _vstack(parts), np.concatenate(los), np.concatenate(his),
                    block.labels, block.origin)


def _vstack(polys: list[Poly]) -> Poly:
    rows = sum(p.rows for p in polys)
    total = None
    at = 0
    for p in polys:
        place = sp.csr_array(
            (np.ones(p.rows), (np.arange(at, at + p.rows), np.arange(p.rows))), shape=(rows, p.rows)
        )
        part = p.rowmap(place)
        total = part if total is None else total + part
        at += p.rows
    return total
