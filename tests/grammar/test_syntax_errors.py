"""The table of example mistakes: each handler's spot is found from its examples, at any
nesting depth (the key is what the parser expects there and the token before, not the state
stack), and a token the handler doesn't expect there gets the generic message."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl
from dfl_dsl.grammar.parser import _lark
from dfl_dsl.grammar.syntax_errors import EXAMPLES, _handlers


def test_every_handler_has_a_spot():
    filed = {h for handlers in _handlers(_lark()).values() for h in handlers}
    assert filed == {handler for handler, _ in EXAMPLES}


@pytest.mark.parametrize("depth", [0, 1, 4])
def test_a_spot_is_found_however_deep(depth):
    text = "set I; var x{I};\nminimize z: " + "(1 + " * depth + "max x" + ")" * depth + ";"
    with pytest.raises(dfl.DflError, match="`max` takes an index in braces"):
        dfl.parse(text)


@pytest.mark.parametrize(("text", "message"), [
    ("var x int;", "an integer variable is declared `integer`"),
    ("var x foo;", "unexpected `foo`"),  # the same spot, another token: the generic message
    ("param a; var x; minimize z: x * not a;", "`not` can't appear here without parentheses"),
])
def test_handlers_and_their_fallback(text, message):
    with pytest.raises(dfl.DflError, match=message):
        dfl.parse(text)


@pytest.mark.parametrize("text", ["param p = 1 default 2;", "param p default 1 integer;"])
def test_an_attribute_after_a_value_needs_a_comma(text):
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(text)
    assert "next attribute follows a comma" in info.value.hint
