"""AMPL's network and column-wise declarations, rewritten into the rows they stand for.

`node Balance {k in CITIES}: net_in = demand[k] - supply[k];` is a row whose `net_in` is filled
by the arcs: `arc Ship {(i,j) in LINKS} >= 0, from Balance[i], to Balance[j], obj Cost c[i,j];`
is a variable that enters `Balance[j]`'s `net_in` with +1, `Balance[i]`'s with -1 (`net_out` is
-`net_in`), and the objective `Cost` (declared `minimize Cost;`) with c[i,j]. A plain `var` may
carry `obj`, `coeff [{...}] Row[...] a` and `cover [{...}] Row[...]` (a = 1), which fill the
`to_come` of a row (`subject to Need {i in S}: to_come >= req[i];`). A `node` without a body is
`net_in = 0`; `from`/`to` take an optional coefficient (1). (AMPL book, chapters 15 and 16.)

Each contribution becomes a sum over the variable's (and the clause's) index, filtered to the
members whose row subscripts equal the row's dummies: the row
`sum {(i,j) in LINKS: j == k} Ship[i,j] - sum {(i,j) in LINKS: i == k} Ship[i,j]`. The row is
placed after the last variable that fills it (a name is declared before it is used), and an
objective moved so keeps its place among the objectives (the first is solved by default).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from .. import ast
from ..errors import DflError

_FRESH = itertools.count()
_SIGN = {"obj": 1, "coeff": 1, "cover": 1, "to": 1, "from": -1}
_FILLED = {"node": ("net_in", "net_out"), "row": ("to_come",)}


@dataclasses.dataclass(frozen=True)
class Clause:
    """`obj`/`coeff`/`cover`/`from`/`to` [index] ROW[args] [coefficient] of a variable."""

    word: str
    index: ast.SetIndex | None
    row: str
    args: tuple[ast.Expr, ...]
    coef: ast.Expr | None
    pos: ast.Pos


@dataclasses.dataclass(frozen=True)
class ColumnVar:
    """A `var` or `arc` with clauses: the declaration without them, and the clauses."""

    decl: ast.VarDecl
    clauses: tuple[Clause, ...]
    arc: bool


@dataclasses.dataclass(frozen=True)
class NodeDecl:
    """`node N [index] [: body]`: a constraint whose `net_in` (`net_out`) the arcs fill."""

    constraint: ast.Constraint


def uses_columns(statements: list) -> bool:
    return any(isinstance(s, (ColumnVar, NodeDecl)) or isinstance(s, ast.Objective)
               and s.body is None for s in statements)


def lower_columns(statements: list) -> list:
    """The statements with every column-wise declaration written as rows (see the module)."""
    if not uses_columns(statements):
        return statements
    rows = {s.name: s for s in statements
            if isinstance(s, (ast.Objective, ast.Constraint))}
    rows.update({s.constraint.name: s for s in statements if isinstance(s, NodeDecl)})
    filled: dict[str, list[tuple[ColumnVar, Clause]]] = {}
    last_filler: dict[str, int] = {}
    for at, statement in enumerate(statements):
        if isinstance(statement, ColumnVar):
            for clause in statement.clauses:
                _check_clause(statement, clause, rows.get(clause.row))
                filled.setdefault(clause.row, []).append((statement, clause))
                last_filler[clause.row] = at
    out: list[list] = [[] for _ in statements]
    after: list[list] = [[] for _ in statements]  # rows moved past the statement at each
    objective_at = -1
    for at, statement in enumerate(statements):
        if isinstance(statement, ColumnVar):
            out[at].append(statement.decl)
            continue
        name = getattr(statement, "name", None) or getattr(
            getattr(statement, "constraint", None), "name", None)
        if not isinstance(statement, (NodeDecl, ast.Objective, ast.Constraint)) or (
                name not in filled and not _mentions_filled(statement)):
            out[at].append(statement)
            if isinstance(statement, ast.Objective):
                objective_at = max(objective_at, at)
            continue
        lowered = _lower_row(statement, filled.get(name, []))
        place = max(at, last_filler.get(name, at))
        if isinstance(statement, ast.Objective):
            place = objective_at = max(place, objective_at)
        (out if place == at else after)[place].append(lowered)
    return [s for own, moved in zip(out, after, strict=True) for s in (*own, *moved)]


def _check_clause(var: ColumnVar, clause: Clause, row) -> None:
    if row is None:
        raise DflError(f"`{clause.word} {clause.row}`: `{clause.row}` is no objective, "
                       "constraint or node declared in this model", clause.pos,
                       hint="declare it (`minimize Cost;`, `node N {k in K};`, `subject to "
                       "C {i in I}: to_come >= b[i];`), before or after the variable")
    node = isinstance(row, NodeDecl)
    wanted = {"from": NodeDecl, "to": NodeDecl, "obj": ast.Objective}.get(clause.word,
                                                                         ast.Constraint)
    if not isinstance(row, wanted):
        kind = {NodeDecl: "a node", ast.Objective: "an objective"}.get(wanted, "a constraint")
        raise DflError(f"`{clause.word}` names {kind}, and `{clause.row}` is not one",
                       clause.pos, hint="`from`/`to` name nodes, `obj` an objective, "
                       "`coeff`/`cover` a constraint")
    index = row.constraint.index if node else row.index
    dummies = _dummies(index, clause.row, clause.pos)
    if len(clause.args) != len(dummies):
        raise DflError(f"`{clause.row}` takes {len(dummies)} subscript(s), got "
                       f"{len(clause.args)}", clause.pos)
    _dummies(var.decl.index, var.decl.name, var.decl.pos)


def _dummies(index, name: str, pos: ast.Pos) -> tuple[str, ...]:
    if index is None:
        return ()
    if not isinstance(index, ast.SetIndex) or any(not item.names or not all(item.names)
                                                  for item in index.items):
        raise DflError(f"`{name}` is filled column by column, so its index names its dummies",
                       pos, hint="write `{k in NODES}`, `{(i,j) in ARCS}`")
    return index.dummies


def _mentions_filled(statement) -> bool:
    words = {w for ws in _FILLED.values() for w in ws}
    body = statement.constraint.body if isinstance(statement, NodeDecl) else statement.body
    return body is None or any(isinstance(n, ast.Name) and n.id in words for n in _walk(body))


def _lower_row(statement, fills: list[tuple[ColumnVar, Clause]]):
    """The row with `net_in`/`net_out`/`to_come` replaced by the sum of what fills it."""
    node = isinstance(statement, NodeDecl)
    row = statement.constraint if node else statement
    dummies = row.index.dummies if row.index is not None else ()
    total = None
    for var, clause in fills:
        term = _contribution(var, clause, dummies, node)
        total = term if total is None else ast.BinOp("+", total, term, pos=term.pos)
    zero = ast.Number(0, pos=row.pos)
    total = total if total is not None else zero
    if row.body is None:  # `minimize Cost;` / `node N;`
        if node:
            body = ast.Compare(("==",), (total, zero), pos=row.pos)
        else:
            body = total
        return dataclasses.replace(row, body=body)
    words = _FILLED["node" if node else "row"]
    if fills and not any(isinstance(n, ast.Name) and n.id in words for n in _walk(row.body)):
        raise DflError(f"`{row.name}` is filled by `{fills[0][1].word}` clauses, so its "
                       f"body must say where: `{words[0]}`", row.pos,
                       hint=f"write it in the body, e.g. `{words[0]} >= b`")

    def swap(name: ast.Name) -> ast.Expr:
        if name.id == "net_out":
            return ast.Neg(total, pos=name.pos)
        return total

    return dataclasses.replace(row, body=_replace_names(row.body, set(words), swap))


def _contribution(var: ColumnVar, clause: Clause, dummies: tuple[str, ...],
                  node: bool) -> ast.Expr:
    """`sum {var's index, clause's index: args == dummies} coef * V[...]`, signed."""
    pos = clause.pos
    tag = next(_FRESH)
    decl = var.decl
    own = (decl.index.dummies if decl.index is not None else ()) + (
        clause.index.dummies if clause.index is not None else ())
    fresh = {name: f"{name}#{tag}" for name in own}
    free = {n.id for part in (decl.index, clause.index, clause.coef, *clause.args)
            if part is not None for n in _walk(part) if isinstance(n, ast.Name)} - set(own)
    clash = sorted(free & set(dummies))
    if clash:
        raise DflError(f"`{clash[0]}` names a dummy of `{clause.row}` and something that "
                       f"`{decl.name}` uses", pos, hint=f"rename the dummy of `{clause.row}`")
    ren = _Renamer(fresh)
    coef = ren(clause.coef) if clause.coef is not None else ast.Number(1, pos=pos)
    if node and _SIGN[clause.word] < 0:
        coef = ast.Neg(coef, pos=pos)
    column: ast.Expr = ast.Name(decl.name, pos=pos)
    if decl.index is not None:
        column = ast.Subscript(column, tuple(ast.Name(fresh[d], pos=pos)
                                             for d in decl.index.dummies), pos=pos)
    term: ast.Expr = ast.BinOp("*", coef, column, pos=pos)
    items, filters = [], []
    for index in (decl.index, clause.index):
        if index is not None:
            renamed = ren(index)
            items.extend(renamed.items)
            if renamed.filter is not None:
                filters.append(renamed.filter)
    conds, joined = [], {}
    for arg, dummy in zip(map(ren, clause.args), dummies, strict=True):
        item = _binding(items, arg) if dummy not in joined.values() else None
        if item is None:
            conds.append(ast.Compare(("==",), (arg, ast.Name(dummy, pos=pos)), pos=pos))
            continue
        # the row's dummy takes the index's place: a tuple component that matches (a join,
        # grouped once), or a lone `i in S` that becomes the filter `k in S`
        joined[arg.id] = dummy
        if len(item.names) == 1:
            items.remove(item)
            filters.append(ast.Member(ast.Name(dummy, pos=pos), item.set, pos=pos))
    if joined:
        join = _Renamer(joined)
        items, filters, term = [join(i) for i in items], [join(f) for f in filters], join(term)
    cond = None
    for c in filters + conds:
        cond = c if cond is None else ast.BoolOp("and", cond, c, pos=pos)
    if items:
        return ast.Reduce("sum", ast.SetIndex(tuple(items), cond, pos=pos), term, pos=pos)
    if cond is not None:
        return ast.IfThenElse(cond, term, ast.Number(0, pos=pos), pos=pos)
    return term


def _binding(items: list[ast.IndexItem], arg: ast.Expr) -> ast.IndexItem | None:
    """The index item that binds `arg`, a fresh dummy, once (else None)."""
    if not isinstance(arg, ast.Name) or "#" not in arg.id:
        return None
    found = [item for item in items if arg.id in item.names]
    if len(found) != 1 or list(found[0].names).count(arg.id) != 1:
        return None
    return found[0]


class _Renamer:
    """Every occurrence of the mapped names, bound or used, renamed (the new names are fresh,
    so a consistent renaming keeps every scope as it was)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def __call__(self, node: Any) -> Any:
        if isinstance(node, ast.Name):
            return dataclasses.replace(node, id=self.mapping.get(node.id, node.id))
        if isinstance(node, ast.IndexItem):
            return dataclasses.replace(node, names=tuple(self.mapping.get(n, n) for n in
                                                         node.names),
                                       set=self(node.set), parts=tuple(map(self, node.parts)))
        return _map_fields(node, self)


def _replace_names(node: Any, words: set[str], make) -> Any:
    if isinstance(node, ast.Name) and node.id in words:
        return make(node)
    return _map_fields(node, lambda child: _replace_names(child, words, make))


def _map_fields(node: Any, fn) -> Any:
    if isinstance(node, tuple):
        return tuple(fn(x) for x in node)
    if not isinstance(node, ast.Node):
        return node
    changes = {f.name: fn(getattr(node, f.name)) for f in dataclasses.fields(node)
               if f.name != "pos" and isinstance(getattr(node, f.name), (ast.Node, tuple))}
    return dataclasses.replace(node, **changes) if changes else node


def _walk(node: Any):
    if isinstance(node, tuple):
        for x in node:
            yield from _walk(x)
    elif isinstance(node, ast.Node):
        yield node
        for f in dataclasses.fields(node):
            if f.name != "pos":
                yield from _walk(getattr(node, f.name))
