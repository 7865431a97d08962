"""A parsed and checked model: the front end's product, ready to bind data."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import ast
from .check import Checker, ModelClass, classify
from .check.symbols import Indexed, SetSymbol, Symbol
from .errors import DflError
from .grammar.parser import parse as parse_text


@dataclass
class Model:
    """A checked `.opt` model. `bind(data)` evaluates its sets and params into an Instance."""

    ast: ast.Model
    checker: Checker
    klass: ModelClass

    @property
    def filename(self) -> str:
        return self.ast.filename

    @property
    def source(self) -> str:
        return self.ast.source

    @property
    def name(self) -> str:
        first = self.ast.statements[0] if self.ast.statements else None
        if isinstance(first, ast.ModelDecl):
            return first.name
        return Path(self.filename).stem

    @property
    def symbols(self) -> dict[str, Symbol]:
        return self.checker.symbols

    def of_kind(self, kind: str) -> list[Symbol]:
        return [s for s in self.symbols.values() if s.kind == kind]

    @property
    def sets(self) -> list[SetSymbol]:
        return [s for s in self.of_kind("set") if isinstance(s, SetSymbol)]

    @property
    def params(self) -> list[Indexed]:
        return [s for s in self.of_kind("param") if isinstance(s, Indexed)]

    @property
    def variables(self) -> list[Indexed]:
        return [s for s in self.of_kind("var") if isinstance(s, Indexed)]

    @property
    def objective(self) -> ast.Objective | None:
        """The objective solved: the one selected, else the first."""
        return self.checker.objective

    @property
    def objectives(self) -> list[ast.Objective]:
        """Every objective the model declares, in order."""
        return self.checker.objectives

    def select(self, objective: str | None) -> Model:
        """The same model solving the objective named `objective` (checked and classified
        again: the class follows the objective). None or the current one: this model."""
        if objective is None or (self.objective is not None
                                 and objective == self.objective.name):
            return self
        other = check(self.ast, objective)
        return replace(self, checker=other.checker, klass=other.klass)  # (the rest: kept)

    @property
    def constraints(self) -> list[ast.Constraint]:
        return self.checker.constraints

    @property
    def hash(self) -> str:
        """Identifies the model text (checkpoints refuse a model they weren't trained on)."""
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def bind(self, data: Any, *, data_name: str | None = None, objective: str | None = None):
        """Evaluate sets, params and indices from `data` (a path or a mapping); `objective`
        names the objective to solve (default: the first)."""
        from .bind import bind

        return bind(self.select(objective), data, data_name=data_name)


def check(tree: ast.Model, objective: str | None = None) -> Model:
    """Check and classify a parsed model, for the objective named `objective` (default: the
    first one)."""
    checker = Checker(tree, objective)
    try:
        checker.run()
        klass = classify(checker)
    except DflError as exc:
        raise exc.located(tree.filename, tree.source) from None
    return Model(tree, checker, klass)


def parse(text: str, filename: str = "<string>", objective: str | None = None) -> Model:
    """Parse and check model text."""
    return check(parse_text(text, filename), objective)


def load(path: str | Path, objective: str | None = None) -> Model:
    """Read, parse and check a `.opt` file (for the objective named `objective`)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise DflError(f"can't read model file: {exc.strerror}", filename=str(path)) from None
    except UnicodeDecodeError:
        raise DflError("the model file is not UTF-8 text", filename=str(path)) from None
    return parse(text, str(path), objective)
