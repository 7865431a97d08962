"""Limits on how deeply a model nests, checked right after parsing (iteratively: a model at
the limit must get this error, not a RecursionError).

Every later stage (checker, binder, compiler) walks an expression recursively, so an
expression nests at most `MAX_NESTING` levels as written. Atoms nest further through `expr`
definitions (`expr e2 = abs(e1) + 1;` over 160 such lines), and CVXPY canonicalizes an atom
tree recursively, about ten Python frames per level (measured: 80 levels solve, 100 hit the
interpreter's recursion limit) — so atoms, counted through the exprs they use, nest at most
`MAX_ATOM_DEPTH` levels.
"""

from __future__ import annotations

from .. import ast
from ..errors import DflError

MAX_NESTING = 100
MAX_ATOM_DEPTH = 50
_SPLIT_HINT = ("split it into named parts with `expr NAME = ...;`, and write long sums as "
               "`sum{...}`")


def check_depth(statements: list[ast.Statement]) -> None:
    """A DflError at the first expression nested deeper than the limits."""
    atom_depth: dict[str, int] = {}  # expr name -> the atom depth of its body
    for statement in statements:
        deepest = _walk(statement, atom_depth)
        if isinstance(statement, ast.ExprDecl):
            atom_depth[statement.name] = deepest


def _walk(statement: ast.Statement, atom_depth: dict[str, int]) -> int:
    """The statement's atom depth; raises at too deep nesting first, then at too deep atoms
    (a deeply nested `x^x^...` is told it nests too deeply)."""
    deepest, too_deep = 0, None
    stack: list[tuple[ast.Node, int, int]] = [(statement, 0, 0)]
    while stack:
        node, depth, atoms = stack.pop()
        if depth > MAX_NESTING:
            raise DflError(f"this expression is nested too deeply (more than {MAX_NESTING} "
                           "levels)", node.pos, hint=_SPLIT_HINT)
        if _is_atom(node):
            atoms += 1
        elif isinstance(node, ast.Name):
            atoms += atom_depth.get(node.id, 0)
        if atoms > MAX_ATOM_DEPTH and too_deep is None:
            too_deep = node
        deepest = max(deepest, atoms)
        for value in node.__dict__.values():
            if isinstance(value, ast.Node):
                stack.append((value, depth + 1, atoms))
            elif isinstance(value, tuple):
                stack.extend((v, depth + 1, atoms) for v in value if isinstance(v, ast.Node))
    if too_deep is not None:
        raise DflError(f"atoms are nested more than {MAX_ATOM_DEPTH} deep here, counting "
                       "through the `expr`s used", too_deep.pos,
                       hint="no backend can canonicalize so deep a tree; flatten it")
    return deepest


def _is_atom(node: ast.Node) -> bool:
    """A node that may become a nonlinear atom (counted conservatively)."""
    return (isinstance(node, ast.Call | ast.Power)
            or (isinstance(node, ast.Reduce) and node.op in ("max", "min")))
