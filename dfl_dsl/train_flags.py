"""`dfl train`'s options on the oracle's workers and for `uncertain` params, named here so the
command's signature in cli.py stays readable (the loss settings are loss_flags.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ProcessesOpt = Annotated[
    int, typer.Option(help="Solver workers for the oracle (processes or Ray actors).")
]
ExecutorOpt = Annotated[str, typer.Option(help="processes | ray: where the oracle's workers run.")]
RayAddressOpt = Annotated[
    str | None, typer.Option("--ray-address", help="ray: the cluster (default: local).")
]
OracleOpt = Annotated[
    str, typer.Option(help="auto | highs | enumerate | batched: how the oracle solves. "
                      "enumerate lists a small pure-integer feasible set once; batched "
                      "solves each batch at once in torch (certified, on --device); auto "
                      "enumerates when it fits, goes batched on a GPU, else HiGHS.")
]
ScenariosOpt = Annotated[
    int | None, typer.Option(help="`uncertain` params, gen-dfl | nll: scenarios per sample "
                             "that each decision is taken against (S). Default: 16.",
                             show_default=False)
]
BetaOpt = Annotated[
    float | None, typer.Option(help="`uncertain` params, gen-dfl: weight β of the Gen-DFL "
                               "term in β · Gen-DFL + NLL. Default: 10.", show_default=False)
]
GenerativeOpt = Annotated[
    str | None, typer.Option(help="`uncertain` params, gen-dfl | nll: flow (conditional "
                             "RealNVP) | vae (conditional VAE). Default: flow.",
                             show_default=False)
]
HiddenOpt = Annotated[
    int | None, typer.Option(help="Hidden width: of the generative model's networks "
                             "(`uncertain` params, gen-dfl | nll; Default: 128.) or of "
                             "--predictor mlp (Default: 64.).", show_default=False)
]
SaveOpt = Annotated[Path | None, typer.Option(
    help="Write the trained predictor (or generative model) here, for `dfl eval`.")]
ThreadsOpt = Annotated[
    int | None, typer.Option(help="CPU threads for torch while training. Default: one "
                             "when a step's tensors are small (most predictors: more "
                             "threads only wait for each other), else torch's own.",
                             show_default=False)
]
