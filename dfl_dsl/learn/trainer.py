"""Training predictors through the optimization problem, for decision quality."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from torch import nn

from ..errors import DflError
from .dataset import DFLData
from .losses import LOSSES
from .metrics import normalized_regret
from .optim import OPTIMIZERS, make_optimizer
from .oracle import Oracle
from .predictors import PREDICTORS, describe, make_predictor

CHECKPOINT_FORMAT = "dfl-dsl/checkpoint-1"


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

    def __init__(self, inst, loss: str = "spo+", predictor: str | nn.Module = "linear", *,
                 epochs: int = 10, batch_size: int = 32, lr: float = 1e-2,
                 optimizer: str = "adam", weight_decay: float = 0.0, cautious_wd: bool = False,
                 device: str = "cpu", seed: int = 135, hidden: int = 64,
                 loss_options: dict | None = None, processes: int = 1,
                 console: Console | None = None, progress: bool = True) -> None:
        if loss not in LOSSES:
            raise DflError(f"unknown loss `{loss}`", hint="use one of: " + ", ".join(LOSSES))
        if epochs < 1 or batch_size < 1 or lr <= 0:
            raise DflError("epochs and batch size must be >= 1 and the learning rate > 0")
        if isinstance(predictor, str) and predictor not in PREDICTORS:
            raise DflError(f"unknown predictor `{predictor}`",
                           hint="use one of: " + ", ".join(PREDICTORS))
        if optimizer.lower() not in OPTIMIZERS:
            raise DflError(f"unknown optimizer `{optimizer}`",
                           hint="use one of: " + ", ".join(OPTIMIZERS))
        if device != "cpu" and not device.startswith("cuda"):
            raise DflError(f"unknown device `{device}`", hint="use cpu or cuda")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise DflError("--device cuda: no CUDA device is available here", hint="use cpu")
        self.inst = inst
        self.oracle = Oracle(inst, processes=processes)
        self.loss_name = loss
        self.loss_fn = LOSSES[loss](self.oracle, **(loss_options or {}))
        self.epochs, self.batch_size, self.lr = epochs, batch_size, lr
        self.device = torch.device(device)
        self.seed = seed
        self.predictor_spec = predictor if isinstance(predictor, str) else "custom"
        self.hidden = hidden
        self._predictor = predictor if isinstance(predictor, nn.Module) else None
        self.optimizer_options = dict(name=optimizer, lr=lr, weight_decay=weight_decay,
                                      cautious=cautious_wd)
        self.console = console or Console(stderr=True)
        self.show_progress = progress
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
                                 data.w, data.z)

    # ------------------------------------------------------------------ training
    def fit(self, train: DFLData, monitor: DFLData | None = None,
            monitor_label: str = "val") -> History:
        train.solved(self.oracle)
        if monitor is not None:
            monitor.solved(self.oracle)
        self._build(train.features.shape[1])
        if isinstance(self.loss_fn, nn.Module) and hasattr(self.loss_fn, "seed_pool"):
            self.loss_fn.seed_pool(train.w)
        optimizer = make_optimizer(self.predictor.parameters(), **self.optimizer_options)
        generator = torch.Generator().manual_seed(self.seed)
        x_all = torch.as_tensor(train.features, dtype=torch.float32)
        t_all = torch.as_tensor(train.theta, dtype=torch.float64)
        w_all = torch.as_tensor(train.w, dtype=torch.float64)
        z_all = torch.as_tensor(train.z, dtype=torch.float64)
        n = len(train)
        batches = (n + self.batch_size - 1) // self.batch_size
        progress = Progress(
            TextColumn("[bold]epoch {task.fields[epoch]}/{task.fields[of]}"),
            BarColumn(),
            TextColumn("loss {task.fields[loss]:.4f}"),
            TextColumn("{task.fields[label]} regret {task.fields[regret]}"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not self.show_progress,
            transient=False,
        )
        with progress:
            task = progress.add_task("train", total=self.epochs * batches, epoch=0,
                                     of=self.epochs, loss=float("nan"), regret="-",
                                     label=monitor_label)
            for epoch in range(1, self.epochs + 1):
                start = time.perf_counter()
                order = torch.randperm(n, generator=generator)
                total = 0.0
                for b in range(batches):
                    idx = order[b * self.batch_size : (b + 1) * self.batch_size]
                    x = x_all[idx].to(self.device)
                    theta_hat = self.predictor(x).double()
                    if not torch.isfinite(theta_hat).all():
                        raise TrainingError(
                            f"non-finite predictions at epoch {epoch}, batch {b + 1}",
                            hint="lower the learning rate (--lr) or scale the features",
                        )
                    loss = self.loss_fn(theta_hat, t_all[idx].to(theta_hat.device),
                                         w_all[idx].to(theta_hat.device),
                                         z_all[idx].to(theta_hat.device))
                    if not torch.isfinite(loss):
                        raise TrainingError(
                            f"non-finite loss at epoch {epoch}, batch {b + 1}",
                            hint="lower the learning rate (--lr)",
                        )
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    total += float(loss.detach()) * len(idx)
                    progress.update(task, advance=1, epoch=epoch, loss=total / min(
                        n, (b + 1) * self.batch_size))
                train_time = time.perf_counter() - start
                record = {"epoch": epoch, "loss": total / n, "train_time_s": train_time}
                if monitor is not None:
                    record[f"{monitor_label}_regret"] = self.regret(monitor)
                    progress.update(task, regret=f"{record[f'{monitor_label}_regret']:.4f}")
                self.history.epochs.append(record)
        return self.history

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: str | Path) -> None:
        """Write the predictor and the model's hash; atomically (temp file + rename)."""
        path = Path(path)
        state = {
            "format": CHECKPOINT_FORMAT,
            "model_hash": self.inst.model.hash,
            "model_name": self.inst.model.name,
            "predictor": describe(self.predictor_spec, *self._shape(), self.hidden),
            "state_dict": {k: v.detach().cpu() for k, v in self.predictor.state_dict().items()},
            "loss": self.loss_name,
            "history": self.history.epochs,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        try:
            torch.save(state, tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _shape(self) -> tuple[int, int]:
        first = next((m for m in self.predictor.modules() if isinstance(m, nn.Linear)), None)
        return (None if first is None else first.in_features), self.oracle.n_theta


def load_checkpoint(path: str | Path, inst, predictor: nn.Module | None = None) -> nn.Module:
    """A predictor from a checkpoint; refuses one trained on another model."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise DflError("checkpoint not found", filename=str(path)) from None
    except Exception as exc:
        raise DflError(f"not a readable checkpoint ({type(exc).__name__})",
                       filename=str(path)) from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise DflError("not a dfl-dsl checkpoint", filename=str(path))
    if state["model_hash"] != inst.model.hash:
        raise DflError(
            f"this checkpoint was trained on another model (`{state.get('model_name')}`, "
            f"hash {state['model_hash']}), not `{inst.model.name}` (hash {inst.model.hash})",
            filename=str(path),
        )
    spec = state["predictor"]
    if predictor is None:
        if spec["kind"] == "custom":
            raise DflError("the checkpoint holds a custom predictor: pass the module to load it")
        predictor = make_predictor(spec["kind"], spec["n_features"], spec["n_outputs"],
                                   spec["hidden"])
    predictor.load_state_dict(state["state_dict"])
    predictor.eval()
    return predictor
