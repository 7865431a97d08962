"""`--output` files: one table per variable and constraint in .npz, stacked in .csv/.parquet."""

from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl.errors import DflError
from dfl_dsl.solution_files import checked_format, solution_writer

TEXT = """
set ORIG; set DEST;
param supply{ORIG}; param demand{DEST}; param cost{ORIG, DEST};
var ship{ORIG, DEST} >= 0;
var spare in [0, 5];
minimize total: sum{i in ORIG, j in DEST} cost[i, j] * ship[i, j] - spare;
subject to supply_limit{i in ORIG}: sum{j in DEST} ship[i, j] <= supply[i];
subject to meet_demand{j in DEST}: sum{i in ORIG} ship[i, j] >= demand[j];
"""
DATA = {"ORIG": ["A", "B,x"], "DEST": [1, 2], "supply": [60, 50], "demand": [30, 40],
        "cost": [[4, 6], [5, 3]]}


@pytest.fixture(scope="module")
def sol():
    return bind(TEXT, DATA).solve("highs")


def _written(sol, name, **options) -> bytes:
    from pathlib import Path

    handle = io.BytesIO()
    solution_writer(sol, Path(name), **options)(handle)
    return handle.getvalue()


def test_npz_holds_one_table_per_variable_and_constraint(sol):
    arrays = np.load(io.BytesIO(_written(sol, "sol.npz")), allow_pickle=False)
    assert str(arrays["status"]) == "optimal" and float(arrays["objective"]) == sol.objective
    assert str(arrays["objective_name"]) == "total"
    assert arrays["ship.ORIG"].tolist() == ["A", "A", "B,x", "B,x"]
    assert arrays["ship.DEST"].tolist() == [1, 2, 1, 2]
    assert np.array_equal(arrays["ship.value"], sol.x[:4])
    assert np.array_equal(arrays["ship.reduced_cost"], sol.reduced_costs[:4])
    assert float(arrays["spare.value"][0]) == 5.0 and "spare.ORIG" not in arrays
    assert arrays["meet_demand.DEST"].tolist() == [1, 2]
    assert np.array_equal(arrays["meet_demand.dual"], sol.duals["meet_demand"])


def test_npz_nonzeros(sol):
    arrays = np.load(io.BytesIO(_written(sol, "s.npz", nonzeros=True)))
    assert np.all(arrays["ship.value"] != 0) and len(arrays["ship.value"]) == 2


def test_csv_stacks_the_tables_with_shared_key_columns(sol):
    rows = list(csv.DictReader(io.StringIO(_written(sol, "sol.csv").decode())))
    assert list(rows[0]) == ["name", "ORIG", "DEST", "value", "reduced_cost", "dual"]
    ship = [r for r in rows if r["name"] == "ship"]
    assert [(r["ORIG"], r["DEST"]) for r in ship] == [("A", "1"), ("A", "2"), ("B,x", "1"),
                                                      ("B,x", "2")]
    assert [float(r["value"]) for r in ship] == sol.x[:4].tolist()
    demand = [r for r in rows if r["name"] == "meet_demand"]
    assert [r["ORIG"] for r in demand] == ["", ""] and [r["value"] for r in demand] == ["", ""]
    assert [float(r["dual"]) for r in demand] == sol.duals["meet_demand"].tolist()
    assert [r for r in rows if r["name"] == "spare"][0]["ORIG"] == ""


def test_parquet_round_trip(sol):
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(io.BytesIO(_written(sol, "sol.parquet")))
    assert table.column_names == ["name", "ORIG", "DEST", "value", "reduced_cost", "dual"]
    assert str(table.schema.field("DEST").type) == "int64"
    data = table.to_pydict()
    ship = [i for i, name in enumerate(data["name"]) if name == "ship"]
    assert [data["ORIG"][i] for i in ship] == ["A", "A", "B,x", "B,x"]
    assert [data["value"][i] for i in ship] == sol.x[:4].tolist()
    assert json.loads(table.schema.metadata[b"dfl"])["status"] == "optimal"


def test_parquet_without_pyarrow_is_refused_up_front(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(DflError, match="needs pyarrow"):
        checked_format(tmp_path / "sol.parquet")
    checked_format(tmp_path / "sol.csv")


@pytest.mark.parametrize("name", ["sol.xlsx", "sol.npy", "sol.yaml"])
def test_a_suffix_naming_a_format_not_written_is_refused(tmp_path, name):
    with pytest.raises(DflError, match="no writer for") as err:
        checked_format(tmp_path / name)
    assert ".npz, .csv or .parquet" in err.value.hint
    checked_format(tmp_path / "sol")  # no suffix: the JSON object


def test_other_suffixes_get_the_json_object(sol):
    assert json.loads(_written(sol, "sol.json")) == sol.to_json()
    assert json.loads(_written(sol, "sol.txt", nonzeros=True)) == json.loads(
        sol.json_text(nonzeros=True))
