"""Newsvendor training and test files: demand depends on 5 features, with a mean and a spread
that both move with them (heteroscedastic, so a point forecast misses the tail CVaR sees).

    d = 50 + 25·tanh(z·w₁) + (2 + 10·sigmoid(2 z·w₂))·ε,   z ~ N(0, I₅), ε ~ N(0, 1)

clipped at 0. Writes train.npz (one observed demand per sample: `features` N × 5, `d` N),
test.npz (S true demand scenarios per sample: `d` N × S) and newsvendor.json (the instance
data: the shortage cost b)."""

from __future__ import annotations

import argparse
import json

import numpy as np


def demand(z: np.ndarray, w1: np.ndarray, w2: np.ndarray, draws: int,
           rng: np.random.Generator) -> np.ndarray:
    mu = 50 + 25 * np.tanh(z @ w1)
    sigma = 2 + 10 / (1 + np.exp(-2 * (z @ w2)))
    eps = rng.standard_normal((len(z), draws))
    return np.maximum(mu[:, None] + sigma[:, None] * eps, 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--num-train", type=int, default=200)
    ap.add_argument("--num-test", type=int, default=100)
    ap.add_argument("--scenarios", type=int, default=32, help="true scenarios per test sample")
    ap.add_argument("--shortage-cost", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    p = 5
    w1, w2 = rng.standard_normal(p) / np.sqrt(p), rng.standard_normal(p) / np.sqrt(p)
    z_train = rng.standard_normal((args.num_train, p))
    z_test = rng.standard_normal((args.num_test, p))
    np.savez("train.npz", features=z_train, d=demand(z_train, w1, w2, 1, rng)[:, 0])
    np.savez("test.npz", features=z_test, d=demand(z_test, w1, w2, args.scenarios, rng))
    with open("newsvendor.json", "w") as f:
        json.dump({"b": args.shortage_cost}, f)
    print(f"wrote train.npz ({args.num_train} samples, one demand each), test.npz "
          f"({args.num_test} samples, {args.scenarios} demand scenarios each), newsvendor.json")


if __name__ == "__main__":
    main()
