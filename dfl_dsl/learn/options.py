"""Every setting of a training run in one object, from `dfl train`'s options through the
session to the trainers (one list of names and defaults instead of three long signatures)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI builds options without importing torch
    from torch import nn

# the trainers' own defaults for what TrainOptions leaves None
PREDICTOR_DEFAULTS = {"lr": 1e-2, "hidden": 64}
SCENARIO_DEFAULTS = {"lr": 1e-3, "hidden": 128, "scenarios": 16, "beta": 10.0,
                     "generative": "flow"}


@dataclass
class TrainOptions:
    """A training run's settings. None means "the trainer's default" (PREDICTOR_DEFAULTS,
    SCENARIO_DEFAULTS): the learning rate, the hidden width, and the generative settings;
    `threads` None picks by the size of a step (`.threads`)."""

    loss: str = "spo+"
    predictor: str | nn.Module = "linear"
    epochs: int = 10
    batch_size: int = 32
    lr: float | None = None
    optimizer: str = "adam"
    weight_decay: float = 0.0
    cautious_wd: bool = False
    device: str = "cpu"
    seed: int = 135
    hidden: int | None = None
    loss_options: dict | None = None
    threads: int | None = None
    # the oracle of `predicted` params' losses
    processes: int = 1
    executor: str = "processes"
    ray_address: str | None = None
    oracle: str = "auto"
    distributed: bool = False
    # models of `uncertain` params
    scenarios: int | None = None
    beta: float | None = None
    generative: str | None = None
    pretrain_epochs: int | None = None
    # what the run writes
    save: Path | None = None
    plot: Path | None = None

    @classmethod
    def of(cls, options: TrainOptions | None, **settings) -> TrainOptions:
        """`options` (or the defaults) with `settings` replacing fields; an unknown setting
        is a TypeError naming it, as a misspelt keyword argument would be."""
        base = options or cls()
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise TypeError(f"unknown training setting(s): {', '.join(unknown)}")
        return dataclasses.replace(base, **settings)

    def given(self, default: TrainOptions | None = None) -> dict[str, bool]:
        """Which fields differ from `default` (the plain defaults): the options a user set."""
        default = default or TrainOptions()
        return {f.name: getattr(self, f.name) != getattr(default, f.name)
                for f in dataclasses.fields(self)}


def or_default(value, name: str, defaults: dict):
    """`value`, or the trainer's default for `name` when it is None."""
    return defaults[name] if value is None else value
