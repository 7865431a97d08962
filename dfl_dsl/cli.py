"""The `dfl` command: check, solve, train, eval, generate.

Exit status: 0 success, 1 the problem has no solution, 2 a user error (printed as
FILE:LINE:COL: error: ..., never a traceback).
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .errors import DflError, InfeasibleError

app = typer.Typer(
    name="dfl",
    help="Write an optimization problem once in a .opt file; check it, solve it, and train "
    "predictors through it for decision quality.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)



@app.callback()
def _root() -> None:
    """dfl-dsl: decision-focused learning from a .opt model."""


ModelArg = Annotated[Path, typer.Argument(help="The model file (.opt).", show_default=False)]
DataOpt = Annotated[
    Path | None, typer.Option("--data", "-d", help="Instance data (.json, .yaml or .npz).")
]


def guarded(fn):
    """Turn user errors into exit 2 and 'no solution' into exit 1, without tracebacks."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except DflError as exc:
            err.print(exc.format(), markup=False, highlight=False)
            raise typer.Exit(2) from None
        except InfeasibleError as exc:
            err.print(str(exc), markup=False, highlight=False)
            raise typer.Exit(1) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:  # an internal bug: say so plainly, keep the trace on demand
            if os.environ.get("DFL_DEBUG"):
                raise
            err.print(
                f"internal error: {type(exc).__name__}: {exc}\n"
                "(this is a bug in dfl-dsl; rerun with DFL_DEBUG=1 for the traceback)",
                markup=False,
                highlight=False,
            )
            raise typer.Exit(3) from None

    return wrapper


@app.command()
@guarded
def check(model: ModelArg, data: DataOpt = None) -> None:
    """Parse and check MODEL (and bind DATA): print its sets, params, variables, constraints,
    class and the backends that accept it."""
    from .check_report import report
    from .model import load

    m = load(model)
    inst = m.bind(data) if data is not None else None
    if inst is not None:
        inst.compile()  # evaluates every expression against the data
    report(m, inst, out)


def main() -> None:  # pragma: no cover - console entry point for `python -m dfl_dsl`
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
