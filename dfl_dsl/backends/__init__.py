"""Backends, each declaring the model classes it accepts, in order of preference."""

from __future__ import annotations

from importlib import import_module

# name -> (module, classes it accepts)
REGISTRY: dict[str, tuple[str, frozenset[str]]] = {}

# for each class, the backends to try, best first (only registered ones are offered)
PREFERENCE: dict[str, tuple[str, ...]] = {
    "LP": ("highs", "pyomo", "cvxpy"),
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


def load_backend(name: str):
    module, _ = REGISTRY[name]
    return import_module(f"{__name__}.{module}")
