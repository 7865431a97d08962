"""The one table of atoms: the checker, the evaluator, the reductions and the backends look
an atom up here by name. Adding an atom is one family module and one line below."""

from __future__ import annotations

from . import absolute, constants, extremes, linear, norms, quadratic, risk, smooth
from .base import Atom

_ALL: list[Atom] = [
    absolute.Abs(), absolute.Pos(),
    smooth.Sqrt(), smooth.Log(), smooth.Log1p(), smooth.Exp(), smooth.Power(),
    quadratic.SumSquares(), quadratic.QuadForm(),
    extremes.Extreme("max"), extremes.Extreme("min"), norms.Nnz(),
    norms.Norm1(), norms.Norm2(), norms.NormInf(),
    linear.Sum(), linear.Trace(), linear.Diag(),
    *(constants.Constant(name) for name in ("eye", "ones", "zeros")),
    *(risk.Risk(name) for name in ("mean", "cvar", "worst")),
]

ATOMS: dict[str, Atom] = {atom.name: atom for atom in _ALL}
# the functions a model may call by name (`power` is written `^`)
FUNCTIONS: dict[str, Atom] = {name: atom for name, atom in ATOMS.items() if atom.written}
