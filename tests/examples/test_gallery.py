"""Every example in examples/ runs as its README says: each folder's expected.yaml lists the
commands (the same lines its README shows) and what their JSON output must hold.

expected.yaml:
    steps:
      - run: python make_data.py            # run in a copy of the folder
      - run: dfl solve model.opt --data data.json --json
        expect:                             # checks on the JSON printed on stdout
          status: optimal                   # equal
          objective: {value: 196200, rel: 1.0e-6}
          test_regret: {at_most: 0.2}       # also at_least
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow  # every example's commands, data generation and training included

GALLERY = Path(__file__).resolve().parents[2] / "examples"
CASES = sorted(p for p in GALLERY.iterdir() if p.is_dir() and (p / "expected.yaml").exists())


def _argv(line: str) -> list[str]:
    argv = shlex.split(line)
    if argv[0] == "dfl":
        return [sys.executable, "-m", "dfl_dsl.cli", *argv[1:]]
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    return argv


def _check(out: dict, expect: dict, where: str) -> None:
    for key, want in expect.items():
        got = out
        for part in key.split("."):
            assert isinstance(got, dict) and part in got, f"{where}: no `{key}` in the output"
            got = got[part]
        if isinstance(want, dict):
            if "value" in want:
                assert got == pytest.approx(want["value"], rel=want.get("rel", 1e-6)), where
            if "at_most" in want:
                assert got <= want["at_most"], f"{where}: {key} = {got} > {want['at_most']}"
            if "at_least" in want:
                assert got >= want["at_least"], f"{where}: {key} = {got} < {want['at_least']}"
        else:
            assert got == want, f"{where}: {key} = {got!r}, expected {want!r}"


def test_the_gallery_has_examples():
    assert len(CASES) >= 2


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_example_is_complete(case: Path):
    """A README, a model, a data generator, and the README shows every command the test runs."""
    readme = (case / "README.md").read_text()
    assert list(case.glob("*.opt")) or list(case.glob("*.mod")), "no model (.opt or AMPL .mod)"
    assert list(case.glob("make_data.py")) or list(case.glob("*.gen.yaml")), "no data generator"
    for step in yaml.safe_load((case / "expected.yaml").read_text())["steps"]:
        assert step["run"] in readme, f"README.md doesn't show `{step['run']}`"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_example_runs_as_documented(case: Path, tmp_path: Path):
    spec = yaml.safe_load((case / "expected.yaml").read_text())
    work = tmp_path / case.name
    shutil.copytree(case, work)
    for step in spec["steps"]:
        proc = subprocess.run(_argv(step["run"]), cwd=work, capture_output=True, text=True,
                              timeout=900)
        where = f"{case.name}: `{step['run']}`"
        assert proc.returncode == step.get("exit", 0), f"{where}\n{proc.stderr[-3000:]}"
        if "expect" in step:
            _check(json.loads(proc.stdout), step["expect"], where)
