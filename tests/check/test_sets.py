"""The checker's set rules (check/sets.py): indexed sets, `setof`, `cross`, the functions of
ordered sets and `check` statements, and the located errors for their misuse."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl
from dfl_dsl.check.symbols import SetSymbol


def error(text: str) -> dfl.DflError:
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(text, "m.opt")
    return info.value


def test_an_indexed_set_knows_its_index_and_width() -> None:
    model = dfl.parse("set I; set T; set S{I} within T;\nset P{I, T} within T cross T;")
    s, p = model.symbols["S"], model.symbols["P"]
    assert isinstance(s, SetSymbol) and s.arity == 1 and s.dim == 1
    assert p.arity == 2 and p.dim == 2


def test_setof_cross_and_set_literals_of_sets_give_the_tuple_width() -> None:
    model = dfl.parse("set A; set B; set C = A cross B;\nset D = setof{(a, b) in C} (b, a, b);\n"
                      "set E = {A, C};")
    assert model.symbols["C"].dim == 2 and model.symbols["D"].dim == 3
    assert model.symbols["E"].dim == 3


@pytest.mark.parametrize(("text", "message", "column", "hint"), [
    # `cross` of numbers points at `*`
    ("param a; param b; param c = a cross b;", "`cross` is the product of sets, got a scalar",
     29, "`*` multiplies numbers"),
    # the set functions are functions, not typos of atoms (no "did you mean `worst`")
    ("set S; param p = first(3);", "`first` needs a set here, got a scalar", 24,
     "`first` takes a set: `first(S)`"),
    ("set S; param p = firts(S);", "unknown function `firts`", 18, "did you mean `first`?"),
    ("set S; param p = next(3);", "`next` of an element needs its set", 18, None),
    ("set S; param p = member(1);", "`member` takes a position and a set", 18, None),
    ("set P within {1,2}*{3,4}; param a = first(P);", "needs a set of single elements", 43,
     None),
    ("set S; var x{S}; param p = ord(x[1], S);", "works on data, not variables", 32, None),
    # AMPL's `{A, B}` is a product of sets, never sets and elements mixed
    ("set A; param b; set C = {A, b};", "`{A, B}` of sets is their product, but this is a "
     "scalar", 29, "not both"),
    # indexed sets
    ("set T; set S{T}; param c = card(S);", "the set `S` is indexed: write `S[...]`", 33,
     "declared on line 1"),
    ("set T; set S{T}; param c = card(S[1, 2]);", "`S` takes 1 subscript, got 2", 33, None),
    ("set T; param c = card(T[1]);", "the set `T` is not indexed", 23,
     "declare it `set T{I}`"),
    ("set I; set S{I} dimen 2 within I;", "`S` holds 1-tuples but is within a set of 2-tuples",
     32, None),
    # setof and tuples
    ("set I; var x{I}; set S = setof{i in I} x[i];", "`setof` collects elements", 40, None),
    ("param a; param b = (1, 2) + a;", "a tuple `(a, b)` can't be used here", 20,
     "tuples are the body of `setof"),
    # a check after a value without the comma is read into the value
    ("param p default 1 >= 0;", "a param's default must be a number, not a condition", 17,
     "`default 1, >= 0`"),
    # checks
    ("var x; check: x >= 0;", "a check tests data, not variables", 15, None),
    ("param a; check: a + 1;", "a check needs a condition, got a scalar", 17,
     "write a comparison"),
    # symbolic params hold elements, which no network predicts
    ("param s : predicted symbolic;", "can't be `symbolic`", 7, None),
    ("param s symbolic >= 0;", "`>=` doesn't apply to a symbolic param", 18, "`in SET`"),
])
def test_misuse_is_located(text, message, column, hint) -> None:
    err = error(text)
    assert message in err.message and err.pos.column == column
    if hint is not None:
        assert hint in err.hint


def test_a_named_check_is_a_symbol_and_its_name_is_taken() -> None:
    model = dfl.parse("param a; check positive: a >= 0; check: a <= 9;")
    assert model.symbols["positive"].kind == "check"
    assert "declared twice" in error("param a; check a: a >= 0;").message


def test_set_function_results_are_elements_or_counts() -> None:
    model = dfl.parse("set T = 1..4; set N;\nexpr f = first(T) + ord(2, T) + card(N);\n"
                      "expr s = last(N);\nexpr k{t in T} = ord(t) + next(t, T, 2);")
    f, s, k = (model.symbols[n].element for n in "fsk")
    assert f.integer and f.kind == "num" and f.is_data
    assert s.kind == "elem" and not s.integer  # N's elements may be strings
    assert k.integer
