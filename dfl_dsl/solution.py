"""Solutions, mapped back to the model's own names and index sets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .evaluate.elements import element_of
from .evaluate.entities import Entity
from .instance import Instance


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

    @property
    def ok(self) -> bool:
        return self.status in ("optimal", "feasible", "relaxed")

    def value(self, name: str) -> np.ndarray | float:
        """A variable's values: its array layout (dense) or entry order (sparse)."""
        entity = self.instance.entity(name)
        if self.x is None:
            raise ValueError(f"no solution values (status {self.status})")
        flat = self.x[entity.offset : entity.offset + entity.size]
        if not entity.domain.arity:
            return float(flat[0])
        return flat.reshape(entity.shape) if entity.domain.dense else flat.copy()

    def values(self) -> dict[str, Any]:
        """name -> a number, nested lists (numpy-style shapes) or {element: value} mappings."""
        out: dict[str, Any] = {}
        if self.x is None:
            return out
        for entity in self.instance.variables:
            out[entity.name] = keyed(entity, self.x[entity.offset : entity.offset + entity.size])
        return out

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "status": self.status,
            "objective": _num(self.objective),
            "variables": self.values(),
            "backend": self.backend,
            "time_s": round(self.time_s, 6),
        }
        if self.gap is not None:
            data["gap"] = _num(self.gap)
        if self.duals:
            data["duals"] = {k: [_num(v) for v in vals] for k, vals in self.duals.items()}
        if self.message:
            data["message"] = self.message
        for key, value in self.extra.items():
            data[key] = value
        return data


def keyed(entity: Entity, flat: np.ndarray) -> Any:
    """Values of an entity keyed by its index: nested lists for numpy-style shapes,
    nested {element: value} mappings for set indices."""
    flat = np.asarray(flat, dtype=float)
    if not entity.domain.arity:
        return _num(flat[0])
    if entity.shape_style:
        return np.vectorize(_num, otypes=[object])(flat.reshape(entity.shape)).tolist()
    keys = entity.domain.keys()
    out: dict = {}
    for row, value in zip(keys.tolist(), flat.tolist(), strict=True):
        node = out
        for key in row[:-1]:
            node = node.setdefault(_json_key(key), {})
        node[_json_key(row[-1])] = _num(value)
    return out


def _json_key(key: int):
    element = element_of(key)
    return element if isinstance(element, str) else str(element)


def _num(v) -> float | None:
    if v is None:
        return None
    v = float(v)
    if not np.isfinite(v):
        return None
    if v == 0:
        return 0.0
    return v
