"""Where a data error points: in JSON, at the entry it is about, not only at the param's key."""

from __future__ import annotations

import json

import pytest

import dfl_dsl as dfl
from dfl_dsl.errors import DataError

MODEL = ("set N; set A within N * N; param c{N} >= 0; var x{N} >= 0;\n"
         "minimize o: sum{n in N} c[n] * x[n];")


def _error(tmp_path, data: dict) -> tuple[DataError, list[str]]:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(DataError) as info:
        dfl.parse(MODEL).bind(str(path))
    return info.value, path.read_text().splitlines()


def _pointed_at(error: DataError, lines: list[str]) -> str:
    line = lines[error.pos.line - 1]
    return line[error.pos.column - 1:error.pos.end_column - 1]


@pytest.mark.parametrize("data, words, spot", [
    # an unknown key among many: the key itself
    ({"N": ["a", "b", "c"], "A": [], "c": {"a": 1, "b": 2, "zz": 3}}, 'unknown element "zz"',
     '"zz"'),
    # a value that isn't a number, in a long list: that value
    ({"N": ["a", "b", "c"], "A": [], "c": [1, 2, "3x"]}, 'expected a number, got "3x"', '"3x"'),
    # a pair outside N * N: the pair's first component, at that pair (not an earlier "a")
    ({"N": ["a", "b"], "A": [["a", "b"], ["a", "q"]], "c": [1, 2]}, "('a', 'q') is not within",
     '"a"'),
])
def test_a_json_error_points_at_the_entry(tmp_path, data, words, spot):
    """Errors about one entry pointed at the param's key (`"c": [`), however long its value:
    the message named the entry, the caret did not."""
    error, lines = _error(tmp_path, data)
    assert words in str(error)
    assert _pointed_at(error, lines) == spot
    assert error.pos.line > next(k for k, text in enumerate(lines) if '"' in text) + 1
    if "q" in words:
        assert '"q"' in lines[error.pos.line]  # the pair ["a", "q"], one line per component


def test_a_value_not_written_in_the_key_falls_back_to_the_key(tmp_path):
    error, lines = _error(tmp_path, {"N": ["a"], "A": [], "c": [-1]})
    assert "breaks `>= 0`" in str(error)  # (named by its index: -1 is found, or the key)
    assert _pointed_at(error, lines) in ('"c"', "-1")
