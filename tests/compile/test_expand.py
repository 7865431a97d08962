"""expand: objective and constraint rows `lo <= body <= hi`, their labels and counts."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _helpers import bind, poly_at

from dfl_dsl import DflError
from dfl_dsl.evaluate.poly import Poly

TRANSPORTISH = """
set I; set J;
param cap{I}; param need{J};
var s{I, J} >= 0;
minimize f: sum{i in I, j in J} s[i, j];
subject to supply{i in I}: sum{j in J} s[i, j] <= cap[i];
subject to demand{j in J}: sum{i in I} s[i, j] >= need[j];
subject to fixed{i in I, j in J: i == "a"}: s[i, j] == 1;
"""


@pytest.fixture()
def inst():
    return bind(TRANSPORTISH, {"I": ["a", "b"], "J": [1, 2, 3],
                               "cap": [10, 20], "need": [1, 2, 3]})


def test_row_counts_and_labels(inst):
    ex = inst.compile()
    assert ex.row_counts() == {"supply": 2, "demand": 3, "fixed": 3}
    by = {r.name: r for r in ex.constraints}
    assert by["supply"].labels() == ["supply[a]", "supply[b]"]
    assert by["fixed"].labels() == ["fixed[a, 1]", "fixed[a, 2]", "fixed[a, 3]"]


def test_bounds_follow_the_operator(inst):
    by = {r.name: r for r in inst.compile().constraints}
    z = np.arange(1, 7, dtype=float)  # s in row-major order over I × J
    # body = lhs - rhs; `<=` is (-inf, 0], `>=` is [0, inf), `==` is [0, 0]
    assert np.allclose(poly_at(by["supply"].body, z), [1 + 2 + 3 - 10, 4 + 5 + 6 - 20])
    assert by["supply"].lo.tolist() == [-np.inf] * 2 and by["supply"].hi.tolist() == [0, 0]
    assert np.allclose(poly_at(by["demand"].body, z), [1 + 4 - 1, 2 + 5 - 2, 3 + 6 - 3])
    assert by["demand"].lo.tolist() == [0] * 3 and by["demand"].hi.tolist() == [np.inf] * 3
    assert by["fixed"].lo.tolist() == by["fixed"].hi.tolist() == [0, 0, 0]


def test_objective_is_one_row(inst):
    ex = inst.compile()
    assert ex.sense == "minimize" and isinstance(ex.objective, Poly)
    assert ex.objective.rows == 1
    assert poly_at(ex.objective, np.ones(6))[0] == pytest.approx(6)


def test_feasibility_problem_has_a_zero_objective():
    ex = bind("var x >= 1; subject to c: x <= 3;").compile()
    assert ex.sense == "minimize" and ex.objective.rows == 1 and ex.objective.degree == 0


def test_compile_is_cached(inst):
    assert inst.compile() is inst.compile()


def test_chained_rows_with_indexed_bounds():
    inst = bind("set I; param lo{I}; param hi{I}; var x{I};"
                "subject to band{i in I}: lo[i] <= 2 * x[i] <= hi[i];",
                {"I": [1, 2], "lo": [0, -1], "hi": [4, 5]})
    rows = inst.compile().constraints[0]
    assert rows.lo.tolist() == [0, -1] and rows.hi.tolist() == [4, 5]
    assert np.allclose(poly_at(rows.body, np.array([1.0, 2.0])), [2, 4])


def test_errors_name_the_model_file():
    with pytest.raises(DflError) as info:
        bind("set I; var x{I}; subject to c{i in I}: x[i] / 0 <= 1;", {"I": [1]},
             name="rows.opt").compile()
    assert info.value.filename == "rows.opt" and info.value.pos.line == 1
    assert str(info.value).startswith("rows.opt:1:")


INF = float("inf")


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
def test_an_infinite_data_side_leaves_the_row_unbounded(backend):
    # `x[i] <= cap[i]` with cap `inf` (or `x[i] >= low[i]` with low `-inf`) bounds nothing;
    # it used to put inf - inf = NaN into the row bounds
    inst = bind("set I; param cap{I}; param low{I}; var x{I} >= 0 <= 10;"
                "maximize o: sum{i in I} x[i] - 2 * x[2];"
                "subject to c{i in I}: x[i] <= cap[i]; subject to d{i in I}: -x[i] >= -cap[i];"
                "subject to e{i in I}: x[i] + 1 >= low[i];",
                {"I": [1, 2], "cap": [INF, 3], "low": [-INF, 2]})
    rows = inst.compile().constraints[0]
    assert rows.hi.tolist() == [INF, 0] and np.isfinite(rows.body.const).all()
    sol = inst.solve(backend)
    assert sol.status == "optimal" and sol.objective == pytest.approx(9)
    assert sol.value("x").tolist() == pytest.approx([10, 1])


@pytest.mark.parametrize(("text", "where"), [
    ("maximize o: sum{i in I} c[i] * x[i];", "the objective has an infinite"),
    ("subject to k{i in I}: c[i] * x[i] <= 5;", "constraint `k[1]` has an infinite"),
    ("subject to k{i in I}: x[i] >= c[i];", "constraint `k[1]` has an infinite"),
    ("subject to k{i in I}: x[i] == c[i];", "constraint `k[1]` has an infinite"),
])
def test_an_infinite_coefficient_is_a_located_error(text, where):
    inst = bind(f"set I; param c{{I}}; var x{{I}} >= 0 <= 1; {text}",
                {"I": [1, 2], "c": [INF, 2]})
    with pytest.raises(DflError, match=re.escape(where)) as info:
        inst.compile()
    assert info.value.pos is not None and str(info.value).startswith("m.opt:1:")


@pytest.mark.parametrize(("text", "where"), [
    # quad_form sums P[i, j] + P[j, i] (and a * x + a * x two coefficients) into inf from
    # finite data: the message blamed an `inf` in the data, which held none
    ("minimize o: quad_form(x, P) + sum(x);", "the objective has a coefficient beyond"),
    ("minimize o: sum(x); subject to k: quad_form(x, P) <= 1;", "constraint `k` has a coeff"),
    ("expr e = quad_form(x, P); minimize o: e + sum(x);", "the objective has a coefficient"),
])
def test_a_coefficient_that_overflows_from_finite_data_is_not_blamed_on_inf(text, where):
    inst = bind(f"param P[2, 2] psd; var x[2] >= -1; {text}", {"P": [[1.7e308, 0], [0, 1]]})
    with pytest.raises(DflError, match=re.escape(where)) as info:
        inst.compile()
    assert "overflowed" in info.value.message and "inf" not in info.value.message
    assert "rescale" in info.value.hint and str(info.value).startswith("m.opt:1:")


def test_running_out_of_memory_expanding_a_constraint_is_located(monkeypatch):
    inst = bind("var x >= 0; minimize o: x; subject to c{i in 1..3}: x >= i;")

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(type(inst.evaluator), "number", exhausted)
    with pytest.raises(DflError, match="out of memory") as info:
        inst.compile()
    assert info.value.pos is not None and str(info.value).startswith("m.opt:1:")
