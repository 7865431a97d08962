"""`dfl train` and `dfl eval` fuzzed (tests/_fuzz_train.py): an example with a small data set,
its training arrays, files, options, instance data or a checkpoint mutated, the command run in
this process. Exit 0 with a finite regret, exit 1, or exit 2 with a located error and the
--save file untouched; anything else fails. Found: `--seed 2**70` (torch overflow, exit 3),
features of 1e308 (inf in float32: non-finite costs at the solver, exit 3).
benchmarks/fuzz.py runs the `train` kind by the thousand (docs/reliability.md)."""

from __future__ import annotations

import os
import random

import pytest
from _fuzz import Crash
from _fuzz_train import TrainInput, train_cases, train_input, train_judge
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

# the two examples whose one-epoch run takes well under a second here (the scenario models'
# take seconds: benchmarks/fuzz.py covers them)
FAST = tuple(c for c in train_cases() if c.name in ("shortest_path", "knapsack"))


@pytest.mark.skipif(len(FAST) < 2, reason="the shortest_path and knapsack examples are absent")
@settings(max_examples=int(os.environ.get("DFL_FUZZ_TRAIN", "25")), deadline=30_000,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_mutated_training_runs_end_in_a_result_or_a_located_error(rng: random.Random) -> None:
    item = train_input(rng, FAST)
    try:
        event(train_judge(item))
    except Crash as crash:
        raise AssertionError(f"{crash}\n{item.case}: {' '.join(item.args)}") from crash


@pytest.mark.skipif(len(FAST) < 2, reason="the shortest_path and knapsack examples are absent")
@pytest.mark.parametrize("change", ["features", "seed"])
def test_the_inputs_that_crashed_before(change: str) -> None:
    """Test features of -1e308 (fuzz train:10274) and --seed 2**70 (train:274): exit 3
    before, a located error now; and the clean input trains."""
    case = FAST[0]
    item = TrainInput(case.name, case.text, case.data, dict(case.train), dict(case.test),
                      ["--loss", "spo+", "--epochs", "1"], old_output=True)
    assert train_judge(item) == "ok"
    if change == "features":
        item.test["features"] = item.test["features"].copy()
        item.test["features"][3, 2] = -1e308
    else:
        item.args += ["--seed", str(2**70)]
    assert train_judge(item) == "error"
