"""Training predictors through the optimization problem, for decision quality."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from torch import nn

from ..devices import checked_device, torch_threads
from ..errors import DflError
from ..outputs import write_atomic
from ..seeds import check_seed
from .checkpoint import CHECKPOINT_FORMAT, entry_labels
from .dataset import DFLData
from .distributed import Shard
from .loss_registry import LOSSES
from .loss_settings import check_loss_settings
from .metrics import normalized_regret, true_objective
from .optim import OPTIMIZERS, make_optimizer
from .options import PREDICTOR_DEFAULTS, TrainOptions, or_default
from .oracle import Oracle
from .predictors import PREDICTORS, describe, make_predictor
from .threads import training_threads


def check_run(epochs: int, batch_size: int, lr: float, hidden: int, seed: int) -> None:
    """The settings both trainers take, checked before any work (a nan learning rate would
    otherwise pass `lr <= 0` and fail inside torch's optimizer)."""
    check_seed(seed)
    if epochs < 1 or batch_size < 1 or not 0 < lr < math.inf:
        raise DflError("epochs and batch size must be >= 1 and the learning rate > 0")
    if hidden < 1:
        raise DflError(f"--hidden must be >= 1, got {hidden}")


def _check_predictor_options(opts: TrainOptions, lr: float, hidden: int) -> None:
    """A predictor's settings, checked before any work."""
    if opts.loss not in LOSSES:
        raise DflError(f"unknown loss `{opts.loss}`", hint="use one of: " + ", ".join(LOSSES))
    check_loss_settings(opts.loss, opts.loss_options)
    check_run(opts.epochs, opts.batch_size, lr, hidden, opts.seed)
    if isinstance(opts.predictor, str) and opts.predictor not in PREDICTORS:
        raise DflError(f"unknown predictor `{opts.predictor}`",
                       hint="use one of: " + ", ".join(PREDICTORS))
    if opts.optimizer.lower() not in OPTIMIZERS:
        raise DflError(f"unknown optimizer `{opts.optimizer}`",
                       hint="use one of: " + ", ".join(OPTIMIZERS))
    if not 0 <= opts.weight_decay < math.inf:
        raise DflError(f"--weight-decay must be a finite number >= 0, got {opts.weight_decay}")
    if opts.cautious_wd and opts.weight_decay == 0:
        raise DflError("--cautious-wd decays weights cautiously, but --weight-decay is 0: "
                       "it would have no effect", hint="give --weight-decay, e.g. 0.01")
    if opts.processes < 1:
        raise DflError(f"--processes must be >= 1 (solver workers), got {opts.processes}")
    if opts.threads is not None and opts.threads < 1:
        raise DflError(f"--threads must be >= 1, got {opts.threads}")


def progress_bar(console: Console, disabled: bool, title: str) -> Progress:
    """The bar both trainers draw: epoch, running loss, the monitored regret, time."""
    return Progress(TextColumn(f"[bold]{title} " + "{task.fields[epoch]}/{task.fields[of]}"),
                    BarColumn(), TextColumn("loss {task.fields[loss]:.4f}"),
                    TextColumn("{task.fields[label]} regret {task.fields[regret]}"),
                    TimeElapsedColumn(), console=console, disable=disabled)


class TrainingError(DflError):
    """Training had to stop (non-finite predictions or loss)."""


@dataclass
class History:
    epochs: list[dict] = field(default_factory=list)

    @property
    def last(self) -> dict:
        return self.epochs[-1] if self.epochs else {}


class Trainer:
    """Fits `predictor` (features -> predicted params) by a decision-focused `loss`."""

    def __init__(self, inst, loss: str | None = None,
                 predictor: str | nn.Module | None = None, *,
                 options: TrainOptions | None = None, shard: Shard | None = None,
                 console: Console | None = None, progress: bool = True, **settings) -> None:
        """`options` (default: TrainOptions()) with `loss`, `predictor` and any other
        TrainOptions field given as a keyword replacing it; `shard` places this process in a
        data-parallel run (see .distributed)."""
        named = {k: v for k, v in (("loss", loss), ("predictor", predictor)) if v is not None}
        opts = self.options = TrainOptions.of(options, **named, **settings)
        lr = or_default(opts.lr, "lr", PREDICTOR_DEFAULTS)
        self.hidden = or_default(opts.hidden, "hidden", PREDICTOR_DEFAULTS)
        _check_predictor_options(opts, lr, self.hidden)
        checked_device(opts.device)
        self.inst = inst
        self.oracle = Oracle(inst, processes=opts.processes, executor=opts.executor,
                             ray_address=opts.ray_address, method=opts.oracle,
                             device=opts.device)
        self.shard = shard  # data-parallel training: this rank's place (see .distributed)
        self.loss_name = opts.loss
        self.loss_fn = LOSSES[opts.loss](self.oracle, **(opts.loss_options or {}))
        self.epochs, self.batch_size, self.lr = opts.epochs, opts.batch_size, lr
        self.device = torch.device(opts.device)
        self.seed = opts.seed
        predictor = opts.predictor
        self.predictor_spec = predictor if isinstance(predictor, str) else "custom"
        self._predictor = predictor if isinstance(predictor, nn.Module) else None
        self.optimizer_options = dict(name=opts.optimizer, lr=lr, weight_decay=opts.weight_decay,
                                      cautious=opts.cautious_wd)
        self.console = console or Console(stderr=True)
        self.show_progress = progress and (shard is None or shard.is_main)
        self.history = History()

    # ------------------------------------------------------------------ model
    @property
    def predictor(self) -> nn.Module:
        if self._predictor is None:
            raise DflError("the trainer has no predictor yet: call fit() first")
        return self._predictor

    def _build(self, n_features: int) -> None:
        torch.manual_seed(self.seed)
        if self._predictor is None:
            self._predictor = make_predictor(
                self.predictor_spec, n_features, self.oracle.n_theta, self.hidden
            )
        self._predictor.to(self.device)

    def predict(self, features: np.ndarray) -> np.ndarray:
        self.predictor.eval()
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(features), dtype=torch.float32, device=self.device)
            out = self.predictor(x).double().cpu().numpy()
        self.predictor.train()
        return out

    def regret(self, data: DFLData) -> float:
        data.solved(self.oracle)
        return normalized_regret(self.oracle, self.predict(data.features), data.theta,
                                 data.w, data.z, slot=f"regret-{id(data)}")

    # ------------------------------------------------------------------ training
    def fit(self, train: DFLData, monitor: DFLData | None = None,
            monitor_label: str = "val") -> History:
        self._solve_data(train)
        if monitor is not None:
            self._solve_data(monitor)
        self._build(train.features.shape[1])
        if isinstance(self.loss_fn, nn.Module) and hasattr(self.loss_fn, "seed_pool"):
            self.loss_fn.seed_pool(train.w)
        widths = [train.features.shape[1], *([self.hidden] * (self.predictor_spec == "mlp")),
                  self.oracle.n_theta]
        with torch_threads(training_threads(self.options.threads, self.batch_size, widths)):
            self._epochs(train, monitor, monitor_label)
        return self.history

    def _epochs(self, train: DFLData, monitor: DFLData | None, monitor_label: str) -> None:
        optimizer = make_optimizer(self.predictor.parameters(), **self.optimizer_options)
        model = self.predictor if self.shard is None else self.shard.wrap(self.predictor)
        generator = torch.Generator().manual_seed(self.seed)
        data = (torch.as_tensor(train.features, dtype=torch.float32),
                torch.as_tensor(train.theta, dtype=torch.float64),
                torch.as_tensor(train.w, dtype=torch.float64),
                torch.as_tensor(train.z, dtype=torch.float64))
        n = len(train)
        batches = (n + self.batch_size - 1) // self.batch_size
        progress = progress_bar(self.console, not self.show_progress, "epoch")
        with progress:
            task = progress.add_task("train", total=self.epochs * batches, epoch=0,
                                     of=self.epochs, loss=float("nan"), regret="-",
                                     label=monitor_label)
            for epoch in range(1, self.epochs + 1):
                start = time.perf_counter()
                order = torch.randperm(n, generator=generator)
                total = 0.0
                for b in range(batches):
                    batch = order[b * self.batch_size : (b + 1) * self.batch_size]
                    total += self._step(model, optimizer, data, batch, f"epoch {epoch}, batch "
                                        f"{b + 1}")
                    progress.update(task, advance=1, epoch=epoch, loss=total / min(
                        n, (b + 1) * self.batch_size))
                record = {"epoch": epoch, "loss": total / n,
                          "train_time_s": time.perf_counter() - start}
                if monitor is not None:
                    record[f"{monitor_label}_regret"] = self.regret(monitor)
                    progress.update(task, regret=f"{record[f'{monitor_label}_regret']:.4f}")
                self.history.epochs.append(record)

    def _step(self, model: nn.Module, optimizer, data: tuple[torch.Tensor, ...],
              batch: torch.Tensor, where: str) -> float:
        """One optimizer step on `batch` (this rank's share of it); returns the batch's summed
        loss (over every rank)."""
        shard = self.shard
        idx = batch if shard is None else shard.share(batch)
        x_all, t_all, w_all, z_all = data
        theta_hat = model(x_all[idx].to(self.device)).double()
        if not self._everywhere(torch.isfinite(theta_hat).all()):
            raise TrainingError(f"non-finite predictions at {where}",
                                hint="lower the learning rate (--lr) or scale the features")
        dev = theta_hat.device
        if len(idx):
            loss = self.loss_fn(theta_hat, t_all[idx].to(dev), w_all[idx].to(dev),
                                z_all[idx].to(dev), keys=idx)
        else:  # a short last batch left this rank nothing; it still all-reduces
            loss = theta_hat.sum() * 0.0
        if not self._everywhere(torch.isfinite(loss)):
            raise TrainingError(f"non-finite loss at {where}",
                                hint="lower the learning rate (--lr)")
        scale = 1.0 if shard is None else shard.loss_scale(len(idx), len(batch))
        optimizer.zero_grad()
        (loss * scale).backward()
        optimizer.step()
        part = float(loss.detach()) * len(idx)
        return part if shard is None else shard.sum(part)

    def _solve_data(self, data: DFLData) -> None:
        """The data's true decisions; under --distributed each rank solves its share."""
        if self.shard is None or data.w is not None:
            data.solved(self.oracle)
            return
        shard, n = self.shard, len(data)
        mine = np.arange(shard.rank, n, shard.world)
        costs = self.oracle.costs(torch.as_tensor(data.theta[mine], dtype=torch.float64))
        try:
            share, failed = self.oracle.solve(costs.numpy(), remember=False).w, False
        except DflError as exc:  # no solution for a true sample: said by every rank (one
            if getattr(exc, "status", None) is None:  # stopping alone would hang the others)
                raise
            share, failed = None, True
        if not self._everywhere(not failed):
            data.solved(self.oracle)  # the located error (`true_samples`), on every rank
            return
        w = shard.gather_rows(share, n)
        data.w, data.z = w, true_objective(self.oracle, data.theta, w)

    def _everywhere(self, ok: torch.Tensor) -> bool:
        """A check every rank agrees on (one rank stopping alone would hang the others)."""
        ok = bool(ok)
        if self.shard is None:
            return ok
        return self.shard.sum(0.0 if ok else 1.0) == 0.0

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: str | Path) -> None:
        """Write the predictor and the model's hash; atomically (temp file + rename)."""
        state = {
            "format": CHECKPOINT_FORMAT,
            "model_hash": self.inst.model.hash,
            "model_name": self.inst.model.name,
            "predictor": describe(self.predictor_spec, *self._shape(), self.hidden),
            "entries": entry_labels(self.inst),
            "state_dict": {k: v.detach().cpu() for k, v in self.predictor.state_dict().items()},
            "loss": self.loss_name,
            "history": self.history.epochs,
        }
        write_atomic(Path(path), lambda handle: torch.save(state, handle))

    def _shape(self) -> tuple[int, int]:
        first = next((m for m in self.predictor.modules() if isinstance(m, nn.Linear)), None)
        return (None if first is None else first.in_features), self.oracle.n_theta
