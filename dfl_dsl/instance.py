"""An Instance: a model with its data bound — what solving, layers and training start from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import DataSource
from .errors import DflError
from .evaluate.entities import Entity
from .evaluate.evaluator import Context, Evaluator
from .evaluate.frame import Frame


@dataclass
class Instance:
    model: object  # dfl_dsl.model.Model
    ctx: Context
    evaluator: Evaluator
    constraint_frames: dict[str, Frame]
    source: DataSource

    # ------------------------------------------------------------------ what is bound
    @property
    def klass(self):
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

    def compile(self):
        """Evaluate the objective and constraints (cached): see `compile.expand`."""
        if not hasattr(self, "_expanded"):
            from .compile.expand import expand_model

            self._expanded = expand_model(self)
        return self._expanded

    def unknown_data_keys(self) -> list[str]:
        declared = set(self.model.symbols)
        return sorted(k for k in self.source.values if k not in declared and k != "features")

    def linear_form(self):
        """The LP/MILP/QP standard form (cached): see `compile.linear`."""
        if not hasattr(self, "_linear"):
            from .compile.linear import build_linear

            self._linear = build_linear(self)
        return self._linear

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

    def solve(self, backend: str = "auto", *, time_limit: float | None = None,
              seed: int | None = None, **options):
        """Solve with `backend` (auto: the best for the model's class) -> Solution."""
        from .backends import check_options, load_backend, pick

        try:
            name = pick(self.klass, backend)
        except DflError as exc:
            raise exc.located(self.model.filename, None) from None
        solve = load_backend(name).solve_instance
        check_options(name, solve, options)
        return _finite_or_error(solve(self, time_limit=time_limit, seed=seed, **options))

    def layer(self, method: str = "dbb", *, backend: str | None = None, **options):
        """A torch module from predicted params (leading batch axis) to decisions; `backend`
        is an alias of `method` (`inst.layer(backend="flexqp")`)."""
        from .learn.layers import make_layer

        return make_layer(self, backend if backend is not None else method, **options)

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


def _finite_or_error(sol):
    """A solver's answer claimed as a solution must be finite: an `optimal` objective of inf
    (coefficients beyond the solver's range, an overflow) is status `error`, not a result."""
    if not sol.ok:
        return sol
    values = [] if sol.objective is None else [sol.objective]
    if np.all(np.isfinite(values)) and (sol.x is None or np.all(np.isfinite(sol.x))):
        return sol
    sol.message = ("the solver's answer is not finite (numbers beyond its range?)"
                   + (f"; it said: {sol.message}" if sol.message else ""))
    sol.status, sol.objective, sol.x, sol.duals = "error", None, None, None
    return sol
