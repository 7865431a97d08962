"""A true training or test sample that leaves the model without a solution is named at its
file: the sample's row, its arrays, and for an infeasible LP the rows of an IIS (exit 2)."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from dfl_dsl.cli import app

runner = CliRunner()
UNBOUNDED = """set I; param c{I} : predicted;
var x{I} >= 0;
minimize f: sum{i in I} c[i] * x[i];
s.t. need: sum{i in I} x[i] >= 1;"""
INFEASIBLE = """set I; param c{I} : predicted;
var x{I} in [0, 1];
minimize f: sum{i in I} c[i] * x[i];
s.t. low: sum{i in I} x[i] >= 5;
s.t. high: x[1] + x[2] <= 1;"""


def _files(tmp_path, model: str, bad_row: int | None):
    rng = np.random.default_rng(0)
    (tmp_path / "m.opt").write_text(model)
    (tmp_path / "d.json").write_text(json.dumps({"I": [1, 2, 3]}))
    c = rng.uniform(1, 2, (8, 3))
    good = rng.uniform(1, 2, (8, 3))
    if bad_row is not None:
        c[bad_row, 1] = -1.0
    np.savez(tmp_path / "bad.npz", features=rng.normal(size=(8, 2)), c=c)
    np.savez(tmp_path / "good.npz", features=rng.normal(size=(8, 2)), c=good)
    return [str(tmp_path / "m.opt"), "--data", str(tmp_path / "d.json")]


def _train(args, train, test=None):
    extra = [] if test is None else ["--test", test]
    return runner.invoke(app, ["train", *args, "--train", train, *extra, "--epochs", "1",
                               "--loss", "spo+"])


def test_an_unbounded_true_sample_is_named_at_its_file(tmp_path):
    args = _files(tmp_path, UNBOUNDED, bad_row=5)
    result = _train(args, str(tmp_path / "bad.npz"))
    assert result.exit_code == 2, result.output
    text = result.stderr.replace("\n", " ")
    assert f"{tmp_path / 'bad.npz'}: error: true sample 5 (row 5 of `c`)" in text
    assert "unbounded" in text and "`x[2]` has no upper bound" in text
    assert "Traceback" not in result.output


def test_a_test_files_sample_is_named_at_the_test_file(tmp_path):
    args = _files(tmp_path, UNBOUNDED, bad_row=3)
    result = _train(args, str(tmp_path / "good.npz"), str(tmp_path / "bad.npz"))
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'bad.npz'}: error: true sample 3" in result.stderr.replace("\n", " ")


def test_an_infeasible_lp_names_an_irreducible_infeasible_subset(tmp_path):
    args = _files(tmp_path, INFEASIBLE, bad_row=None)
    result = _train(args, str(tmp_path / "good.npz"))
    assert result.exit_code == 2, result.output
    text = result.stderr.replace("\n", " ")
    assert "true sample 0 (row 0 of `c`) leaves the model infeasible" in text
    assert "an irreducible infeasible subset of rows: low" in text


def test_under_distributed_every_rank_names_the_sample_and_none_hangs(tmp_path):
    """`--distributed`: the rank that holds the sample stopped alone, and the other waited in
    the gather for it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    args = _files(tmp_path, UNBOUNDED, bad_row=5)
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
            "2", "-m", "dfl_dsl.cli", "train", *args, "--train", str(tmp_path / "bad.npz"),
            "--epochs", "1", "--distributed"]
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": root}
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode != 0
    assert proc.stderr.count("error: true sample 5 (row 5 of `c`)") == 2, proc.stderr[-3000:]
