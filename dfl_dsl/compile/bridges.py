"""Bridges, as MathOptInterface calls them: the chains of reductions (compile/reductions) that
rewrite what a backend lacks into what it has. The steps are the ones the chain search planned
from the model's form (backends/chains.py) — for the standard form of the LP/QP backends every
atom lowered, for CVXPY the atoms it takes kept — after SymbolicBounds, which every chain
starts with; `build_linear` then assembles the standard form and turns single-variable rows
into bounds. Where no plan exists the whole chain runs, so the step that can't go on says
why."""

from __future__ import annotations

from ..backends.chains import plan, plan_to, standard_form
from ..backends.declarations import BY_NAME
from ..errors import DflError
from ..instance import Instance
from .expand import Expanded, compiled
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
_BY_NAME = {r.name: r for r in LINEAR}


def chain(steps: tuple[str, ...] | None, whole: tuple[Reduction, ...]) -> tuple[Reduction, ...]:
    """The reductions of planned `steps` (`whole` where none was found)."""
    if steps is None:
        return whole
    return (LINEAR[0], *(_BY_NAME[name] for name in steps))


def for_backend(inst: Instance, backend: str) -> tuple[Reduction, ...]:
    """The chain planned to `backend` from the model's form."""
    return chain(plan(inst.klass.form, BY_NAME[backend]), CONIC)


def reduce_model(ex: Expanded, inst: Instance, reductions: tuple[Reduction, ...], *,
           label_rows: bool = False) -> tuple[Problem, Applied]:
    """The expanded model through `reductions` (those that accept it), every polynomial at
    the final width."""
    problem, applied = run(Problem.of(ex, inst, label_rows=label_rows), list(reductions))
    return problem.at_width(), applied


def bridge(ex: Expanded, inst: Instance, *, label_rows: bool = False,
           keep_nonlinear: bool = False) -> Problem:
    """The LP/QP chain, or the conic one with `keep_nonlinear` (CVXPY takes the atoms)."""
    return reduce_model(ex, inst, CONIC if keep_nonlinear else LINEAR, label_rows=label_rows)[0]


def linear_form(inst: Instance) -> LinearForm:
    """The instance's standard form, single-variable rows as bounds (built once)."""
    if "linear" not in inst.memo:
        inst.memo["linear"] = build_linear(inst)
    return inst.memo["linear"]


def build_linear(inst: Instance, *, label_rows: bool = False, reduce: bool = True) -> LinearForm:
    """The LP/MILP/QP standard form of a bound instance; `reduce` turns single-variable rows
    into bounds (off for a backend that reports each row's violation)."""
    try:
        steps = chain(plan_to(inst.klass.form, standard_form), LINEAR)
        problem, applied = reduce_model(compiled(inst), inst, steps, label_rows=label_rows)
        form = assemble(problem, inst, label_rows=label_rows, applied=applied)
    except DflError as exc:
        raise exc.located(inst.model.filename, inst.model.source) from None
    rows = RowsToBounds()
    return rows.apply(form) if reduce and rows.accepts(form) else form
