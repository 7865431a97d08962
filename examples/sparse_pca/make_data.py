"""Data with 3 planted sparse directions (8 features each) plus noise: 200 samples, 60
features. Writes data.json and prints the objective of plain PCA (the top-3 eigenvectors),
the baseline sparse PCA should beat."""

from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--r", type=int, default=3)
    ap.add_argument("--lam", type=float, default=15.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="data.json")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    directions = np.zeros((args.n, args.r))
    for k in range(args.r):
        support = rng.choice(args.n, size=8, replace=False)
        directions[support, k] = rng.standard_normal(8)
    directions /= np.linalg.norm(directions, axis=0)
    scores = rng.standard_normal((args.m, args.r)) * np.array([3.0, 2.5, 2.0])[: args.r]
    A = scores @ directions.T + 0.3 * rng.standard_normal((args.m, args.n))
    C = A.T @ A
    top = np.linalg.eigh(C)[1][:, ::-1][:, : args.r]
    pca = -0.5 * np.trace(top.T @ C @ top) + args.lam * np.abs(top).sum()
    with open(args.out, "w") as f:
        json.dump({"m": args.m, "n": args.n, "r": args.r, "A": np.round(A, 6).tolist(),
                   "lam": args.lam}, f)
    print(f"wrote {args.out}; plain PCA objective {pca:.6f}")


if __name__ == "__main__":
    main()
