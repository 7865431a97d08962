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
from .checkpoint_fields import check_fields, rebuilt
from .dataset import DFLData
from .distributed import Shard
from .losses import LOSSES
from .metrics import normalized_regret, true_objective
from .optim import OPTIMIZERS, make_optimizer
from .options import PREDICTOR_DEFAULTS, SCENARIO_DEFAULTS, TrainOptions, or_default
from .oracle import Oracle
from .predictors import PREDICTORS, describe, make_predictor
from .threads import training_threads

CHECKPOINT_FORMAT = "dfl-dsl/checkpoint-1"
SCENARIO_CHECKPOINT_FORMAT = "dfl-dsl/scenario-checkpoint-1"
CHECKPOINT_HOLDS = {  # what each format holds, for the message when the other kind is given
    CHECKPOINT_FORMAT: "a predictor of `predicted` params",
    SCENARIO_CHECKPOINT_FORMAT: "a model of `uncertain` params (generative or point)",
}


def _check_run(epochs: int, batch_size: int, lr: float, hidden: int) -> None:
    """The settings both trainers take, checked before any work (a nan learning rate would
    otherwise pass `lr <= 0` and fail inside torch's optimizer)."""
    if epochs < 1 or batch_size < 1 or not 0 < lr < math.inf:
        raise DflError("epochs and batch size must be >= 1 and the learning rate > 0")
    if hidden < 1:
        raise DflError(f"--hidden must be >= 1, got {hidden}")


def _check_predictor_options(opts: TrainOptions, lr: float, hidden: int) -> None:
    """A predictor's settings, checked before any work."""
    if opts.loss not in LOSSES:
        raise DflError(f"unknown loss `{opts.loss}`", hint="use one of: " + ", ".join(LOSSES))
    _check_run(opts.epochs, opts.batch_size, lr, hidden)
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


def _progress(console: Console, disabled: bool, title: str) -> Progress:
    """The bar both trainers draw: epoch, running loss, the monitored regret, time."""
    return Progress(TextColumn(f"[bold]{title} " + "{task.fields[epoch]}/{task.fields[of]}"),
                    BarColumn(), TextColumn("loss {task.fields[loss]:.4f}"),
                    TextColumn("{task.fields[label]} regret {task.fields[regret]}"),
                    TimeElapsedColumn(), console=console, disable=disabled)


def _check_scenario_options(inst, opts: TrainOptions, lr: float, hidden: int, scenarios: int,
                            beta: float, generative: str) -> None:
    """A generative (or point) model's settings, checked before any work."""
    from .gen_dfl import uncertain_constraints

    if opts.loss not in SCENARIO_LOSSES:
        raise DflError(f"unknown loss `{opts.loss}` for a model with uncertain params",
                       hint="use one of: " + ", ".join(SCENARIO_LOSSES))
    _check_run(opts.epochs, opts.batch_size, lr, hidden)
    if scenarios < 1:
        raise DflError(f"--scenarios must be >= 1 (scenarios per decision), got {scenarios}")
    if not 0 <= beta < math.inf:
        raise DflError(f"--beta must be a finite number >= 0, got {beta}")
    if opts.loss not in ("mse", "spo+") and generative not in SCENARIO_GENERATIVE:
        raise DflError(f"unknown generative model `{generative}`",
                       hint="use one of: " + ", ".join(SCENARIO_GENERATIVE))
    if opts.threads is not None and opts.threads < 1:
        raise DflError(f"--threads must be >= 1, got {opts.threads}")
    checked_device(opts.device)
    constrained = uncertain_constraints(inst)
    if constrained:  # the metric would score a decision that breaks them as a good one
        raise DflError(
            "uncertain params enter the constraint(s) "
            + ", ".join(f"`{name}`" for name in constrained) + ": the scenario losses and "
            "their regret judge the objective only, so a decision taken against sampled "
            "scenarios that breaks a true scenario's constraint would score as well as a "
            "feasible one", filename=inst.model.filename,
            hint="keep `uncertain` params in the objective (mean, cvar, worst); `dfl solve` "
                 "takes them in constraints",
        )


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
        progress = _progress(self.console, not self.show_progress, "epoch")
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
        w = shard.gather_rows(self.oracle.solve(costs.numpy(), remember=False).w, n)
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
            "state_dict": {k: v.detach().cpu() for k, v in self.predictor.state_dict().items()},
            "loss": self.loss_name,
            "history": self.history.epochs,
        }
        write_atomic(Path(path), lambda handle: torch.save(state, handle))

    def _shape(self) -> tuple[int, int]:
        first = next((m for m in self.predictor.modules() if isinstance(m, nn.Linear)), None)
        return (None if first is None else first.in_features), self.oracle.n_theta


def read_checkpoint(path: str | Path, inst, expected: str) -> dict:
    """The checks every checkpoint passes before its weights are used: readable with
    `weights_only` (no code runs from the file), ours, of the `expected` kind, and trained on
    `inst`'s model (a checkpoint of another model would load into same-shaped layers and
    silently decide for the wrong problem)."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise DflError("checkpoint not found", filename=str(path)) from None
    except Exception as exc:
        raise DflError(f"not a readable checkpoint ({type(exc).__name__})",
                       filename=str(path)) from None
    found = state.get("format") if isinstance(state, dict) else None
    if not isinstance(found, str) or found not in CHECKPOINT_HOLDS:
        raise DflError("not a dfl-dsl checkpoint", filename=str(path))
    if found != expected:
        raise DflError(
            f"this checkpoint holds {CHECKPOINT_HOLDS[found]} (trained on "
            f"`{state.get('model_name')}`), but `{inst.model.name}` needs "
            f"{CHECKPOINT_HOLDS[expected]}",
            hint="give the checkpoint `dfl train --save` wrote for this model",
            filename=str(path),
        )
    check_fields(state, found, path)
    if state["model_hash"] != inst.model.hash:
        raise DflError(
            f"this checkpoint was trained on another model (`{state.get('model_name')}`, "
            f"hash {state['model_hash']}), not `{inst.model.name}` (hash {inst.model.hash})",
            filename=str(path),
        )
    return state


def _check_checkpoint_size(path, inst, does: str, saved: int, unit: str, size: int) -> None:
    """Same model text, other instance data (more items, fewer assets): the checkpoint's
    network has another width, and torch would fail inside a matrix product."""
    if saved != size:
        raise DflError(f"this checkpoint's {does} {saved} {unit}; with this "
                       f"instance data `{inst.model.name}` has {size}",
                       hint="give the instance data it was trained with (--data)",
                       filename=str(path))


def load_checkpoint(path: str | Path, inst, predictor: nn.Module | None = None) -> nn.Module:
    """A predictor from a checkpoint; refuses one trained on another model."""
    state = read_checkpoint(path, inst, CHECKPOINT_FORMAT)
    spec = state["predictor"]
    _check_checkpoint_size(path, inst, "predictor predicts", spec["n_outputs"], "values per sample",
                           sum(entity.size for entity in inst.predicted))
    if predictor is None and spec["kind"] == "custom":
        raise DflError("the checkpoint holds a custom predictor: pass the module to load it")
    make = (lambda: predictor) if predictor is not None else (
        lambda: make_predictor(spec["kind"], spec["n_features"], spec["n_outputs"],
                               spec["hidden"]))
    return rebuilt(make, state["state_dict"], "predictor", path).eval()


SCENARIO_LOSSES = ("gen-dfl", "nll", "mse", "spo+")
SCENARIO_GENERATIVE = ("flow", "vae")  # `point` comes with the point losses, mse and spo+


class ScenarioTrainer:
    """Fits a model of a model's `uncertain` params from features, for decisions under the
    model's risk measure (Gen-DFL, Wang et al., ICLR 2026, arXiv 2502.05468):

    * `gen-dfl`: a conditional flow fitted by NLL for `pretrain_epochs`, frozen as the proxy
      whose scenarios give each sample's target decision w*; then `epochs` of
      β · Gen-DFL loss + NLL (see `gen_dfl.GenDFLLoss`);
    * `nll`: the two-stage flow — NLL only, then decide with S sampled scenarios;
    * `mse`: a point forecast fitted by squared error, then decide with it as one scenario;
    * `spo+`: a point forecast trained by SPO+ on the observed outcome, decided the same way.

    Decisions solve the scenario problem with S scenarios per sample
    (`scenario_oracle.ScenarioOracle`); the metric is the relative regret of the model's risk
    objective over each test sample's true scenario set (`gen_dfl.relative_risk_regret`).
    """

    def __init__(self, inst, loss: str | None = None, *, options: TrainOptions | None = None,
                 console: Console | None = None, progress: bool = True, **settings) -> None:
        """`options` (default: TrainOptions(loss="gen-dfl")) with `loss` and any other
        TrainOptions field given as a keyword replacing it."""
        from .gen_dfl import ScenarioObjective

        base = options or TrainOptions(loss="gen-dfl")
        opts = self.options = TrainOptions.of(base, **({"loss": loss} if loss else {}),
                                              **settings)
        loss, self.point = opts.loss, opts.loss in ("mse", "spo+")
        lr, hidden, scenarios, beta, generative = (
            or_default(getattr(opts, name), name, SCENARIO_DEFAULTS)
            for name in ("lr", "hidden", "scenarios", "beta", "generative"))
        _check_scenario_options(inst, opts, lr, hidden, scenarios, beta, generative)
        self.inst, self.loss_name = inst, loss
        self.objective = ScenarioObjective(inst)
        if loss == "spo+":  # before any training: SPO+ needs a cost linear in the decisions
            self.objective.require_linear(loss)
        self.scenarios = 1 if self.point else scenarios
        self.kind = "point" if self.point else generative
        self.epochs, self.batch_size, self.lr = opts.epochs, opts.batch_size, lr
        self.seed = opts.seed
        self.pretrain_epochs = (opts.epochs if opts.pretrain_epochs is None
                                else opts.pretrain_epochs)
        self.beta, self.hidden = beta, hidden
        self.device = torch.device(opts.device)
        self.oracle_method = opts.oracle
        self.console = console or Console(stderr=True)
        self.show_progress = progress
        self.history = History()
        self.model: nn.Module | None = None
        self._oracles: dict[int, object] = {}
        self._best: dict[int, tuple[object, np.ndarray]] = {}  # id -> (data, w*)

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: str | Path) -> None:
        """Write the fitted model with what rebuilds it and replays its decisions (kind, sizes,
        S and the seed its scenarios are drawn with), so `dfl eval` reports the regret
        `dfl train` did; atomically (temp file + rename), like `Trainer.save`."""
        if self.model is None:
            raise DflError("the trainer has no model yet: call fit() first")
        state = {
            "format": SCENARIO_CHECKPOINT_FORMAT,
            "model_hash": self.inst.model.hash,
            "model_name": self.inst.model.name,
            "generative": {"kind": self.kind, "dim": self.model.dim,
                           "n_features": self.model.n_features, "hidden": self.hidden},
            "scenarios": self.scenarios,
            "seed": self.seed,
            "loss": self.loss_name,
            # buffers too: the scaler's loc/scale are part of the density
            "state_dict": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "history": self.history.epochs,
        }
        write_atomic(Path(path), lambda handle: torch.save(state, handle))

    @classmethod
    def from_checkpoint(cls, path: str | Path, inst, *, device: str = "cpu",
                        console: Console | None = None) -> ScenarioTrainer:
        """The trainer `save` wrote, fitted and ready to decide; refuses a checkpoint of another
        model or a predictor's checkpoint (`read_checkpoint`)."""
        from .generative import make_generative

        state = read_checkpoint(path, inst, SCENARIO_CHECKPOINT_FORMAT)
        spec = state["generative"]
        _check_checkpoint_size(path, inst, "model draws", spec["dim"],
                               "uncertain values per scenario",
                               sum(entity.size for entity in inst.uncertain))
        trainer = cls(inst, state["loss"], seed=state["seed"], scenarios=state["scenarios"],
                      generative=spec["kind"], hidden=spec["hidden"], device=device,
                      console=console, progress=False)
        trainer.model = rebuilt(make_generative, state["state_dict"], "generative model", path,
                                spec["kind"], spec["dim"], spec["n_features"], spec["hidden"])
        trainer.model.to(trainer.device)
        trainer.history.epochs = list(state["history"])
        return trainer

    # ------------------------------------------------------------------ solving
    def oracle(self, n_scenarios: int):
        """The scenario oracle for S scenarios (lifted once per S, then reused)."""
        from .scenario_oracle import ScenarioOracle

        if n_scenarios not in self._oracles:
            self._oracles[n_scenarios] = ScenarioOracle(self.inst, n_scenarios,
                                                        method=self.oracle_method,
                                                        device=self.device)
        return self._oracles[n_scenarios]

    def scenarios_for(self, features: np.ndarray, seed: int | None = None) -> torch.Tensor:
        """S scenarios per feature row from the fitted model, (N, S, K), on the CPU."""
        generator = torch.Generator(device=self.device).manual_seed(
            self.seed + 1 if seed is None else seed)
        self.model.eval()
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(features), dtype=torch.float32, device=self.device)
            xi = self.model.sample(x, self.scenarios, generator=generator)
        self.model.train()
        return xi.double().cpu()

    def decide(self, features: np.ndarray) -> np.ndarray:
        """Decisions under S scenarios drawn with a fixed seed, solved from a cold start: a
        function of the model and the features alone, which a checkpoint reproduces."""
        return self.oracle(self.scenarios).solve(self.scenarios_for(features), cold=True)

    def risk_regret(self, data) -> float:
        """Relative regret of the model's risk objective on `data`'s true scenario sets."""
        from .gen_dfl import relative_risk_regret

        # keyed by id, with the data kept: a freed data set's id is reused by the next one,
        # which then scored against the first one's best decisions
        cached = self._best.get(id(data))
        if cached is None or cached[0] is not data:
            best = self.oracle(data.draws.shape[1]).solve(data.draws, cold=True)
            cached = self._best[id(data)] = (data, best)
        return relative_risk_regret(self.objective, self.decide(data.features), cached[1],
                                    data.draws)

    # ------------------------------------------------------------------ training
    def init_model(self, train) -> tuple[torch.Tensor, torch.Tensor]:
        """The untrained model `fit` starts from (seeded, its scaler fitted to the observed
        ξ), ready to decide: the baseline a training run's regret is measured against.
        Returns the features and observed draws as tensors."""
        from .generative import make_generative

        torch.manual_seed(self.seed)
        x_all = torch.as_tensor(train.features, dtype=torch.float32)
        y_all = torch.as_tensor(train.observed, dtype=torch.float32)
        self.model = make_generative(self.kind, y_all.shape[1], x_all.shape[1], self.hidden)
        self.model.fit_scaling(y_all)
        self.model.to(self.device)
        return x_all, y_all

    def fit(self, train, monitor=None, monitor_label: str = "val") -> History:
        x_all, y_all = self.init_model(train)
        dim = y_all.shape[1]
        widths = [x_all.shape[1] + dim, *([self.hidden] * (not self.point)), 2 * dim]
        with torch_threads(training_threads(self.options.threads, self.batch_size, widths)):
            step = self._nll_step
            if self.loss_name == "gen-dfl":
                self._run(self.pretrain_epochs, x_all, y_all, self._nll_step, None, "nll", False)
                step = self._gen_dfl_setup(train)
            elif self.loss_name == "spo+":
                step = self._spo_setup(train)
            return self._run(self.epochs, x_all, y_all, step, monitor, monitor_label)

    def _run(self, epochs: int, x_all, y_all, step, monitor, label: str, keep: bool = True
             ) -> History:
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        generator = torch.Generator().manual_seed(self.seed)
        n = len(x_all)
        batches = (n + self.batch_size - 1) // self.batch_size
        progress = _progress(self.console, not self.show_progress,
                             f"{self.loss_name if keep else 'pretrain (nll)'} epoch")
        with progress:
            task = progress.add_task("train", total=epochs * batches, epoch=0, of=epochs,
                                     loss=float("nan"), regret="-", label=label)
            for epoch in range(1, epochs + 1):
                start = time.perf_counter()
                order = torch.randperm(n, generator=generator)
                total = 0.0
                for b in range(batches):
                    idx = order[b * self.batch_size : (b + 1) * self.batch_size]
                    loss = step(idx, x_all[idx].to(self.device), y_all[idx].to(self.device))
                    if not torch.isfinite(loss):
                        raise TrainingError(f"non-finite loss at epoch {epoch}, batch {b + 1}",
                                            hint="lower the learning rate (--lr)")
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    total += float(loss.detach()) * len(idx)
                    progress.update(task, advance=1, epoch=epoch,
                                    loss=total / min(n, (b + 1) * self.batch_size))
                record = {"epoch": epoch, "loss": total / n,
                          "train_time_s": time.perf_counter() - start}
                if monitor is not None:
                    record[f"{label}_regret"] = self.risk_regret(monitor)
                    progress.update(task, regret=f"{record[f'{label}_regret']:.4f}")
                if keep:
                    self.history.epochs.append(record)
        return self.history

    def _nll_step(self, idx, x, y) -> torch.Tensor:
        return self.model.nll(y, x)

    def _gen_dfl_setup(self, train):
        """Freeze the NLL fit as the proxy, solve each sample's target decision under its
        scenarios once, and return the β · Gen-DFL + NLL step."""
        import copy

        from .gen_dfl import GenDFLLoss

        proxy = copy.deepcopy(self.model).eval()
        for p in proxy.parameters():
            p.requires_grad_(False)
        oracle = self.oracle(self.scenarios)
        with torch.no_grad():
            x = torch.as_tensor(train.features, dtype=torch.float32, device=self.device)
            gen = torch.Generator(device=self.device).manual_seed(self.seed + 2)
            targets = oracle.solve(proxy.sample(x, self.scenarios, generator=gen).double().cpu())
        loss_fn = GenDFLLoss(self.objective, oracle, targets, seed=self.seed)
        targets_t = torch.as_tensor(targets, dtype=torch.float64)
        gen = torch.Generator(device=self.device).manual_seed(self.seed + 3)

        def step(idx, x, y):
            xi_hat = self.model.sample(x, self.scenarios, generator=gen).double().cpu()
            dfl = loss_fn(xi_hat, targets_t[idx])
            return self.beta * dfl.to(self.device) + self.model.nll(y, x)

        return step

    def _spo_setup(self, train):
        from .gen_dfl import PointSPOPlus

        oracle = self.oracle(1)
        w_true = torch.as_tensor(oracle.solve(train.observed[:, None]), dtype=torch.float64)
        loss_fn = PointSPOPlus(self.objective, oracle)

        def step(idx, x, y):
            xi_hat = self.model.point(x).double().cpu()
            return loss_fn(xi_hat, y.double().cpu(), w_true[idx]).to(self.device)

        return step
