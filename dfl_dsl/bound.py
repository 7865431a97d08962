"""The instance `bind` returns: an `Instance` with the methods that run the stages on it —
the public API (`inst.compile()`, `inst.linear_form()`, `inst.solve(...)`, `inst.layer(...)`).
It sits above the stages it calls, so `instance.py`, which every stage imports, depends on
none of them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .instance import Instance


class BoundInstance(Instance):
    def for_objective(self, objective: str | None) -> BoundInstance:
        """This instance solving the objective named `objective` (None: this one). The data
        stay bound; only the forms built from the objective are made anew."""
        model = self.model.select(objective)
        if model is self.model:
            return self
        key = f"objective {objective}"
        if key not in self.memo:  # (made once: its forms are kept with it)
            other = replace(self, model=model, memo={})
            if model.klass.psd_at_bind:  # as `bind` does for the objective it binds
                from .compile.convexity import check_objective_psd

                check_objective_psd(other)
            self.memo[key] = other
        return self.memo[key]

    def compile(self):
        """Evaluate the objective and constraints (cached): see `compile.expand`."""
        from .compile.expand import compiled

        return compiled(self)

    def linear_form(self):
        """The LP/MILP/QP standard form (cached): see `compile.bridges`."""
        from .compile.bridges import linear_form

        return linear_form(self)

    def solve(self, backend: str = "auto", *, time_limit: float | None = None,
              seed: int | None = None, objective: str | None = None, **options: Any):
        """Solve with `backend` (auto: the best for the model's class) -> Solution;
        `objective` names which of the model's objectives (default: the one bound)."""
        from .backends import solve

        return solve(self.for_objective(objective), backend, time_limit=time_limit, seed=seed,
                     **options)

    def layer(self, method: str = "dbb", *, backend: str | None = None, **options: Any):
        """A torch module from predicted params (leading batch axis) to decisions; `backend`
        is an alias of `method` (`inst.layer(backend="flexqp")`)."""
        from .learn.layers import make_layer

        return make_layer(self, backend if backend is not None else method, **options)
