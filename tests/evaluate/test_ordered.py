"""AMPL's functions of sets (evaluate/ordered.py): `card first last next prev ord member`,
vectorized over an index, with the errors past either end of a set."""

from __future__ import annotations

import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.evaluate.elements import element_of

WEEKS = {"W": ["jan", "feb", "mar", "apr"]}


def elements(inst, name: str) -> list:
    return [element_of(k) for k in inst.entity(name).array().ravel()]


def test_first_last_card_member_and_ord() -> None:
    inst = bind("set W ordered;\nparam f symbolic = first(W); param l symbolic = last(W);\n"
                "param m symbolic = member(2, W); param n = card(W);\n"
                "param o{w in W} = ord(w, W); param o1{w in W} = ord(w);", WEEKS)
    assert elements(inst, "f") == ["jan"] and elements(inst, "l") == ["apr"]
    assert elements(inst, "m") == ["feb"] and inst.entity("n").array() == 4
    assert inst.entity("o").array().tolist() == [1, 2, 3, 4]
    assert inst.entity("o1").array().tolist() == [1, 2, 3, 4]


def test_a_dummy_of_a_range_knows_its_set() -> None:
    inst = bind("param n; param p{t in 2..n} = ord(t) + 10 * prev(t, 1..n);", {"n": 3})
    assert inst.entity("p").array().tolist() == [11, 22]


def test_next_and_prev_with_and_without_a_step() -> None:
    inst = bind("set W;\nset EARLY = setof{w in W : ord(w) <= 2} w;\n"
                "param n{w in EARLY} symbolic = next(w, W);\n"
                "param n2{w in EARLY} symbolic = next(w, W, 2);\n"
                "param p{w in W : w <> first(W)} symbolic = prev(w);\n"
                "param k{w in EARLY} symbolic = next(w, W, ord(w));", WEEKS)
    assert elements(inst, "n") == ["feb", "mar"]
    assert elements(inst, "n2") == ["mar", "apr"]
    assert elements(inst, "p") == ["jan", "feb", "mar"]
    assert elements(inst, "k") == ["feb", "apr"]  # a step per row


def test_first_and_last_of_sets_that_change_with_the_index() -> None:
    inst = bind("set I; set S{I};\nparam f{i in I} = first(S[i]); param l{i in I} = last(S[i]);\n"
                "param r{t in 1..3} = first(t..3) + 10 * last(t..4);",
                {"I": ["a", "b"], "S": {"a": [1, 2], "b": [5]}})
    assert inst.entity("f").array().tolist() == [1, 5]
    assert inst.entity("l").array().tolist() == [2, 5]
    assert inst.entity("r").array().tolist() == [41, 42, 43]
    with pytest.raises(dfl.DflError, match="`first` of an empty set"):
        bind("set I; set S{I}; param f{i in I} = first(S[i]);", {"I": [1], "S": {}})


def test_next_prev_and_ord_in_each_set_of_an_indexed_set() -> None:
    inst = bind("set R; set STOPS{R} ordered; set LOOP{R} circular;\n"
                "param nx{r in R, s in STOPS[r] : s <> last(STOPS[r])} symbolic = "
                "next(s, STOPS[r]);\n"
                "param o{r in R, s in STOPS[r]} = ord(s, STOPS[r]);\n"
                "param back{r in R, s in LOOP[r]} = prev(s, LOOP[r]);\n"
                "param q{r in R} = ord(last(setof{s in STOPS[r]} s), setof{s in STOPS[r]} s);",
                {"R": ["a", "b"], "STOPS": {"a": ["x", "y", "z"], "b": ["u", "v"]},
                 "LOOP": {"a": [1, 2, 3]}})
    assert elements(inst, "nx") == ["y", "z", "v"]
    assert inst.entity("o").array().tolist() == [1, 2, 3, 1, 2]
    assert inst.entity("back").array().tolist() == [3, 1, 2]
    assert inst.entity("q").array().tolist() == [3, 2]  # a `setof` per row, too
    with pytest.raises(dfl.DflError, match="`next` goes past the last element"):
        bind("set R; set S{R}; param z{r in R, s in S[r]} = next(s, S[r]);",
             {"R": [1], "S": {"1": [4, 5]}})


def test_a_circular_set_wraps_around() -> None:
    inst = bind("set W circular;\nparam n{w in W} symbolic = next(w);\n"
                "param p{w in W} symbolic = prev(w, W, 5);", WEEKS)
    assert elements(inst, "n") == ["feb", "mar", "apr", "jan"]
    assert elements(inst, "p") == ["apr", "jan", "feb", "mar"]


def test_nextw_prevw_wrap_and_ord0_is_zero_outside() -> None:
    inst = bind("set W;\nparam n{w in W} symbolic = nextw(w, W);\n"
                "param p{w in W} symbolic = prevw(w, W, 2);\n"
                'param z = ord0("may", W) + 10 * ord0("feb", W);', WEEKS)
    assert elements(inst, "n") == ["feb", "mar", "apr", "jan"]
    assert elements(inst, "p") == ["mar", "apr", "jan", "feb"]
    assert inst.entity("z").array() == 20


def test_card_of_sets_that_change_with_the_index() -> None:
    inst = bind("param T; set H = 1..T;\nparam c{t in H} = card(t..T);\n"
                "param d{t in H} = card(setof{u in H : u <= t} u);", {"T": 3})
    assert inst.entity("c").array().tolist() == [3, 2, 1]
    assert inst.entity("d").array().tolist() == [1, 2, 3]


def test_in_a_model_next_shifts_an_index() -> None:
    """Stock balance over an ordered horizon: stock[next(t)] = stock[t] + make[t] - sell[t]."""
    inst = bind("set T = 1..4; param d{T}; var make{T} >= 0; var stock{T} >= 0;\n"
                "minimize cost: sum{t in T} (2 * make[t] + stock[t]);\n"
                "s.t. start: stock[first(T)] = 0;\n"
                "s.t. flow{t in T : t <> last(T)}: stock[next(t)] = stock[t] + make[t] - d[t];\n"
                "s.t. end: stock[last(T)] + make[last(T)] >= d[last(T)];",
                {"d": [1, 2, 3, 4]})
    assert inst.solve(backend="highs").objective == pytest.approx(20)


@pytest.mark.parametrize(("text", "message", "hint"), [
    ("param p{w in W} symbolic = next(w, W);", "`next` goes past the last element of the set, "
     "from 'apr'", "declare the set `circular`"),
    ("param p symbolic = prev(first(W), W);", "`prev` goes past the first element", "{t in T"),
    ('param p symbolic = next("may", W);', "`next`: 'may' is not in the set", None),
    ("param p symbolic = member(5, W);", "`member`: position 5 is not in 1..4", None),
    ("param p symbolic = first(W diff W);", "`first` of an empty set", None),
    ("param n; param p{s in 1..n, t in s..n} = ord(t);",
     "can't tell which set this element belongs to", "name the set: `ord(e, SET)`"),
])
def test_errors_are_located_at_the_call(text, message, hint) -> None:
    model = dfl.parse("set W;\n" + text, "m.opt")
    with pytest.raises(dfl.DflError) as info:
        model.bind({**WEEKS, "n": 2})
    assert message in info.value.message and info.value.pos.line == 2
    if hint is not None:
        assert hint in info.value.hint
