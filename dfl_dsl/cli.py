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


NO_SOLUTION = ("infeasible", "unbounded", "infeasible_or_unbounded", "error")


@app.command()
@guarded
def solve(
    model: ModelArg,
    data: DataOpt = None,
    backend: Annotated[
        str,
        typer.Option(
            "--backend", "-b",
            help="auto | highs | pyomo | cvxpy | flexqp | obcd | fw | aapga (auto: by class).",
        ),
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the solution as JSON here.")
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Seconds; status `feasible` if hit.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed.")] = None,
    write: Annotated[
        Path | None,
        typer.Option("--write", help="pyomo: also write the model as .lp, .mps or .nl."),
    ] = None,
) -> None:
    """Solve MODEL with DATA and print the solution (exit 1 if it has none)."""
    import json

    from .model import load
    from .solution_report import print_solution, write_json_atomic

    if time_limit is not None and time_limit <= 0:
        raise DflError("--time-limit must be positive")
    m = load(model)
    inst = m.bind(data)
    options = {"write": write} if write is not None else {}
    sol = inst.solve(backend, time_limit=time_limit, seed=seed, **options)
    payload = sol.to_json()
    if as_json:
        print(json.dumps(payload))
    else:
        print_solution(sol, out)
    if sol.status in NO_SOLUTION:
        if as_json:
            raise typer.Exit(1)
        raise InfeasibleError(_no_solution_message(sol))
    if output is not None:
        write_json_atomic(output, payload)


def _no_solution_message(sol) -> str:
    text = f"no solution: the problem is {sol.status.replace('_', ' ')}"
    iis = sol.extra.get("iis")
    if iis:
        text += "\nan irreducible infeasible subset of rows: " + ", ".join(iis[:20])
    return text


def main() -> None:  # pragma: no cover - console entry point for `python -m dfl_dsl`
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
