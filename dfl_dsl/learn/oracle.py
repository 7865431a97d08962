"""The solver oracle of decision-focused learning: a batch of predicted params -> optimal
decisions, re-solving one warm HiGHS model whose only change is the cost vector.

Costs live in the canonical (minimized) space of `LinearForm`: ĉ = c + Cθ θ̂. Losses and
metrics work there, so minimize and maximize models share one code path (as in PyEPO, where
losses share one solver-oracle interface; Tang & Khalil, "PyEPO", Math. Prog. Comp. 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..compile.linear import LinearForm
from ..errors import DflError
from .enumeration import feasible_points, why_not_enumerable
from .executors import EXECUTORS, Executor, make_executor, solve_with, warm_model

METHODS = ("auto", "highs", "enumerate")


@dataclass
class Batch:
    """Optimal decisions (full canonical vector, auxiliaries included) and canonical costs."""

    w: np.ndarray  # (B, n)
    objective: np.ndarray  # (B,) canonical ĉᵀw (without the constant c0)


class Oracle:
    """Batched argmin of ĉᵀw over the instance's feasible set.

    `method` says how: `highs` re-solves the warm HiGHS model; `enumerate` lists every
    feasible point once (pure-integer models with small feasible sets, see .enumeration) and
    takes the argmin of a matrix product; `auto` enumerates when the listing fits its limits,
    else uses HiGHS. `processes > 1` spreads a batch over worker processes, each holding its
    own HiGHS model. `pool` keeps every distinct solution seen (the solution pool that NCE and
    caching use).
    """

    def __init__(self, inst, *, processes: int = 1, time_limit: float | None = None,
                 executor: str = "processes", ray_address: str | None = None,
                 method: str = "auto") -> None:
        if not inst.predicted:
            raise DflError(
                "the model has no `predicted` param to learn",
                hint="mark the numbers a network predicts with `: predicted`",
                filename=inst.model.filename,
            )
        if inst.uncertain:
            raise DflError(
                "a model with both `predicted` and `uncertain` params can't be trained yet",
                hint="train the `predicted` params with the `uncertain` ones fixed as data, or "
                     "make them all `uncertain`", filename=inst.model.filename,
            )
        try:
            form = inst.linear_form()
        except DflError as exc:
            if exc.hint and "--backend" in exc.hint:  # a class refusal, for `dfl solve`'s
                exc.message = f"the decision-focused losses need an LP or MILP: {exc.message}"
                exc.args = (exc.message,)
                exc.hint = ("for a convex model, train through inst.layer(method='cvxpylayers')"
                            " in Python (docs/training.md)")
            raise
        if form.n_theta == 0:
            names = ", ".join(f"`{e.name}`" for e in inst.predicted)
            raise DflError(
                f"the predicted params ({names}) have no entries with this instance data",
                hint="their index sets are empty: check the sets in the data",
                filename=inst.model.filename,
            )
        if form.theta_in_constraints:
            raise DflError(
                "predicted params enter the constraints; the decision-focused losses here need "
                "them in the objective only",
                filename=inst.model.filename,
            )
        if form.is_qp:
            raise DflError(
                "the objective is quadratic; these losses need a linear objective (LP/MILP)",
                hint="for QPs use inst.layer(method='cvxpylayers') or the flexqp backend",
                filename=inst.model.filename,
            )
        self.inst = inst
        self.form: LinearForm = form
        self.n = form.n
        self.time_limit = time_limit
        self.theta_index = inst.predicted_index()
        if executor not in EXECUTORS:
            raise DflError(f"unknown executor `{executor}`",
                           hint="use one of: " + ", ".join(EXECUTORS))
        self.points = self._enumerate(method, inst)
        self.method = "enumerate" if self.points is not None else "highs"
        # a listed feasible set needs no solver
        self._model = warm_model(form, time_limit) if self.points is None else None
        self.solver_calls = 0
        self.processes = max(1, int(processes))
        self.executor = executor
        self.ray_address = ray_address
        self._workers: Executor | None = None
        self.pool: dict[bytes, np.ndarray] = {}
        c_theta = form.c_theta.tocsc()[:, self.theta_index]
        self._c = torch.as_tensor(form.c, dtype=torch.float64)
        self._c_theta = torch.as_tensor(c_theta.toarray(), dtype=torch.float64)
        self._c0_theta = form.c0_theta[self.theta_index]

    def _enumerate(self, method: str, inst) -> np.ndarray | None:
        if method not in METHODS:
            raise DflError(f"unknown oracle method `{method}`",
                           hint="use one of: " + ", ".join(METHODS))
        if method == "highs":
            return None
        points = feasible_points(self.form)
        if method == "enumerate" and points is None:
            reason = why_not_enumerable(self.form) or "its feasible set is too large to list"
            raise DflError(f"the oracle can't enumerate this model: {reason}",
                           hint="use --oracle highs (or auto)", filename=inst.model.filename)
        if points is not None and len(points) == 0:
            raise DflError("the model has no feasible point", filename=inst.model.filename)
        return points

    # ------------------------------------------------------------------ costs
    @property
    def n_theta(self) -> int:
        return len(self.theta_index)

    def costs(self, theta: torch.Tensor) -> torch.Tensor:
        """Canonical cost vectors ĉ = c + Cθ θ (differentiable in θ), shape (B, n)."""
        c = self._c.to(theta.device, theta.dtype)
        m = self._c_theta.to(theta.device, theta.dtype)
        return c + theta @ m.T

    def constant(self, theta: np.ndarray) -> np.ndarray:
        """The canonical objective's constant c0(θ) per sample."""
        return self.form.c0 + theta @ self._c0_theta

    # ------------------------------------------------------------------ solving
    def solve(self, costs: np.ndarray | torch.Tensor, *, remember: bool = True) -> Batch:
        """argmin_w ĉᵀw for each row of `costs` (canonical space); with `remember`, the
        solutions join the pool (evaluation passes False: a test set's solutions in NCE's pool
        would leak it into training)."""
        if isinstance(costs, torch.Tensor):
            costs = costs.detach().cpu().double().numpy()
        costs = np.atleast_2d(np.asarray(costs, dtype=float))
        if not np.all(np.isfinite(costs)):
            raise FloatingPointError("non-finite predicted costs reached the solver")
        if self.points is not None:
            self.solver_calls += len(costs)
            w = self.points[np.argmin(costs @ self.points.T, axis=1)]
        elif self._parallel(len(costs)):
            w = self._solve_parallel(costs)
        else:
            w = np.stack([self._solve_one(c) for c in costs])
        objective = np.einsum("bn,bn->b", costs, w)
        for row in w if remember else ():
            self.pool.setdefault(np.round(row, 9).tobytes(), row)
        return Batch(w, objective)

    def _parallel(self, batch: int) -> bool:
        # a local pool pays from two samples per worker; Ray is asked for every batch
        if self.executor == "ray":
            return True
        return self.processes > 1 and batch >= 2 * self.processes

    def _solve_one(self, c: np.ndarray) -> np.ndarray:
        self.solver_calls += 1
        try:
            return solve_with(self._model, c)
        except DflError as exc:
            raise exc.located(self.inst.model.filename, None) from None

    def _solve_parallel(self, costs: np.ndarray) -> np.ndarray:
        if self._workers is None:
            self._workers = make_executor(self.executor, self.form, workers=self.processes,
                                          time_limit=self.time_limit, address=self.ray_address)
        self.solver_calls += len(costs)
        return self._workers.solve(costs)

    def solve_theta(self, theta: np.ndarray | torch.Tensor) -> Batch:
        """Decisions for predicted params θ (B, n_theta)."""
        theta_t = torch.as_tensor(np.asarray(theta) if not isinstance(theta, torch.Tensor)
                                  else theta.detach().cpu(), dtype=torch.float64)
        return self.solve(self.costs(theta_t))

    def pool_array(self) -> np.ndarray:
        return np.stack(list(self.pool.values())) if self.pool else np.zeros((0, self.n))

    def close(self) -> None:
        if self._workers is not None:
            self._workers.close()
            self._workers = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass
