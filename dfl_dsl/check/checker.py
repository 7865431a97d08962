"""Static checks of a parsed model: names and scopes, types, index arity, shapes, DCP curvature
and sign, and the DPP-style rule that `predicted`/`uncertain` params enter affinely.

Every node's `Info` is recorded (keyed by node identity) for the classifier and the binder.
"""

from __future__ import annotations

from .. import ast
from ..errors import DflError, did_you_mean
from .expressions import ExpressionRules
from .info import Info
from .members import split_wanted
from .sets import SetRules
from .statements import StatementRules
from .symbols import Symbol


class Checker(StatementRules, SetRules, ExpressionRules):
    def __init__(self, model: ast.Model, objective: str | None = None) -> None:
        self.model = model
        self.symbols: dict[str, Symbol] = {}
        self.infos: dict[int, Info] = {}
        # every objective is checked; the one solved is `objective`: the one named, else the
        # first (AMPL's rule for a model with several)
        self.objectives: list[ast.Objective] = []
        self.objective: ast.Objective | None = None
        self.wanted, self.member = split_wanted(objective)  # `f[s]`: a member of an indexed f
        self.constraints: list[ast.Constraint] = []
        self.constraint_infos: dict[str, Info] = {}
        self._sense = "minimize"
        self._current: ast.Statement | None = None  # the statement being checked
        self._reductions: list[ast.Reduce] = []  # the `sum{...}`s being checked, innermost last

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
        self._select()

    def _select(self) -> None:
        """The objective to solve: the one `--objective` named (an error naming the model's
        objectives if it has none by that name), else the first."""
        if self.wanted is None:
            self.objective = self.objectives[0] if self.objectives else None
            return
        names = [o.name for o in self.objectives]
        if self.wanted not in names:
            have = ", ".join(f"`{n}`" for n in names) if names else "none"
            raise DflError(f"the model has no objective `{self.wanted}` (its objectives: "
                           f"{have})", hint=did_you_mean(self.wanted, names))
        self.objective = self.objectives[names.index(self.wanted)]

    def _declare(self, stmt: ast.Statement) -> None:
        name = stmt.name
        if name in self.symbols:
            first = self.symbols[name]
            raise DflError(
                f"`{name}` is declared twice",
                stmt.pos,
                hint=f"the first declaration ({first.kind}) is on line {first.line}",
            )

    def info(self, node: ast.Node) -> Info:
        return self.infos[id(node)]
