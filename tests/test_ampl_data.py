"""AMPL data files: statements read into the mapping a JSON file gives, bound to the same
arrays, with located errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dfl_dsl as dfl
from dfl_dsl.ampl_data import Schema, model_schema, parse_dat
from dfl_dsl.errors import DataError

TRANSPORT = """
set ORIG;
set DEST;
param supply{ORIG} >= 0;
param demand{DEST} >= 0;
param cost{ORIG, DEST} >= 0;
var Trans{ORIG, DEST} >= 0;
minimize Total_Cost: sum{i in ORIG, j in DEST} cost[i, j] * Trans[i, j];
subject to Supply{i in ORIG}: sum{j in DEST} Trans[i, j] == supply[i];
subject to Demand{j in DEST}: sum{i in ORIG} Trans[i, j] == demand[j];
"""

TRANSPORT_DAT = """data;
# three mills, seven plants
set ORIG := GARY CLEV PITT ;
set DEST := FRA DET LAN WIN STL FRE LAF ;
param supply := GARY 1400 CLEV 2600 PITT 2900 ;
param demand :=
  FRA 900 DET 1200 LAN 600 WIN 400 STL 1700 FRE 1100 LAF 1000 ;
param cost:  FRA  DET  LAN  WIN  STL  FRE  LAF :=
   GARY   39   14   11   14   16   82    8
   CLEV   27    9   12    9   26   95   17
   PITT   24   14   17   13   28   99   20 ;
end;
"""


def read(text: str, dims: dict | None = None):
    return parse_dat(text, "t.dat", Schema(dims or {})).values


def fails(text: str, dims: dict | None = None) -> DataError:
    with pytest.raises(DataError) as info:
        read(text, dims)
    assert info.value.filename == "t.dat"
    return info.value


def test_sets():
    got = read("set A := a b, 'c d' 3 ;\nset E := ;\nset P := (a, b) (b,c) ;\n"
               "set Q := (a, *) b c (b, *) c ;\nset R := 1 2 2 3 ;", {"R": 2})
    assert got == {"A": ["a", "b", "c d", 3], "E": [], "P": [["a", "b"], ["b", "c"]],
                   "Q": [["a", "b"], ["a", "c"], ["b", "c"]], "R": [[1, 2], [2, 3]]}


def test_set_tables_and_indexed_sets():
    got = read("set L: x y := a + - b - + ;\nset T (tr): x y := a + - ;\n"
               "set S[a] := 1 2 ;\nset S[b] := ;\nset M[1, a] := p ;")
    assert got["L"] == [["a", "x"], ["b", "y"]] and got["T"] == [["x", "a"]]
    assert got["S"] == {"a": [1, 2], "b": []} and got["M"] == {1: {"a": ["p"]}}


def test_set_errors_are_located():
    err = fails("set A := a b\n  a ;")
    assert err.message == "set `A` lists a twice" and (err.pos.line, err.pos.column) == (2, 3)
    assert "holds 2-tuples, this member has 3" in fails("set P := (a,b) (a,b,c);").message
    assert "a member has 1 of its 2 components" in fails("set P := a b c ;", {"P": 2}).message
    assert "set `S[a]` is given twice" in fails("set S[a] := 1; set S[a] := 2;").message
    assert "expected `+` or `-`" in fails("set L: x := a 1 ;").message
    assert "is not closed by `)`" in fails("set P := (a, b ;").message
    err = fails("set S := a ;\nset C[] := a ;")  # (fuzz: an IndexError, `dat` seed 123)
    assert err.message == "set `C`: expected a subscript, got `]`" and err.pos.column == 7


def test_params_scalars_defaults_and_text():
    source = parse_dat("param T := 4 ;\nparam d default 0 := a 1 ;\nparam e default 2 ;\n"
                       "param s := 'New York' ;\nparam z := -Infinity ;", "t.dat")
    assert source.values == {"T": 4, "d": {"a": 1}, "e": {}, "s": "New York", "z": "-inf"}
    assert source.defaults == {"d": 0, "e": 2}
    scalar = parse_dat("param n default 3 ;", "t.dat", Schema({"n": 0}))
    assert scalar.values == {"n": 3}
    with pytest.raises(DataError, match="param `n` has no entries"):
        read("param n ;")


def test_statement_errors():
    err = fails("set A := a ;\nparam p := a 1\nparam q := a 2 ;")
    assert "`param` starts a new statement, but the `param p` statement (line 2) is not "\
           "closed" in err.message and err.pos.line == 3
    err = fails("set A := a ;\nparam p := a 1 ")
    assert "the `param p` statement is not closed" in err.message and err.pos.line == 2
    assert "`let` is an AMPL command" in fails("let x := 1 ;").message
    assert "expected a `set` or `param` statement, got `@`" in fails("@ ;").message
    assert "quote is not closed" in fails("set A := 'a ;").message
    err = fails("set A := 'São Paulo' Zürich ;")
    assert "unexpected `ü`" in err.message and "quote one with other characters" in err.hint
    assert "param `T` is given twice" in fails("param T := 1 ; param T := 2 ;").message


def test_transport_binds_as_json_does(tmp_path):
    model = dfl.parse(TRANSPORT, "transport.mod")
    (tmp_path / "t.dat").write_text(TRANSPORT_DAT)
    from_dat = model.bind(tmp_path / "t.dat")
    values = parse_dat(TRANSPORT_DAT, "t.dat", model_schema(model)).values
    (tmp_path / "t.json").write_text(json.dumps(values))
    from_json = model.bind(tmp_path / "t.json")
    for name in ("supply", "demand", "cost"):
        assert np.array_equal(from_dat.entity(name).data, from_json.entity(name).data)
    assert from_dat.solve().objective == pytest.approx(196200)  # AMPL's transp answer


def test_data_default_comes_before_the_models(tmp_path):
    model = dfl.parse("set I; param p{I} default 7; param q{I} default 7;\n"
                      "var x{I} >= 0; minimize o: sum{i in I} (p[i] + q[i]) * x[i];", "m.mod")
    (tmp_path / "d.dat").write_text("set I := a b c ;\nparam p default 1 := a 5 ;\n"
                                    "param q := a 5 ;")
    inst = model.bind(tmp_path / "d.dat")
    assert inst.entity("p").data.tolist() == [5, 1, 1]
    assert inst.entity("q").data.tolist() == [5, 7, 7]


def test_bind_errors_point_into_the_dat_file(tmp_path):
    model = dfl.parse(TRANSPORT, "transport.mod")
    bad = TRANSPORT_DAT.replace("LAF 1000 ;", "NYC 1000 ;")
    (tmp_path / "t.dat").write_text(bad)
    with pytest.raises(DataError, match='unknown element "NYC"') as info:
        model.bind(tmp_path / "t.dat")
    assert info.value.filename.endswith("t.dat")
    assert (info.value.pos.line, info.value.pos.column) == (7, 54)
    (tmp_path / "t.dat").write_text(TRANSPORT_DAT.replace("GARY 1400", "GARY -1"))
    with pytest.raises(DataError, match="breaks `>= 0`") as info:
        model.bind(tmp_path / "t.dat")
    assert info.value.pos.line == 5


def test_tuple_keyed_objects_over_a_dense_domain():
    """`param c{(i, j) in ARCS, t in T}` takes objects nested one level per subscript, in JSON
    as in .dat (the contract's form), tuple components included."""
    text = ("set N; set ARCS within N * N; set T; param c{(i, j) in ARCS, t in T};\n"
            "var f{ARCS} >= 0; minimize o: sum{(i, j) in ARCS, t in T} c[i, j, t] * f[i, j];")
    model = dfl.parse(text, "m.mod")
    data = {"N": ["a", "b", "c"], "ARCS": [["a", "b"], ["b", "c"]], "T": [1, 2],
            "c": {"a": {"b": {"1": 3, "2": 4}}, "b": {"c": {"1": 5, "2": 6}}}}
    assert model.bind(data).entity("c").data.tolist() == [3, 4, 5, 6]
    dat = parse_dat("set N := a b c ; set ARCS := (a,b) (b,c) ; set T := 1 2 ;\n"
                    "param c := [*, *, 1] a b 3 b c 5 [*, *, 2] a b 4 b c 6 ;", "m.dat",
                    model_schema(model))
    assert model.bind(dat).entity("c").data.tolist() == [3, 4, 5, 6]
    data["c"]["a"]["c"] = {"1": 0}
    with pytest.raises(DataError, match=r"unknown element \(a, c\) \(not in ARCS\)"):
        model.bind(data)
    data["c"]["a"] = 3
    with pytest.raises(DataError, match="a tuple's 2 components take one level each"):
        model.bind(data)


def test_broken_files_give_located_errors_only():
    """Random edits of a valid file (tokens deleted, inserted, replaced): each reads, or fails
    with a located DataError — never another exception."""
    import random

    pieces = [":", ":=", ";", ",", "(", ")", "[", "]", "*", ".", "'", "tr", "(tr)", "param",
              "set", "default", "x", "1", "Infinity", "#", "/*", "\n", "@"]
    words = TRANSPORT_DAT.replace("\n", " \n ").split(" ")
    schema = Schema({"cost": 2, "supply": 1, "demand": 1}, frozenset({"cost", "supply"}))
    rng = random.Random(0)
    for _ in range(400):
        edited = list(words)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(edited))
            choice = rng.random()
            if choice < 0.4:
                del edited[at]
            elif choice < 0.7:
                edited.insert(at, rng.choice(pieces))
            else:
                edited[at] = rng.choice(pieces)
        try:
            parse_dat(" ".join(edited), "t.dat", schema)
        except DataError as exc:
            assert exc.pos.line >= 1, exc.format()


def test_a_member_outside_its_superset_is_located(tmp_path):
    path = tmp_path / "arcs.mod"
    path.write_text("set NODES;\nset ARCS within NODES * NODES;\nvar f{ARCS} >= 0;\n"
                    "minimize o: sum{(i, j) in ARCS} f[i, j];\n"
                    "data;\nset NODES := a b c ;\nset ARCS := (a, b) (b, c)\n   (c, d) ;\n")
    with pytest.raises(DataError, match=r"element \('c', 'd'\) is not within") as info:
        dfl.load(path).bind()
    assert (info.value.pos.line, info.value.pos.column) == (8, 5)


@pytest.mark.parametrize("rows", [
    "2 0.5 0.6\n5 0.9 0.4\n'5' 0.1 0.2",         # a quoted row label beside the plain one
    "5 0.9 0.4\n6 2.1 -0.'5' 0.1 0.2",           # a stray quote read as the next row's label
])
def test_a_table_row_given_as_5_and_as_quoted_5_is_refused(tmp_path, rows):
    """`'5'` reads as the set's 5 (as a JSON key "5" does): beside a row 5 it gives the same
    entries twice, and one would silently replace the other."""
    model = dfl.parse("set OBS; set F; param X{OBS, F}; var b{F};\n"
                      "minimize o: sum{f in F} b[f]^2;", "m.mod")
    (tmp_path / "d.dat").write_text(
        f"set OBS := 2 5 6 ;\nset F := f1 f2 ;\nparam X: f1 f2 :=\n{rows} ;\n")
    with pytest.raises(DataError, match='keys 5 and "5" name the same element'):
        model.bind(tmp_path / "d.dat")
