"""Re-solve speed: a new predicted cost on the 5×5 shortest path, pushed into the warm HiGHS
model (only the cost vector changes), against PyEPO's Pyomo model with appsi_highs.

    python benchmarks/resolve_speed.py [--n 2000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

import dfl_dsl as dfl
from dfl_dsl.generators import shortest_path
from dfl_dsl.learn.oracle import Oracle

ROOT = Path(__file__).resolve().parents[1]


def ours(data, costs: np.ndarray) -> float:
    inst = dfl.load(ROOT / "examples" / "shortest_path" / "shortest_path.opt").bind(data.instance)
    oracle = Oracle(inst)
    c = oracle.costs(torch.as_tensor(costs, dtype=torch.float64)).numpy()
    oracle.solve(c[:50])  # warm up
    start = time.perf_counter()
    oracle.solve(c)
    return (time.perf_counter() - start) / len(c)


def pyepo(costs: np.ndarray) -> float | None:
    try:
        from pyepo.model.omo import shortestPathModel
    except ImportError:
        return None
    model = shortestPathModel(grid=(5, 5), solver="appsi_highs")
    for c in costs[:20]:
        model.setObj(c)
        model.solve()
    start = time.perf_counter()
    for c in costs:
        model.setObj(c)
        model.solve()
    return (time.perf_counter() - start) / len(costs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    data = shortest_path(args.n, 5, (5, 5), 4, 0.5, 135)
    costs = data.targets["cost"].astype(float)
    mine = ours(data, costs)
    theirs = pyepo(costs[: min(args.n, 500)])
    print(f"dfl-dsl highs re-solve: {mine * 1e3:.3f} ms per solve ({args.n} solves)")
    if theirs is not None:
        print(f"PyEPO pyomo/appsi_highs: {theirs * 1e3:.3f} ms per solve "
              f"-> {theirs / mine:.1f}x faster")


if __name__ == "__main__":
    main()
