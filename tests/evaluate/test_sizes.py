"""The size cap: counts beyond it are located errors before any allocation (never wrapped
around int64 into an empty model), and DFL_MAX_ENTRIES moves or lifts it."""

from __future__ import annotations

import pytest
from _helpers import bind

from dfl_dsl import DflError
from dfl_dsl.evaluate.sizes import DEFAULT_LIMIT, check_count, limit
from dfl_dsl.evaluate.values import EvalError


def test_the_default_cap_and_its_override(monkeypatch):
    monkeypatch.delenv("DFL_MAX_ENTRIES", raising=False)
    assert limit() == DEFAULT_LIMIT
    monkeypatch.setenv("DFL_MAX_ENTRIES", "1e3")
    assert limit() == 1000
    monkeypatch.setenv("DFL_MAX_ENTRIES", "0")
    assert limit() is None
    assert check_count(10**30, "this") == 10**30
    monkeypatch.setenv("DFL_MAX_ENTRIES", "lots")
    with pytest.raises(EvalError, match="not a number of entries"):
        limit()


def test_a_count_over_the_cap_says_what_and_how_much(monkeypatch):
    monkeypatch.setenv("DFL_MAX_ENTRIES", "100")
    assert check_count(100, "this index") == 100
    with pytest.raises(EvalError, match=r"this index would have 101 entries .*limit is 100"):
        check_count(101, "this index")
    with pytest.raises(EvalError, match=r"would have 9.22e\+18 entries \(about .* TB of memory\)"):
        check_count(2**63, "x")


@pytest.mark.parametrize(("text", "data", "at"), [
    # sizes >= 2^63 once wrapped around int64 into an empty model that solved `optimal`
    ("var x[9223372036854775808] >= 0;", {}, "922"),
    ("param n : int; var x[n] >= 0;", {"n": 9223372036854775809}, "n]"),
    ("param n : int; var x[n] >= 0;", {"n": 1e30}, "n]"),
    ("param n : int; var x[2, n, n];", {"n": 10**5}, "n];"),  # the product, not each axis
    ("param m : int; set S = 1..m; var x{S, S};", {"m": 10**5}, "{S, S}"),
    ("param m : int; var y; minimize f: sum{i in 1..m, j in 1..i} y;", {"m": 10**5}, "{i in"),
    ("param m : int; set S = 1..m; set P = S * S;", {"m": 10**5}, "S * S"),
])
def test_sizes_over_the_cap_are_located_errors(text, data, at):
    with pytest.raises(DflError, match="would have .* entries") as info:
        bind(text, data).compile()
    assert (info.value.pos.line, info.value.pos.column) == (1, text.index(at) + 1)


def test_a_model_within_a_raised_cap_binds(monkeypatch):
    monkeypatch.setenv("DFL_MAX_ENTRIES", "10")
    with pytest.raises(DflError, match="limit is 10"):
        bind("var x[11];")
    monkeypatch.setenv("DFL_MAX_ENTRIES", "11")
    assert bind("var x[11];").n_vars == 11


def test_a_shape_near_the_float_limit_is_refused_with_its_size():
    # fuzz (pipeline seed 3193354, `param G[p, 1e308]`): the memory estimate, 1e308 times the
    # bytes per entry, was converted to a float (OverflowError, exit 3)
    with pytest.raises(DflError, match=r"would have 1.00e\+308 entries \(about 5.50e\+297 TB"):
        bind("param G[2, 1e308];", {})
