"""check/statements.py: the rules for declarations (here: a param's checks that name the
param itself, which AMPL tests per entry once the data is in)."""

from __future__ import annotations

import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.errors import DataError, DflError

RISING = """
set P := 1..4;
param step{p in P} >= if p = 1 then 0 else step[p-1];
param cap{p in 1..3} > if p = 1 then 0 else cap[p-1], default 5 * p;
var x{P} >= 0, <= 1;
maximize gain: sum{p in P} step[p] * x[p] + cap[2];
"""


def test_a_bound_may_name_its_own_param():
    """Each entry is checked against the entries before it, after the data (AMPL's reading)."""
    inst = bind(RISING, {"step": [1, 2, 2, 5]})
    assert inst.entity("cap").array().tolist() == [5, 10, 15]
    assert inst.solve().objective == pytest.approx(1 + 2 + 2 + 5 + 10)


def test_an_entry_that_breaks_its_own_bound_is_named():
    with pytest.raises(DataError, match=r"param `step`\[3\]: value 2 breaks `>= 3`"):
        bind(RISING, {"step": [1, 3, 2, 5]})


def test_a_predicted_param_still_may_not_name_itself():
    with pytest.raises(DflError, match="`q` refers to itself"):
        dfl.parse("set P := 1..3; param q{p in P} : predicted >= if p = 1 then 0 else q[p-1];")


def test_an_indexed_value_or_default_may_read_other_entries():
    """MathProg's recursive params (evaluate/lazy.py); an entry that needs itself is refused
    when bound."""
    model = dfl.parse("set P := 1..3; param q{p in P} = if p = 1 then 1 else 2 * q[p-1];")
    assert model.bind().entity("q").array().tolist() == [1, 2, 4]
    model = dfl.parse("set P := 1..3; param q{p in P} default q[1];")
    assert model.bind({"q": {1: 7}}).entity("q").array().tolist() == [7, 7, 7]
    with pytest.raises(DflError, match=r"param `q` needs itself to compute entry \[1\]"):
        model.bind()


LOGICAL = """
set I;
param promo{I} logical;
param up{I} logical, default 0;
param base{I} >= 0;
var x{i in I} >= 0, <= (if promo[i] then 2 else 1) * base[i];
maximize o: sum{i in I: not up[i] or promo[i]} x[i];
s.t. cap: sum{i in I: promo[i] and base[i] > 1} x[i] <= 5;
"""


def test_a_logical_param_is_a_condition():
    data = {"I": ["a", "b", "c"], "promo": [1, 0, 1], "base": [2, 3, 4], "up": {"b": 1}}
    inst = bind(LOGICAL, data)
    assert inst.entity("x").upper.tolist() == [4, 3, 8]
    assert inst.solve().objective == pytest.approx(5)  # b is left out, a + c capped at 5
    wrong = r"`promo`\[a\]: value 2 isn't 0 or 1 \(declared `logical`\)"
    with pytest.raises(DataError, match=wrong):
        bind(LOGICAL, {**data, "promo": [2, 0, 1]})


@pytest.mark.parametrize(("text", "message"), [
    ("set I; param p{I} logical; var x{I} >= 0; minimize o: sum{i in I} p[i] * x[i];",
     "`*` needs numbers, got a condition"),
    ("param p logical, in {1, 2};", "a `logical` param holds true or false"),
    ("param p : predicted, logical;", "a `logical` param holds true or false"),
])
def test_a_logical_param_is_not_a_number(text, message):
    with pytest.raises(DflError, match=message) as caught:
        dfl.parse(text)
    if "needs numbers" in message:
        assert caught.value.hint == "as a number, write `(if COND then 1 else 0)`"


@pytest.mark.parametrize("text, pos, hint", [
    ("set P; param b{P}; param g{P} : predicted;\nparam cost{p in P} = b[p] * (1 + g[p]);",
     (2, 22), "write an `expr`: `expr cost{p in P} = b[p] * (1 + g[p]);`"),
    ("set P; param ub{P} : predicted;\nvar x{p in P} >= 0 <= ub[p];",
     (2, 23), "write a constraint: `subject to x_bound{p in P}: x[...] <= ub[p];`"),
    ("param g : uncertain;\nvar x in [g, 1];", (2, 11),
     "`uncertain` param (a value per sample, not data): write a constraint: "
     "`subject to x_bound: x >= g;`"),
])
def test_a_predicted_param_where_data_must_be_says_what_to_write(text, pos, hint):
    """A user's derived cost (`param cost = base * (1 + g)`, g predicted) or predicted bound
    was refused with no way out; the hint now writes the form that takes a predicted param."""
    with pytest.raises(DflError) as err:
        dfl.parse(text)
    assert (err.value.pos.line, err.value.pos.column) == pos
    assert hint in err.value.hint


def test_a_variable_in_a_bound_gets_no_such_hint():
    with pytest.raises(DflError, match="bound must be a number from data") as err:
        dfl.parse("var y;\nvar x >= y;")
    assert err.value.hint is None


@pytest.mark.parametrize("text, how, col", [
    ("set P; param g{P} : predicted default 1;", "given a `default`", 39),
    ("param u : uncertain = 2;", "computed with `=`", 23),
])
def test_a_predicted_param_takes_no_default(text, how, col):
    """`predicted default 1` was accepted and read by nothing: `dfl solve` still said the data
    gave no value. Refused where it is written, as `= e` was."""
    with pytest.raises(DflError, match=f"can't be {how}") as err:
        dfl.parse(text)
    assert (err.value.pos.line, err.value.pos.column) == (1, col)
