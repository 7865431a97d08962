"""MathProg's params computed from their own entries (`param z{i in V, k in 0..1} := ...
z[i, 1] ... z[j, 0] ...`): each entry is computed when first read, as GLPK does, so the entries
may refer to one another in any order that has no cycle."""

from __future__ import annotations

import numpy as np

from .. import ast
from ..errors import DflError
from .values import flat_data


class MissingEntry(Exception):
    """An entry of a param being computed (`Entity.extra["lazy"]`) that has no value yet."""

    def __init__(self, name: str, entry: int) -> None:
        super().__init__(name, entry)
        self.name = name
        self.entry = entry


def reads_itself(name: str, node: ast.Expr | None) -> bool:
    """Whether `node` reads the param `name`."""
    return node is not None and any(isinstance(n, ast.Name) and n.id == name
                                    for n in ast.walk(node))


def fill_lazily(evaluator, entity, node: ast.Expr, todo: np.ndarray) -> None:
    """Compute `node` into `entity.data` at each entry where `todo` holds, one entry at a time:
    an entry read before it has its value is computed first (depth first); one that needs
    itself, through any chain of entries, is an error."""
    entity.missing = todo.copy()
    entity.extra["lazy"] = True
    frame = entity.domain.frame
    try:
        for start in np.nonzero(todo)[0]:
            chain = [int(start)]
            while chain:
                k = chain[-1]
                if not entity.missing[k]:
                    chain.pop()
                    continue
                try:
                    v = evaluator.value(node, frame.take(np.array([k])))
                except MissingEntry as exc:
                    if exc.name != entity.name or exc.entry in chain:
                        raise _cycle(entity, node, chain, exc) from None
                    chain.append(exc.entry)
                    continue
                if v.symbolic or v.shape != ():
                    raise DflError("each entry must be one number", node.pos)
                payload = flat_data(v, True, (), 1)[0] if v.framed else np.asarray(v.payload)
                entity.data[k] = payload
                entity.missing[k] = False
                chain.pop()
    finally:
        del entity.extra["lazy"]


def _cycle(entity, node: ast.Expr, chain: list[int], exc: MissingEntry) -> DflError:
    if exc.name != entity.name:  # (another param computed lazily reads this one: not ours)
        return DflError(f"param `{exc.name}` is read before its value is computed", node.pos)
    labels = [entity.entry_label(k) for k in chain[chain.index(exc.entry):]]
    return DflError(f"param `{entity.name}` needs itself to compute entry {labels[0]}: "
                    f"{' -> '.join([*labels, labels[0]])}", node.pos,
                    hint="an entry may read other entries of its param, not itself")
