"""bind(model, data) -> Instance: every set, param, index and bound evaluated to numpy.

Declarations are bound in file order; each param is checked against its declared checks
(`>= e`, `int`, `psd`, `in SET`, ...) and a failure names the param, the index and the value.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np

from . import ast
from .ampl_data import model_schema
from .bind_sets import SetBinding
from .bound import BoundInstance
from .data import NO_DATA, DataSource, load_data, to_entries
from .errors import DataError, DataWarning, DflError, did_you_mean
from .evaluate.entities import Domain, Entity
from .evaluate.evaluator import Context, Evaluator
from .evaluate.frame import Frame
from .evaluate.lazy import fill_lazily, reads_itself
from .instance import CheckedModel, Instance
from .param_checks import Breach, elementwise_breach, first_breach, per_entry


def bind(model: CheckedModel, data: Any, *, data_name: str | None = None) -> BoundInstance:
    source = load_data(data, data_name, model_schema(model))
    _undeclared_names(model, source)
    binder = _Binder(model, source)
    try:
        binder.run()
    except DataError:
        raise
    except DflError as exc:
        raise exc.located(model.filename, model.source) from None
    inst = BoundInstance(model, binder.ctx, binder.evaluator, binder.constraint_frames, source)
    _warn_misspelled_keys(inst)
    if model.klass.psd_at_bind:  # a quadratic objective only its data can show convex
        from .compile.convexity import check_objective_psd

        check_objective_psd(inst)
    return inst


def _undeclared_names(model: CheckedModel, source: DataSource) -> None:
    """A located error for a name in an AMPL data file that the model has no set or param for,
    before binding: AMPL stops there, and reading on would leave the param it misspells at its
    default (a wrong answer with no error). JSON, YAML and npz keys the model doesn't read only
    warn (below): such a file may be shared by several models (docs/language.md §12)."""
    declared = [s.name for s in model.symbols.values() if s.kind in ("set", "param")]
    known = set(declared) | model.after_solve
    for part in getattr(source, "parts", (source,)):
        for key in part.values if part.names_from_model else ():
            if key in known:
                continue
            symbol = model.symbols.get(key)
            if symbol is not None:
                a = "an" if symbol.kind[0] in "aeiou" else "a"
                raise part.error(f"`{key}` is {a} {symbol.kind} in {model.filename}, and a "
                                 "data file gives only sets and params", key,
                                 hint="remove its data")
            raise part.error(f"`{key}` is not declared in {model.filename}", key,
                             hint=did_you_mean(key, declared)
                             or f"declare `{key}` in the model, or remove its data")


def _warn_misspelled_keys(inst: Instance) -> None:
    """A `DataWarning` for each data key the model doesn't read that looks like a typo of a
    set or param the data leaves out: that one then took its default (or its formula), a wrong
    answer with no error. Keys like no left-out name stay silent — shared data files are fine."""
    source = inst.source
    left_out = [s.name for s in inst.model.symbols.values()
                if s.kind in ("set", "param") and s.name not in source.values]
    for key in inst.unknown_data_keys():
        hint = did_you_mean(key, left_out)
        if hint is not None:
            warning = source.error(f"the model has no set or param `{key}`, so this data is "
                                   "not used", key, hint=hint)
            warnings.warn(DataWarning(warning.format("warning")), stacklevel=3)


class _Binder(SetBinding):
    def __init__(self, model, source: DataSource) -> None:
        self.model = model
        self.source = source
        self.ctx = Context()
        self.evaluator = Evaluator(self.ctx)
        self.constraint_frames: dict[str, Frame] = {}
        self._nx = 0
        self._thetas: list[Entity] = []

    @cached_property
    def _names_read(self) -> frozenset[str]:
        """The names the model's statements read: a param none reads needs no value (as in
        MathProg, which computes a param where it is first read). A set the data gives doesn't
        read its `default` (GLPK's graph: `set V, default 1..n;` with V in the data needs no n)."""
        given = self.source.values
        statements = [replace(stmt, default=None) if isinstance(stmt, ast.SetDecl)
                      and stmt.default is not None and stmt.name in given else stmt
                      for stmt in self.model.ast.statements]
        return frozenset(node.id for stmt in statements for node in ast.walk(stmt)
                         if isinstance(node, ast.Name))

    def run(self) -> None:
        for stmt in self.model.ast.statements:
            handler = getattr(self, "_" + type(stmt).__name__, None)
            if handler is not None:
                try:
                    handler(stmt)
                except MemoryError:  # `set S = 1..n` with n = 10^12 from a data typo
                    raise DflError(
                        f"out of memory binding `{stmt.name}`: its sets or shape are too large",
                        stmt.pos, hint="check the sizes the data gives") from None
        self._same_scenario_counts()
        offset = self._nx
        for entity in self._thetas:
            entity.offset = offset
            offset += entity.size
        self.ctx.width = offset

    def _same_scenario_counts(self) -> None:
        """Uncertain params are drawn together, scenario by scenario: data that gives them
        different counts can't be solved, and `dfl check --data` should say so too."""
        given = [(e.name, e.extra["scenarios"].shape[0]) for e in self._thetas
                 if "scenarios" in e.extra]
        for name, count in given[1:]:
            if count != given[0][1]:
                raise self.source.error(
                    "every uncertain param needs the same number of scenarios: "
                    f"`{given[0][0]}` has {given[0][1]}, `{name}` has {count}", name)

    # ------------------------------------------------------------------ declarations
    def _ParamDecl(self, stmt: ast.ParamDecl) -> None:
        domain = self.evaluator.domain(stmt.index)
        shape_style = isinstance(stmt.index, ast.ShapeIndex)
        if stmt.is_predicted or stmt.is_uncertain:
            self._theta(stmt, domain, shape_style)
            return
        entity = Entity(stmt.name, "data", stmt, domain, elem=stmt.is_element,
                        shape_style=shape_style)
        raw = self.source.values.get(stmt.name)
        if stmt.value is not None:
            if raw is not None:
                raise self.source.error(
                    f"param `{stmt.name}` is computed in the model (`=`); remove it from the data",
                    stmt.name,
                )
            entity.missing = np.ones(domain.n, dtype=bool)
            entity.data = self._computed(entity, stmt.value, entity.missing)
            model_made = np.ones(domain.n, dtype=bool)
        elif raw is not None:
            model_made = None
            entity.data, entity.missing = to_entries(
                self.source, stmt.name, raw, domain, entity.elem
            )
        else:
            model_made = None
            entity.data = np.zeros(domain.n, dtype=np.int64 if entity.elem else float)
            entity.missing = np.ones(domain.n, dtype=bool)
            if stmt.default is None and stmt.name in self._names_read:
                raise self._missing(stmt, "param")
        if stmt.default is not None and entity.missing.any():
            model_made = entity.missing.copy()
            entity.data = self._computed(entity, stmt.default, entity.missing)
        if not entity.missing.any():
            entity.missing = None  # every entry has a value: lookups skip the check
        self.ctx.entities[stmt.name] = entity
        self._check_values(stmt, entity, model_made=model_made)

    def _computed(self, entity: Entity, node: ast.Expr, todo: np.ndarray) -> np.ndarray:
        """`entity`'s data with `node` (its value or default) computed where `todo` holds: as
        one array, or entry by entry where it reads the param's own entries (MathProg's
        recursive params, evaluate/lazy.py); afterwards no entry is missing."""
        if isinstance(entity.decl.index, ast.SetIndex) and reads_itself(entity.name, node):
            if entity.data is None:
                entity.data = np.zeros(entity.domain.n, np.int64 if entity.elem else float)
            self.ctx.entities[entity.name] = entity
            fill_lazily(self.evaluator, entity, node, todo)
            return entity.data
        computed = self.evaluator.value(node, entity.domain.frame)
        values = per_entry(computed, entity.domain, node, entity.elem)
        data = values if todo.all() else np.where(todo, values, entity.data)
        entity.missing = np.zeros(entity.domain.n, dtype=bool)
        return data

    def _theta(self, stmt: ast.ParamDecl, domain: Domain, shape_style: bool) -> None:
        entity = Entity(stmt.name, "theta", stmt, domain, shape_style=shape_style)
        raw = self.source.values.get(stmt.name)
        if raw is not None:
            if stmt.is_uncertain:
                scenarios = raw if isinstance(raw, (list, np.ndarray)) else None
                if scenarios is None or len(scenarios) == 0:
                    raise self.source.error(
                        f"uncertain param `{stmt.name}`: give a list of scenarios, each with the "
                        "param's shape",
                        stmt.name,
                    )
                rows = []
                for k, scenario in enumerate(scenarios):
                    try:
                        values, missing = to_entries(
                            self.source, stmt.name, scenario, domain, False
                        )
                    except DataError as exc:
                        exc.message = exc.message.replace(
                            f"param `{stmt.name}`", f"param `{stmt.name}` (scenario {k})", 1
                        )
                        raise
                    if missing.any():
                        raise self.source.error(
                            f"uncertain param `{stmt.name}`: scenario {k} misses "
                            f"{domain.label(int(np.nonzero(missing)[0][0]))}",
                            stmt.name,
                        )
                    rows.append(values)
                entity.extra["scenarios"] = np.stack(rows)
            else:
                values, missing = to_entries(self.source, stmt.name, raw, domain, False)
                if missing.any():
                    raise self.source.error(
                        f"predicted param `{stmt.name}` misses a value for "
                        f"{domain.label(int(np.nonzero(missing)[0][0]))}",
                        stmt.name,
                    )
                entity.extra["value"] = values
            given = entity.extra.get("value", entity.extra.get("scenarios"))
            self._check_finite_theta(stmt, entity, given)
            self._check_values(stmt, entity, given)
        self._thetas.append(entity)
        self.ctx.entities[stmt.name] = entity

    def _check_finite_theta(self, stmt: ast.ParamDecl, entity: Entity, given) -> None:
        """A predicted or uncertain param stays a symbol through compile, so the compile-time
        refusal of an infinite coefficient (`compile/expand`) never sees its values: they
        reach the solver at solve time (CVXPY: "Problem data contains NaN or Inf"; HiGHS:
        `optimal` with objective inf). A network predicts finite numbers; so must the data."""
        rows = given.reshape(-1, entity.domain.n) if given.ndim == 2 else given.reshape(1, -1)
        bad = ~np.isfinite(rows)
        if bad.any():
            kind = "uncertain" if stmt.is_uncertain else "predicted"
            hint = ("`inf` in the data can only leave a bound open; a "
                    f"{kind} param enters the problem as a symbol, which may be a coefficient")
            breach = elementwise_breach(rows, bad, f"isn't finite (a {kind} param's values "
                                        "must be)", stmt.pos, hint=hint)
            self._fail(stmt.name, entity, len(rows), breach)

    def _VarDecl(self, stmt: ast.VarDecl) -> None:
        domain = self.evaluator.domain(stmt.index)
        entity = Entity(stmt.name, "var", stmt, domain, offset=self._nx,
                        shape_style=isinstance(stmt.index, ast.ShapeIndex))
        n = domain.n
        lower = np.full(n, -np.inf)
        upper = np.full(n, np.inf)
        integer = np.zeros(n, dtype=bool)
        for attr in stmt.attrs:
            if attr.kind == "binary":
                lower, upper = np.maximum(lower, 0.0), np.minimum(upper, 1.0)
                integer[:] = True
            elif attr.kind == "integer":
                integer[:] = True
            elif attr.kind in (">=", "box"):
                np.maximum(lower, self._bound(attr.operands[0], domain), out=lower)
                if attr.kind == "box":
                    np.minimum(upper, self._bound(attr.operands[1], domain), out=upper)
            elif attr.kind == "<=":
                np.minimum(upper, self._bound(attr.operands[0], domain), out=upper)
            elif attr.kind == "init":  # AMPL's `:= e`: a start point for the backends
                v = self.evaluator.number(attr.operands[0], domain.frame)
                entity.extra["start"] = per_entry(v, domain, attr.operands[0], False,
                                                  "the initial value", "the variable")
        entity.lower, entity.upper, entity.integer = lower, upper, integer
        if stmt.domain == "stiefel" and not domain.shape[0] >= domain.shape[1] >= 1:
            raise DflError(  # (r = 0: no column to optimize, and the backends need one)
                f"a stiefel variable X[n, r] needs n >= r >= 1; `{stmt.name}` is "
                f"{domain.shape[0]} x {domain.shape[1]}",
                stmt.pos,
            )
        # `var x >= lb` with lb = inf: no number meets it (HiGHS answered `optimal` with no
        # point, CVXPY `unbounded`); inf can only leave a side open
        if n and (lower.max() == np.inf or upper.min() == -np.inf):  # (no mask at n = 10⁶)
            bad = int(np.nonzero((lower == np.inf) | (upper == -np.inf))[0][0])
            side, value = ("lower", lower[bad]) if lower[bad] == np.inf else ("upper", upper[bad])
            raise DflError(
                f"variable `{stmt.name}{entity.entry_label(bad)}` has the {side} bound "
                f"{value:g}: no number meets it",
                stmt.pos, hint="`inf` in the data can only leave a bound open",
            )
        if np.any(lower > upper):
            bad = int(np.nonzero(lower > upper)[0][0])
            raise DflError(
                f"variable `{stmt.name}{entity.entry_label(bad)}` has lower bound "
                f"{lower[bad]:g} above its upper bound {upper[bad]:g}",
                stmt.pos,
            )
        self._nx += n
        self.ctx.entities[stmt.name] = entity

    def _bound(self, node: ast.Expr, domain: Domain) -> np.ndarray:
        v = self.evaluator.number(node, domain.frame)
        return per_entry(v, domain, node, False, "the bound", "the variable", one_stays_one=True)

    def _ExprDecl(self, stmt: ast.ExprDecl) -> None:
        domain = self.evaluator.domain(stmt.index)
        self.ctx.entities[stmt.name] = Entity(stmt.name, "expr", stmt, domain)

    def _Constraint(self, stmt: ast.Constraint) -> None:
        if stmt.index is None:
            self.constraint_frames[stmt.name] = Frame.root()
        elif isinstance(stmt.index, ast.ShapeIndex):
            self.constraint_frames[stmt.name] = self.evaluator.domain(stmt.index).frame
        else:
            self.constraint_frames[stmt.name] = self.evaluator.index(stmt.index, Frame.root())

    # ------------------------------------------------------------------ checks
    def _missing(self, stmt: ast.SetDecl | ast.ParamDecl, kind: str) -> DataError:
        """A data mistake reported at the declaration in the model (the data has no place to
        point at); the message names the data file where the value was looked for."""
        name = stmt.name
        no_file = self.source.filename == NO_DATA
        where = ("no data file was given" if no_file
                 else f"{self.source.filename} has no \"{name}\"")
        hint = did_you_mean(name, [k for k in self.source.values])
        if hint is None and self.source.values:
            hint = f"declare a `default`, or add \"{name}\" to the data"
        elif hint is None and no_file:
            hint = "the model reads data: give a data file (`--data FILE`)"
        return DataError(f"{kind} `{name}` has no value: {where}", stmt.pos, hint=hint,
                         filename=self.model.filename, source=self.model.source)

    def _check_values(self, stmt: ast.ParamDecl, entity: Entity, values=None,
                      model_made: np.ndarray | None = None) -> None:
        """A failed check is reported in the data file, or in the model where the value is the
        model's own: computed (`=`) or filled in by the `default` (`model_made` entries)."""
        data = entity.data if values is None else values
        rows = data.reshape(-1, entity.domain.n) if data.ndim == 2 else data.reshape(1, -1)
        # entries the data leaves out (and no default fills) have no value to check
        given = ~entity.missing if values is None and entity.missing is not None else True
        breach = first_breach(self.evaluator, stmt, entity, rows, given)
        if breach is not None:
            self._fail(stmt.name, entity, len(rows), breach, model_made)

    def _fail(self, name, entity, n_rows: int, breach: Breach, model_made=None) -> None:
        where = "" if breach.entry is None else entity.entry_label(breach.entry)
        if n_rows > 1:
            where += f" in scenario {breach.row}"
        message = breach.said(f"param `{name}`{where}")
        if model_made is not None and (model_made.all() if breach.entry is None
                                       else model_made[breach.entry]):
            raise DflError(message, _made_by(entity.decl).pos, hint=breach.hint)
        raise self.source.error(message, name, hint=breach.hint)


def _made_by(stmt: ast.ParamDecl) -> ast.Expr:
    """The expression a param's model-made values come from: its formula, else its default."""
    return stmt.value if stmt.value is not None else stmt.default
