"""Nesting limits: as written (MAX_NESTING) and of atoms counted through `expr`s
(MAX_ATOM_DEPTH), refused with a located error instead of a RecursionError later."""

from __future__ import annotations

import pytest

from dfl_dsl import DflError, parse
from dfl_dsl.grammar.depth import MAX_ATOM_DEPTH


def _chain(body: str, count: int) -> str:
    lines = ["var x >= 0;", "expr e0 = x;"]
    lines += [f"expr e{k} = {body.format(prev=f'e{k - 1}')};" for k in range(1, count)]
    return "\n".join(lines + [f"minimize f: e{count - 1};"])


def test_atoms_nested_through_exprs_beyond_the_limit_are_refused_where_they_cross_it():
    with pytest.raises(DflError, match=f"atoms are nested more than {MAX_ATOM_DEPTH} deep") \
            as info:
        parse(_chain("abs({prev}) + 1", 400), "m.opt")
    assert info.value.pos.line == MAX_ATOM_DEPTH + 3  # the first expr past the limit
    parse(_chain("abs({prev}) + 1", MAX_ATOM_DEPTH + 1))


def test_affine_chains_are_not_atoms():
    parse(_chain("{prev} + 1", 3000))  # the evaluator flattens these: no limit applies


def test_deep_syntax_is_told_so_before_deep_atoms():
    with pytest.raises(DflError, match="nested too deeply"):
        parse("var x;\nminimize z: " + "abs(" * 150 + "x" + ")" * 150 + ";")
