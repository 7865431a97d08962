"""Solutions, mapped back to the model's own names and index sets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import did_you_mean
from .evaluate.entities import Entity
from .instance import Instance
from .solution_json import number_text, table_text
from .solution_tables import KeyColumn, Table, constraint_table, variable_table

_KINDS = {"data": "param", "theta": "predicted or uncertain param", "expr": "named expr"}


@dataclass
class Solution:
    status: str  # optimal | feasible | infeasible | unbounded | relaxed
    objective: float | None
    x: np.ndarray | None  # the model's variables, in declaration order
    backend: str
    time_s: float
    instance: Instance | None = field(repr=False, default=None)
    gap: float | None = None
    duals: dict[str, np.ndarray] | None = None  # per constraint, one value per row
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    reduced_costs: np.ndarray | None = None  # per column of x, in the model's sense

    @property
    def objective_name(self) -> str | None:
        """The name of the objective solved (a model may declare several)."""
        model = self.instance.model if self.instance is not None else None
        return model.objective.name if model is not None and model.objective else None

    @property
    def ok(self) -> bool:
        return self.status in ("optimal", "feasible", "relaxed")

    def value(self, name: str) -> np.ndarray | float:
        """A variable's values: its array layout (dense) or entry order (sparse)."""
        entities = self.instance.ctx.entities
        entity = entities.get(name)
        if entity is None or entity.kind != "var":
            # a param's offset is no column of x: its name read the first variable's values
            variables = [e.name for e in self.instance.variables]
            listed = "the model's variables: " + ", ".join(f"`{v}`" for v in variables)
            if entity is None:
                hint = did_you_mean(name, variables)
                raise KeyError(f"no variable `{name}`; " + (f"{hint} ({listed})" if hint
                                                            else listed))
            raise KeyError(f"`{name}` is a {_KINDS.get(entity.kind, entity.kind)}, not a "
                           f"variable; {listed}")
        if self.x is None:
            raise ValueError(f"no solution values (status {self.status})")
        flat = self.x[entity.offset : entity.offset + entity.size] + 0.0  # a copy; no -0.0
        if not entity.domain.arity:
            return float(flat[0])
        return flat.reshape(entity.shape) if entity.domain.dense else flat

    def values(self) -> dict[str, Any]:
        """name -> a number, nested lists (numpy-style shapes) or {element: value} mappings."""
        return {t.name: json.loads(table_text(t, "value")) for t in self.variable_tables()}

    def variable_tables(self) -> list[Table]:
        """One table per variable: its keys, `value` and (where the solver gives them)
        `reduced_cost`. None without a solution."""
        if self.x is None:
            return []
        tables = []
        for entity in self.instance.variables:
            at = slice(entity.offset, entity.offset + entity.size)
            reduced = self.reduced_costs[at] if self.reduced_costs is not None else None
            tables.append(variable_table(entity, self.x[at], reduced))
        return tables

    def dual_tables(self) -> list[Table]:
        """One table per constraint with duals: its keys and `dual`."""
        if not self.duals:
            return []
        from .compile.expand import compiled  # (what solved the model already built it)

        rows = {r.name: r for r in compiled(self.instance).constraints} if self.instance else {}
        return [_dual_table(name, rows.get(name), np.asarray(values, dtype=float))
                for name, values in self.duals.items()]

    def json_text(self, *, nonzeros: bool = False) -> str:
        """The `--json` object as text, written column-wise (see `solution_json`); with
        `nonzeros`, variables and duals list only their nonzero entries."""
        variables = self.variable_tables()
        duals = self.dual_tables()
        if nonzeros:
            variables = [t.nonzero("value") for t in variables]
            duals = [t.nonzero("dual") for t in duals]
        fields = [
            ("status", json.dumps(self.status)),
            ("objective", number_text(self.objective)),
            *([("objective_name", json.dumps(self.objective_name))]
              if self.objective_name is not None else []),
            ("variables", _object((t.name, table_text(t, "value")) for t in variables)),
            ("backend", json.dumps(self.backend)),
            ("time_s", json.dumps(round(self.time_s, 6))),
        ]
        if self.gap is not None:
            fields.append(("gap", number_text(self.gap)))
        if self.duals:
            fields.append(("duals", _object((t.name, table_text(t, "dual")) for t in duals)))
        if self.message:
            fields.append(("message", json.dumps(self.message)))
        fields += [(key, json.dumps(value)) for key, value in self.extra.items()]
        return _object(fields)

    def to_json(self) -> dict[str, Any]:
        """The `--json` object: status, objective, variables and duals keyed by element, ..."""
        return json.loads(self.json_text())


def keyed(entity: Entity, flat: np.ndarray) -> Any:
    """Values of an entity keyed by its index: nested lists for numpy-style shapes,
    nested {element: value} mappings for set indices."""
    return json.loads(table_text(variable_table(entity, flat), "value"))


def _dual_table(name: str, rows, duals: np.ndarray) -> Table:
    """A constraint's duals keyed like its index; by row position when its rows aren't known
    (a solution made without its instance)."""
    if rows is not None and len(duals) == rows.frame.n * int(np.prod(rows.shape)):
        return constraint_table(name, rows.frame, rows.dummies, rows.shape, duals)
    positions = np.arange(len(duals), dtype=np.int64)
    return Table(name, [KeyColumn("row", positions, positions, axis=True)], {"dual": duals},
                 shape=duals.shape)


def _object(items) -> str:
    """A JSON object from (key, JSON text) pairs."""
    return "{" + ", ".join(f"{json.dumps(key)}: {text}" for key, text in items) + "}"
