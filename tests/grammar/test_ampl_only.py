"""AMPL constructs this language doesn't take stop at their own position, with why and what to
write instead (grammar/ampl_only.py)."""

from __future__ import annotations

import pytest

from dfl_dsl.errors import DflError
from dfl_dsl.grammar.parser import parse


@pytest.mark.parametrize(("text", "line", "column", "message", "hint"), [
    ("var p >= 0;\nvar q;\nsubject to m: p >= 0 complements q >= 1;", 3, 22,
     "complementarity constraints", "optimization problem"),
    ("var y >= 0, suffix stage 2;", 1, 13, "suffixes", "remove the suffix"),
])
def test_ampl_only_construct_is_located_with_a_rewrite(text, line, column, message, hint):
    with pytest.raises(DflError, match=message) as info:
        parse(text)
    assert (info.value.pos.line, info.value.pos.column) == (line, column)
    assert hint in info.value.hint


def test_a_name_suffix_outside_a_var_is_a_name():
    (decl,) = parse("param suffix;").statements
    assert decl.name == "suffix"
