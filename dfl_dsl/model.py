"""A parsed and checked model: the front end's product, ready to bind data."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import ast
from .check import Checker, ModelClass, classify
from .check.symbols import Indexed, SetSymbol, Symbol
from .data_source import DataSource
from .errors import DflError, ModelWarning
from .grammar import script_tail
from .grammar.parser import parse as parse_text


@dataclass
class Model:
    """A checked `.opt` (or AMPL `.mod`) model. `bind(data)` evaluates its sets and params
    into an Instance. `data`: the data written in the model file after a `data;` line."""

    ast: ast.Model
    checker: Checker
    klass: ModelClass
    data: DataSource | None = None
    # sets and params declared after `solve;` (not read): data for them is not an error
    after_solve: frozenset[str] = frozenset()

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

    def bind(self, data: Any = None, *, data_name: str | None = None,
             objective: str | None = None):
        """Evaluate sets, params and indices from `data` (a path or a mapping) and the model
        file's own data (`data;`), which `data` overrides name by name; `objective` names the
        objective to solve (default: the first)."""
        from .ampl_data import model_schema
        from .bind import bind
        from .data import load_data  # (numpy and scipy: not for `dfl check` without data)

        source = load_data(data, data_name, model_schema(self))
        if self.data is not None:
            source = self.data if data is None else Layered.over(self.data, source)
        return bind(self.select(objective), source, data_name=data_name)


@dataclass
class Layered(DataSource):
    """A model file's data under a data file's: a name the data file gives replaces the model
    file's whole (entries aren't merged: a param's entries come from one place), so a model
    that carries its data reruns unchanged on other data. Errors point into the file that
    gave the name."""

    parts: tuple[DataSource, ...] = ()

    @staticmethod
    def over(below: DataSource, above: DataSource) -> Layered:
        defaults = {k: v for k, v in below.defaults.items() if k not in above.values}
        return Layered({**below.values, **above.values}, above.filename, above.text,
                       defaults={**defaults, **above.defaults}, parts=(above, below))

    def error(self, message: str, key: str | None = None, hint: str | None = None,
              at: Any = None):
        part = next((p for p in self.parts if key in p.values), self.parts[0])
        return part.error(message, key, hint, at)


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
    """Parse and check model text (for the objective named `objective`, default the first).
    As GLPK's and AMPL's published models are written, `solve;` may end the model, output
    statements (`printf`, `display`, `for`) may stand in it or after `solve;` (not run: a
    `ModelWarning` counts them), and a `data;` statement starts the data part (AMPL data
    statements, read with the model's widths and reported at its lines in the same file)."""
    try:
        parts = script_tail.split(text)
    except DflError as exc:
        raise exc.located(filename, text) from None
    note = script_tail.not_run_message(parts, text)
    if note is not None:
        warnings.warn(ModelWarning(note.located(filename, None).format("warning")), stacklevel=2)
    body = text if parts.model_end == len(text) and not parts.skipped else (
        script_tail.model_text(text, parts))
    model = check(parse_text(body, filename), objective)
    model.after_solve = parts.declared_after_solve
    if parts.data_start is not None:
        from .ampl_data import model_schema, parse_dat

        model.data = parse_dat(text, filename, model_schema(model), start=parts.data_start)
    return model


def load(path: str | Path, objective: str | None = None) -> Model:
    """Read, parse and check a `.opt` (or `.mod`) file (for the objective named
    `objective`)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise DflError(f"can't read model file: {exc.strerror}", filename=str(path)) from None
    except UnicodeDecodeError:
        raise DflError("the model file is not UTF-8 text", filename=str(path)) from None
    return parse(text, str(path), objective)
