"""`dfl data FILE --to json`: .dat (or a model file's data part) written as the JSON the reader
takes, giving the same solution."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import dfl_dsl as dfl
from dfl_dsl.cli import app
from dfl_dsl.data import load_data
from dfl_dsl.data_convert import convert
from dfl_dsl.errors import DflError

runner = CliRunner()
MODEL = """set I; set J;
param c{I, J} default 5;
param cap{I} default 4;
var x{I, J} >= 0;
minimize cost: sum{i in I, j in J} c[i, j] * x[i, j];
subject to need{j in J}: sum{i in I} x[i, j] >= 1;
subject to room{i in I}: sum{j in J} x[i, j] <= cap[i];
"""
DAT = ("set I := a b ;\nset J := 1 2 3 ;\nparam c: 1 2 3 :=\n a 1 . 4\n b 2 3 9 ;\n"
       "param cap default 2 := a Infinity ;\n")


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "m.mod").write_text(MODEL)
    (tmp_path / "d.dat").write_text(DAT)
    return tmp_path


def test_json_gives_the_same_solution(files):
    out = files / "d.json"
    result = runner.invoke(app, ["data", str(files / "d.dat"), "--model", str(files / "m.mod"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    values = json.loads(out.read_text())
    assert values["c"] == {"a": {"1": 1, "3": 4}, "b": {"1": 2, "2": 3, "3": 9}}
    assert values["cap"] == {"a": "inf", "b": 2.0}  # the data's default, entry by entry
    model = dfl.load(files / "m.mod")
    assert model.bind(out).solve().objective == pytest.approx(
        model.bind(files / "d.dat").solve().objective)


def test_yaml_and_stdout(files):
    (files / "e.dat").write_text("set I := a ;\nparam p := a 1.5 ;")
    result = runner.invoke(app, ["data", str(files / "e.dat"), "--to", "yaml"])
    assert result.exit_code == 0 and yaml.safe_load(result.stdout) == {"I": ["a"],
                                                                       "p": {"a": 1.5}}


def test_a_default_needs_the_model(files):
    result = runner.invoke(app, ["data", str(files / "d.dat"), "--out", str(files / "x.json")])
    assert result.exit_code == 2
    assert "d.dat:6:7: error: param `cap` has a `default` in the data" in result.stderr
    assert not (files / "x.json").exists()  # no half-written file


def test_a_model_files_data_part(files):
    (files / "both.mod").write_text(MODEL + "data;\n" + DAT)
    assert json.loads(convert(files / "both.mod", "json"))["cap"] == {"a": "inf", "b": 2.0}
    with pytest.raises(DflError, match="has no data part"):
        convert(files / "m.mod", "json")
    with pytest.raises(DflError, match="unknown format"):
        convert(files / "d.dat", "xml")


AMPL_MODELS = Path(__file__).resolve().parent / "ampl" / "models"


@pytest.mark.parametrize("name", sorted(p.name for p in AMPL_MODELS.iterdir())
                         if AMPL_MODELS.is_dir() else [])
@pytest.mark.parametrize("with_model", [True, False], ids=["model", "no-model"])
def test_ampl_models_data_converts_to_their_json(name, with_model, tmp_path):
    """tests/ampl's models carry their data twice: AMPL data and JSON written by hand. The
    converted .dat must bind to the same arrays as the hand-written JSON (without the model
    too: the widths then come from the file's layout)."""
    folder = AMPL_MODELS / name
    mod, dat, hand = (folder / f"{name}.{ext}" for ext in ("mod", "dat", "json"))
    model = dfl.load(mod)
    source = dat if dat.exists() else mod
    converted = tmp_path / "converted.json"
    data_part = model.data if source == mod else load_data(source)
    if not with_model and data_part.defaults:
        with pytest.raises(DflError, match="has a `default` in the data"):
            convert(source, "json")  # JSON can't hold one: the model's widths are needed
        return
    converted.write_text(convert(source, "json", mod if with_model else None))
    ours, theirs = model.bind(converted), model.bind(hand)
    for key, the_set in theirs.ctx.sets.items():
        assert np.array_equal(ours.ctx.sets[key].keys, the_set.keys), key
    for key, entity in theirs.ctx.entities.items():
        if entity.kind == "data":
            assert np.array_equal(ours.ctx.entities[key].data, entity.data), key


def test_one_element_spelled_two_ways_is_one_json_key(tmp_path):
    """`1 2` and `'1' 3` name element 1 twice (the .dat groups them apart): one "1" object in
    the JSON, binding as the .dat does; the same entry under both spellings is refused."""
    model = tmp_path / "m.mod"
    model.write_text("set A dimen 2; param d{A};\nvar x{A} >= 0;\n"
                     "minimize o: sum{(i, j) in A} d[i, j] * x[i, j];\n")
    dat = tmp_path / "d.dat"
    dat.write_text("set A := (1,2) (1,3) (2,3) ;\nparam d := 1 2 3  2 3 1  '1' 3 5 ;\n")
    text = convert(dat, "json", model)
    assert json.loads(text)["d"] == {"1": {"2": 3, "3": 5}, "2": {"3": 1}}
    assert text.count('"1":') == 1
    out = tmp_path / "d.json"
    out.write_text(text)
    for source in (dat, out):
        inst = dfl.load(model).bind(str(source))
        assert inst.ctx.entities["d"].data.tolist() == [3.0, 5.0, 1.0]
    dat.write_text("set A := (1,2) (1,3) ;\nparam d := 1 2 3  1 3 4  '1' 3 5 ;\n")
    with pytest.raises(DflError, match=r"entry \[1, 3\] twice"):
        convert(dat, "json", model)
