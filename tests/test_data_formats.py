"""data_formats: JSON, YAML and NPZ read strictly, errors located in the text (the messages
through `dfl` are checked in test_data.py's broken files)."""

from __future__ import annotations

import numpy as np
import pytest

from dfl_dsl.data_formats import key_pos, load_npz, parse_json, parse_yaml
from dfl_dsl.errors import DataError


def test_key_pos_spans_the_quoted_key():
    text = '{\n  "cost": 1}'
    pos = key_pos(text, text.index('"cost"'), "cost")
    assert (pos.line, pos.column, pos.end_line, pos.end_column) == (2, 3, 2, 9)


def test_a_json_key_twice_is_located_at_its_repeat():
    text = '{"w": [1, 2],\n "w": [3, 4]}'
    with pytest.raises(DataError, match="appears twice") as info:
        parse_json(text, "d.json")
    assert (info.value.pos.line, info.value.pos.column) == (2, 2)


def test_json_that_ends_early_says_so():
    with pytest.raises(DataError, match="ends early"):
        parse_json('{"w": [1, 2', "d.json")


def test_a_yaml_key_twice_is_refused_and_distinct_keys_read():
    assert parse_yaml("a: 1\nb: [2, 3]\n", "d.yaml") == {"a": 1, "b": [2, 3]}
    with pytest.raises(DataError, match="appears twice") as info:
        parse_yaml("w: 1\nw: 2\n", "d.yaml")
    assert info.value.pos.line == 2


def test_npz_reads_arrays_and_refuses_what_is_no_zip(tmp_path):
    good = tmp_path / "d.npz"
    np.savez(good, w=np.arange(3.0))
    assert load_npz(good)["w"].tolist() == [0.0, 1.0, 2.0]
    bad = tmp_path / "e.npz"
    with bad.open("wb") as handle:  # an .npy array under the .npz name
        np.save(handle, np.arange(3.0))
    with pytest.raises(DataError, match="not a valid npz file"):
        load_npz(bad)
