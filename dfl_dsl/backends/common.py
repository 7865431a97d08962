"""What the backends share: the raw result of a solve and its mapping to a Solution."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compile.expand import compiled
from ..compile.linear import LinearForm
from ..compile.reductions.rows_to_bounds import RowsToBounds
from ..instance import Instance
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


def optimal_without_columns(form: LinearForm, x: np.ndarray, objective: float,
                            message: str) -> RawResult:
    """The optimum of a model whose rows are all constants (its sets left it no columns in
    any row), known without a solver's certificate: a MIP reports gap 0 and no duals, an LP
    zero duals (no row can bind a column)."""
    duals, gap = (None, 0.0) if form.is_mip else (np.zeros(form.m), None)
    return RawResult("optimal", x, objective, duals, gap, message)


def to_solution(inst: Instance, form: LinearForm, raw: RawResult, backend: str,
                elapsed: float) -> Solution:
    """RawResult (canonical, minimized) -> Solution (the model's sense and names): duals
    mapped back through the reductions that made the form, to the model's constraints."""
    objective = form.model_objective(raw.objective) if raw.objective is not None else None
    x = raw.x[: form.n_model] if raw.x is not None else None
    duals = None
    if raw.row_duals is not None:
        row_duals = RowsToBounds.invert(raw.row_duals, form, raw.col_duals)
        blocks = [form.sign * row_duals[start : start + count] + 0.0  # no -0.0
                  for _, start, count in form.row_names]
        duals = form.model_duals(blocks)
    solution = Solution(raw.status, objective, x, backend, elapsed, inst, raw.gap, duals,
                        raw.message)
    if raw.col_duals is not None:
        reduced = RowsToBounds.invert_reduced(raw.col_duals, form)
        solution.reduced_costs = form.sign * reduced[: form.n_model] + 0.0
    if raw.iis_rows:
        rows = raw.iis_rows
        if form.kept_rows is not None:
            rows = [int(form.kept_rows[r]) for r in rows]
        solution.extra["iis"] = row_labels(inst, form, rows)
    return solution


def row_labels(inst: Instance, form: LinearForm, rows: list[int]) -> list[str]:
    """How an IIS or a violation names each row: the model constraint's row label, or the
    reduction's row it is (`c (epigraph of `abs`)`, a scenario's copy `c@3`)."""
    labels = []
    by_name = {r.name: r for r in compiled(inst).constraints}
    for row in rows:
        for (name, start, count), origin in zip(form.row_names, form.row_origins, strict=True):
            if start <= row < start + count:
                block = by_name.get(name)
                if origin is None and block is not None:
                    labels.append(block.labels()[row - start])
                elif origin.rows is not None and block is not None:  # a part of the block
                    label = block.labels()[origin.rows[row - start]]
                    at = origin.scenario
                    labels.append(label if at is None else f"{label}@{at}")
                else:
                    labels.append(origin.describe(name))
                break
    return labels
