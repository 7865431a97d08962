"""`dfl solve --output`: the solution as JSON, or as tables (.npz, .csv, .parquet).

An .npz holds one table per variable and per constraint, as arrays named `TABLE.COLUMN`
(`ship.ORIG`, `ship.value`, `ship.reduced_cost`, `supply_limit.dual`) beside `status`,
`objective`, `objective_name`, `backend` and `time_s`. A CSV or Parquet file holds one table,
so there the tables are stacked: a `name` column says whose row it is, each key column is
named by its set (a variable over ORIG and a constraint over ORIG share the `ORIG` column) and
is empty where a table has no such key."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .errors import DflError
from .solution import Solution
from .solution_json import number_texts
from .solution_tables import Table

TABLE_FORMATS = (".npz", ".csv", ".parquet")
JSON_SUFFIXES = (".json", ".txt", "")  # the `--json` object: text, whatever the file is named


def checked_format(path: Path | None) -> None:
    """Refuse, before any work, a suffix naming a format we don't write (a `.xlsx` holding
    JSON would open nowhere) and a table format this installation can't write."""
    if path is None:
        return
    suffix = path.suffix.lower()
    if suffix not in TABLE_FORMATS + JSON_SUFFIXES:
        raise DflError(f"--output {path}: no writer for `{path.suffix}` files",
                       hint="name it .json (the --json object), .npz, .csv or .parquet")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise DflError(f"--output {path}: writing Parquet needs pyarrow",
                           hint="pip install pyarrow, or write .npz or .csv") from None


def solution_writer(sol: Solution, path: Path, *, nonzeros: bool = False,
                    text: str | None = None) -> Callable[[BinaryIO], None]:
    """What writes `sol` to `path`, by its suffix: tables for .npz, .csv and .parquet, else
    (.json, .txt, none: `checked_format` refused the rest) the `--json` object (`text`, when
    it was already made with the same `nonzeros`)."""
    suffix = path.suffix.lower()
    if suffix not in TABLE_FORMATS:
        text = text if text is not None else sol.json_text(nonzeros=nonzeros)
        return lambda handle: handle.write(text.encode() + b"\n")
    tables = sol.variable_tables()
    tables = [t.nonzero("value") for t in tables] if nonzeros else tables
    duals = sol.dual_tables()
    tables += [t.nonzero("dual") for t in duals] if nonzeros else duals
    write = {".npz": _write_npz, ".csv": _write_csv, ".parquet": _write_parquet}[suffix]
    return lambda handle: write(sol, tables, handle)


def _summary(sol: Solution) -> dict[str, object]:
    objective = sol.objective if sol.objective is not None else math.nan
    summary = {"status": sol.status, "objective": objective, "backend": sol.backend,
               "time_s": sol.time_s}
    if sol.objective_name is not None:  # which of the model's objectives was solved
        summary["objective_name"] = sol.objective_name
    return summary


def _write_npz(sol: Solution, tables: list[Table], handle: BinaryIO) -> None:
    arrays = {key: np.asarray(value) for key, value in _summary(sol).items()}
    for table in tables:
        for key in table.keys:
            arrays[f"{table.name}.{key.name}"] = key.column()
        for column, values in table.columns.items():
            arrays[f"{table.name}.{column}"] = values
    np.savez(handle, **arrays)


def _key_names(tables: list[Table]) -> list[str]:
    names: list[str] = []
    for table in tables:
        names += [k.name for k in table.keys if k.name not in names]
    return names


def _value_names(tables: list[Table]) -> list[str]:
    present = {column for table in tables for column in table.columns}
    return [c for c in ("value", "reduced_cost", "dual") if c in present]


def _write_csv(sol: Solution, tables: list[Table], handle: BinaryIO) -> None:
    """One row per entry: every cell's text is made from whole columns (each distinct key
    and number formatted once), then the rows are joined."""
    keys, values = _key_names(tables), _value_names(tables)
    text = io.StringIO()
    text.write(",".join(["name", *keys, *values]) + "\n")
    for table in tables:
        cells: list[list[str]] = [[_csv_text(table.name)] * table.n]
        by_name = {k.name: k for k in table.keys}
        for name in keys:
            key = by_name.get(name)
            if key is None:
                cells.append([""] * table.n)
            else:
                vocab = [_csv_text(t) for t in key.texts()]
                cells.append(list(map(vocab.__getitem__, key.codes.tolist())))
        for column in values:
            if column in table.columns:
                cells.append([t if t != "null" else ""
                              for t in number_texts(table.columns[column])])
            else:
                cells.append([""] * table.n)
        if table.n:
            text.write("\n".join(map(",".join, zip(*cells, strict=True))) + "\n")
    handle.write(text.getvalue().encode())


def _csv_text(text: str) -> str:
    """A CSV cell: quoted when it holds a comma, a quote or a line break (RFC 4180)."""
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _write_parquet(sol: Solution, tables: list[Table], handle: BinaryIO) -> None:
    """The stacked tables as one Parquet table (key columns int64 where every element is an
    integer, else strings; a missing number is null); the summary goes in the file's
    metadata under `dfl`."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    keys, values = _key_names(tables), _value_names(tables)
    types = {name: pa.int64() if all(k.integer for t in tables for k in t.keys if k.name == name)
             else pa.string() for name in keys}
    parts = []
    for table in tables:
        by_name = {k.name: k for k in table.keys}
        columns = {"name": pa.array([table.name] * table.n, pa.string())}
        for name in keys:
            key = by_name.get(name)
            if key is None:
                columns[name] = pa.nulls(table.n, types[name])
            else:
                data = key.column()
                columns[name] = pa.array(data if types[name] == pa.int64() else data.astype(str))
        for column in values:
            data = table.columns.get(column)
            columns[column] = pa.nulls(table.n, pa.float64()) if data is None else pa.array(
                data, pa.float64(), from_pandas=True)
        parts.append(pa.table(columns))
    if not parts:
        parts.append(pa.table({"name": pa.array([], pa.string())}))
    metadata = {b"dfl": json.dumps(_summary(sol)).encode()}
    pq.write_table(pa.concat_tables(parts).replace_schema_metadata(metadata), handle)
