"""AMPL's indexed objective: one member is solved, the one `--objective 'f[e]'` names, else the
first (check/members.py)."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl
from dfl_dsl.check.members import split_wanted

MODEL = """set STORE; set FOOD;
param cost{STORE, FOOD} > 0;
var Buy{FOOD} >= 1, <= 5;
minimize total {s in STORE}: sum {j in FOOD} cost[s, j] * Buy[j];
minimize count: sum {j in FOOD} Buy[j];
"""
DATA = {"STORE": ["A&P", "Jewel", 7], "FOOD": ["b", "c"],
        "cost": {"A&P": {"b": 1, "c": 2}, "Jewel": {"b": 3, "c": 1}, 7: {"b": 2, "c": 2}}}


@pytest.mark.parametrize(("objective", "value"), [
    (None, 3.0), ("total[A&P]", 3.0), ("total['Jewel']", 4.0), ("total[7]", 4.0),
    ("count", 2.0),
])
def test_one_member_is_solved(objective, value):
    sol = dfl.parse(MODEL, objective=objective).bind(DATA).solve(backend="highs")
    assert sol.objective == pytest.approx(value)


def test_a_member_the_set_lacks_is_a_located_error():
    with pytest.raises(dfl.DflError, match="empty set") as info:
        dfl.parse(MODEL, objective="total[Vons]").bind(DATA).solve(backend="highs")
    assert info.value.pos.line == 4


def test_only_one_dummy_over_one_set():
    with pytest.raises(dfl.DflError, match="one dummy over one set") as info:
        dfl.parse("set S; var x{S};\nminimize f {s in S, t in S}: x[s] + x[t];")
    assert (info.value.pos.line, info.value.pos.column) == (2, 12)


def test_split_wanted():
    assert split_wanted("f[a b]") == ("f", "a b") and split_wanted("f") == ("f", None)
    assert split_wanted(None) == (None, None)
