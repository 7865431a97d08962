"""AMPL's logical constraints, `a <= b or c <= d` (parts may be `and`s of comparisons) and
`x != y`, written as the rows of a MILP: one binary per part, at least one on, and each row of
a part relaxed by how far its expression reaches within the variables' bounds when its binary
is off (`e <= #most(e) * (1 - on)`: atoms/reach.py). `x != y` is the two parts `x - y <= -1`
and `x - y >= 1`, exact for integer-valued sides (checked when the rows are built).

Published models state scheduling and colouring this way (the AMPL book's openShop and
mapColoring); the rewrite keeps the model's own name on the row that picks a part, so an
infeasible model's rows are still named as written.
"""

from __future__ import annotations

from .. import ast

_FLIPPED = {"<=": ">=", ">=": "<="}


def lower_disjunctions(statements: list) -> list:
    """The statements with each logical constraint written as linear rows and binaries."""
    out = []
    for statement in statements:
        if isinstance(statement, ast.Constraint):
            out.extend(_rows_of(statement) or [statement])
        else:
            out.append(statement)
    return out


def _rows_of(stmt: ast.Constraint) -> list | None:
    """The declarations standing for `stmt`, or None: no logical constraint (or one this
    rewrite doesn't take, left to the checker's error)."""
    parts = _parts(stmt.body)
    if parts is None:
        return None
    switch = _switch(stmt)
    if switch is None:
        return None
    on, declared = switch
    decls, rows, picks = [], [], []
    for k, part in enumerate(parts, start=1):
        name = f"{stmt.name}#on{k}"
        pos = stmt.body.pos
        decls.append(ast.VarDecl(name, declared, (ast.VarAttr("binary", pos=pos),), pos=pos))
        off = ast.BinOp("-", ast.Number(1, pos=pos), on(name), pos=pos)
        for r, (e, op, unequal) in enumerate(part, start=1):
            args = (e, ast.String(unequal, pos=pos)) if unequal else (e,)
            reach = ast.Call("#most" if op == "<=" else "#least", args, pos=e.pos)
            body = ast.Compare((op,), (e, ast.BinOp("*", reach, off, pos=pos)), pos=e.pos)
            label = f"{stmt.name}#{k}" if len(part) == 1 else f"{stmt.name}#{k}.{r}"
            rows.append(ast.Constraint(label, stmt.index, body, pos=stmt.pos))
        picks.append(on(name))
    total = picks[0]
    for pick in picks[1:]:
        total = ast.BinOp("+", total, pick, pos=stmt.body.pos)
    one = ast.Number(1, pos=stmt.body.pos)
    pick_row = ast.Constraint(stmt.name, stmt.index,
                              ast.Compare((">=",), (total, one), pos=stmt.body.pos),
                              pos=stmt.pos)
    return [*decls, *rows, pick_row]


def _parts(body: ast.Expr) -> list[list[tuple[ast.Expr, str, str]]] | None:
    """Each part of the disjunction as rows `(e, op, unequal)` meaning `e op 0` (`unequal`: the
    `!=` or `<>` the row comes from, whose sides must be integer-valued); None when
    `body` is no logical constraint (a plain comparison, or a form not taken here)."""
    disjuncts = _flatten(body, "or")
    if len(disjuncts) == 1 and not _is_unequal(body):
        return None
    parts = []
    for disjunct in disjuncts:
        if _is_unequal(disjunct):
            spelled = disjunct.spelled(0)
            e = _difference(disjunct.operands[0], disjunct.operands[1], disjunct.pos)
            one = ast.Number(1, pos=disjunct.pos)
            parts.append([(ast.BinOp("+", e, one, pos=disjunct.pos), "<=", spelled)])
            parts.append([(ast.BinOp("-", e, one, pos=disjunct.pos), ">=", spelled)])
            continue
        rows = []
        for conjunct in _flatten(disjunct, "and"):
            found = _rows(conjunct)
            if found is None:
                return None
            rows.extend(found)
        parts.append(rows)
    return parts


def _rows(node: ast.Expr) -> list[tuple[ast.Expr, str, str]] | None:
    """A comparison (chain) as rows `e <= 0` / `e >= 0`."""
    if not isinstance(node, ast.Compare) or any(op not in ("<=", ">=", "==") for op in node.ops):
        return None
    rows = []
    for k, op in enumerate(node.ops):
        e = _difference(node.operands[k], node.operands[k + 1], node.pos)
        for one in (("<=", ">=") if op == "==" else (op,)):
            rows.append((e, one, ""))
    return rows


def _is_unequal(node: ast.Expr) -> bool:
    return isinstance(node, ast.Compare) and node.ops == ("!=",)


def _difference(a: ast.Expr, b: ast.Expr, pos: ast.Pos) -> ast.Expr:
    return ast.BinOp("-", a, b, pos=pos)


def _flatten(node: ast.Expr, op: str) -> list[ast.Expr]:
    if isinstance(node, ast.BoolOp) and node.op == op:
        return _flatten(node.left, op) + _flatten(node.right, op)
    return [node]


def _switch(stmt: ast.Constraint):
    """How to name a part's binary at the constraint's own index (`on[i, j]`), and the index
    that declares the binaries (a tuple component that matches, `(1, j) in ARCS`, becomes a
    fresh dummy and a filter: a declaration binds a dummy in every component); None where the
    index has a member without dummies to subscript it by."""
    index = stmt.index
    pos = stmt.body.pos
    if index is None:
        return (lambda name: ast.Name(name, pos=pos)), None
    if not isinstance(index, ast.SetIndex):
        return None
    subscripts, items, matches = [], [], []
    for item in index.items:
        if not item.names:
            return None
        parts = item.parts or tuple(ast.Name(n, pos=item.pos) for n in item.names)
        names = []
        for n, part in zip(item.names, parts, strict=True):
            subscripts.append(ast.Name(n, pos=item.pos) if n else part)
            if not n:
                n = f"#{len(matches) + 1}"
                matches.append(ast.Compare(("==",), (ast.Name(n, pos=part.pos), part),
                                           pos=part.pos))
            names.append(n)
        fresh = tuple(ast.Name(n, pos=item.pos) for n in names)
        items.append(ast.IndexItem(tuple(names), item.set, fresh if item.parts else (),
                                   pos=item.pos))
    where = index.filter
    for match in matches:
        where = match if where is None else ast.BoolOp("and", where, match, pos=match.pos)
    declared = ast.SetIndex(tuple(items), where, pos=index.pos) if matches else index
    return (lambda name: ast.Subscript(ast.Name(name, pos=pos), tuple(subscripts), pos=pos)
            ), declared
