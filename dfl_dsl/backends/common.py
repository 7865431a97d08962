"""What the backends share: the raw result of a solve and its mapping to a Solution."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compile.linear import LinearForm
from ..solution import Solution


@dataclass
class RawResult:
    """A solver's answer on the canonical (minimized) form."""

    status: str  # optimal | feasible | infeasible | unbounded | error
    x: np.ndarray | None
    objective: float | None  # canonical (minimized) value
    row_duals: np.ndarray | None = None
    gap: float | None = None
    message: str = ""
    iis_rows: list[int] | None = None
    col_duals: np.ndarray | None = None  # reduced costs, where the solver gives them


def is_model_row(name: str) -> bool:
    """A row block as the model wrote it — not a bridge's (`#abs of c`, an epigraph) nor a
    scenario's copy (`c@3`): the blocks whose rows report duals."""
    return not name.startswith("#") and "@" not in name


def optimal_without_columns(form: LinearForm, x: np.ndarray, objective: float,
                            message: str) -> RawResult:
    """The optimum of a model whose rows are all constants (its sets left it no columns in
    any row), known without a solver's certificate: a MIP reports gap 0 and no duals, an LP
    zero duals (no row can bind a column)."""
    duals, gap = (None, 0.0) if form.is_mip else (np.zeros(form.m), None)
    return RawResult("optimal", x, objective, duals, gap, message)


def to_solution(inst, form: LinearForm, raw: RawResult, backend: str, elapsed: float) -> Solution:
    """RawResult (canonical, minimized) -> Solution (the model's sense and names)."""
    objective = form.model_objective(raw.objective) if raw.objective is not None else None
    x = raw.x[: form.n_model] if raw.x is not None else None
    duals = None
    if raw.row_duals is not None:
        row_duals = raw.row_duals
        if form.kept_rows is not None:  # rows turned into bounds have no dual of their own
            full = np.full(sum(count for _, _, count in form.row_names), np.nan)
            full[form.kept_rows] = row_duals
            row_duals = full
        duals = {}
        for name, start, count in form.row_names:
            if is_model_row(name):
                duals[name] = form.sign * row_duals[start : start + count] + 0.0  # no -0.0
    solution = Solution(raw.status, objective, x, backend, elapsed, inst, raw.gap, duals,
                        raw.message)
    if raw.col_duals is not None:
        solution.reduced_costs = form.sign * raw.col_duals[: form.n_model] + 0.0
    if raw.iis_rows:
        rows = raw.iis_rows
        if form.kept_rows is not None:
            rows = [int(form.kept_rows[r]) for r in rows]
        solution.extra["iis"] = _row_labels(inst, form, rows)
    return solution


def _row_labels(inst, form: LinearForm, rows: list[int]) -> list[str]:
    labels = []
    ex = inst.compile()
    by_name = {r.name: r for r in ex.constraints}
    for row in rows:
        for name, start, count in form.row_names:
            if start <= row < start + count:
                block = by_name.get(name)
                labels.append(block.labels()[row - start] if block else _aux_label(name))
                break
    return labels


def _aux_label(name: str) -> str:
    """A bridge's row: `#abs of c` (an epigraph row of a constraint's atom) reads
    "c (epigraph of `abs`)"; `#abs` (the objective's) "objective (epigraph of `abs`)"."""
    if not name.startswith("#"):
        return name
    atom, _, owner = name[1:].partition(" of ")
    return f"{owner or 'objective'} (epigraph of `{atom}`)"
