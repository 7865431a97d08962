"""Training's CPU threads on a busy machine: dfl train's default against one thread and
torch's own count, side by side in one run.

    python benchmarks/train_threads.py                  # SPO+, shortest path 5x5, batch 32
    python benchmarks/train_threads.py --busy 2         # with 2 spinning processes beside it

Each setting trains in its own fresh process (torch picks its thread count at start, from
OMP_NUM_THREADS, so nothing here pins it): `default` is `dfl train`'s choice (`--threads`
unset), `1` is one thread, `torch` is what torch would use on its own (the machine's cores).
`--busy N` starts N processes that spin on the CPU for the whole run, the situation that
punishes threads waiting for one another. Prints the best epoch time of each and the load.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time

CHILD = r"""
import json, sys, torch
import dfl_dsl as dfl
from pathlib import Path
from dfl_dsl.generators import shortest_path
from dfl_dsl.learn.dataset import DFLData
from dfl_dsl.learn.trainer import Trainer
setting, epochs = sys.argv[1], int(sys.argv[2])
threads = {"default": None, "1": 1, "torch": torch.get_num_threads()}[setting]
data = shortest_path(2000, 5, (5, 5), 4, 0.5, 135)
model = Path(sys.argv[3])
inst = dfl.load(model).bind(data.instance)
train, _ = data.split(1000)
trainer = Trainer(inst, "spo+", "linear", epochs=epochs, oracle="highs", threads=threads,
                  progress=False)
history = trainer.fit(DFLData.from_arrays(inst, train.arrays()))
print(json.dumps({"setting": setting, "threads_used": threads,
                  "epoch_s": [round(e["train_time_s"], 4) for e in history.epochs]}))
"""


def _spin(stop_at: float) -> None:
    while time.time() < stop_at:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--busy", type=int, default=0, help="spinning processes beside the runs")
    args = ap.parse_args()
    model = os.path.join(os.path.dirname(__file__), "..", "examples", "shortest_path",
                         "shortest_path.opt")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    spinners = [mp.Process(target=_spin, args=(time.time() + 600,)) for _ in range(args.busy)]
    for p in spinners:
        p.start()
    rows = []
    try:
        for setting in ("default", "1", "torch"):
            out = subprocess.run([sys.executable, "-c", CHILD, setting, str(args.epochs), model],
                                 capture_output=True, text=True, env=env, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            row["best_epoch_s"] = min(row["epoch_s"])
            row["load_avg_1m"] = round(os.getloadavg()[0], 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        for p in spinners:
            p.terminate()
    one = next(r["best_epoch_s"] for r in rows if r["setting"] == "1")
    for r in rows:
        print(f"{r['setting']:8} best epoch {r['best_epoch_s']:.3f} s  "
              f"({r['best_epoch_s'] / one:.2f}x one thread)")


if __name__ == "__main__":
    main()
