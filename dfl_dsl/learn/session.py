"""What `dfl train`, `dfl eval` and `dfl generate` do, as functions (the CLI only parses)."""

from __future__ import annotations

import dataclasses
import inspect
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from torch import nn

from ..devices import checked_device
from ..errors import DataError, DflError
from ..generators import GENERATORS
from ..model import load
from ..outputs import checked_output, refuse_overwriting, write_atomic
from .checkpoint import load_checkpoint
from .dataset import DFLData, ScenarioData
from .loss_registry import LOSSES
from .loss_settings import check_loss_settings
from .metrics import REGRET_LABELS, data_regret_kind
from .options import TrainOptions
from .recipe import find_recipe, is_recipe, read_recipe, run_generator
from .scenario_trainer import SCENARIO_LOSSES, ScenarioTrainer
from .trainer import Trainer


def _instance_and_data(model_path: Path, data, train_file, test_file,
                       objective: str | None = None):
    """The bound instance (solving the objective named `objective`, default the first),
    training and test data: from files, or from the model's recipe."""
    model = load(model_path, objective)
    recipe = (find_recipe(Path(model_path)) if train_file is None
              else read_recipe(Path(train_file)) if is_recipe(train_file) else None)
    if train_file is None and recipe is None:
        raise DflError(
            "no training data: give --train FILE.npz (see `dfl generate`), or ship a recipe "
            f"{Path(model_path).with_suffix('.gen.yaml').name} beside the model",
            filename=str(model_path),
        )
    generated = recipe.generate() if recipe is not None else None
    if data is None and generated is None:
        raise DflError("give the instance data with --data", filename=str(model_path))
    inst = (model.bind(data) if data is not None else  # (errors name the recipe, not <data>)
            model.bind(generated[0].instance, data_name=f"{recipe.path}'s instance"))
    kind = ScenarioData if inst.uncertain and not inst.predicted else DFLData
    if generated is not None:
        train = kind.from_arrays(inst, generated[0].arrays(), str(recipe.path))
        test = kind.from_arrays(inst, generated[1].arrays(), str(recipe.path))
    else:
        train = kind.from_npz(inst, train_file)
        test = kind.from_npz(inst, test_file) if test_file is not None else None
    if test_file is not None and generated is not None:
        test = kind.from_npz(inst, test_file)
    if test is not None:
        _check_features(test, train.features.shape[1], test_file)
    return inst, train, test


def _check_features(data: DFLData, width: int, source) -> None:
    """The predictor reads `width` features: a file with another number is a user error."""
    if data.features.shape[1] != width:
        raise DataError(f"`features` has {data.features.shape[1]} columns; the predictor reads "
                        f"{width}", filename=None if source is None else str(source))


def train_command(model_path: Path, data, train_file, test_file, opts: TrainOptions, *,
                  console: Console, progress: bool = True,
                  objective: str | None = None) -> dict | None:
    """`dfl train`; under --distributed every rank trains and only rank 0 reports (the
    others return None). Options left None take the trainer's defaults."""
    check_loss_settings(opts.loss, opts.loss_options)
    if opts.plot is not None and Path(opts.plot).suffix.lower() != ".png":
        raise DflError(f"--plot writes a PNG file: {opts.plot} should end in .png")
    checked_output(opts.save, "--save")
    checked_output(opts.plot, "--plot")
    refuse_overwriting({"--save": opts.save, "--plot": opts.plot},
                       {"the model": model_path, "--data": data, "--train": train_file,
                        "--test": test_file})
    inst, train, test = _instance_and_data(model_path, data, train_file, test_file, objective)
    given = opts.given()
    if isinstance(train, ScenarioData):
        _check_scenario_run(opts, given, model_path)
        return _train_scenarios(inst, train, test, opts, console=console, progress=progress)
    if opts.loss in ("gen-dfl", "nll"):
        raise DflError(f"--loss {opts.loss} learns the distribution of `uncertain` params; this "
                       "model has none", hint="mark them `: uncertain`, or train its `predicted`"
                       " params with --loss " + " | ".join(LOSSES), filename=str(model_path))
    _refuse_options({f"--{name}": given[name] for name in ("scenarios", "beta", "generative")},
                    "only for models with `uncertain` params (a generative model's scenarios); "
                    "this model's are `predicted`", model_path)
    _refuse_options({"--hidden": given["hidden"] and opts.predictor != "mlp"},
                    "the hidden width of --predictor mlp (or of a generative model); the "
                    f"{opts.predictor} predictor has no hidden layer", model_path)
    return _train_predictor(inst, train, test, opts, console=console, progress=progress)


def _check_scenario_run(opts: TrainOptions, given: dict[str, bool], model_path: Path) -> None:
    """Refuse the options that would have no effect on a model of `uncertain` params."""
    _refuse_options({f"--{name.replace('_', '-')}": given[name] for name in (
        "predictor", "optimizer", "weight_decay", "cautious_wd", "processes", "executor",
        "ray_address", "distributed")},
        "only for predictors of `predicted` params; a model with `uncertain` params trains "
        "a generative (or point) model of them, in one process", model_path)
    if opts.loss in ("mse", "spo+"):
        _refuse_options({f"--{name}": given[name] for name in ("scenarios", "generative",
                                                               "hidden")},
                        f"only for --loss gen-dfl or nll; --loss {opts.loss} decides with a "
                        "point forecast as one scenario", model_path)
    if opts.loss in SCENARIO_LOSSES and opts.loss != "gen-dfl":
        _refuse_options({"--beta": given["beta"]},
                        f"weighs the Gen-DFL term, only with --loss gen-dfl (not {opts.loss})",
                        model_path)


def _train_predictor(inst, train: DFLData, test: DFLData | None, opts: TrainOptions, *,
                     console: Console, progress: bool) -> dict | None:
    """`dfl train` for a model with `predicted` params (see `train_command`)."""
    shard = None
    if opts.distributed:
        from . import distributed as dist

        shard = dist.init(opts.device)
        opts = dataclasses.replace(opts, device=str(shard.device))
    try:
        trainer = Trainer(inst, options=opts, shard=shard, console=console, progress=progress)
        start = time.perf_counter()
        history = trainer.fit(train, test, "test" if test is not None else "val")
        elapsed = time.perf_counter() - start
    finally:
        if shard is not None:
            dist.close()
    if shard is not None and not shard.is_main:
        trainer.oracle.close()
        return None
    on = test if test is not None else train
    result = {
        "regret": trainer.regret(on),
        "regret_kind": data_regret_kind(on.z),
        "regret_on": "test" if test is not None else "train",
        "train_regret": trainer.regret(train),
        "train_regret_kind": data_regret_kind(train.z),
        "oracle": trainer.oracle.method,
        "oracle_stats": trainer.oracle.stats(),
        **_run_fields(opts.loss, opts.epochs, elapsed, history),
    }
    if shard is not None:
        result["ranks"] = shard.world
    _write_results(trainer, result, opts, inst, console, REGRET_LABELS[result["regret_kind"]])
    trainer.oracle.close()
    return result


def _write_results(trainer, result: dict, opts: TrainOptions, inst, console: Console,
                   metric: str = "normalized regret") -> None:
    """--save and --plot, then the summary."""
    if opts.save is not None:
        trainer.save(opts.save)
        result["checkpoint"] = str(opts.save)
    if opts.plot is not None:
        result["plot"] = _plot(trainer.history, opts.plot, inst, opts.loss, metric)
    _print_summary(result, console)


# `dfl generate`'s size options and the generator argument each one sets
_SIZE_OPTIONS = {"--grid": "grid", "--items": "num_items", "--dims": "dim",
                 "--assets": "num_assets"}


def _arguments(problem: str) -> set[str]:
    """The arguments generator `problem` takes (none for an unknown one, which
    `run_generator` names)."""
    fn = GENERATORS.get(problem)
    return set(inspect.signature(fn).parameters) if fn is not None else set()


def _size_args(problem: str, given: dict[str, object]) -> dict:
    """The generator arguments of the size options given; one that `problem` does not take is
    an error naming the kinds that do (an option silently dropped reads as if it was set)."""
    args = {}
    for flag, value in given.items():
        if value is None:
            continue
        arg = _SIZE_OPTIONS[flag]
        if problem in GENERATORS and arg not in _arguments(problem):
            kinds = [name for name in GENERATORS if arg in _arguments(name)]
            raise DflError(f"{flag} is for {' and '.join(kinds)}, not {problem}",
                           hint=f"drop {flag}; `dfl generate {problem}` has no such size")
        args[arg] = _grid(value) if flag == "--grid" else value
    return args


def _grid(text: str) -> tuple[int, int]:
    """`--grid ROWSxCOLS` as a pair of ints."""
    try:
        rows, cols = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise DflError(f"--grid must look like 5x5, got {text!r}") from None
    return rows, cols


def _refuse_options(given: dict[str, bool], why: str, model_path: Path) -> None:
    """Exit 2 naming each option in `given` that was set, and `why` it has no effect here: an
    option silently ignored would read as if it had shaped the run."""
    names = [name for name, is_set in given.items() if is_set]
    if names:
        raise DflError(f"{', '.join(names)}: {why}", filename=str(model_path))


def _train_scenarios(inst, train: ScenarioData, test: ScenarioData | None, opts: TrainOptions,
                     *, console: Console, progress: bool) -> dict:
    """`dfl train` for a model with `uncertain` params: a generative (or point) model of them,
    decisions under the model's risk measure, the relative risk regret on the test set."""
    trainer = ScenarioTrainer(inst, options=opts, console=console, progress=progress)
    start = time.perf_counter()
    history = trainer.fit(train, test, "test" if test is not None else "val")
    elapsed = time.perf_counter() - start
    on = test if test is not None else train
    result = {
        "regret": trainer.risk_regret(on),
        "regret_on": "test" if test is not None else "train",
        **_scenario_fields(trainer, on),
        **_run_fields(opts.loss, opts.epochs, elapsed, history),
    }
    _write_results(trainer, result, opts, inst, console, result["metric"])
    return result


def _scenario_fields(trainer: ScenarioTrainer, on: ScenarioData) -> dict:
    """What `dfl train` and `dfl eval` both report about a risk regret: the metric (and which
    figure it is: `regret_kind`), S and the number of true scenarios it was measured on."""
    objective = trainer.objective
    oracle = trainer.oracle(trainer.scenarios)
    kind = trainer.regret_kind(on)
    metric = (f"relative {objective.measure} regret" if kind == "normalized" else
              f"mean {objective.measure} regret per sample")
    return {"metric": metric, "regret_kind": kind, "alpha": objective.alpha,
            "oracle": oracle.method, "oracle_fallbacks": oracle.fallbacks,
            "generative": trainer.kind, "scenarios": trainer.scenarios,
            "true_scenarios": int(on.draws.shape[1])}


def _run_fields(loss: str, epochs: int, elapsed: float, history) -> dict:
    """What every `dfl train` result reports about the run itself."""
    per_epoch = float(np.mean([e["train_time_s"] for e in history.epochs]))
    return {"loss": loss, "epochs": epochs, "time_s": round(elapsed, 4),
            "time_per_epoch_s": round(per_epoch, 4), "history": history.epochs}


def _plot(history, path, inst, loss: str, metric: str = "normalized regret") -> str:
    from .plots import training_curve

    training_curve(history.epochs, path, title=f"{inst.model.name}: {loss}", metric=metric)
    return str(path)


def _print_summary(result: dict, console: Console) -> None:
    table = Table(title="training", title_justify="left")
    table.add_column("epoch", justify="right")
    table.add_column("loss", justify="right")
    table.add_column("regret", justify="right")
    table.add_column("time (s)", justify="right")
    for e in result["history"]:
        regret = next((v for k, v in e.items() if k.endswith("_regret")), None)
        table.add_row(str(e["epoch"]), f"{e['loss']:.4f}",
                      "-" if regret is None else f"{regret:.4f}", f"{e['train_time_s']:.3f}")
    console.print(table)
    if "metric" in result:
        at = f" at α = {result['alpha']}" if result["alpha"] is not None else ""
        console.print(
            f"{result['metric']}{at} ({result['regret_on']}, {result['true_scenarios']} true "
            f"scenarios per sample): [bold]{result['regret']:.4f}[/bold]   time: "
            f"{result['time_s']:.2f} s ({result['time_per_epoch_s']:.3f} s/epoch)")
        return
    train_kind = result["train_regret_kind"]
    train_label = "" if train_kind == result["regret_kind"] else f" ({REGRET_LABELS[train_kind]})"
    console.print(
        f"{REGRET_LABELS[result['regret_kind']]} ({result['regret_on']}): "
        f"[bold]{result['regret']:.4f}[/bold]   "
        f"train{train_label}: {result['train_regret']:.4f}   time: {result['time_s']:.2f} s "
        f"({result['time_per_epoch_s']:.3f} s/epoch)"
    )


def eval_command(model_path: Path, data, checkpoint: Path, test_file, *, console: Console,
                 device: str = "cpu", objective: str | None = None) -> dict:
    device = checked_device(device)
    if test_file is None and find_recipe(Path(model_path)) is None:
        raise DflError(  # not _instance_and_data's 'give --train': eval has no such option
            "no test data: give --test FILE.npz, or ship a recipe "
            f"{Path(model_path).with_suffix('.gen.yaml').name} beside the model",
            filename=str(model_path),
        )
    inst, train, test = _instance_and_data(model_path, data, test_file, test_file, objective)
    test = test if test is not None else train
    if isinstance(test, ScenarioData):
        return _eval_scenarios(inst, checkpoint, test, test_file, device=device, console=console)
    predictor = load_checkpoint(checkpoint, inst).to(device)
    first = next((m for m in predictor.modules() if isinstance(m, nn.Linear)), None)
    if first is not None:
        _check_features(test, first.in_features, test_file)
    from .metrics import normalized_regret
    from .oracle import Oracle

    oracle = Oracle(inst)
    test.solved(oracle)
    import torch

    with torch.no_grad():
        theta_hat = predictor(torch.as_tensor(test.features, dtype=torch.float32,
                                              device=device)).double().cpu()
    regret = normalized_regret(oracle, theta_hat.numpy(), test.theta, test.w, test.z)
    kind = data_regret_kind(test.z)
    console.print(f"{REGRET_LABELS[kind]}: [bold]{regret:.4f}[/bold] on {len(test)} samples")
    return {"regret": regret, "regret_kind": kind, "samples": len(test),
            "checkpoint": str(checkpoint)}


def _eval_scenarios(inst, checkpoint: Path, test: ScenarioData, test_file, *, device: str,
                    console: Console) -> dict:
    """`dfl eval` for a model with `uncertain` params: the saved model decides with the S and
    sampling seed it was trained with, so the regret is the one `dfl train` reported (on the
    device it was trained on: another device's generator draws other scenarios)."""
    trainer = ScenarioTrainer.from_checkpoint(checkpoint, inst, device=device, console=console)
    _check_features(test, trainer.model.n_features, test_file)
    result = {"regret": trainer.risk_regret(test), **_scenario_fields(trainer, test),
              "loss": trainer.loss_name, "samples": len(test), "checkpoint": str(checkpoint)}
    at = f" at α = {result['alpha']}" if result["alpha"] is not None else ""
    console.print(f"{result['metric']}{at} ({result['true_scenarios']} true scenarios per "
                  f"sample): [bold]{result['regret']:.4f}[/bold] on {len(test)} samples")
    return result


INSTANCE_SUFFIXES = (".json", ".yaml", ".yml")


def generate_command(problem: str, out_file: Path, instance: Path | None, *, num_data: int,
                     features: int, deg: int, noise: float, seed: int, console: Console,
                     grid: str | None = None, items: int | None = None, dims: int | None = None,
                     assets: int | None = None) -> None:
    """`dfl generate`. The size options one kind takes (None: not given, the generator's
    default) are refused for the others: `--grid 3x3` on a knapsack would read as if set."""
    args: dict = {"num_data": num_data, "num_features": features, "deg": deg, "seed": seed}
    args.update(_size_args(problem, {"--grid": grid, "--items": items, "--dims": dims,
                                     "--assets": assets}))
    for noise_arg in ("noise_width", "noise_level", "noise"):  # each generator names its own
        if noise_arg in _arguments(problem):
            args[noise_arg] = noise
            break
    if Path(out_file).suffix != ".npz":
        raise DflError(f"--out writes an .npz training file: {out_file}")
    checked_output(out_file, "--out")
    checked_output(instance, "--instance")
    refuse_overwriting({"--out": out_file, "--instance": instance}, {})
    if instance is not None and Path(instance).suffix.lower() not in INSTANCE_SUFFIXES:
        # it was written as JSON whatever its name: over a model given by mistake
        # (`--instance knap.opt`), or as an .npz that no reader could then open
        raise DflError(f"--instance writes the instance as JSON or YAML: {instance}",
                       hint="name it " + ", ".join(f"*{s}" for s in INSTANCE_SUFFIXES))
    data = run_generator(problem, args)
    write_atomic(Path(out_file), lambda f: np.savez(f, **data.arrays()))
    if instance is not None:
        import json

        text = json.dumps(data.instance)
        if Path(instance).suffix.lower() != ".json":
            import yaml

            text = yaml.safe_dump(json.loads(text), sort_keys=False)
        write_atomic(Path(instance), lambda f: f.write(text.encode()))
    console.print(f"wrote {num_data} samples to {out_file}"
                  + (f" and the instance to {instance}" if instance else ""))
