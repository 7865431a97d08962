"""The human-readable summary `dfl check` prints: rich tables of a model (and its data)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import ast
from .backends import accepting

if TYPE_CHECKING:  # numpy and scipy only load when there is data to count rows of
    from .instance import Instance


def _index_text(index: ast.Index | None, source: str) -> str:
    if index is None:
        return ""
    return _snippet(index, source)


def _snippet(node: ast.Node, source: str) -> str:
    pos = node.pos
    lines = source.splitlines()
    if not pos.line or pos.end_line != pos.line:
        return "…"
    return escape(lines[pos.line - 1][pos.column - 1 : pos.end_column - 1])


def report(model, inst: Instance | None, console: Console) -> None:
    klass = model.klass
    console.print(f"[bold]{model.name}[/bold]  ({model.filename})")
    console.print(f"class: [bold cyan]{klass.label}[/bold cyan] — {klass.description}")
    objective = model.objective
    if objective is not None:
        others = [o.name for o in model.objectives if o is not objective]
        also = f"  (also declared: {', '.join(others)}; pick with --objective)" if others else ""
        if klass.psd_at_bind:
            also += "  (its Q is checked PSD at bind)"
        console.print(f"objective: {objective.sense} [bold]{objective.name}[/bold]{also}")
    else:
        console.print("objective: none (a feasibility problem)")
    for table in (_sets(model, inst), _params(model, inst), _variables(model, inst),
                  _constraints(model, inst)):
        if table is not None:
            console.print(table)
    if inst is not None:
        _instance(inst, console)
    backends = accepting(klass)
    if backends:
        console.print("backends: " + ", ".join(backends) + f"  (auto picks {backends[0]})")
    else:
        console.print("backends: [yellow]none installed accepts this class yet[/yellow]")


def _table(title: str, columns: tuple[str, ...], *counts: str) -> Table:
    """A table with text columns, then right-aligned count columns."""
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col)
    for col in counts:
        table.add_column(col, justify="right")
    return table


def _sets(model, inst: Instance | None) -> Table | None:
    if not model.sets:
        return None
    source = model.source
    table = _table("sets", ("name", "definition"), "tuple width", "size")
    for s in model.sets:
        decl = s.decl
        parts = []
        if decl.value is not None:
            parts.append("= " + _snippet(decl.value, source))
        if decl.within is not None:
            parts.append("within " + _snippet(decl.within, source))
        parts += [decl.order] if decl.order else []
        if decl.ordered_by is not None:
            parts.append("ordered by " + _snippet(decl.ordered_by, source))
        table.add_row(s.name + _index_text(decl.index, source), " ".join(parts) or "from data",
                      str(s.dim or 1), _set_size(s.name, inst))
    return table


def _set_size(name: str, inst: Instance | None) -> str:
    """A set's size; an indexed set's members in all, and how many sets hold them."""
    if inst is None:
        return "from data"
    family = inst.ctx.families.get(name)
    if family is not None:
        return f"{len(family.keys)} in {family.domain.n} sets"
    return str(inst.sets[name].n)


def _params(model, inst: Instance | None) -> Table | None:
    if not model.params:
        return None
    source = model.source
    table = _table("params", ("name", "index", "kind", "checks"), "entries")
    for p in model.params:
        decl = p.decl
        kind = ", ".join(decl.kinds) or "data"
        if decl.value is not None:
            kind += " (computed)"
        checks = " ".join(
            c.op + (" " + _snippet(c.operand, source) if c.operand is not None else "")
            for c in decl.checks
        )
        if decl.default is not None:
            checks += f" default {_snippet(decl.default, source)}"
        entries = str(inst.entity(p.name).size) if inst is not None else ""
        table.add_row(p.name, _index_text(decl.index, source), kind, checks.strip(), entries)
    return table


def _variables(model, inst: Instance | None) -> Table | None:
    if not model.variables:
        return None
    source = model.source
    table = _table("variables", ("name", "index", "domain", "bounds"), "count")
    for v in model.variables:
        decl = v.decl
        bounds = " ".join(
            a.kind + " " + ", ".join(_snippet(o, source) for o in a.operands)
            for a in decl.attrs
            if a.kind in (">=", "<=", "box")
        ).replace("box ", "in ")
        count = str(inst.entity(v.name).size) if inst is not None else ""
        table.add_row(v.name, _index_text(decl.index, source), decl.domain, bounds, count)
    return table


def _row_counts(inst: Instance) -> dict[str, int]:
    from .compile.expand import compiled  # scipy: only when there is data to count rows of

    return compiled(inst).row_counts()


def _constraints(model, inst: Instance | None) -> Table | None:
    if not model.constraints:
        return None
    table = _table("constraints", ("name", "index"), "rows")
    rows = _row_counts(inst) if inst is not None else {}
    for c in model.constraints:
        table.add_row(c.name, _index_text(c.index, model.source), str(rows.get(c.name, "")))
    return table


def _instance(inst: Instance, console: Console) -> None:
    console.print(
        f"instance: {inst.n_vars} variables, "
        f"{sum(_row_counts(inst).values())} constraint rows"
        + (f", {len(inst.thetas)} predicted/uncertain params" if inst.thetas else "")
    )
    unknown = inst.unknown_data_keys()
    if unknown:
        console.print(
            "[yellow]note:[/yellow] the data has keys the model doesn't declare: "
            + ", ".join(unknown)
        )
