"""Fuzzing `dfl train` and `dfl eval` as a user calls them: a shipped example's model with a
small generated data set, then the training arrays, the files, the options, the instance data
or a saved checkpoint mutated, and the command run in this process.

Judged as a user would judge it: exit 0 (a finite regret in the JSON) or 1, or exit 2 with a
located error (`FILE[:LINE:COL]: error: ...` naming one of the inputs, or `dfl: error: ...`
for an option) and the `--save` file as it was before (absent, or its old bytes). Anything
else — exit 3, an exception, a NaN regret reported as a result, a half-written checkpoint —
is a `Crash`. benchmarks/fuzz.py runs the `train` kind by the thousand; tests/test_fuzz.py a
few.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import random
import re
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from _fuzz import EXAMPLES, Crash, _judging, mutate_data

import dfl_dsl as dfl

_DIR = Path(tempfile.mkdtemp(prefix="dfl-fuzz-train-"))
MODEL, DATA, TRAIN, TEST, CKPT, OUT = (_DIR / name for name in (
    "model.opt", "data.json", "train.npz", "test.npz", "clean.pt", "out.pt"))
TRAIN_SAMPLES, TEST_SAMPLES = 8, 4

LOSSES = ["spo+", "pfyl", "dbb", "nce", "dpo", "mse", "imle", "aimle", "listwise", "pairwise",
          "pointwise", "cave", "gen-dfl", "nll", "spo", ""]
# what a clean input trains with: a loss the case's kind of params takes
BASE_LOSSES = {"predicted": LOSSES[:8], "uncertain": ["gen-dfl", "nll", "mse", "spo+"]}
# (flag, values): each input sets a few; odd values on purpose
OPTIONS = [
    ("--epochs", ["0", "-1", "1", "2"]), ("--batch-size", ["0", "-3", "1", "3", "1000"]),
    ("--lr", ["0", "-1", "nan", "inf", "1e9", "0.1"]), ("--predictor", ["linear", "mlp", "x"]),
    ("--oracle", ["auto", "highs", "enumerate", "batched", "x"]),
    ("--optimizer", ["adam", "adamw", "sgd", "x"]), ("--weight-decay", ["-1", "0.1", "nan"]),
    ("--samples", ["0", "-1", "1", "3"]), ("--sigma", ["0", "-1", "nan", "2"]),
    ("--lambda", ["0", "-5", "20"]), ("--solve-ratio", ["0", "1.5", "-0.1", "0.5"]),
    ("--kappa", ["0", "-1", "2"]), ("--task-loss", ["regret", "l1", "mse", "x"]),
    ("--scenarios", ["0", "1", "3"]), ("--beta", ["-1", "0", "nan"]),
    ("--generative", ["flow", "vae", "x"]), ("--hidden", ["0", "-1", "4"]),
    ("--seed", ["-1", "0", str(2**70)]), ("--threads", ["0", "-1", "1"]),
    ("--device", ["cpu", "cuda", "tpu"]), ("--max-iter", ["0", "3"]),
    ("--target", ["proxy", "draws", "observed", "x"]), ("--objective", ["x", ""]),
]
_NUMERIC_ODD = [np.nan, np.inf, -np.inf, 1e308, -1e308, 0.0, 1e-320]


@dataclass(frozen=True, eq=False)
class TrainCase:
    """One example: its model text, instance data and generated train/test arrays."""
    name: str
    text: str
    data: dict
    train: dict
    test: dict
    params: str  # predicted | uncertain


@cache
def train_cases() -> tuple[TrainCase, ...]:
    """The shipped examples with a data recipe, each with a small data set of its own."""
    from dfl_dsl.learn.recipe import find_recipe, run_generator

    found = []
    for opt in sorted(EXAMPLES.glob("*/*.opt")):
        recipe = find_recipe(opt)
        if recipe is None:
            continue
        made = run_generator(recipe.generator, {**recipe.args,
                                                "num_data": TRAIN_SAMPLES + TEST_SAMPLES})
        train, test = made.split(TRAIN_SAMPLES)
        params = "uncertain" if dfl.load(opt).klass.scenarios else "predicted"
        found.append(TrainCase(opt.stem, opt.read_text(), json.loads(json.dumps(made.instance)),
                               train.arrays(), test.arrays(), params))
    return tuple(found)


@dataclass
class TrainInput:
    """What one fuzz input runs: the files' contents and the command line."""
    case: str
    text: str
    data: dict
    train: dict | bytes  # arrays, or raw bytes for a broken file
    test: dict | bytes
    args: list[str]
    old_output: bool  # a file at --save beforehand, which a failed run must leave alone
    checkpoint: bytes | None = None  # eval: the (mutated) checkpoint's bytes


def train_input(rng: random.Random, cases: tuple[TrainCase, ...] | None = None) -> TrainInput:
    """A clean case with one to three mutations, as a `train` (or, one time in five, an
    `eval` of a mutated checkpoint) command."""
    case = rng.choice(cases or train_cases())
    item = TrainInput(case.name, case.text, copy.deepcopy(case.data),
                      {k: v.copy() for k, v in case.train.items()},
                      {k: v.copy() for k, v in case.test.items()},
                      ["--loss", rng.choice(BASE_LOSSES[case.params]), "--epochs", "1"],
                      rng.random() < 0.5)
    if rng.random() < 0.2:
        item.checkpoint = _mutated_checkpoint(rng, case)
        return item
    for _ in range(1 if rng.random() < 0.6 else rng.randint(2, 3)):
        # weighted to the mutations that leave a runnable input more often: they reach deeper
        how = rng.choices(range(5), weights=[6, 1, 7, 2, 4])[0]
        if how == 0:
            _mutate_arrays(rng, item, rng.choice(["train", "test"]))
        elif how == 1:
            setattr(item, rng.choice(["train", "test"]), _broken_file(rng))
        elif how == 2:
            flag, values = rng.choice(OPTIONS)
            item.args += [flag, rng.choice(values)]
        elif how == 3:
            item.args[1] = rng.choice(LOSSES)
        else:
            item.data = mutate_data(item.data, rng)
    return item


def _mutate_arrays(rng: random.Random, item: TrainInput, which: str) -> None:
    arrays = getattr(item, which)
    if not isinstance(arrays, dict) or not arrays:
        return
    key = rng.choice(sorted(arrays))
    value = arrays[key]
    op = rng.randrange(10)
    if value.ndim == 0 and op in (3, 5):  # (a scalar from an earlier mutation: no rows)
        op = 9
    if op == 0 and value.size and value.dtype.kind in "biuf":
        value = value.astype(float)
        value.flat[rng.randrange(value.size)] = rng.choice(_NUMERIC_ODD)
    elif op == 1:
        del arrays[key]
        return
    elif op == 2:
        arrays[rng.choice([key + "s", key.upper(), "extra"])] = value
        return
    elif op == 3:
        value = value[: rng.choice([0, 1, len(value) - 1])]  # fewer rows (or none)
    elif op == 4 and value.ndim >= 2:
        value = value[:, : max(value.shape[1] - 1, 0)]  # a column fewer
    elif op == 5:
        value = np.concatenate([value, value[:, :1]], axis=1) if value.ndim >= 2 else value[:, None]
    elif op == 6:
        value = value[..., None]  # one axis more
    elif op == 7 and value.dtype.kind in "biuf":  # (a string array from before: no cast)
        with np.errstate(all="ignore"):
            value = value.astype(rng.choice([np.int64, np.bool_, np.float32, str, object]))
    elif op == 8:
        value = np.asarray(rng.choice([1.0, "x"]))  # a scalar for an array
    else:
        value = value.T
    arrays[key] = value


def _broken_file(rng: random.Random) -> bytes:
    return rng.choice([b"", b"not an npz", b"PK\x03\x04" + bytes(20), b"{\"features\": []}"])


def _mutated_checkpoint(rng: random.Random, case: TrainCase) -> bytes:
    """The bytes of a clean run's checkpoint, cut, flipped or with a field changed."""
    import torch

    blob = _clean_checkpoint(case.name)
    op = rng.randrange(4)
    if op == 0:
        return blob[: rng.randrange(len(blob))]
    if op == 1:
        flipped = bytearray(blob)
        for _ in range(rng.randint(1, 8)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped)
    state = torch.load(io.BytesIO(blob), weights_only=False)
    if not isinstance(state, dict) or not state:
        return blob
    key = rng.choice(sorted(state, key=str))
    state[key] = _odd_field(rng, state[key]) if op == 2 else None
    out = io.BytesIO()
    torch.save(state, out)
    return out.getvalue()


def _odd_field(rng: random.Random, value):
    import torch

    if isinstance(value, dict) and value:
        value = dict(value)
        inner = rng.choice(sorted(value, key=str))
        value[inner] = _odd_field(rng, value[inner])
        return value
    if isinstance(value, torch.Tensor) and value.numel():
        value = value.clone().float()
        choice = rng.randrange(3)
        if choice == 0:
            value.view(-1)[0] = float("nan")
            return value
        return value[:-1] if choice == 1 else value.unsqueeze(0)
    return rng.choice([None, "32", [1, 2], {}, -1, float("nan")])


@cache
def _clean_checkpoint(name: str) -> bytes:
    case = next(c for c in train_cases() if c.name == name)
    _write_inputs(TrainInput(case.name, case.text, case.data, case.train, case.test, [], False))
    CKPT.unlink(missing_ok=True)
    code, report = _dfl(["train", str(MODEL), "--data", str(DATA), "--train", str(TRAIN),
                         "--epochs", "1", "--save", str(CKPT)])
    if code != 0:
        raise Crash(f"the clean run of {case.name} failed (exit {code}): {report[:300]}")
    return CKPT.read_bytes()


def _write_inputs(item: TrainInput) -> None:
    MODEL.write_text(item.text)
    DATA.write_text(json.dumps(item.data))
    for path, content in ((TRAIN, item.train), (TEST, item.test)):
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            with path.open("wb") as handle:
                np.savez(handle, **content)


def _dfl(args: list[str]) -> tuple[int, str]:
    from dfl_dsl.cli import main

    stderr, stdout = io.StringIO(), io.StringIO()
    with _judging(), contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        code = main(args)
    return code, stderr.getvalue() + "\n" + stdout.getvalue()


_LOCATED = re.compile(r"(?P<file>[^\n]*?)(?::(?P<line>\d+):(?P<col>\d+))?: error: \S")


def train_judge(item: TrainInput) -> str:
    """`ok` (exit 0 with a finite regret, or exit 1) or `error` (exit 2, located, the output
    untouched); raises `Crash` otherwise."""
    _write_inputs(item)
    OUT.unlink(missing_ok=True)
    if item.old_output:
        OUT.write_bytes(b"OLD")
    inputs = {str(MODEL), str(DATA), str(TEST), "dfl"}
    if item.checkpoint is not None:
        CKPT.write_bytes(item.checkpoint)
        args = ["eval", str(MODEL), "--data", str(DATA), "--checkpoint", str(CKPT), "--test",
                str(TEST), "--json"]
        inputs.add(str(CKPT))
    else:
        args = ["train", str(MODEL), "--data", str(DATA), "--train", str(TRAIN), "--test",
                str(TEST), "--save", str(OUT), "--json", *item.args]
        inputs.add(str(TRAIN))
    code, report = _dfl(args)
    if code == 2:
        found = _LOCATED.search(report)
        if found is None or found["file"] not in inputs:
            raise Crash(f"exit 2 without a located error: {report.strip()[:400]}")
        if item.checkpoint is None:
            _output_kept(item, report)
        return "error"
    if code not in (0, 1):
        raise Crash(f"exit {code}: {report.strip()[:400]}")
    if code == 0:
        regret = _regret(report)
        if regret is not None and not math.isfinite(regret):
            raise Crash(f"exit 0 with regret {regret}: {' '.join(item.args)}")
    return "ok"


def _output_kept(item: TrainInput, report: str) -> None:
    if item.old_output and (not OUT.exists() or OUT.read_bytes() != b"OLD"):
        raise Crash(f"a failed run changed the --save file: {report.strip()[:300]}")
    if not item.old_output and OUT.exists():
        raise Crash(f"a failed run left a --save file: {report.strip()[:300]}")


def _regret(report: str) -> float | None:
    for line in reversed(report.splitlines()):
        if line.startswith("{"):
            value = json.loads(line).get("regret")
            return None if value is None else float(value)
    return None
