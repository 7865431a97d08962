"""A random transportation instance: n plants, n markets, supplies, demands and unit costs.
Writes data.json (the shipped transport.json is the classic 3 × 7 steel example)."""

from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="data.json")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    supply = rng.integers(100, 201, args.n)
    demand = rng.integers(50, 101, args.n)
    cost = rng.integers(1, 101, (args.n, args.n))
    data = {"ORIG": [f"p{i}" for i in range(args.n)], "DEST": [f"m{j}" for j in range(args.n)],
            "supply": supply.tolist(), "demand": demand.tolist(), "cost": cost.tolist()}
    with open(args.out, "w") as f:
        json.dump(data, f)
    print(f"wrote {args.out}: {args.n} plants, {args.n} markets, supply {supply.sum()}, "
          f"demand {demand.sum()}")


if __name__ == "__main__":
    main()
