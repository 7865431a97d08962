"""`dfl train`'s loss settings as typer options, declared from the table in
learn/loss_settings.py (torch-free, so `dfl --help` stays quick): each option's help names the
losses that take it, and TRAIN_EPILOG is the command's list of losses and their settings."""

from __future__ import annotations

from typing import Annotated

import typer

from .learn.loss_settings import SETTINGS, losses_help, settings_help


def _option(key: str):
    """A loss setting's option: its flag and its help from the table (the parameter's name
    must be the setting's key: `given_settings` reads them back by name)."""
    return typer.Option(SETTINGS[key].flag, help=settings_help(key), show_default=False)


Samples = Annotated[int | None, _option("n_samples")]
Sigma = Annotated[float | None, _option("sigma")]
Lambda = Annotated[float | None, _option("lambd")]
SolveRatio = Annotated[float | None, _option("solve_ratio")]
Kappa = Annotated[float | None, _option("kappa")]
TwoSides = Annotated[bool, _option("two_sides")]
TaskLoss = Annotated[str | None, _option("task_loss")]
MaxIter = Annotated[int | None, _option("max_iter")]
InnerRatio = Annotated[float | None, _option("inner_ratio")]
NoVarianceReduction = Annotated[bool, _option("variance_reduction")]
Target = Annotated[str | None, _option("target")]

TRAIN_EPILOG = losses_help()
