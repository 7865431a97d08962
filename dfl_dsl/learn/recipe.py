"""A data recipe names a generator and its arguments: shipped as `MODEL.gen.yaml` beside
`MODEL.opt`, `dfl train MODEL.opt` works without any data files; given as `--train
FILE.gen.yaml`, it names another configuration of the same model (PyEPO's tutorial's, say).
`train: N` keeps the first N samples for training and the rest for testing; with
`split_seed: S` the split is shuffled first, as scikit-learn's train_test_split(test_size=rest,
random_state=S) shuffles it (the split PyEPO's notebooks use)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DflError
from ..generators import GENERATORS
from ..generators.pyepo_compatible import GeneratedData


@dataclass
class Recipe:
    generator: str
    args: dict
    train: int
    path: Path
    split_seed: int | None = None

    def generate(self) -> tuple[GeneratedData, GeneratedData]:
        data = run_generator(self.generator, self.args, str(self.path))
        n = len(data.features)
        if not 0 < self.train < n:
            raise DflError(
                f"`train: {self.train}` must be between 1 and num_data - 1", filename=str(self.path)
            )
        if self.split_seed is not None:  # train_test_split: test = perm[:rest], train after
            perm = np.random.RandomState(self.split_seed).permutation(n)
            order = np.concatenate([perm[n - self.train:], perm[: n - self.train]])
            data = GeneratedData(data.features[order],
                                 {k: v[order] for k, v in data.targets.items()}, data.instance)
        return data.split(self.train)


RECIPE_SUFFIXES = (".gen.yaml", ".gen.yml", ".gen.json")


def is_recipe(path: Path | str) -> bool:
    return str(path).endswith(RECIPE_SUFFIXES)


def find_recipe(model_path: Path) -> Recipe | None:
    for suffix in RECIPE_SUFFIXES:
        path = model_path.with_suffix(suffix)
        if path.exists():
            return read_recipe(path)
    return None


def read_recipe(path: Path) -> Recipe:
    from ..data import load_data

    values = load_data(path if path.suffix == ".json" else path).values
    if "generator" not in values:
        raise DflError("a data recipe names a `generator`", filename=str(path))
    args, train = values.get("args") or {}, values.get("train", 1000)
    if not isinstance(args, dict):
        raise DflError("a data recipe's `args` is a mapping of argument names to values",
                       filename=str(path))
    split_seed = values.get("split_seed")
    for key, value in (("train", train), ("split_seed", split_seed)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            what = "a number of samples" if key == "train" else "a whole number (a seed)"
            raise DflError(f"a data recipe's `{key}` is {what}, got {value!r}",
                           filename=str(path))
    return Recipe(str(values["generator"]), dict(args), train, path, split_seed)


def run_generator(name: str, args: dict, where: str | None = None) -> GeneratedData:
    """`name`'s data for `args`; a bad argument is a DflError located at `where` (the recipe
    file; None for `dfl generate`'s own options, which then read `dfl: error: ...`)."""
    if name not in GENERATORS:
        raise DflError(f"unknown generator `{name}`",
                       hint="choose one of: " + ", ".join(GENERATORS), filename=where)
    fn = GENERATORS[name]
    allowed = set(inspect.signature(fn).parameters)
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise DflError(f"generator `{name}` has no argument `{unknown[0]}`",
                       hint="its arguments: " + ", ".join(sorted(allowed)), filename=where)
    try:
        if "grid" in args:
            args = {**args, "grid": tuple(args["grid"])}
        return fn(**args)
    except (TypeError, ValueError) as exc:
        raise DflError(f"generator `{name}`: {exc}", filename=where) from None
