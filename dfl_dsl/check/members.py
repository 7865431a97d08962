"""AMPL's indexed objective `minimize cost {s in STORE}: ...`: a family of objectives, of which
one member is solved (`--objective 'cost[A&P]'`, else the first, as AMPL does). The member is
picked by rewriting the body as a sum over the index, filtered to that one element, so the rest
of the pipeline sees an ordinary scalar objective."""

from __future__ import annotations

import dataclasses

from .. import ast
from ..errors import DflError


def split_wanted(wanted: str | None) -> tuple[str | None, str | None]:
    """`cost[A&P]` -> (`cost`, `A&P`); a plain name has no member."""
    if wanted is None or not wanted.endswith("]") or "[" not in wanted:
        return wanted, None
    name, _, member = wanted[:-1].partition("[")
    return name.strip(), member.strip().strip("'\"")


def _literal(text: str, pos: ast.Pos) -> ast.Expr:
    for kind in (int, float):
        try:
            return ast.Number(kind(text), pos=pos)
        except ValueError:
            pass
    return ast.String(text, pos=pos)


def one_member(stmt: ast.Objective, member: str | None) -> ast.Objective:
    """The objective restricted to one member of its index: `member`, else the first."""
    index = stmt.index
    if len(index.items) != 1 or len(index.items[0].names) != 1 or index.filter is not None:
        raise DflError("an indexed objective needs one dummy over one set here: "
                       "`minimize f {s in S}: ...`", index.pos,
                       hint="declare the set of members first (`set M = {...};`) and index "
                            "the objective by it, or give one objective per member")
    pos = index.pos
    item = index.items[0]
    dummy = ast.Name(item.names[0], pos=pos)
    # the set of candidates binds a dummy of its own: the objective's, already bound
    # around it, would only filter (`{s in S}` inside `s`'s scope is `{s}`)
    own = ast.Name(f"_{stmt.name}_member", pos=pos)
    among = ast.SetIndex((dataclasses.replace(item, names=(own.id,), parts=()),), pos=pos)
    if member is not None:  # an element the index lacks leaves `first` an empty set
        same = ast.Compare(("==",), (own, _literal(member, pos)), pos=pos)
        among = dataclasses.replace(among, filter=same)
    pick = ast.Call("first", (ast.SetOf(among, own, pos=pos),), pos=pos)
    chosen = ast.Compare(("==",), (dummy, pick), pos=pos)
    body = ast.Reduce("sum", ast.SetIndex(index.items, chosen, pos=pos), stmt.body,
                      pos=stmt.body.pos)
    return dataclasses.replace(stmt, body=body, index=None)
