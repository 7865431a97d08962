"""checked_output: an output path that can't be written is a user error before any work."""

from __future__ import annotations

import pytest

from dfl_dsl.errors import DflError
from dfl_dsl.outputs import checked_output


def test_a_file_path_passes_and_missing_folders_are_fine(tmp_path):
    assert checked_output(None, "--save") is None
    assert checked_output(tmp_path / "a.json", "--output") == tmp_path / "a.json"
    assert checked_output(tmp_path / "new" / "deeper" / "a.json", "--output") is not None


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(DflError, match="--save .* is a folder"):
        checked_output(tmp_path, "--save")


def test_a_file_in_the_way_of_the_folders_is_refused(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(DflError, match="`.*afile` is a file, not a folder"):
        checked_output(tmp_path / "afile" / "sub" / "x.npz", "--out")
