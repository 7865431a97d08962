"""Bridges, as MathOptInterface calls them: the chains of reductions (compile/reductions) that
rewrite what a backend lacks into what it has. An LP/QP backend gets every atom lowered
(`LINEAR`: symbolic bounds, risk measures, the scenario split, epigraphs), a conic one keeps
the atoms CVXPY takes as they are (`CONIC`); `build_linear` then assembles the standard form
and turns single-variable rows into bounds."""

from __future__ import annotations

from ..errors import DflError
from .expand import Expanded
from .linear import LinearForm, assemble
from .problem import Problem
from .reductions.base import Applied, Reduction, run
from .reductions.bounds import SymbolicBounds
from .reductions.epigraphs import Epigraphs
from .reductions.risk import RiskMeasures
from .reductions.rows_to_bounds import RowsToBounds
from .reductions.scenarios import ScenarioSplit

CONIC: tuple[Reduction, ...] = (SymbolicBounds(), RiskMeasures(), ScenarioSplit())
LINEAR: tuple[Reduction, ...] = (*CONIC, Epigraphs())


def reduce_model(ex: Expanded, inst, reductions: tuple[Reduction, ...], *,
           label_rows: bool = False) -> tuple[Problem, Applied]:
    """The expanded model through `reductions` (those that accept it), every polynomial at
    the final width."""
    problem, applied = run(Problem.of(ex, inst, label_rows=label_rows), list(reductions))
    return problem.at_width(), applied


def bridge(ex: Expanded, inst, *, label_rows: bool = False,
           keep_nonlinear: bool = False) -> Problem:
    """The LP/QP chain, or the conic one with `keep_nonlinear` (CVXPY takes the atoms)."""
    return reduce_model(ex, inst, CONIC if keep_nonlinear else LINEAR, label_rows=label_rows)[0]


def build_linear(inst, *, label_rows: bool = False, reduce: bool = True) -> LinearForm:
    """The LP/MILP/QP standard form of a bound instance; `reduce` turns single-variable rows
    into bounds (off for a backend that reports each row's violation)."""
    try:
        problem, applied = reduce_model(inst.compile(), inst, LINEAR, label_rows=label_rows)
        form = assemble(problem, inst, label_rows=label_rows, applied=applied)
    except DflError as exc:
        raise exc.located(inst.model.filename, inst.model.source) from None
    rows = RowsToBounds()
    return rows.apply(form) if reduce and rows.accepts(form) else form
