"""The order in which `expr` definitions are evaluated.

An expr's value is cached on first use. Evaluated on demand, a chain of exprs each using the
one before (160 of them pass `dfl check`) recursed once per link and hit Python's recursion
limit; evaluating what an expr uses first, earliest first, makes every link a cache hit.
"""

from __future__ import annotations

from .. import ast
from .entities import Entity


def uncached_uses(entity: Entity, entities: dict[str, Entity], cached) -> list[Entity]:
    """The exprs `entity`'s body uses, directly or through others, that are not in `cached`;
    in declaration order (`entities`' order: an expr can only use earlier ones)."""
    seen: dict[str, Entity] = {}
    stack = [entity]
    while stack:
        for node in ast.walk(stack.pop().decl.body):
            used = entities.get(node.id) if isinstance(node, ast.Name) else None
            if (used is not None and used.kind == "expr" and used.name not in seen
                    and used.name not in cached and used is not entity):
                seen[used.name] = used
                stack.append(used)
    order = {name: k for k, name in enumerate(entities)}
    return sorted(seen.values(), key=lambda e: order[e.name])
