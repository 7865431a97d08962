"""Entries of AMPL data statements: lists, tables, slices, several params in one list, and the
located errors for rows and entries that don't fit."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dfl_dsl.ampl_data import Schema, parse_dat
from dfl_dsl.errors import DataError


def read(text: str, dims: dict | None = None, numeric=()):
    return parse_dat(text, "t.dat", Schema(dims or {}, frozenset(numeric))).values


def fails(text: str, dims: dict | None = None, numeric=()) -> DataError:
    with pytest.raises(DataError) as info:
        read(text, dims, numeric)
    assert info.value.filename == "t.dat" and info.value.pos.line
    return info.value


def test_list_with_the_models_arity():
    got = read("param cost := GARY FRA 39  GARY DET 14\n PITT FRA 24 ;", {"cost": 2})
    assert got == {"cost": {"GARY": {"FRA": 39, "DET": 14}, "PITT": {"FRA": 24}}}


def test_list_arity_guessed_without_a_model():
    assert read("param c := a x 1 a y 2 ;") == {"c": {"a": {"x": 1, "y": 2}}}
    assert read("param c := 1 2 5\n 2 3 6\n;") == {"c": {1: {2: 5}, 2: {3: 6}}}  # by lines
    assert read("param s := a 1 b 2 ;") == {"s": {"a": 1, "b": 2}}
    several = read("param l :=\n a x 1  a y 2  b x 3\n b y 4  c x 5  c y 6 ;")
    assert several == {"l": {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}, "c": {"x": 5, "y": 6}}}


def test_table_tr_and_missing():
    text = "param c: x y z :=\n a 1 2 .\n b 4 5 6 ;\nparam d (tr): a b :=\n x 1 2\n y 3 4 ;"
    got = read(text)
    assert got["c"] == {"a": {"x": 1, "y": 2}, "b": {"x": 4, "y": 5, "z": 6}}
    assert got["d"] == {"a": {"x": 1, "y": 3}, "b": {"x": 2, "y": 4}}


def test_slices_of_a_3d_param():
    text = ("param p := [*, *, 1]: x y := a 1 2 b 3 4\n"
            "  [a, *, 2] x 5 y Infinity\n  [b, x, 2] 7 ;")
    assert read(text, {"p": 3}) == {"p": {
        "a": {"x": {1: 1, 2: 5}, "y": {1: 2, 2: "inf"}}, "b": {"x": {1: 3, 2: 7}, "y": {1: 4}}}}


def test_several_params_and_their_set():
    got = read("param: NODES: lo hi := a 1 2\n b . 3 ;")
    assert got == {"NODES": ["a", "b"], "lo": {"a": 1}, "hi": {"a": 2, "b": 3}}
    got = read("param: ARCS: cap := a b 5  b c 6 ;", {"cap": 2})
    assert got["ARCS"] == [["a", "b"], ["b", "c"]] and got["cap"] == {"a": {"b": 5}, "b": {"c": 6}}


def test_several_params_of_other_widths_are_located():
    """A scalar in a `param:` list was an IndexError (fuzz: `dat` seed 1003993)."""
    err = fails("param:hold_cost := 2 ;", {"hold_cost": 0})
    assert err.message == "param `hold_cost` is one value, not entries with subscripts"
    assert err.pos.column == 7 and "param hold_cost := ...;" in err.hint
    err = fails("param: a b := x 1 2 ;", {"a": 1, "b": 2})
    assert err.message == "param `b` has 2 subscripts, but `a` in the same list has 1"


def test_short_and_wide_rows_are_located():
    err = fails("param c: x y :=\n a 1 2\n b 3\n c 5 6 ;")
    assert "row b has 1 value, but the table has 2 columns" in err.message
    assert (err.pos.line, err.pos.column) == (3, 2)
    err = fails("param c: x y :=\n a 1 2 9\n b 3 4 ;")
    assert "row a has 3 values" in err.message and err.pos.line == 2


def test_missing_value_names_the_entry():
    err = fails("param demand := FRA 900\n  DET ;", {"demand": 1})
    assert err.message == "param `demand`[DET] has no value"
    assert (err.pos.line, err.pos.column) == (2, 3)
    err = fails("param demand := FRA DET 1200 ;", {"demand": 1}, numeric={"demand"})
    assert "param `demand`[FRA]: expected a number, got `DET`" in err.message
    assert err.pos.column == 21


def test_duplicates():
    err = fails("param c := a 1 b 2 a 3 ;")
    assert "param `c`[a] is given twice" in err.message and err.pos.column == 20
    err = fails("param c := a x 1 b x 2\n a x 3 ;", {"c": 2})
    assert "param `c`[a, x] is given twice" in err.message and err.pos.line == 2
    err = fails("param c := a 1 ;\nparam c := a x 3 ;")
    assert "different numbers of subscripts" in err.message
    assert "column `x` twice" in fails("param c: x x := a 1 2 ;").message
    assert "row `a` gives entries given before" in fails("param c: x := a 1 a 2 ;").message
    assert "given twice" in fails("param c: x := a 1 ;\nparam c := [a, *] x 2 ;").message


def test_table_needs_its_header_closed():
    assert "has no `:=` after its column labels" in fails("param c: x y a 1 2 ;").message
    assert "two `*`" in fails("param c := [a, *]: x := b 1 ;", {"c": 2}).message
    assert "has 2 subscripts, this slice 3" in fails("param c := [a, *, *] ;", {"c": 2}).message


def test_a_big_table_reads_fast():
    """1000 x 1000 numbers: one numpy conversion and a dict.update per row (about 0.35 s
    CPU on the development machine; the bound here leaves room for a loaded one)."""
    n = 1000
    values = np.arange(n * n).reshape(n, n) % 997
    text = ("param c: " + " ".join(f"j{k}" for k in range(n)) + " :=\n"
            + "\n".join(f"i{i} " + " ".join(map(str, row)) for i, row in enumerate(values))
            + ";\n")
    start = time.process_time()
    got = read(text)["c"]
    assert time.process_time() - start < 5.0
    assert got["i7"]["j9"] == values[7, 9] and len(got) == n and len(got["i999"]) == n


def test_several_tables_in_one_statement_and_windows_lines():
    text = "param c: x y :=\r\n a 1 2\r\n : z :=\r\n a 3\r\n [b, *] x 4 ;\r\n"
    assert read(text, {"c": 2}) == {"c": {"a": {"x": 1, "y": 2, "z": 3}, "b": {"x": 4}}}
