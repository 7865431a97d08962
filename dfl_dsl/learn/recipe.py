"""A model's shipped data recipe: `MODEL.gen.yaml` beside `MODEL.opt` names a generator and
its arguments, so `dfl train MODEL.opt` works without any data files."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

from ..errors import DflError
from ..generators import GENERATORS
from ..generators.pyepo_compatible import GeneratedData


@dataclass
class Recipe:
    generator: str
    args: dict
    train: int
    path: Path

    def generate(self) -> tuple[GeneratedData, GeneratedData]:
        data = run_generator(self.generator, self.args, str(self.path))
        if not 0 < self.train < len(data.features):
            raise DflError(
                f"`train: {self.train}` must be between 1 and num_data - 1", filename=str(self.path)
            )
        return data.split(self.train)


def find_recipe(model_path: Path) -> Recipe | None:
    for suffix in (".gen.yaml", ".gen.yml", ".gen.json"):
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
    if isinstance(train, bool) or not isinstance(train, int):
        raise DflError(f"a data recipe's `train` is a number of samples, got {train!r}",
                       filename=str(path))
    return Recipe(str(values["generator"]), dict(args), train, path)


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
