"""The solvers behind the training oracle, one protocol: a batch of cost vectors in, optimal
decisions out (in the spirit of PyEPO's `optModel`, Tang & Khalil, Math. Prog. Comp. 2024).

* `HighsSolver` re-solves one warm HiGHS model per cost vector (serially, or over worker
  processes / Ray actors, see .executors): exact, any LP, MILP or convex QP, on the CPU.
* `EnumerationSolver` takes the argmin over a listed feasible set (small pure-integer models,
  see .enumeration): exact, one matrix product, on any device.
* `BySizeSolver` sends a small batch to HiGHS and a large one to the batched solver (what
  `--oracle auto` does on a CPU where the batched solver applies).
* `BatchedSolver` solves the whole batch at once with the torch PDHG solver
  (backends/pdhg): every decision it returns carries an optimality certificate to 1e-9, and a
  sample it can't certify goes to HiGHS (counted in `stats`). LPs, and integer models whose LP
  relaxation is integral (`compile.unimodular`); CPU or CUDA. Warm starts: a caller that names
  its samples (`keys`) gets each one started from its last solution and duals.

Each declares its `Capabilities`; the oracle (`.oracle`) picks one and no loss or metric
touches a solver directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from ..backends.batchlp import BatchLP, RowOperator, Settings, solve_batch
from ..compile.linear import LinearForm
from ..errors import DflError
from .executors import Executor, make_executor, solve_with, warm_model


@dataclass(frozen=True)
class Capabilities:
    """What a solver takes and gives: the forms (LP, MILP, integral MILP), whether its answers
    are exact optima, the devices it computes on, and whether a batch is one call."""

    forms: frozenset[str]
    exact: bool
    devices: frozenset[str]
    batched: bool


class DecisionSolver(Protocol):
    name: str
    capabilities: Capabilities

    def solve(self, costs: torch.Tensor, keys: torch.Tensor | None, slot: str) -> torch.Tensor:
        """Optimal decisions (B, n) for canonical costs (B, n), float64, on costs' device."""

    def stats(self) -> dict: ...

    def close(self) -> None: ...


class HighsSolver:
    name = "highs"
    capabilities = Capabilities(frozenset({"LP", "MILP", "QP"}), True, frozenset({"cpu"}),
                                False)

    def __init__(self, form: LinearForm, *, processes: int = 1, executor: str = "processes",
                 ray_address: str | None = None, time_limit: float | None = None) -> None:
        self.form, self.time_limit = form, time_limit
        self.processes, self.executor, self.ray_address = max(1, processes), executor, ray_address
        self._model = warm_model(form, time_limit)
        self._workers: Executor | None = None
        self.calls = 0

    def solve(self, costs: torch.Tensor, keys=None, slot: str = "") -> torch.Tensor:
        return torch.as_tensor(self.solve_numpy(costs.detach().cpu().numpy()),
                               dtype=torch.float64, device=costs.device)

    def solve_numpy(self, costs: np.ndarray) -> np.ndarray:
        self.calls += len(costs)
        if self._parallel(len(costs)):
            if self._workers is None:
                self._workers = make_executor(self.executor, self.form, workers=self.processes,
                                              time_limit=self.time_limit,
                                              address=self.ray_address)
            return self._workers.solve(costs)
        out = [solve_with(self._model, c) for c in costs]
        return np.stack(out) if out else np.zeros((0, self.form.n))

    def _parallel(self, batch: int) -> bool:
        # a local pool pays from two samples per worker; Ray is asked for every batch
        if self.executor == "ray":
            return True
        return self.processes > 1 and batch >= 2 * self.processes

    def stats(self) -> dict:
        return {"solver": self.name, "solves": self.calls}

    def close(self) -> None:
        if self._workers is not None:
            self._workers.close()
            self._workers = None


class EnumerationSolver:
    name = "enumerate"
    capabilities = Capabilities(frozenset({"MILP"}), True, frozenset({"cpu", "cuda"}), True)

    def __init__(self, points: np.ndarray) -> None:
        self.points = points
        self._on: dict[torch.device, torch.Tensor] = {}
        self.calls = 0

    def solve(self, costs: torch.Tensor, keys=None, slot: str = "") -> torch.Tensor:
        self.calls += len(costs)
        points = self._on.get(costs.device)
        if points is None:
            points = self._on[costs.device] = torch.as_tensor(self.points, dtype=torch.float64,
                                                              device=costs.device)
        return points[torch.argmin(costs @ points.T, dim=1)]

    def stats(self) -> dict:
        return {"solver": self.name, "solves": self.calls}

    def close(self) -> None:
        pass


class WarmStarts:
    """The last certified (x, y) of each named sample, per slot (each loss names its own
    calls: SPO+'s 2ĉ - c, PFYL's perturbations, ...). A warm start only speeds a solve up —
    every answer is certified afresh — so a key reused for another problem costs time, never
    correctness."""

    def __init__(self, n: int, m: int, device: torch.device) -> None:
        self.n, self.m, self.device = n, m, device
        self._slots: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def get(self, slot: str, keys: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """(x0, y0, tight0, have) for `keys`: zeros and False where nothing is stored."""
        store = self._grow(slot, int(keys.max()) + 1 if len(keys) else 0)
        return tuple(t[keys] for t in store)

    def put(self, slot: str, keys: torch.Tensor, mask: torch.Tensor,
            *values: torch.Tensor) -> None:
        """Store (x, y, tight) for the keys where `mask` holds."""
        store = self._grow(slot, int(keys.max()) + 1 if len(keys) else 0)
        keys = keys[mask]
        for t, v in zip(store, (*values, torch.ones_like(mask)), strict=True):
            t[keys] = v[mask]

    def _grow(self, slot: str, size: int) -> tuple[torch.Tensor, ...]:
        store = self._slots.get(slot)
        if store is None or len(store[0]) < size:
            cap = max(size, 2 * (0 if store is None else len(store[0])), 64)
            shapes = ((self.n, torch.float64), (self.m, torch.float64), (self.n, torch.bool),
                      (None, torch.bool))
            grown = tuple(torch.zeros((cap,) if w is None else (cap, w), dtype=dt,
                                      device=self.device) for w, dt in shapes)
            if store is not None:
                for new, old in zip(grown, store, strict=True):
                    new[: len(old)] = old
            store = self._slots[slot] = grown
        return store


class BatchedSolver:
    name = "batched"
    capabilities = Capabilities(frozenset({"LP", "integral MILP"}), True,
                                frozenset({"cpu", "cuda"}), True)

    def __init__(self, form: LinearForm, fallback: HighsSolver, *,
                 device: torch.device | str = "cpu", settings: Settings | None = None) -> None:
        if form.is_qp or form.theta_in_constraints:
            raise DflError("the batched oracle takes LPs with the predicted params in the "
                           "objective only")
        self.device = torch.device(device)
        self.form, self.fallback = form, fallback
        self.settings = settings or Settings()
        as_t = _on(self.device)
        self.K = RowOperator.from_scipy(form.A, device=self.device)
        self.rl, self.ru, self.lb, self.ub = (as_t(form.rl), as_t(form.ru), as_t(form.lb),
                                              as_t(form.ub))
        self.integer = (torch.as_tensor(form.integer, device=self.device) if form.is_mip
                        else None)
        self.warm = WarmStarts(form.n, form.m, self.device)
        self.calls = self.fallbacks = self.iterations = 0
        self.graph_captured = False

    def solve(self, costs: torch.Tensor, keys: torch.Tensor | None = None,
              slot: str = "") -> torch.Tensor:
        costs = costs.detach().to(self.device, torch.float64)
        lp = BatchLP(self.K, costs, self.rl, self.ru, self.lb, self.ub)
        warm = {}
        if keys is not None:
            keys = torch.as_tensor(keys, dtype=torch.int64, device=self.device)
            x0, y0, tight0, have = self.warm.get(slot, keys)
            if bool(have.any()):
                warm = {"x0": x0, "y0": y0, "tight0": tight0, "warm": have}
        result = solve_batch(lp, self.settings, integer=self.integer, **warm)
        self.calls += len(costs)
        self.iterations += int(result.iterations.sum())
        self.graph_captured = self.graph_captured or result.graph_captured
        x = result.x
        failed = ~result.certified
        if bool(failed.any()):
            rows = failed.nonzero().flatten()
            self.fallbacks += len(rows)
            x[rows] = self.fallback.solve(costs[rows]).to(x)
        if keys is not None:
            self.warm.put(slot, keys, result.certified, result.x, result.y, result.tight)
        return x

    def stats(self) -> dict:
        return {"solver": self.name, "solves": self.calls, "fallbacks": self.fallbacks,
                "mean_iterations": self.iterations / max(self.calls, 1),
                "device": str(self.device), "cuda_graph": self.graph_captured}

    def close(self) -> None:
        self.fallback.close()


class BySizeSolver:
    """HiGHS for small batches, the batched solver from `threshold` samples on (on a CPU a
    warm simplex re-solve answers a few LPs sooner than a batched method's fixed number of
    steps; a few hundred at once — PFYL's perturbations, a test set — are cheaper batched)."""

    capabilities = BatchedSolver.capabilities

    def __init__(self, small: HighsSolver, large: BatchedSolver, threshold: int) -> None:
        self.small, self.large, self.threshold = small, large, threshold
        self.name = f"{small.name}+{large.name}"

    def solve(self, costs: torch.Tensor, keys: torch.Tensor | None = None,
              slot: str = "") -> torch.Tensor:
        chosen = self.large if len(costs) >= self.threshold else self.small
        return chosen.solve(costs, keys, slot)

    def stats(self) -> dict:
        large = self.large.stats()
        return {**large, "solver": self.name, "solves": self.small.calls + large["solves"],
                "highs_solves": self.small.calls, "batched_solves": large["solves"]}

    def close(self) -> None:
        self.large.close()  # (its fallback is `small`)


def _on(device: torch.device):
    def as_t(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=float), dtype=torch.float64, device=device)

    return as_t
