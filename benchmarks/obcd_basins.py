"""Why OBCD and ManPG end in different places on L1 sparse PCA (randn 500 × 1000, r = 10, λ = 10).

Not a speed table: probes of the landscape behind benchmarks/obcd.py's closest row, each part
printing what it measured (F = f + h, lower is better; docs/obcd.md reads them):

1. OBCD from the benchmark's X0 for T₁ seconds (no restarts) reaches a point X_o.
2. Hops: X_o + σ·N/√n (N standard normal, so the noise has norm σ per column) re-orthonormalized,
   then OBCD again; printed with the smallest principal-angle cosine between its answer and
   X_o (1.0: the same subspace) — does a stall have a small basin that restarts can leave?
3. ManPG (the benchmark's baseline) with its QR retraction and with the polar one, read at
   several budgets from one run each — how far its slow descent goes.
4. OBCD from ManPG-polar's answer at 20 s — is ManPG's path in a region OBCD can exploit?
5. A λ-continuation (OBCD with h = 0, then λ/2, then λ; 10 % of the budget per early stage)
   against plain OBCD over several X0 seeds, both for the full budget.

    python benchmarks/obcd_basins.py [--seed N] [--budget T]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from obcd import R, datasets, manpg, sparse_pca_form  # noqa: E402

from dfl_dsl.backends.obcd import obcd  # noqa: E402

LAM = 10.0


def _start(n: int, seed: int) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((n, R)))[0]


def _min_cos(X: np.ndarray, Y: np.ndarray) -> float:
    return float(np.linalg.svd(X.T @ Y, compute_uv=False).min())


def _continued(A: np.ndarray, X0: np.ndarray, budget: float, seed: int):
    """OBCD through λ·(0, ½, 1), the early stages 10 % of the budget each."""
    start, X = time.perf_counter(), X0
    for factor in (0.0, 0.5):
        X = obcd(sparse_pca_form(A, LAM * factor), X0=X, time_limit=0.1 * budget, seed=seed,
                 tol=1e-6).X
    left = budget - (time.perf_counter() - start)
    return obcd(sparse_pca_form(A, LAM), X0=X, time_limit=left, seed=seed, restarts=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="X0's seed (the benchmark's is 0)")
    parser.add_argument("--budget", type=float, default=20.0, help="T of the benchmark")
    args = parser.parse_args()
    A = datasets(0)["randn 500x1000"]
    C, form, n = A.T @ A, sparse_pca_form(A, LAM), A.shape[1]
    X0 = _start(n, args.seed)
    print(f"randn 500x1000, λ = {LAM:g}, X0 seed {args.seed}; load average "
          f"{os.getloadavg()[0]:.2f}")

    first = obcd(form, X0=X0, time_limit=0.6 * args.budget, seed=args.seed)
    Xo = first.X
    print(f"1. OBCD {0.6 * args.budget:g} s: F = {first.objective:.3f} ({first.rounds} rounds, "
          f"converged {first.converged})")

    rng = np.random.default_rng(1)
    for sigma in (0.5, 1.0, 2.0):
        u, _, vt = np.linalg.svd(Xo + sigma * rng.standard_normal(Xo.shape) / n ** 0.5,
                                 full_matrices=False)
        hop = obcd(form, X0=u @ vt, time_limit=6.0, seed=1, tol=1e-7)
        print(f"2. hop σ = {sigma:g}: from F = {form.value(u @ vt):.1f} to {hop.objective:.3f} "
              f"in 6 s; min cos to X_o {_min_cos(hop.X, Xo):.3f}")

    budgets = (10.0, 20.0, 30.0, 45.0)
    polar_at_20 = None
    for retraction in ("qr", "polar"):
        runs = manpg(C, LAM, X0, budgets, retraction=retraction)
        cells = ", ".join(f"{b:g} s: {form.value(X):.3f}"
                          for b, (X, _) in zip(budgets, runs, strict=True))
        print(f"3. ManPG ({retraction}) {cells}; min cos of its 45 s answer to X_o "
              f"{_min_cos(runs[-1][0], Xo):.3f}")
        if retraction == "polar":
            polar_at_20 = runs[1][0]

    after = obcd(form, X0=polar_at_20, time_limit=8.0, seed=args.seed, tol=1e-7)
    print(f"4. OBCD from ManPG-polar's 20 s answer ({form.value(polar_at_20):.3f}): "
          f"{after.objective:.3f} in 8 s")

    for seed in range(4):
        X0s = _start(n, seed)
        plain = obcd(form, X0=X0s, time_limit=args.budget, seed=seed, restarts=None)
        cont = _continued(A, X0s, args.budget, seed)
        print(f"5. X0 seed {seed}, {args.budget:g} s: plain {plain.objective:.3f}, "
              f"continuation {cont.objective:.3f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
