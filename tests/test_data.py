"""Data files: JSON / YAML / NPZ in every accepted layout, and broken files, each reported as a
DataError that names the file, the key and the index — and as exit status 2 from the CLI,
without a traceback."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from _helpers import write_json
from typer.testing import CliRunner

import dfl_dsl as dfl
from dfl_dsl.cli import app
from dfl_dsl.data import load_data
from dfl_dsl.errors import DataError, DflError

TRANSPORT = """
set ORIG; set DEST;
param supply{ORIG} >= 0; param demand{DEST} >= 0; param cost{ORIG, DEST} >= 0;
var ship{ORIG, DEST} >= 0;
minimize total: sum{i in ORIG, j in DEST} cost[i, j] * ship[i, j];
subject to out{i in ORIG}: sum{j in DEST} ship[i, j] <= supply[i];
subject to into{j in DEST}: sum{i in ORIG} ship[i, j] >= demand[j];
"""
TRANSPORT_DATA = {
    "ORIG": ["GARY", "CLEV"],
    "DEST": ["FRA", "DET", "LAN"],
    "supply": {"GARY": 50, "CLEV": 60},
    "demand": {"FRA": 30, "DET": 40, "LAN": 20},
    "cost": {"GARY": {"FRA": 3, "DET": 1, "LAN": 4}, "CLEV": {"FRA": 2, "DET": 5, "LAN": 1}},
}
TRANSPORT_OPTIMUM = 30 * 2 + 40 * 1 + 20 * 1


def _transport_model():
    return dfl.parse(TRANSPORT, "transport.opt")


# ---------------------------------------------------------------------- good data
def test_keyed_objects(tmp_path):
    inst = _transport_model().bind(write_json(tmp_path / "t.json", TRANSPORT_DATA))
    assert inst.entity("cost").array().tolist() == [[3, 1, 4], [2, 5, 1]]
    assert inst.solve().objective == pytest.approx(TRANSPORT_OPTIMUM)


def test_nested_lists_and_mixed_forms():
    data = copy.deepcopy(TRANSPORT_DATA)
    data["cost"] = {"CLEV": [2, 5, 1], "GARY": {"LAN": 4, "FRA": 3, "DET": 1}}
    data["supply"] = [50, 60]
    inst = _transport_model().bind(data)
    assert inst.entity("cost").array().tolist() == [[3, 1, 4], [2, 5, 1]]
    assert inst.entity("supply").array().tolist() == [50, 60]


def test_yaml(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(
        "ORIG: [GARY, CLEV]\nDEST: [FRA, DET, LAN]\nsupply: {GARY: 50, CLEV: 60}\n"
        "demand: [30, 40, 20]\ncost:\n  GARY: {FRA: 3, DET: 1, LAN: 4}\n  CLEV: [2, 5, 1]\n"
    )
    assert _transport_model().bind(path).solve().objective == pytest.approx(TRANSPORT_OPTIMUM)


def test_npz(tmp_path):
    path = tmp_path / "t.npz"
    np.savez(path, ORIG=np.array(["GARY", "CLEV"]), DEST=np.array(["FRA", "DET", "LAN"]),
             supply=np.array([50, 60]), demand=np.array([30.0, 40, 20]),
             cost=np.array([[3, 1, 4], [2, 5, 1]]))
    assert _transport_model().bind(path).solve().objective == pytest.approx(TRANSPORT_OPTIMUM)


def test_integer_keys_written_as_json_strings():
    inst = dfl.parse("set I; param w{I};", "m.opt").bind({"I": [3, 1], "w": {"1": 10, "3": 30}})
    assert inst.entity("w").array().tolist() == [30, 10]


def test_pairs_and_values_aligned_with_the_set():
    text = "set N; set A within N * N; param c{A}; param s in N;"
    inst = dfl.parse(text, "m.opt").bind(
        {"N": ["a", "b", "c"], "A": [["a", "b"], ["b", "c"]], "c": [1.5, 2.5], "s": "c"})
    assert inst.sets["A"].elements() == [("a", "b"), ("b", "c")]
    assert inst.entity("c").array().tolist() == [1.5, 2.5]


def test_filtered_index_keyed_by_element():
    text = "set I; param p{i in I, j in I: i < j};"
    inst = dfl.parse(text, "m.opt").bind({"I": [1, 2, 3], "p": {"1": {"2": 5, "3": 6}}})
    ent = inst.entity("p")
    assert ent.array().tolist() == [5, 6, 0] and ent.missing.tolist() == [False, False, True]


def test_inf_text_and_defaults():
    inst = dfl.parse("set I; param u{I} default 7; param v{I};", "m.opt").bind(
        {"I": [1, 2], "u": {"2": 1}, "v": ["inf", "-inf"]})
    assert inst.entity("u").array().tolist() == [7, 1]
    assert inst.entity("v").array().tolist() == [np.inf, -np.inf]


def test_data_mapping_with_a_name():
    source = load_data({"a": 1}, "given.json")
    assert source.filename == "given.json" and source.values == {"a": 1}


# ---------------------------------------------------------------------- broken data
PSD_MODEL = "param n : int; param P[n, n] psd; var x[n]; minimize f: quad_form(x, P);"
SYM_MODEL = "param n : int; param P[n, n] symmetric; var x[n] >= 0; minimize f: sum(P @ x);"
INT_MODEL = "param k : int >= 0; var x >= 0; minimize f: k * x;"
ELEM_MODEL = "set N; param source in N; param g{N} in N; var x{N} >= 0; minimize f: sum(x);"
PAIRS_MODEL = "set N; set A; var x >= 0; minimize f: x;"
WITHIN_MODEL = "set N; set ARCS within N * N; var f{ARCS} >= 0; minimize obj: sum(f);"
VEC_MODEL = "set N; param w{N}; var x{N} >= 0; minimize f: sum{i in N} w[i] * x[i];"


def _transport_with(**changes):
    data = copy.deepcopy(TRANSPORT_DATA)
    for key, value in changes.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    return data


def _json(data):
    return json.dumps(data, indent=1)


def _npz_object(path):
    np.savez(path, N=np.array([1, 2]), w=np.array([1.0, "x"], dtype=object))


BROKEN = {
    # id: (model text, file name, writer (text or callable), substrings of the message)
    "negative": (TRANSPORT, "d.json",
                 _json(_transport_with(supply={"GARY": -5, "CLEV": 60})),
                 ["`supply`", "[GARY]", "-5", ">= 0"]),
    "wrong_length": (TRANSPORT, "d.json", _json(_transport_with(supply=[1, 2, 3])),
                     ["`supply`", "expected 2 values", "got 3"]),
    "unknown_key": (TRANSPORT, "d.json",
                    _json(_transport_with(cost={"GARY": {"FRA": 3, "DET": 1, "XXX": 4},
                                                "CLEV": [2, 5, 1]})),
                    ["`cost`", '"GARY"', '"XXX"', "DEST"]),
    "text_value": (TRANSPORT, "d.json",
                   _json(_transport_with(cost={"GARY": [3, 1, 4], "CLEV": [2, "five", 1]})),
                   ["`cost`", "[CLEV, DET]", '"five"']),
    "null_value": (VEC_MODEL, "d.json", _json({"N": ["a", "b"], "w": [1, None]}),
                   ["`w`", "[b]", "null"]),
    "bool_value": (VEC_MODEL, "d.json", _json({"N": ["a", "b"], "w": [True, 2]}),
                   ["`w`", "[a]", "true"]),
    "not_psd": (PSD_MODEL, "d.json", _json({"n": 2, "P": [[1, 2], [2, 1]]}),
                ["`P`", "positive semidefinite", "-1"]),
    "not_symmetric": (SYM_MODEL, "d.json", _json({"n": 2, "P": [[1, 2], [3, 1]]}),
                      ["`P`", "not symmetric", "[0, 1] = 2", "[1, 0] = 3"]),
    "truncated_json": (TRANSPORT, "d.json", _json(TRANSPORT_DATA)[:150],
                       ["invalid JSON", "ends early"]),
    "invalid_yaml": (TRANSPORT, "d.yaml", "ORIG: [GARY, CLEV\nDEST: [FRA]\n", ["invalid YAML"]),
    "int_given_fraction": (INT_MODEL, "d.json", _json({"k": 1.5}),
                           ["`k`", "1.5", "`int`"]),
    "element_outside_set": (ELEM_MODEL, "d.json",
                            _json({"N": ["a", "b"], "source": "z", "g": ["a", "b"]}),
                            ["`source`", "'z'", "not in `N`"]),
    "indexed_element_outside_set": (ELEM_MODEL, "d.json",
                                    _json({"N": ["a", "b"], "source": "a",
                                           "g": {"a": "b", "b": "q"}}),
                                    ["`g`", "[b]", "'q'"]),
    "duplicate_element": (TRANSPORT, "d.json",
                          _json(_transport_with(ORIG=["GARY", "CLEV", "GARY"])),
                          ["`ORIG`", "'GARY'", "twice"]),
    "pairs_without_within": (PAIRS_MODEL, "d.json", _json({"N": [1, 2], "A": [[1, 2], [2, 1]]}),
                             ["`A`", "element 0", "single elements"]),
    "outside_within": (WITHIN_MODEL, "d.json",
                       _json({"N": [1, 2, 3], "ARCS": [[1, 2], [2, 9]]}),
                       ["`ARCS`", "(2, 9)", "superset"]),
    "npz_object_array": (VEC_MODEL, "d.npz", _npz_object, ["`w`", "allow_pickle=False"]),
    "npz_text_array": (VEC_MODEL, "d.npz",
                       lambda p: np.savez(p, N=np.array([1, 2]), w=np.array(["1", "x"])),
                       ["`w`", "numbers", "text"]),
    # a key given twice: the parsers kept the last value without a word
    "json_key_twice": (VEC_MODEL, "d.json", '{"N": ["a", "b"], "w": [1, 2], "w": [3, 4]}',
                       ['"w"', "twice"]),
    "json_nested_key_twice": (VEC_MODEL, "d.json", '{"N": ["a", "b"], "w": {"a": 1, "a": 2}}',
                              ['"a"', "twice"]),
    "yaml_key_twice": (VEC_MODEL, "d.yaml", "N: [a, b]\nw: [1, 2]\nw: [3, 4]\n",
                       ["'w'", "twice"]),
}


def _write(tmp_path, case):
    text, filename, content, _ = BROKEN[case]
    model = tmp_path / "model.opt"
    model.write_text(text)
    data = tmp_path / filename
    if callable(content):
        content(data)
    else:
        data.write_text(content)
    return model, data


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_data_is_a_data_error(tmp_path, case):
    model, data = _write(tmp_path, case)
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    err = info.value
    for part in BROKEN[case][3]:
        assert part in err.message, (part, err.message)
    assert err.filename == str(data)
    assert str(err).startswith(str(data))


def test_a_key_missing_from_the_data_is_reported_at_its_declaration(tmp_path):
    """The data has no place to point at; the model's declaration has."""
    model = tmp_path / "m.opt"
    model.write_text(TRANSPORT)
    data = tmp_path / "d.json"
    data.write_text(_json(_transport_with(demand=None)))
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    err = info.value
    assert err.message == f'param `demand` has no value: {data} has no "demand"'
    line = TRANSPORT[:TRANSPORT.index("param demand")].count("\n") + 1
    assert err.filename == str(model) and err.pos.line == line
    assert str(err).startswith(f"{model}:{line}:")


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_data_exits_2_from_the_cli(tmp_path, case):
    model, data = _write(tmp_path, case)
    out = tmp_path / "sol.json"
    for command in (["check"], ["solve", "--json", "--output", str(out)]):
        result = CliRunner().invoke(app, [*command, str(model), "--data", str(data)])
        assert not out.exists()
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and "internal error" not in result.output
        stderr = result.stderr.replace("\n", "")  # rich wraps at 80 columns off a terminal
        assert "error:" in stderr and BROKEN[case][3][0] in stderr
        assert result.stdout == ""


def test_errors_point_at_a_line(tmp_path):
    model, data = _write(tmp_path, "truncated_json")
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    assert info.value.pos.line > 1
    model, data = _write(tmp_path, "invalid_yaml")
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    assert info.value.pos.line == 2
    model, data = _write(tmp_path, "pairs_without_within")
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    assert "within S * T" in info.value.hint
    model, data = _write(tmp_path, "negative")
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    lines = data.read_text().splitlines()
    assert '"supply"' in lines[info.value.pos.line - 1]


def test_unchecked_missing_entries_are_not_judged_by_checks():
    # `w[2]` is left out (no default): `> 0` must not report the placeholder 0 ...
    inst = dfl.parse("set N; param w{N} > 0;", "m.opt").bind({"N": [1, 2], "w": {"1": 3}})
    assert inst.entity("w").missing.tolist() == [False, True]
    # ... and using it says it is missing
    text = "set N; param w{N}; var x{N} >= 0; minimize f: sum{i in N} w[i] * x[i];"
    with pytest.raises(dfl.DflError, match=r"`w` has no value for \[2\]"):
        dfl.parse(text, "m.opt").bind({"N": [1, 2], "w": {"1": 3}}).compile()


def test_bound_of_a_check_can_differ_per_entry():
    text = "set N; param lo{N}; param w{i in N} >= lo[i];"
    with pytest.raises(DataError, match=r"`w`\[b\]: value 2 breaks `>= 5`"):
        dfl.parse(text, "m.opt").bind({"N": ["a", "b"], "lo": [0, 5], "w": [1, 2]})
    text = "set N; param lo{N}; param price{i in N} : uncertain >= lo[i];"
    data = {"N": ["a", "b", "c"], "lo": [1, 0, 5], "price": [[2, 0, 3], [0, 0, 6]]}
    with pytest.raises(DataError) as info:
        dfl.parse(text, "m.opt").bind(data)
    assert "`price`[c] in scenario 0: value 3 breaks `>= 5` (1 more entries too)" in str(
        info.value)


def test_unreadable_files(tmp_path):
    model = dfl.parse("set N;", "m.opt")
    with pytest.raises(DataError, match="not found"):
        model.bind(tmp_path / "nope.json")
    (tmp_path / "d.txt").write_text("N: [1]")
    with pytest.raises(DataError, match="unknown data format"):
        model.bind(tmp_path / "d.txt")
    # a folder (`-d data/`) or a name without its suffix (`-d mydata`) was "unknown data
    # format `data`": the path's last part read as a format
    (tmp_path / "data").mkdir()
    with pytest.raises(DataError, match="can't read data file: Is a directory"):
        model.bind(tmp_path / "data")
    with pytest.raises(DataError, match="data file not found"):
        model.bind(tmp_path / "mydata")
    np.save(tmp_path / "d.npy", np.zeros(3))  # binary: was "the data file is not UTF-8 text"
    with pytest.raises(DataError, match="unknown data format `.npy`") as info:
        model.bind(tmp_path / "d.npy")
    assert info.value.hint == "use .json, .yaml, .npz or .dat"
    (tmp_path / "d.npz").write_bytes(b"not a zip")
    with pytest.raises(DataError, match="not a zip archive"):
        model.bind(tmp_path / "d.npz")
    np.save(tmp_path / "arr.npy", np.zeros(3))  # a .npy renamed .npz: np.load gives an array
    (tmp_path / "arr.npy").rename(tmp_path / "arr.npz")
    with pytest.raises(DataError, match="not a zip archive"):
        model.bind(tmp_path / "arr.npz")
    with pytest.raises(DataError, match="not found"):
        model.bind(tmp_path / "nope.npz")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="mapping"):
        model.bind(tmp_path / "list.json")


def test_duplicate_keys_point_at_the_repeat(tmp_path):
    for case, line in (("json_key_twice", 1), ("yaml_key_twice", 3)):
        model, data = _write(tmp_path, case)
        with pytest.raises(DataError) as info:
            dfl.load(model).bind(data)
        assert info.value.pos.line == line
    model, data = _write(tmp_path, "json_key_twice")
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    assert info.value.pos.column == data.read_text().rindex('"w"') + 1


@pytest.mark.parametrize(("text", "hint"), [
    ("N: [NO, SE]\nw: [1, 2]\n", 'quote them, "NO"'),
    ("N: [a, b]\nw: [off, 2]\n", 'quote them, "NO"'),
    ("N: [a, b]\nw: [1, 2e3]\n", "YAML reads `2e3` as text: write it 2.0e+3"),
    # the hint wrote 2.0e+3 whatever the number: the user's own, rewritten
    ("N: [a, b]\nw: [1, 1e3]\n", "write it 1.0e+3"),
    ("N: [a, b]\nw: [1, -1.5E-4]\n", None),  # (YAML reads this one as a float)
    ("N: [a, b]\nw: [1, 12e-4]\n", "write it 12.0e-4"),
])
def test_yaml_surprises_get_a_hint(tmp_path, text, hint):
    model = tmp_path / "m.opt"
    model.write_text(VEC_MODEL)
    data = tmp_path / "d.yaml"
    data.write_text(text)
    if hint is None:
        dfl.load(model).bind(data)
        return
    with pytest.raises(DataError) as info:
        dfl.load(model).bind(data)
    assert hint in (info.value.hint or "")


def test_a_json_file_with_a_byte_order_mark(tmp_path):
    # json.loads refused it ("Unexpected UTF-8 BOM"), and Windows editors write one
    model = tmp_path / "m.opt"
    model.write_text(VEC_MODEL)
    data = tmp_path / "d.json"
    data.write_bytes(b'\xef\xbb\xbf{"N": ["a", "b"], "w": [1, 2]}')
    inst = dfl.load(model).bind(data)
    assert inst.solve("highs").status == "optimal"


# ---------------------------------------------------------------------- hardening (#19)
@pytest.mark.parametrize(("data", "message"), [
    ({"I": ["a", "b"], "c": [1, 10**400]}, r"param `c`\[b\]: 1e400 \(about\) is too large"),
    ({"I": ["a", "b"], "c": {"a": 1, "b": 10**400}}, r"param `c`\[b\]: 1e400"),
    ({"I": ["a", 10**400], "c": [1, 2]}, r"set `I`: integer element 1e400 \(about\) is too"),
    ({"I": ["a", "b"], "c": [1.0, None]}, r"param `c`\[b\]: expected a number, got null"),
])
def test_numbers_past_a_float_and_nulls_are_named_errors(data, message):
    # ints past a float were an internal OverflowError
    with pytest.raises(DataError, match=message):
        dfl.parse("set I; param c{I};").bind(data)


def test_entries_given_one_by_one_keep_their_values_and_labels():
    """Lists holding texts take the path that checks entries one by one: it once rebuilt
    the index's element list, and each entry's label, per entry (O(n^2))."""
    inst = dfl.parse('param n : int; set G; param c[2, n]; param g{i in 1..n: i != 2} in G;'
                     ).bind({"n": 3, "G": ["p", 7], "c": [[1, "inf", 2], ["-inf", 3, 4]],
                             "g": ["p", 7]})
    assert inst.entity("c").data.tolist() == [1, np.inf, 2, -np.inf, 3, 4]
    assert [inst.entity("g").domain.label(k) for k in range(2)] == ["[1]", "[3]"]
    with pytest.raises(DataError, match=r"param `c`\[1, 2\]: expected a number, got \"x\""):
        dfl.parse("param n : int; param c[2, n];").bind({"n": 3, "c": [[1, 2, 3], [4, 5, "x"]]})
    with pytest.raises(DataError, match=r"param `g`\[3\]: .*can't be a set element"):
        dfl.parse('set G; param g{i in 1..3: i != 2} in G;').bind({"G": ["p"], "g": ["p", None]})


@pytest.mark.parametrize("text, first, second", [
    ('{"S": [1, 2], "p": {"1": 1.0, "01": 2.0, "2": 3.0}}', '"1"', '"01"'),
    ('{"S": [1, 2], "p": {"2": 1.0, " 2": 2.0, "1": 3.0}}', '"2"', '" 2"'),
])
def test_two_keys_naming_one_element_are_refused(tmp_path, text, first, second):
    """JSON keys are text read as the set's integers: "1" and "01" would both be 1, and one
    entry would silently overwrite the other."""
    path = tmp_path / "d.json"
    path.write_text(text)
    model = dfl.parse("set S; param p{S}; var x{S} >= 0; minimize o: sum{s in S} p[s] * x[s];")
    with pytest.raises(DflError, match=f"keys {first} and {second} name the same element"):
        model.bind(str(path))


SPARSE = ("set N; param c{i in N, j in N: i != j}; var f{i in N, j in N: i != j} >= 0;"
          " minimize o: sum{i in N, j in N: i != j} c[i, j] * f[i, j];")


@pytest.mark.parametrize("c, words", [
    ({"1": {"2": 1.0}, "01": {"2": 2.0}, "2": {"1": 3.0}},
     r'keys \["1", "2"\] and \["01", "2"\] name the same'),
    ({"1": {"2": 1.0, " 2": 2.0}, "2": {"1": 3.0}},
     r'keys \["1", "2"\] and \["1", " 2"\] name the same'),
    ({"1": {"2": 1.0}, "2": {"2": 3.0}}, r"unknown element \(2, 2\)"),
    (5, "expected a list aligned with its entries or an object keyed by element, got 5"),
])
def test_an_object_over_a_sparse_index_reads_keys_as_a_dense_one_does(c, words):
    """`_walk_sparse` (an object over a filtered index) had its own digit rule: no
    same-element check ("1" and "01" both set c[1, 2], one silently lost), no strip, and the
    text "3" turned into 3 even where the set holds the text. It reads its keys with `_keyed`
    now, as an object over a product of sets is read."""
    model = dfl.parse(SPARSE)
    with pytest.raises(DataError, match=words):
        model.bind({"N": [1, 2], "c": c})
    inst = model.bind({"N": [1, 2], "c": {"1": {" 2": 4.0}, 2: {"1": 5}}})
    assert inst.entity("c").data.tolist() == [4.0, 5.0]
    # a set of texts that look like numbers: the key "3" is the text "3", not the number
    inst = model.bind({"N": ["3", 4], "c": {"3": {"4": 6.0}, "4": {"3": 7.0}}})
    assert inst.entity("c").data.tolist() == [6.0, 7.0]
