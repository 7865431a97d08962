"""Random functions of data (`Uniform01 Uniform Normal01 Normal Irand224`), drawn from GLPK's
generator with glpsol's seed: the same numbers at every bind, each computed param drawing in
index order, a filter drawing only where its left side of `and` leaves the row open, and a
draw refused where it would be drawn again at each compile (a constraint)."""

from __future__ import annotations

import math

import pytest

import dfl_dsl as dfl
from dfl_dsl.atoms.random import KnuthStream
from dfl_dsl.errors import DflError


def test_the_generator_passes_knuths_own_check():
    # the values Knuth's gb_flip prints for its self-test
    stream = KnuthStream(-314159)
    assert stream.integer() == 119318998
    for _ in range(133):
        stream.integer()
    assert stream.below(0x55555555) == 748103812


def test_computed_params_draw_in_index_order_and_again_at_each_bind():
    model = dfl.parse("set I := 1..4;\nparam w{i in I} := Uniform(2, 7);\n"
                      "param z := Normal(10, 2);\nparam k := Irand224();\n"
                      "var x{i in I} >= 0, <= w[i];\nmaximize o: sum{i in I} x[i] + z + k;\n")
    stream = KnuthStream(1)
    w = []
    for _ in range(4):
        u = stream.uniform01()
        w.append(2 * (1 - u) + 7 * u)
    z = 10 + 2 * stream.normal01()
    k = stream.below(1 << 24)
    assert round(w[0], 5) == 2.64156  # glpsol's first `Uniform(2, 7)` at its default seed
    first = model.bind().solve().objective
    assert first == pytest.approx(sum(w) + z + k, rel=1e-12)
    assert model.bind().solve().objective == first


def test_a_filter_draws_only_where_the_left_side_leaves_the_row_open():
    model = dfl.parse("set N := 1..5;\n"
                      "set E := setof{i in N, j in N: i <> j and Uniform01() <= 0.3} (i, j);\n"
                      "var y{E} binary;\nmaximize o: sum{(i, j) in E} (10 * i + j) * y[i, j];\n")
    stream = KnuthStream(1)
    want = sum(10 * i + j for i in range(1, 6) for j in range(1, 6)
               if i != j and stream.uniform01() <= 0.3)
    assert model.bind().solve().objective == pytest.approx(want)


def test_normal01_is_the_polar_method():
    model = dfl.parse("param a := Normal01();\nvar x >= a;\nminimize o: x;\n")
    stream = KnuthStream(1)
    while True:
        x, y = -1 + 2 * stream.uniform01(), -1 + 2 * stream.uniform01()
        r2 = x * x + y * y
        if 0 < r2 <= 1:
            break
    assert model.bind().solve().objective == pytest.approx(y * math.sqrt(-2 * math.log(r2) / r2))


@pytest.mark.parametrize("text, where", [
    ("var x >= 0;\nminimize o: x;\ns.t. c: x >= Uniform01();\n", (3, 14)),
    ("var x >= Uniform(0, 1);\nminimize o: x;\n", (1, 10)),
])
def test_a_draw_in_a_constraint_or_a_bound_is_refused_at_its_place(text, where):
    with pytest.raises(DflError) as caught:
        dfl.parse(text, "m.mod")
    assert "draws random data" in str(caught.value)
    assert (caught.value.pos.line, caught.value.pos.column) == where


def test_an_empty_uniform_range_is_a_located_data_error():
    model = dfl.parse("param a := Uniform(3, 1);\nvar x >= a;\nminimize o: x;\n", "m.mod")
    with pytest.raises(DflError, match=r"Uniform\(3, 1\).*range is empty"):
        model.bind()
