"""Model files: a `data;` part read as AMPL data, at its lines in the model file, under the
`--data` file's names."""

from __future__ import annotations

import json

import pytest

import dfl_dsl as dfl
from dfl_dsl.errors import DataError

MODEL = """set I;
param c{I} >= 0;
param cap;
var x{I} in [0, cap];
maximize total: sum{i in I} c[i] * x[i];
subject to budget: sum{i in I} x[i] <= 2;
"""
DATA = "data;\nset I := a b c ;\nparam c := a 1 b 2 c 3 ;\nparam cap := 1 ;\n"


def test_the_data_part_is_bound_without_data(tmp_path):
    path = tmp_path / "m.mod"
    path.write_text(MODEL + DATA)
    model = dfl.load(path)
    assert model.source == MODEL  # the model text alone (its hash, its excerpts)
    assert model.bind().solve().objective == pytest.approx(5)


def test_data_file_names_replace_the_model_files(tmp_path):
    path = tmp_path / "m.mod"
    path.write_text(MODEL + DATA)
    (tmp_path / "d.json").write_text(json.dumps({"c": {"a": 9, "b": 0, "c": 0}}))
    inst = dfl.load(path).bind(tmp_path / "d.json")
    assert inst.entity("c").data.tolist() == [9, 0, 0]  # c from d.json, I and cap from m.mod
    assert inst.solve().objective == pytest.approx(9)


def test_errors_in_the_data_part_point_into_the_model_file(tmp_path):
    path = tmp_path / "m.mod"
    path.write_text(MODEL + DATA.replace("c 3 ;", "c ;"))
    with pytest.raises(DataError, match=r"param `c`\[c\] has no value") as info:
        dfl.load(path)
    assert info.value.filename == str(path) and info.value.pos.line == 9
    path.write_text(MODEL + DATA.replace("c 3", "c -3"))
    model = dfl.load(path)
    with pytest.raises(DataError, match="breaks `>= 0`") as info:
        model.bind()
    assert info.value.filename == str(path) and info.value.pos.line == 9
    (tmp_path / "d.json").write_text('{"cap": 1, "c": [1, 2, 3]}')
    model.bind(tmp_path / "d.json")  # c from the data file: the model file's -3 is not read


def test_a_model_without_a_data_part_has_none():
    assert dfl.parse(MODEL, "m.mod").data is None
