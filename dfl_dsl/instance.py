"""An Instance: a model with its data bound — what every stage (compile, the backends,
layers, training) takes. It holds what binding produced and answers questions about it; the
methods that run the stages on it (`compile`, `linear_form`, `solve`, `layer`) belong to
`bound.BoundInstance`, the subclass `bind` returns, so that this module depends on no stage
and every stage can name its type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from . import ast
from .check.classify import ModelClass
from .data import DataSource
from .errors import DflError
from .evaluate.entities import Entity
from .evaluate.evaluator import Context, Evaluator
from .evaluate.frame import Frame


class CheckedModel(Protocol):
    """What an instance reads of the checked model it binds (a `model.Model`)."""

    @property
    def filename(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def hash(self) -> str: ...

    after_solve: frozenset[str]  # names declared after `solve;`, whose data nothing reads

    @property
    def klass(self) -> ModelClass: ...

    @property
    def symbols(self) -> dict[str, Any]: ...

    @property
    def objective(self) -> ast.Objective | None: ...

    @property
    def constraints(self) -> list[ast.Constraint]: ...

    def select(self, objective: str | None) -> CheckedModel: ...


@dataclass
class Instance:
    model: CheckedModel
    ctx: Context
    evaluator: Evaluator
    constraint_frames: dict[str, Frame]
    source: DataSource
    # the forms the stages built from it, kept for the next call (expanded rows, the linear
    # form, the CVXPY problem): the data don't change after binding
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ what is bound
    @property
    def klass(self) -> ModelClass:
        return self.model.klass

    @property
    def sets(self):
        return self.ctx.sets

    def entity(self, name: str) -> Entity:
        return self.ctx.entities[name]

    def entities(self, kind: str) -> list[Entity]:
        return [e for e in self.ctx.entities.values() if e.kind == kind]

    @property
    def variables(self) -> list[Entity]:
        return self.entities("var")

    def column_label(self, col: int) -> str:
        """How an error names column `col` of z: `x[3]`, or a reduction's auxiliary column."""
        for entity in self.variables:
            if entity.offset <= col < entity.offset + entity.size:
                return f"{entity.name}{entity.entry_label(col - entity.offset)}"
        return f"auxiliary column {col}"

    @property
    def thetas(self) -> list[Entity]:
        """`predicted` and `uncertain` params: the symbols after the variables in z."""
        return self.entities("theta")

    @property
    def predicted(self) -> list[Entity]:
        return [e for e in self.thetas if e.decl.is_predicted]

    def predicted_index(self) -> np.ndarray:
        """Positions of the predicted params' entries within θ (uncertain ones excluded):
        where a network's output goes in the canonical data."""
        start = self.n_vars
        parts = [e.offset - start + np.arange(e.size) for e in self.predicted]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    @property
    def uncertain(self) -> list[Entity]:
        return [e for e in self.thetas if e.decl.is_uncertain]

    @property
    def n_vars(self) -> int:
        return sum(v.size for v in self.variables)

    @property
    def width(self) -> int:
        return self.ctx.width

    def start(self) -> tuple[np.ndarray, np.ndarray] | None:
        """AMPL's initial values (`var x := e`): the columns given one, and their values; None
        when no variable has one. HiGHS takes them as a MIP start."""
        given = [v for v in self.variables if "start" in v.extra]
        if not given:
            return None
        return (np.concatenate([v.columns() for v in given]),
                np.concatenate([v.extra["start"] for v in given]))

    def unknown_data_keys(self) -> list[str]:
        declared = set(self.model.symbols)
        return sorted(k for k in self.source.values if k not in declared and k != "features")

    def theta_for_solve(self) -> np.ndarray:
        """θ from the data, or an error naming the predicted param the data doesn't give."""
        for entity in self.predicted:
            if "value" not in entity.extra:
                raise DflError(
                    f"predicted param `{entity.name}` has no value in the data; give one to "
                    "solve (at train time a network supplies it)",
                    filename=self.source.filename,
                )
        theta = self.theta_values()
        return theta if theta is not None else np.zeros(self.width - self.n_vars)

    def theta_values(self) -> np.ndarray | None:
        """θ from the data: predicted values and, for uncertain params, scenario 0 (None when
        the data doesn't give every predicted param)."""
        parts = []
        for entity in self.thetas:
            if "value" in entity.extra:
                parts.append(entity.extra["value"])
            elif "scenarios" in entity.extra:
                parts.append(entity.extra["scenarios"][0])
            else:
                return None
        return np.concatenate(parts) if parts else np.zeros(0)

