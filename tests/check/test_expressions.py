"""Checking expressions (dfl_dsl/check/expressions.py): the names an expression uses."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl

HEAD = "set ITEMS; param cap{ITEMS}; param c{ITEMS};\n"


@pytest.mark.parametrize(("text", "dummy", "index"), [
    ("var x{ITEMS} >= 0, <= cap[i];", "i", "ITEMS"),  # a bound
    ("param d{ITEMS} default c[i];", "i", "ITEMS"),  # a default
    ("var x{ITEMS} in [0, 1]; maximize o: sum{ITEMS} c[i] * x[i];", "i", "ITEMS"),  # a sum
    ("var x{ITEMS} in [0, 1]; s.t. k{ITEMS}: x[j] <= 1;", "j", "ITEMS"),  # a constraint
], ids=["bound", "default", "sum", "constraint"])
def test_a_dummy_the_index_never_named_is_hinted_at(text, dummy, index):
    """`{ITEMS}` binds no dummy (in AMPL neither): the hint was `did you mean `I`?` or none."""
    with pytest.raises(dfl.DflError, match=f"unknown name `{dummy}`") as info:
        dfl.parse(HEAD + text)
    assert info.value.hint == (f"the index `{{{index}}}` names no dummy: write "
                               f"`{{{dummy} in {index}}}` to use `{dummy}` for its elements")


def test_the_hint_replaces_did_you_mean_the_set_itself():
    with pytest.raises(dfl.DflError, match="unknown name `i`") as info:
        dfl.parse("set I; param c{I}; var x{I} in [0, 1]; maximize o: sum{I} c[i] * x[i];")
    assert info.value.hint.startswith("the index `{I}` names no dummy")


def test_a_misspelled_name_under_an_unnamed_index_keeps_its_did_you_mean():
    with pytest.raises(dfl.DflError, match="unknown name `cc`") as info:
        dfl.parse(HEAD + "var x{ITEMS} in [0, 1]; maximize o: sum{ITEMS} cc * x['a'];")
    assert info.value.hint == "did you mean `c`?"
