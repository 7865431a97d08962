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


@pytest.mark.parametrize(("text", "word", "column"), [
    # after every comparison and AMPL's operators, not only the ones spelled in the examples
    ("param p = if a < exists{i in I} b then 1;", "exists", 18),
    ("param p = if a <> not b then 1;", "not", 19),
    ("param p = a mod if b then 1 else 2;", "if", 17),
    ("param p = 2 ** sum{i in I} 1;", "sum{...}", 16),
    ("param p = a + forall{i in I} b;", "forall", 15),
])
def test_what_needs_parentheses_after_any_operator(text, word, column):
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(text)
    assert info.value.message == f"`{word}` can't appear here without parentheses"
    assert info.value.pos.column == column


@pytest.mark.parametrize(("text", "hint"), [
    ("var x; minimize z: x; s.t. c: x =< 3;", "did you mean `<=`?"),
    ("var x; minimize z: x; s.t. c: x => 3;", "did you mean `>=`?"),
    ("param p =< 3;", "did you mean `<=`?"),
    ("var x; minimize z: x; s.t. c: x = < 3;", None),  # apart: not one operator misspelled
])
def test_a_comparison_written_backwards_is_hinted(text, hint):
    with pytest.raises(dfl.DflError, match="unexpected `[<>]`") as info:
        dfl.parse(text)
    assert info.value.hint == hint
