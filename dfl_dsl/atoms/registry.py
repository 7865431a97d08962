"""The one table of atoms: the checker, the evaluator, the reductions and the backends look
an atom up here by name. Each family is a module of this package that lists its atoms in
`ATOMS`; adding an atom is one module and one line in `FAMILIES`."""

from __future__ import annotations

from importlib import import_module

from .base import Atom

FAMILIES = (
    "absolute",
    "smooth",
    "quadratic",
    "extremes",
    "norms",
    "linear",
    "constants",
    "risk",
    "huber",
    "log_sum_exp",
    "rounding",
    "trigonometric",
    "rising",
    "random",
    "reach",
)

ATOMS: dict[str, Atom] = {atom.name: atom for family in FAMILIES
                          for atom in import_module(f".{family}", __package__).ATOMS}
# the functions a model may call by name (`power` is written `^`)
FUNCTIONS: dict[str, Atom] = {name: atom for name, atom in ATOMS.items() if atom.written}
