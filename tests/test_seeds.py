"""One rule for seeds (dfl_dsl/seeds.py): 0 .. 2**32 - 1, refused elsewhere with the flag's
name before any work, for `dfl solve`, `dfl train`, a loss's own seed and the Python API
(`--seed 2**70` was torch's "Overflow when unpacking long long", exit 3; `--seed -1` on AAPGA
and OBCD numpy's, exit 3)."""

from __future__ import annotations

import pytest
from _helpers import bind, spec_dir
from typer.testing import CliRunner

from dfl_dsl.cli import app
from dfl_dsl.errors import DflError
from dfl_dsl.seeds import SEED_MAX, check_seed, is_seed

runner = CliRunner()


@pytest.mark.parametrize("value,ok", [(0, True), (135, True), (SEED_MAX, True),
                                      (SEED_MAX + 1, False), (-1, False), (2**70, False),
                                      (True, False), (1.0, False), ("7", False)])
def test_is_seed(value, ok):
    assert is_seed(value) is ok


def test_check_seed_names_the_flag_and_lets_none_through():
    check_seed(None)
    with pytest.raises(DflError, match=r"loss option `seed` must be a whole number from 0 to "
                                       r"2\*\*32 - 1 \(4294967295\), got -3"):
        check_seed(-3, "loss option `seed`")


def test_the_python_solve_refuses_a_seed_out_of_range():
    inst = bind("var x >= 1; minimize f: x;")
    with pytest.raises(DflError, match="--seed must be a whole number"):
        inst.solve(seed=-1)
    assert inst.solve(seed=SEED_MAX).objective == pytest.approx(1.0)


@pytest.mark.parametrize("backend", ["aapga", "obcd"])
def test_cli_solve_with_a_seed_out_of_range_exits_2(backend):
    spec = spec_dir()
    model = {"aapga": "coverage", "obcd": "sparse_pca"}[backend]
    for seed in ("-1", str(2**70)):
        result = runner.invoke(app, ["solve", str(spec / f"{model}.opt"), "--data",
                                     str(spec / f"{model}.json"), "--backend", backend,
                                     "--seed", seed])
        assert result.exit_code == 2, result.output
        assert "--seed must be a whole number from 0 to 2**32 - 1" in result.stderr
        assert "internal error" not in result.stderr
