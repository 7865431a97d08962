"""Where the oracle's solver calls run when one process is not enough.

Decision-focused learning spends most of its time in the solver: every sample of every batch
is an optimization problem. Both executors here split a batch of cost vectors into one chunk
per worker, and every worker keeps its own warm HiGHS model, so a call ships only cost vectors
and decisions — never the model.

* `processes`: a `multiprocessing` pool on this machine.
* `ray`: Ray actors (Moritz et al., "Ray: A Distributed Framework for Emerging AI
  Applications", OSDI 2018), on a local Ray instance or on a cluster given by its address —
  for hard MILP oracles whose solves take seconds each. Needs the `ray` extra:
  `pip install "dfl-dsl[ray]"`.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Protocol

import numpy as np

from ..backends.highs import HighsModel
from ..compile.linear import LinearForm
from ..errors import DflError

EXECUTORS = ("processes", "ray")
NO_SOLUTION_HINTS = {  # why a training solve can fail, by HiGHS's status word
    "infeasible": "the instance data leaves no feasible decision: try `dfl solve` on it",
    "unbounded": "some costs (true or predicted) make the objective unbounded: give the "
                 "variables finite bounds",
}


class Executor(Protocol):
    workers: int

    def solve(self, costs: np.ndarray) -> np.ndarray:
        """Decisions (B, n) for the canonical cost vectors (B, n)."""

    def close(self) -> None: ...


def warm_model(form: LinearForm, time_limit: float | None,
               threads: int | None = None) -> HighsModel:
    """A HiGHS model of the form's feasible set, whose cost vector each solve replaces."""
    return HighsModel(form, theta=np.zeros(form.n_theta), time_limit=time_limit, threads=threads)


def solve_with(model: HighsModel, c: np.ndarray) -> np.ndarray:
    """argmin cᵀw on a loaded model, or a DflError saying why there is none."""
    model.set_objective(c, 0.0)
    x = model.solve_fast()
    if x is None:
        result = model.solve(want_duals=False)
        error = DflError(f"the oracle found no solution (status {result.status})",
                         hint=NO_SOLUTION_HINTS.get(result.status))
        error.status = result.status  # (the oracle locates an unbounded one: `unbounded_at`)
        raise error
    return x


def solve_all(model: HighsModel, costs: np.ndarray) -> np.ndarray:
    out = [solve_with(model, c) for c in costs]
    return np.stack(out) if out else np.zeros((0, model.form.n))


def make_executor(kind: str, form: LinearForm, *, workers: int,
                  time_limit: float | None = None, address: str | None = None) -> Executor:
    if kind == "processes":
        return ProcessExecutor(form, workers=workers, time_limit=time_limit)
    if kind == "ray":
        return RayExecutor(form, workers=workers, time_limit=time_limit, address=address)
    raise DflError(f"unknown executor `{kind}`", hint="use one of: " + ", ".join(EXECUTORS))


# ---------------------------------------------------------------------------- processes
_worker_model: HighsModel | None = None


def _process_init(form: LinearForm, time_limit: float | None) -> None:
    global _worker_model
    # the pool is the parallelism: one HiGHS thread per worker, not workers × cores
    _worker_model = warm_model(form, time_limit, threads=1)


def _process_solve(costs: np.ndarray) -> np.ndarray:
    return solve_all(_worker_model, costs)


class ProcessExecutor:
    """A pool of worker processes, one warm model each, started fresh (forkserver or spawn,
    never fork): a process forked after HiGHS has started its thread pool — any MILP solve
    in the parent — inherits a scheduler whose threads don't exist, and its MILP solves crawl
    or hang."""

    def __init__(self, form: LinearForm, *, workers: int, time_limit: float | None = None):
        self.workers = workers
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        self._pool = ctx.Pool(workers, _process_init, (form, time_limit))

    def solve(self, costs: np.ndarray) -> np.ndarray:
        return np.concatenate(self._pool.map(_process_solve, np.array_split(costs, self.workers)))

    def close(self) -> None:
        self._pool.close()
        self._pool.join()


# ---------------------------------------------------------------------------- ray
class _RayWorker:
    """One Ray actor: a warm HiGHS model living as long as the executor."""

    def __init__(self, form: LinearForm, time_limit: float | None) -> None:
        self.model = warm_model(form, time_limit)

    def solve(self, costs: np.ndarray) -> np.ndarray:
        return solve_all(self.model, costs)


class RayExecutor:
    """Ray actors on the cluster at `address` (None: the running instance, or a new local
    one). The form is put in Ray's object store once; actors are placed by Ray."""

    def __init__(self, form: LinearForm, *, workers: int, time_limit: float | None = None,
                 address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise DflError("the ray executor needs Ray installed",
                           hint='pip install "dfl-dsl[ray]"') from None
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        self.workers = workers
        # no CPU reservation (a worker mostly waits for calls); spread over the nodes
        actor = ray.remote(num_cpus=0, scheduling_strategy="SPREAD")(_RayWorker)
        form_ref = ray.put(form)
        self._actors = [actor.remote(form_ref, time_limit) for _ in range(workers)]

    def solve(self, costs: np.ndarray) -> np.ndarray:
        chunks = np.array_split(costs, self.workers)
        refs = [a.solve.remote(chunk) for a, chunk in zip(self._actors, chunks, strict=True)]
        return np.concatenate(self._ray.get(refs))

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
