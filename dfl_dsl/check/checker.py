"""Static checks of a parsed model: names and scopes, types, index arity, shapes, DCP curvature
and sign, and the DPP-style rule that `predicted`/`uncertain` params enter affinely.

Every node's `Info` is recorded (keyed by node identity) for the classifier and the binder.
"""

from __future__ import annotations

from .. import ast
from ..errors import DflError
from .expressions import ExpressionRules
from .info import Info
from .sets import SetRules
from .statements import StatementRules
from .symbols import Symbol


class Checker(StatementRules, SetRules, ExpressionRules):
    def __init__(self, model: ast.Model) -> None:
        self.model = model
        self.symbols: dict[str, Symbol] = {}
        self.infos: dict[int, Info] = {}
        self.objective: ast.Objective | None = None
        self.constraints: list[ast.Constraint] = []
        self.constraint_infos: dict[str, Info] = {}
        self._sense = "minimize"
        self._current: ast.Statement | None = None  # the statement being checked

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        for stmt in self.model.statements:
            if isinstance(stmt, ast.ModelDecl):
                if stmt is not self.model.statements[0]:
                    raise DflError("`model NAME;` must be the first statement", stmt.pos)
                continue
            self._declare(stmt)
            self._current = stmt
            handler = getattr(self, "_" + type(stmt).__name__)
            try:
                handler(stmt)
            except RecursionError:  # the parser caps nesting; this is a last line of defence
                raise DflError(
                    "this statement is nested too deeply to check", stmt.pos
                ) from None
        self._current = None

    def _declare(self, stmt: ast.Statement) -> None:
        name = stmt.name
        if name in self.symbols:
            first = self.symbols[name]
            raise DflError(
                f"`{name}` is declared twice",
                stmt.pos,
                hint=f"the first declaration ({first.kind}) is on line {first.line}",
            )
        if isinstance(stmt, ast.Objective) and self.objective is not None:
            raise DflError(
                "a model has at most one objective",
                stmt.pos,
                hint=f"`{self.objective.name}` on line {self.objective.pos.line} is the "
                "objective already",
            )

    def info(self, node: ast.Node) -> Info:
        return self.infos[id(node)]
