"""Training a model of a model's `uncertain` params for decisions under its risk measure
(Gen-DFL and its two-stage and point baselines); `Trainer` is its counterpart for `predicted`
params."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from torch import nn

from ..devices import checked_device, torch_threads
from ..errors import DflError
from ..outputs import write_atomic
from .checkpoint import (
    SCENARIO_CHECKPOINT_FORMAT,
    check_checkpoint_size,
    check_entries,
    entry_labels,
    read_checkpoint,
)
from .checkpoint_fields import rebuilt
from .loss_settings import LOSS_SETTINGS, check_loss_settings
from .options import SCENARIO_DEFAULTS, TrainOptions, or_default
from .threads import training_threads
from .trainer import History, TrainingError, check_run, progress_bar

SCENARIO_LOSSES = ("gen-dfl", "nll", "mse", "spo+")
SCENARIO_GENERATIVE = ("flow", "vae")  # `point` comes with the point losses, mse and spo+
def _gen_dfl_settings(opts: TrainOptions) -> dict:
    """gen-dfl's loss settings (`TrainOptions.loss_options`; `dfl train --target
    --solve-ratio`) with their defaults, checked as every loss's are."""
    check_loss_settings(opts.loss, opts.loss_options)
    return {**LOSS_SETTINGS["gen-dfl"], **(opts.loss_options or {})}


def _check_scenario_options(inst, opts: TrainOptions, lr: float, hidden: int, scenarios: int,
                            beta: float, generative: str) -> None:
    """A generative (or point) model's settings, checked before any work."""
    from .gen_dfl import uncertain_constraints

    if opts.loss not in SCENARIO_LOSSES:
        raise DflError(f"unknown loss `{opts.loss}` for a model with uncertain params",
                       hint="use one of: " + ", ".join(SCENARIO_LOSSES))
    check_run(opts.epochs, opts.batch_size, lr, hidden, opts.seed)
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
    _gen_dfl_settings(opts)
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
        self.gen_dfl = _gen_dfl_settings(opts)
        self.gen_dfl_terms = None  # (idx, x, y) -> (Gen-DFL loss, NLL) once gen-dfl is set up
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
            "entries": entry_labels(self.inst, self.inst.uncertain),
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
        check_checkpoint_size(path, inst, "model draws", spec["dim"],
                               "uncertain values per scenario",
                               sum(entity.size for entity in inst.uncertain))
        check_entries(path, inst, state.get("entries"), inst.uncertain,
                      "model's drawn value {k} is")
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

        return relative_risk_regret(self.objective, self.decide(data.features),
                                    self._best_for(data), data.draws)

    def regret_kind(self, data) -> str:
        """Which figure `risk_regret` reports on `data` (normalized, or the mean per sample
        when every F(w*, Ξ) is 0)."""
        from .gen_dfl import risk_regret_kind

        return risk_regret_kind(self.objective, self._best_for(data), data.draws)

    def _best_for(self, data) -> np.ndarray:
        """The best decisions for `data`'s true scenario sets, solved once per data set."""
        # keyed by id, with the data kept: a freed data set's id is reused by the next one,
        # which then scored against the first one's best decisions
        cached = self._best.get(id(data))
        if cached is None or cached[0] is not data:
            best = self.oracle(data.draws.shape[1]).solve(data.draws, cold=True)
            cached = self._best[id(data)] = (data, best)
        return cached[1]

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
        # one optimizer and one batch order for both of gen-dfl's phases: restarting Adam
        # after pretraining lowered the regret by itself (portfolio, α = 0.5: 0.0141 -> 0.0111
        # with β = 0), which read as the Gen-DFL term's gain; now β = 0 is the two-stage flow
        self._optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self._order = torch.Generator().manual_seed(self.seed)
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
        optimizer, generator = self._optimizer, self._order
        n = len(x_all)
        batches = (n + self.batch_size - 1) // self.batch_size
        progress = progress_bar(self.console, not self.show_progress,
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

    def gen_dfl_targets(self, train) -> np.ndarray:
        """Each training sample's target decision w* (loss_settings.GEN_DFL_TARGETS): by default the
        decision under S scenarios of the frozen NLL fit (the proxy of the unknown truth)."""
        target = self.gen_dfl["target"]
        if target == "draws":
            return self.oracle(train.draws.shape[1]).solve(train.draws, cold=True)
        if target == "observed":
            return self.oracle(1).solve(train.observed[:, None], cold=True)
        with torch.no_grad():
            x = torch.as_tensor(train.features, dtype=torch.float32, device=self.device)
            gen = torch.Generator(device=self.device).manual_seed(self.seed + 2)
            draws = self.model.eval().sample(x, self.scenarios, generator=gen)
            self.model.train()
        return self.oracle(self.scenarios).solve(draws.double().cpu())

    def _gen_dfl_setup(self, train):
        """Solve each sample's target decision once (from the NLL fit: the proxy), and return
        the β · Gen-DFL + NLL step; `gen_dfl_terms` gives the two terms apart."""
        from .gen_dfl import GenDFLLoss

        targets = self.gen_dfl_targets(train)
        loss_fn = GenDFLLoss(self.objective, self.oracle(self.scenarios), targets,
                             solve_ratio=self.gen_dfl["solve_ratio"], seed=self.seed)
        targets_t = torch.as_tensor(targets, dtype=torch.float64)
        gen = torch.Generator(device=self.device).manual_seed(self.seed + 3)

        def terms(idx, x, y):
            xi_hat = self.model.sample(x, self.scenarios, generator=gen).double().cpu()
            return loss_fn(xi_hat, targets_t[idx]).to(self.device), self.model.nll(y, x)

        self.gen_dfl_terms = terms

        def step(idx, x, y):
            dfl, nll = terms(idx, x, y)
            return self.beta * dfl + nll

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
