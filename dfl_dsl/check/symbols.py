"""The model's declared names (sets, params, vars, exprs, objective, constraints) and the
dummies an index binds."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ast
from .info import Dim, Info


@dataclass
class Symbol:
    name: str
    decl: ast.Statement
    kind: str  # "model" | "set" | "param" | "var" | "expr" | "objective" | "constraint"

    @property
    def line(self) -> int:
        return self.decl.pos.line


@dataclass
class SetSymbol(Symbol):
    dim: int | None = None  # tuple width; None until data says
    integer: bool = False  # elements known to be ints (a range)
    index: ast.SetIndex | None = None  # `set S{I}`: one set per element of I, written S[i]
    arity: int | None = 0  # subscripts an indexed set takes


@dataclass
class Indexed(Symbol):
    """A param, var or expr, scalar or over an index."""

    index: ast.Index | None = None
    arity: int | None = 0  # subscripts needed for one entry; None = known from data only
    shape: tuple[Dim, ...] = ()  # shape of the whole array (numpy style)
    element: Info = field(default_factory=Info)  # facts about one entry

    @property
    def shape_style(self) -> bool:
        return isinstance(self.index, ast.ShapeIndex)


@dataclass(frozen=True)
class Dummy:
    """A name bound by an index: an element of `set_name` (or of an anonymous set)."""

    name: str
    info: Info
    item: ast.IndexItem
