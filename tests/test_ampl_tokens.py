"""Tokens of AMPL data files: the fast split and the regex give the same tokens, positions are
found on demand, comments and quotes are read as AMPL writes them."""

from __future__ import annotations

import random

import pytest

from dfl_dsl.ampl_tokens import Tokens, element, is_number, is_word, value
from dfl_dsl.errors import DataError


def test_split_and_regex_agree():
    """`str.split` (plain text) and the regex (any text) must give the same tokens, or error
    positions found by the regex would point at the wrong token."""
    pieces = ["a", "b1", "-3", "2.5e+3", ":=", ":", ";", ",", "(", ")", "[", "]", "*", ".",
              "x.y", "+", "-", "A_B"]
    rng = random.Random(0)
    for _ in range(200):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", "\n", "  "])
                       for _ in range(30))
        fast = Tokens(text, "t.dat")
        assert fast.plain
        slow = Tokens(text + "\n# a comment", "t.dat")  # a comment: the regex path
        assert not slow.plain
        assert fast.strings == slow.strings, text


def test_positions_skip_comments():
    text = "# head\nset A := /* x\ny */ a\n  'b c' ;\n"
    tokens = Tokens(text, "t.dat")
    assert tokens.strings == ["set", "A", ":=", "a", "'b c'", ";"]
    pos = tokens.pos(4)
    assert (pos.line, pos.column, pos.end_column) == (4, 3, 8)
    assert tokens.line(3) == 3
    assert tokens.pos(6).line == 4  # past the last token: the end of the text


def test_start_offset_keeps_file_lines():
    text = "set A;\nvar x;\ndata;\nset A := a ;\n"
    tokens = Tokens(text, "m.mod", text.index("data;"))
    assert tokens.strings[:2] == ["data", ";"]
    assert tokens.pos(2).line == 4


def test_unclosed_comment():
    with pytest.raises(DataError, match=r"`/\*` is not closed") as info:
        Tokens("set A := a;\n/* no end\n", "t.dat")
    assert info.value.pos.line == 2


def test_elements_and_values():
    assert element("3") == 3 and element("3.0") == 3 and element("2.5") == 2.5
    assert element("'it''s'") == "it's" and element('"3"') == "3" and element("a-b") == "a-b"
    assert value("3") == 3 and value("3.0") == 3.0 and isinstance(value("3.0"), float)
    assert value("Infinity") == "inf" and value("-Infinity") == "-inf"
    assert is_number("-1e5") and is_number("Infinity") and not is_number("abc")
    assert is_word("a.b") and is_word("'x y'") and not is_word(":=") and not is_word("@")
