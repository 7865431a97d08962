"""Backends: each states what it takes (declarations.py); a model goes to the ones a chain of
reductions reaches (chains.py), best first for its class."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import DflError
from ..seeds import check_seed
from ..words import article
from .chains import reachable
from .declarations import BY_NAME

if TYPE_CHECKING:  # (the CLI reads the declarations at start-up: nothing heavy here)
    from ..check.classify import ModelClass
    from ..instance import Instance
    from ..solution import Solution


def accepting(klass: ModelClass) -> list[str]:
    """The backends that take a model of this class, best first."""
    return [b.name for b in reachable(klass.form, klass.name)]


def pick(klass: ModelClass, requested: str = "auto") -> str:
    """The backend to use: the best for the class, or the one asked for if it can."""
    able = accepting(klass)
    if requested == "auto":
        if not able:
            raise DflError(
                f"no installed backend solves {article(klass.name)} {klass.name} model yet",
                hint="see `dfl check` for the model's class",
            )
        return able[0]
    if requested not in BY_NAME:
        raise DflError(
            f"unknown backend `{requested}`",
            hint="choose one of: auto, " + ", ".join(sorted(BY_NAME)),
        )
    if requested not in able:
        hint = f"`--backend {able[0]}` can" if able else "no installed backend can yet"
        raise DflError(
            f"backend `{requested}` doesn't accept {article(klass.name)} {klass.name} model",
            hint=hint,
        )
    return requested


def solve(inst: Instance, backend: str = "auto", *, time_limit: float | None = None,
          seed: int | None = None, **options: object) -> Solution:
    """Solve with `backend` (auto: the best for the model's class)."""
    check_seed(seed)
    try:
        name = pick(inst.klass, backend)
    except DflError as exc:
        raise exc.located(inst.model.filename, None) from None
    check_options(name, options)
    check_time_limit(time_limit)
    solve_instance = load_backend(name).solve_instance
    return _finite_or_error(solve_instance(inst, time_limit=time_limit, seed=seed, **options))


def check_time_limit(time_limit: float | None, name: str = "the time limit") -> None:
    """None (no limit) or seconds > 0 for every backend: HiGHS took a negative limit as none
    at all, Pyomo's config raised a ValueError."""
    if time_limit is not None and not time_limit > 0:  # (nan too)
        raise DflError(f"{name} must be positive, got {time_limit}",
                       hint="give seconds > 0, or no limit at all")


def _finite_or_error(sol: Solution) -> Solution:
    """A solver's answer claimed as a solution must be finite: an `optimal` objective of inf
    (coefficients beyond the solver's range, an overflow) is status `error`, not a result."""
    import numpy as np  # (loaded by then: a solver made `sol`)

    if not sol.ok:
        return sol
    values = [] if sol.objective is None else [sol.objective]
    if np.all(np.isfinite(values)) and (sol.x is None or np.all(np.isfinite(sol.x))):
        return sol
    sol.message = ("the solver's answer is not finite (numbers beyond its range?)"
                   + (f"; it said: {sol.message}" if sol.message else ""))
    sol.status, sol.objective, sol.x, sol.duals = "error", None, None, None
    return sol


def load_backend(name: str) -> ModuleType:
    return import_module(f"{__name__}.{BY_NAME[name].module}")


def check_options(backend: str, options: Mapping[str, object]) -> None:
    """Refuse the options a backend does not declare: an option of another backend (`--write`
    is pyomo's, `--variant` Frank–Wolfe's) or a misspelled one would otherwise be ignored
    silently, or reach the solver as a TypeError."""
    takes = BY_NAME[backend].option_names
    for name in options:
        if name not in takes:
            raise DflError(f"backend `{backend}` takes no option `{name}`",
                           hint="its options: " + ", ".join(takes) if takes else
                           "it takes only a time limit and a seed")
