"""The `dfl` command: check, solve, train, eval, generate.

Exit status: 0 success, 1 the problem has no solution, 2 a user error (printed as
FILE:LINE:COL: error: ..., never a traceback).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer

from . import loss_flags as lf  # the loss settings' options
from .backends.declarations import backend_help, option_help
from .cli_data import data_command
from .errors import DataWarning, DflError, InfeasibleError, ModelWarning
from .train_flags import (
    BetaOpt,
    ExecutorOpt,
    GenerativeOpt,
    HiddenOpt,
    OracleOpt,
    ProcessesOpt,
    RayAddressOpt,
    SaveOpt,
    ScenariosOpt,
    ThreadsOpt,
)


class _App(typer.Typer):
    """`dfl` through typer (see `_gone_is_success`)."""

    def __call__(self, *args, **kwargs):
        return _gone_is_success(lambda: super(_App, self).__call__(*args, **kwargs))


def _gone_is_success(run):
    """`run()`, where click, typer and rich report a reader that went away (`dfl --help |
    head`, or output flushed after a command) by exit status 1, each in its own way; here that
    is success, as for `cat | head`. Each first points stdout elsewhere: that tells it apart
    from an exit 1 for "no solution"."""
    before, was_devnull = sys.stdout, _stdout_is_devnull()
    try:
        return run()
    except SystemExit as exc:
        gone = sys.stdout is not before or (_stdout_is_devnull() and not was_devnull)
        if exc.code == 1 and gone:
            _quiet_stdout()
            raise SystemExit(0) from None
        raise


app = _App(
    name="dfl",
    help="Write an optimization problem once in a .opt file; check it, solve it, and train "
    "predictors through it for decision quality.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # docstrings wrap at 100 columns in the source; markdown reflows them to the terminal
    rich_markup_mode="markdown",
)


@functools.cache
def _console(stderr: bool = False):
    """rich's Console, made on first use: `dfl solve --json` never needs rich (~50 ms of
    start-up). It writes to whatever sys.stdout / sys.stderr are when it prints."""
    from rich.console import Console

    return Console(stderr=stderr)


def out():
    return _console()


def err():
    return _console(True)


@app.callback()
def _root() -> None:
    """dfl-dsl: decision-focused learning from a .opt model."""


ModelArg = Annotated[Path, typer.Argument(help="The model file (.opt, .mod).", show_default=False)]
DataOpt = Annotated[
    Path | None, typer.Option("--data", "-d", help="Instance data (.json, .yaml, .npz or .dat).")
]
ObjectiveOpt = Annotated[
    str | None, typer.Option("--objective", help="Which objective to solve, by name, in a "
                             "model with several (default: the first).", show_default=False)
]


def _show_warning(message, category, *args, **kwargs) -> None:
    """Print a `DataWarning` or `ModelWarning` as it is written (FILE:LINE:COL: warning: ...)
    on stderr; any other (numpy's, torch's) as one line, without the file, line and source
    text inside the library that Python's own display adds."""
    text = str(message) if issubclass(category, (DataWarning, ModelWarning)) else (
        f"dfl: warning: {category.__name__}: {str(message).strip()}")
    err().print(text, markup=False, highlight=False, soft_wrap=True)


def _stdout_is_devnull() -> bool:
    try:
        here, null = os.fstat(sys.__stdout__.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError):
        return False
    return (here.st_dev, here.st_ino) == (null.st_dev, null.st_ino)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for a reader that has gone is
    dropped at exit instead of failing there (Python's documented remedy for EPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.__stdout__.fileno())
    os.close(devnull)


def guarded(fn):
    """Turn user errors into exit 2 and 'no solution' into exit 1, without tracebacks."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", DataWarning)
                warnings.simplefilter("always", ModelWarning)
                warnings.showwarning = _show_warning
                return fn(*args, **kwargs)
        except DflError as exc:
            err().print(exc.format(), markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except InfeasibleError as exc:
            err().print(str(exc), markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None
        except BrokenPipeError:  # `dfl ... | head`: the reader has all it wanted
            _quiet_stdout()
            raise typer.Exit(0) from None
        except MemoryError:  # a size beyond the caps (DFL_MAX_ENTRIES=0, or not covered)
            error = DflError("out of memory", hint="check the sizes the data and options give")
            err().print(error.format(), markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:  # Ctrl-C: the shell's 128 + SIGINT; 1 would read "no solution"
            from .interruptible import leave_now

            err().print("dfl: interrupted", markup=False, highlight=False)
            leave_now(130)  # (a solver still at work in C can't be waited for)
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:  # an internal bug: say so plainly, keep the trace on demand
            if os.environ.get("DFL_DEBUG"):
                raise
            err().print(
                f"internal error: {type(exc).__name__}: {exc}\n"
                "(this is a bug in dfl-dsl; rerun with DFL_DEBUG=1 for the traceback)",
                markup=False,
                highlight=False,
            )
            raise typer.Exit(3) from None

    return wrapper


@app.command()
@guarded
def check(model: ModelArg, data: DataOpt = None, objective: ObjectiveOpt = None) -> None:
    """Parse and check MODEL (and bind DATA): print its sets, params, variables, constraints,
    class and the backends that accept it."""
    from .check_report import report
    from .model import load

    m = load(model, objective)
    inst = m.bind(data) if data is not None or m.data is not None else None
    if inst is not None:
        inst.compile()  # evaluates every expression against the data
    report(m, inst, out())


NO_SOLUTION = ("infeasible", "unbounded", "infeasible_or_unbounded", "error", "time_limit")


@app.command()
@guarded
def solve(
    model: ModelArg,
    data: DataOpt = None,
    backend: Annotated[str, typer.Option("--backend", "-b", help=backend_help())] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o",
                     help="Write the solution here, by suffix: .npz, .csv or .parquet (one "
                     "table per variable and constraint: keys, value, reduced cost, dual), "
                     ".json or .txt for JSON (missing folders are made)."),
    ] = None,
    nonzeros: Annotated[
        bool, typer.Option("--nonzeros", help="--json / --output: only nonzero entries "
                           "(values, duals).")
    ] = False,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Seconds; status `feasible` if hit.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed.")] = None,
    write: Annotated[Path | None, typer.Option("--write", help=option_help("write"))] = None,
    device: Annotated[str, typer.Option(help=option_help("device"))] = "cpu",
    variant: Annotated[str | None, typer.Option(help=option_help("variant"))] = None,
    objective: ObjectiveOpt = None,
) -> None:
    """Solve MODEL with DATA and print the solution (exit 1 if it has none)."""
    from .backends import check_time_limit
    from .interruptible import interruptible
    from .model import load
    from .outputs import checked_output, refuse_overwriting, write_atomic
    from .solution_files import checked_format, solution_writer

    check_time_limit(time_limit, "--time-limit")  # (before any work; solve checks it too)
    checked_output(output, "--output")
    checked_format(output)
    checked_output(write, "--write")
    refuse_overwriting({"--output": output, "--write": write},
                       {"the model": model, "--data": data})
    inst = load(model, objective).bind(data)
    options = _backend_options(write, device, variant)
    with _working(f"solving {Path(model).name}" + (f" with {backend}" if backend != "auto"
                                                   else "")):
        sol = interruptible(lambda: inst.solve(backend, time_limit=time_limit, seed=seed,
                                               **options))
    text = sol.json_text(nonzeros=nonzeros) if as_json else None
    if as_json:
        print(text)
    else:
        from .solution_report import print_solution

        print_solution(sol, out())
    if sol.extra.get("warning"):  # (e.g. an `optimal` the KKT check didn't confirm)
        err().print(f"dfl: warning: {sol.extra['warning']}", markup=False, highlight=False,
                    soft_wrap=True)
    if sol.status in NO_SOLUTION:
        if as_json:
            raise typer.Exit(1)
        raise InfeasibleError(_no_solution_message(sol))
    if output is not None:
        write_atomic(output, solution_writer(sol, output, nonzeros=nonzeros, text=text))


def _backend_options(write: Path | None, device: str, variant: str | None) -> dict:
    """The flags `dfl solve` has for some backends (declarations.py says whose)."""
    from .devices import checked_device

    options: dict = {"write": write} if write is not None else {}
    if device != "cpu":
        options["device"] = checked_device(device)
    if variant is not None:
        options["variant"] = variant
    return options


def _working(what: str):
    """A spinner with the elapsed time on stderr while a solve runs (an OBCD or FlexQP solve
    can take its whole time limit); drawn only on a terminal and erased when done, so piped
    or --json output is untouched (off a terminal even rich's transient display ends with a
    newline, which would put a blank line before an error)."""
    if not sys.stderr.isatty():
        return contextlib.nullcontext()
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(SpinnerColumn(), TextColumn(what), TimeElapsedColumn(), console=err(),
                        transient=True)
    progress.add_task(what, total=None)
    return progress


def _no_solution_message(sol) -> str:
    if sol.status in ("error", "time_limit"):  # e.g. a time limit hit before a feasible point
        text = "no solution: the solver stopped without a feasible point" + (
            f" ({sol.message})" if sol.message else "")
    else:
        text = f"no solution: the problem is {sol.status.replace('_', ' ')}"
    iis = sol.extra.get("iis")
    if iis:
        text += "\nan irreducible infeasible subset of rows: " + ", ".join(iis[:20])
    return text


@app.command(epilog=lf.TRAIN_EPILOG)
@guarded
def train(
    model: ModelArg,
    data: DataOpt = None,
    train_file: Annotated[
        Path | None,
        typer.Option("--train", help="Training file (.npz: features + one array per predicted "
                     "param) or a data recipe (.gen.yaml). Default: MODEL.gen.yaml."),
    ] = None,
    test_file: Annotated[Path | None, typer.Option("--test", help="Test file (.npz).")] = None,
    loss: Annotated[str, typer.Option(
        help="One of the losses below, with its settings; for `uncertain` params: gen-dfl | "
        "nll | mse | spo+.")] = "spo+",
    predictor: Annotated[str, typer.Option(help="linear | mlp")] = "linear",
    epochs: Annotated[int, typer.Option(help="Passes over the training set.")] = 10,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Samples per step.")] = 32,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 1e-2,
    optimizer: Annotated[str, typer.Option(help="adam | adamw | sgd (momentum 0.9)")] = "adam",
    weight_decay: Annotated[float, typer.Option("--weight-decay")] = 0.0,
    cautious_wd: Annotated[
        bool, typer.Option("--cautious-wd", help="AdamW with cautious weight decay.")
    ] = False,
    device: Annotated[str, typer.Option(help="cpu | cuda")] = "cpu",
    seed: Annotated[int, typer.Option(help="Random seed.")] = 135,
    processes: ProcessesOpt = 1, executor: ExecutorOpt = "processes",
    ray_address: RayAddressOpt = None, oracle: OracleOpt = "auto",
    distributed: Annotated[
        bool, typer.Option("--distributed",
                           help="Data-parallel training across the ranks torchrun starts.")
    ] = False,
    n_samples: lf.Samples = None, sigma: lf.Sigma = None, lambd: lf.Lambda = None,
    solve_ratio: lf.SolveRatio = None, kappa: lf.Kappa = None, two_sides: lf.TwoSides = False,
    task_loss: lf.TaskLoss = None, max_iter: lf.MaxIter = None, inner_ratio: lf.InnerRatio = None,
    variance_reduction: lf.NoVarianceReduction = False, target: lf.Target = None,
    scenarios: ScenariosOpt = None,
    beta: BetaOpt = None, generative: GenerativeOpt = None, hidden: HiddenOpt = None,
    threads: ThreadsOpt = None, save: SaveOpt = None,
    plot: Annotated[Path | None, typer.Option(help="Save the training curve as PNG.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    objective: ObjectiveOpt = None,
) -> None:
    """Train a predictor of MODEL's `predicted` params for decision quality, or a generative
    model of its `uncertain` params for risk-aware decisions; print the regret."""
    import json

    from .learn.loss_settings import given_settings
    from .learn.options import TrainOptions
    from .learn.session import train_command

    loss_options = given_settings(locals())  # the loss flags given (the parameters' names)
    options = TrainOptions(
        loss=loss, predictor=predictor, epochs=epochs, batch_size=batch_size, lr=lr,
        optimizer=optimizer, weight_decay=weight_decay, cautious_wd=cautious_wd, device=device,
        seed=seed, hidden=hidden, threads=threads, processes=processes, executor=executor,
        ray_address=ray_address, oracle=oracle, distributed=distributed, scenarios=scenarios,
        beta=beta, generative=generative, save=save, plot=plot, loss_options=loss_options)
    result = train_command(model, data, train_file, test_file, options,
                           console=err() if as_json else out(), objective=objective)
    if as_json and result is not None:  # under --distributed, rank 0 reports
        print(json.dumps(result))


@app.command("eval")
@guarded
def evaluate(
    model: ModelArg,
    data: DataOpt = None,
    checkpoint: Annotated[Path, typer.Option(help="A checkpoint from `dfl train --save`.")] = ...,
    test_file: Annotated[Path | None, typer.Option("--test", help="Test file (.npz).")] = None,
    device: Annotated[str, typer.Option(
        help="cpu | cuda: where the predictor (or generative model) runs; a generative model "
        "replays training's regret exactly on the device it was trained on.")] = "cpu",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    objective: ObjectiveOpt = None,
) -> None:
    """Evaluate a checkpoint on a test set: a predictor's normalized regret, or, for a model
    with `uncertain` params, the relative risk regret `dfl train` reports."""
    import json

    from .learn.session import eval_command

    result = eval_command(model, data, checkpoint, test_file, device=device,
                          console=err() if as_json else out(), objective=objective)
    if as_json:
        print(json.dumps(result))


@app.command()
@guarded
def generate(
    problem: Annotated[
        str, typer.Argument(help="shortest_path | knapsack | portfolio | energy | portfolio_cvar"
                                 " | shortest_path_cvar")
    ],
    out_file: Annotated[Path, typer.Option("--out", help="Training file to write (.npz).")],
    instance: Annotated[
        Path | None,
        typer.Option(help="Also write the instance data (sets, fixed params) here (.json, .yaml)."),
    ] = None,
    num_data: Annotated[int, typer.Option("--num-data", help="Samples.")] = 1000,
    features: Annotated[int, typer.Option(help="Features per sample.")] = 5,
    deg: Annotated[int, typer.Option(help="Polynomial degree of the true mapping.")] = 1,
    noise: Annotated[float, typer.Option(help="Noise half-width (level for portfolio).")] = 0.0,
    seed: Annotated[int, typer.Option(help="Random seed (PyEPO's default 135).")] = 135,
    grid: Annotated[str | None, typer.Option(
        help="shortest_path(_cvar) only: ROWSxCOLS [default: 5x5].")] = None,
    items: Annotated[int | None, typer.Option(help="knapsack only: items [default: 32].")] = None,
    dims: Annotated[int | None, typer.Option(
        help="knapsack only: capacity dimensions [default: 2].")] = None,
    assets: Annotated[int | None, typer.Option(
        help="portfolio(_cvar) only: assets [default: 50].")] = None,
) -> None:
    """Generate a PyEPO-compatible synthetic data set (same arrays as PyEPO for the same
    arguments) in the training-file format."""
    from .learn.session import generate_command

    generate_command(problem, out_file, instance, num_data=num_data, features=features,
                     deg=deg, noise=noise, seed=seed, grid=grid, items=items, dims=dims,
                     assets=assets, console=out())


@app.command("train-solver")
@guarded
def train_solver(
    save: Annotated[Path, typer.Option("--save", help="Write the trained policy here (.pt).")],
    classes: Annotated[
        str, typer.Option(help="Comma-separated OSQP benchmark classes to train on.")
    ] = "random_qp,eq_qp,portfolio,lasso,huber,svm,control",
    size: Annotated[int, typer.Option(help="Problem size (each class's dimension).")] = 6,
    batch: Annotated[int, typer.Option("--batch", help="Problems per step.")] = 16,
    steps: Annotated[int, typer.Option(help="Training steps.")] = 140,
    unroll: Annotated[int, typer.Option(help="ADMM iterations unrolled per step.")] = 60,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 3e-3,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Train a Deep FlexQP policy by unrolling ADMM on small QPs; save it for
    `dfl solve --backend flexqp` (the package ships one trained this way)."""
    import json
    import time

    from .backends.flexqp.train import train_solver as train
    from .outputs import checked_output
    from .seeds import check_seed

    if min(size, batch, steps, unroll) < 1:
        raise DflError("--size, --batch, --steps and --unroll must be positive")
    check_seed(seed)
    checked_output(save, "--save")
    start = time.perf_counter()
    _, history = train(
        classes=[c.strip() for c in classes.split(",") if c.strip()], size=size, batch=batch,
        steps=steps, unroll=unroll, lr=lr, seed=seed, save=save,
        progress=None if as_json else lambda k, loss: out().print(f"step {k}: loss {loss:.3f}"),
    )
    result = {"saved": str(save), "steps": len(history), "time_s": time.perf_counter() - start,
              "history": history}
    if as_json:
        print(json.dumps(result))
    else:
        out().print(f"saved the policy to {save}")


app.command("data")(guarded(data_command))


def main(argv: list[str] | None = None) -> int:
    """The `dfl` console script (and `python -m dfl_dsl`): a plain command line is read by
    argparse from the commands' typer declarations (see `fastargs`: typer's per-parameter
    pydantic validation costs more start-up than `dfl check` itself); anything else — help, a
    mistake, completion — goes to typer."""
    from .fastargs import fast_call

    argv = sys.argv[1:] if argv is None else list(argv)
    call = fast_call(app, argv)
    if call is None:
        return app(args=argv, prog_name="dfl")  # (exits by itself)
    function, kwargs = call
    return _gone_is_success(lambda: _run(function, kwargs))


def _run(function, kwargs: dict) -> int:
    """A command called as typer would call it, to its exit status."""
    try:
        function(**kwargs)
        sys.stdout.flush()  # here, not at exit: a reader that went away is success
    except typer.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:
        _quiet_stdout()
    except typer.Abort:
        print("\nAborted!", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # (outside a command's guard: while it starts)
        print("\ndfl: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
