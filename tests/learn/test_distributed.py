"""`dfl train --distributed`: two CPU ranks (gloo, launched by torchrun) train the same weights as
one process with the same seed and global batch, and a run outside torchrun is a clear error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dfl_dsl.learn.distributed import Shard

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "shortest_path" / "shortest_path.opt"


def _train(tmp: Path, save: str, extra: list[str], ranks: int | None) -> None:
    args = ["-m", "dfl_dsl.cli", "train", str(MODEL), "--data", "grid.json", "--train",
            "train.npz", "--epochs", "2", "--batch-size", "15", "--save", save, *extra]
    if ranks is None:
        argv = [sys.executable, *args]
    else:  # 15 samples a batch over 2 ranks: 8 and 7, and a short last batch of 10
        argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", str(ranks), *args, "--distributed"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("ddp")
    subprocess.run([sys.executable, "-m", "dfl_dsl.cli", "generate", "shortest_path", "--grid",
                    "3x3", "--num-data", "70", "--deg", "2", "--noise", "0.5", "--out",
                    "train.npz", "--instance", "grid.json"], cwd=tmp, check=True,
                   capture_output=True)
    return tmp


@pytest.mark.slow  # two torchrun launches per case
@pytest.mark.parametrize("loss, optimizer", [("spo+", "sgd"), ("mse", "adam")])
def test_two_ranks_train_the_single_process_weights(data_dir, loss, optimizer):
    """SPO+ makes every rank call the oracle on its share. (Adam is not used with SPO+ here:
    SPO+ gradients cancel to exact zeros that float rounding in another summation order turns
    into ±1e-8, which Adam's normalization inflates into full steps.)"""
    extra = ["--loss", loss, "--optimizer", optimizer]
    _train(data_dir, f"one-{loss}.ckpt", extra, None)
    _train(data_dir, f"two-{loss}.ckpt", extra, 2)
    one = torch.load(data_dir / f"one-{loss}.ckpt", weights_only=True)
    two = torch.load(data_dir / f"two-{loss}.ckpt", weights_only=True)
    for name, value in one["state_dict"].items():
        assert value.abs().max() > 1e-3  # trained, not zeros
        torch.testing.assert_close(two["state_dict"][name], value, atol=1e-6, rtol=1e-5)
    assert [e["loss"] for e in two["history"]] == pytest.approx(
        [e["loss"] for e in one["history"]], rel=1e-5)


def test_distributed_outside_torchrun_is_a_clear_error(data_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    proc = subprocess.run([sys.executable, "-m", "dfl_dsl.cli", "train", str(MODEL), "--data",
                           "grid.json", "--train", "train.npz", "--distributed"],
                          cwd=data_dir, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2
    assert "needs the processes that torchrun starts" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shard_shares_and_scales():
    shard = Shard(rank=1, world=2, device=torch.device("cpu"))
    batch = torch.arange(7)
    assert shard.share(batch).tolist() == [1, 3, 5]
    # rank 0 has 4, rank 1 has 3: DDP's average of the scaled means is the global mean
    means, counts = [2.0, 5.0], [4, 3]
    scaled = [m * Shard(r, 2, torch.device("cpu")).loss_scale(c, 7)
              for r, (m, c) in enumerate(zip(means, counts, strict=True))]
    assert sum(scaled) / 2 == pytest.approx((2.0 * 4 + 5.0 * 3) / 7)
