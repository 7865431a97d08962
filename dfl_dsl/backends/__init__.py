"""Backends, each declaring the model classes it accepts, in order of preference."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from importlib import import_module

from ..errors import DflError

# name -> (module, classes it accepts); modules are imported only when used
REGISTRY: dict[str, tuple[str, frozenset[str]]] = {
    "highs": ("highs", frozenset({"LP", "MILP", "QP"})),
    "pyomo": ("pyomo_backend", frozenset({"LP", "MILP", "QP"})),
    "cvxpy": ("cvxpy_backend", frozenset({"LP", "MILP", "QP", "SOCP"})),
    "aapga": ("aapga", frozenset({"SCM"})),
    "fw": ("fw", frozenset({"SMOOTH-POLYTOPE"})),
    "obcd": ("obcd", frozenset({"STIEFEL"})),
    "flexqp": ("flexqp", frozenset({"QP", "LP"})),
}

# for each class, the backends to try, best first (only registered ones are offered)
PREFERENCE: dict[str, tuple[str, ...]] = {
    "LP": ("highs", "pyomo", "cvxpy", "flexqp"),
    "MILP": ("highs", "pyomo", "cvxpy"),
    "QP": ("highs", "cvxpy", "pyomo", "flexqp", "fw"),
    "MIQP": (),
    "SOCP": ("cvxpy", "fw"),
    "SCM": ("aapga",),
    "STIEFEL": ("obcd",),
}


def accepting(klass) -> list[str]:
    """Registered backends that accept `klass` (a ModelClass), best first."""
    names = [b for b in PREFERENCE.get(klass.name, ()) if b in REGISTRY]
    accepted = {klass.name, *klass.tags}
    return [b for b in names if REGISTRY[b][1] & accepted]


def pick(klass, requested: str = "auto") -> str:
    """The backend to use: the best for the class, or the one asked for if it can."""
    from ..words import article

    able = accepting(klass)
    if requested == "auto":
        if not able:
            raise DflError(
                f"no installed backend solves {article(klass.name)} {klass.name} model yet",
                hint="see `dfl check` for the model's class",
            )
        return able[0]
    if requested not in REGISTRY and requested not in _PLANNED:
        raise DflError(
            f"unknown backend `{requested}`",
            hint="choose one of: auto, " + ", ".join(sorted(set(REGISTRY) | _PLANNED)),
        )
    if requested not in able:
        hint = f"`--backend {able[0]}` can" if able else "no installed backend can yet"
        raise DflError(
            f"backend `{requested}` doesn't accept {article(klass.name)} {klass.name} model",
            hint=hint,
        )
    return requested


_PLANNED = {"cvxpy", "pyomo", "highs", "flexqp", "obcd", "fw", "aapga"}


def load_backend(name: str):
    module, _ = REGISTRY[name]
    return import_module(f"{__name__}.{module}")


def check_options(backend: str, fn: Callable, options: Mapping[str, object]) -> None:
    """Refuse the options `fn` — a backend's `solve_instance`, or the function it forwards
    its options to — does not take: an option of another backend (`--write` is pyomo's,
    `--variant` Frank–Wolfe's) or a misspelled one would otherwise be ignored silently, or
    reach the solver as a TypeError. A function taking **kwargs checks where it forwards."""
    params = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    takes = sorted(name for name, p in params.items()
                   if p.kind is p.KEYWORD_ONLY and name not in ("time_limit", "seed"))
    for name in options:
        if name not in takes:
            raise DflError(f"backend `{backend}` takes no option `{name}`",
                           hint="its options: " + ", ".join(takes) if takes else
                           "it takes only a time limit and a seed")
