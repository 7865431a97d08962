"""The batched oracle against HiGHS, side by side in one run: LP throughput and training.

    python benchmarks/batched_oracle.py throughput --grid 5 --batch 10000 --device cuda
    python benchmarks/batched_oracle.py train --loss spo+ --batch-size 32 --device cuda

`throughput` solves `--batch` shortest-path LPs (PyEPO's costs, deg 4) on a grid × grid
network with the batched solver (the first call, which captures CUDA graphs, and the best of
`--repeat` more) and with a warm HiGHS model on this machine's CPU (on `--highs-sample`
of them, scaled to the batch: a full run of 10,000 20×20 LPs takes minutes), and checks the
batched objectives against HiGHS's on that sample. `train` trains a linear model on PyEPO's
shortest path (`--num` training samples, 1,000 test samples) with `--oracle batched` on
`--device` and with `--oracle highs` on the CPU, and prints epoch times and test regrets.
One JSON line per measurement; the load average is in each.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dfl_dsl as dfl  # noqa: E402
from dfl_dsl.backends.batchlp import Settings  # noqa: E402
from dfl_dsl.generators import shortest_path  # noqa: E402
from dfl_dsl.learn.dataset import DFLData  # noqa: E402
from dfl_dsl.learn.executors import solve_all, warm_model  # noqa: E402
from dfl_dsl.learn.solvers import BatchedSolver, HighsSolver  # noqa: E402
from dfl_dsl.learn.trainer import Trainer  # noqa: E402

torch.set_num_threads(1)
MODEL = Path(__file__).resolve().parents[1] / "examples" / "shortest_path" / "shortest_path.opt"


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _emit(row: dict) -> None:
    row["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row), flush=True)


def throughput(grid: int, batch: int, device: str, repeat: int, highs_sample: int,
               method: str = "auto") -> dict:
    data = shortest_path(batch, 5, (grid, grid), 4, 0.5, 135)
    inst = dfl.load(MODEL).bind(data.instance)
    form = inst.linear_form()
    costs = np.asarray(data.targets["cost"], dtype=float)
    solver = BatchedSolver(form, HighsSolver(form), device=device,
                           settings=Settings(method=method))
    costs_t = torch.as_tensor(costs, dtype=torch.float64, device=device)
    _sync(device)
    start = time.perf_counter()
    w = solver.solve(costs_t)
    _sync(device)
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        w = solver.solve(costs_t)
        _sync(device)
        times.append(time.perf_counter() - start)
    sample = min(highs_sample, batch)
    model = warm_model(form, None)
    start = time.perf_counter()
    w_highs = solve_all(model, costs[:sample])
    highs_time = (time.perf_counter() - start) * batch / sample
    ours = (costs[:sample] * w[:sample].cpu().numpy()).sum(1)
    theirs = (costs[:sample] * w_highs).sum(1)
    rel = float(np.max(np.abs(ours - theirs) / np.maximum(1.0, np.abs(theirs))))
    stats = solver.stats()
    row = {"bench": "throughput", "grid": grid, "lps": batch, "n": form.n, "m": form.m,
           "device": device, "method": method, "first_call_s": round(first, 4),
           "best_s": round(min(times), 4) if times else None,
           "highs_cpu_s_scaled": round(highs_time, 3), "highs_sample": sample,
           "max_rel_diff_vs_highs": rel, "fallbacks": stats["fallbacks"],
           "solves": stats["solves"], "mean_iterations": round(stats["mean_iterations"], 1),
           "cuda_graph": stats["cuda_graph"]}
    _emit(row)
    return row


def train(loss: str, batch_size: int, num: int, epochs: int, device: str,
          oracles: list[str]) -> list[dict]:
    data = shortest_path(num + 1000, 5, (5, 5), 4, 0.5, 135)
    inst = dfl.load(MODEL).bind(data.instance)
    train_part, test_part = data.split(num)
    rows = []
    for oracle in oracles:
        dev = device if oracle == "batched" else "cpu"
        train_data = DFLData.from_arrays(inst, train_part.arrays())
        test_data = DFLData.from_arrays(inst, test_part.arrays())
        trainer = Trainer(inst, loss, "linear", epochs=epochs, batch_size=batch_size, lr=1e-2,
                          device=dev, oracle=oracle, progress=False)
        history = trainer.fit(train_data)
        epoch_times = [round(e["train_time_s"], 4) for e in history.epochs]
        row = {"bench": "train", "loss": loss, "oracle": oracle, "device": dev,
               "batch_size": batch_size, "train_samples": num, "epoch_s": epoch_times,
               "best_epoch_s": min(epoch_times), "test_regret": round(trainer.regret(test_data), 6),
               **{k: v for k, v in trainer.oracle.stats().items() if k != "solver"}}
        trainer.oracle.close()
        _emit(row)
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--grid", type=int, default=5)
    t.add_argument("--batch", type=int, default=10_000)
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--highs-sample", type=int, default=1000)
    t.add_argument("--device", default="cpu")
    t.add_argument("--method", default="auto", choices=["auto", "ipm", "pdhg"],
                   help="the batched solver's method (auto: the IPM up to 256 rows)")
    r = sub.add_parser("train")
    r.add_argument("--loss", default="spo+")
    r.add_argument("--batch-size", type=int, default=32)
    r.add_argument("--num", type=int, default=1000)
    r.add_argument("--epochs", type=int, default=3)
    r.add_argument("--device", default="cpu")
    r.add_argument("--oracles", default="batched,highs")
    args = ap.parse_args()
    if args.what == "throughput":
        throughput(args.grid, args.batch, args.device, args.repeat, args.highs_sample,
                   args.method)
    else:
        train(args.loss, args.batch_size, args.num, args.epochs, args.device,
              args.oracles.split(","))


if __name__ == "__main__":
    main()
