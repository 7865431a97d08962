"""Data-parallel training on torch.distributed: `dfl train --distributed`, launched by torchrun.

Every rank holds the whole predictor and walks the same global batches in the same order (the
shuffle is seeded); each takes its share of a batch's samples (`rank::world`), so each rank
makes its share of the solver oracle's calls — the expensive part of decision-focused
learning. DistributedDataParallel (Li et al., "PyTorch Distributed: Experiences on
Accelerating Data Parallel Training", VLDB 2020) all-reduces the gradients, averaging them over
ranks; a rank's loss is therefore scaled by (its samples × world / the batch's samples), which
makes the averaged gradient the gradient of the global batch's mean loss: the weights follow the
single-process run with the same seed and batch size, up to float summation order.

Backends: gloo on CPU, NCCL on CUDA (each rank on its local GPU).
"""

from __future__ import annotations

import os
import time
import weakref
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from ..errors import DflError

_TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")

# The tensors this module hands to collectives, until gloo's worker threads let go of them
# (see `close`).
_in_flight: weakref.WeakSet = weakref.WeakSet()
DRAIN_S = 30.0  # how long `close` waits for them at most


@dataclass(frozen=True)
class Shard:
    """This process's place in the group."""

    rank: int
    world: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def share(self, idx: torch.Tensor) -> torch.Tensor:
        """This rank's samples of a global batch."""
        return idx[self.rank :: self.world]

    def loss_scale(self, local: int, total: int) -> float:
        """Factor on the local mean loss so that DDP's average is the global mean's gradient."""
        return local * self.world / total

    def wrap(self, module: nn.Module) -> nn.Module:
        ids = [self.device.index] if self.device.type == "cuda" else None
        return nn.parallel.DistributedDataParallel(module, device_ids=ids)

    def sum(self, value: float) -> float:
        t = torch.tensor([value], dtype=torch.float64,
                         device=self.device if self.device.type == "cuda" else "cpu")
        _in_flight.add(t)
        dist.all_reduce(t)
        return float(t.item())

    def gather_rows(self, local: np.ndarray, n: int) -> np.ndarray:
        """Rows computed rank::world on each rank, put back in order (n rows in all)."""
        parts: list = [None] * self.world
        dist.all_gather_object(parts, local)
        out = np.empty((n, *local.shape[1:]), dtype=local.dtype)
        for rank, part in enumerate(parts):
            out[rank::self.world] = part
        return out


def launched() -> bool:
    """True in a process that torchrun started."""
    return all(k in os.environ for k in _TORCHRUN_ENV)


def init(device: str = "cpu") -> Shard:
    """Join the process group torchrun set up (gloo on CPU, NCCL on CUDA)."""
    if not launched():
        raise DflError(
            "--distributed needs the processes that torchrun starts",
            hint="launch with: torchrun --nproc-per-node 2 -m dfl_dsl.cli train ... --distributed",
        )
    cuda = device.startswith("cuda")
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if cuda else "gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    where = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(where)
    return Shard(dist.get_rank(), dist.get_world_size(), where)


def close() -> None:
    """Leave the group together (a rank tearing gloo down while another still talks to it
    aborts that one), then wait for gloo's worker threads to let go of our tensors.

    Why the wait: a gloo collective returns when its work completes, but the worker thread
    that ran it destroys the work (and the barrier's, which holds the works before it) a moment
    later, and dropping a tensor that Python has seen takes the GIL. The group's threads live
    on to the end of the process (destroy_process_group doesn't join them, and a
    DistributedDataParallel keeps the group alive), so on a rank that returns straight after
    this (rank 1: rank 0 still writes the results) the interpreter could be finalizing by
    then: the worker then exits inside a noexcept destructor and the rank aborts with
    "terminate called without an active exception" (seen in CI; the core shows
    ProcessGroupGloo::runLoop -> ~AsyncBarrierWork -> ~AsyncAllreduceWork -> Tensor decref ->
    take_gil -> pthread_exit while the main thread is in Py_FinalizeEx). Sleeping releases
    the GIL; a tensor leaves `_in_flight` when its last holder in C++ has dropped it."""
    if dist.is_initialized():
        dist.barrier()
        _drain(DRAIN_S)
        dist.destroy_process_group()


def _drain(timeout: float) -> None:
    """Wait (GIL released) until no tensor handed to a collective is held by gloo any more,
    or `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while len(_in_flight) and time.monotonic() <= deadline:
        time.sleep(0.001)
