"""Frank–Wolfe step rules side by side: iterations and seconds to a certified gap of 1e-6 (the
primal–dual gap every variant reports) on three problems, with a log-log plot of the gap
against the iteration.

Problems (built from .opt text, so the LMO is the one our backend reads off the LinearForm)
  simplex_lsq   the spec's simplex_lsq.opt, min ‖Aw − b‖² over the simplex, A 200 × 500
  proj_simplex  min ‖x − x0‖² over the simplex, n = 2000 (a projection by Frank–Wolfe)
  k_sparse      min ‖x − x0‖² over {‖x‖∞ <= 1, ‖x‖₁ <= k}, n = 1000, k = 10, written with
                norm1(x) <= k (closed-form L1 LMO on the pairs its epigraph declares)

    python benchmarks/fw.py [--tol 1e-6] [--max-iter 20000] [--plot docs/img/fw_gap.png]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import spec_text, table

import dfl_dsl as dfl
from dfl_dsl.backends.fw import _LMO, VARIANTS, frank_wolfe

ROOT = Path(__file__).resolve().parents[1]

PROJ_SIMPLEX = """
param n : int; param x0[n];
var x[n] >= 0;
minimize d: sum_squares(x - x0);
subject to simplex: sum(x) == 1;
"""

K_SPARSE = """
param n : int; param k; param x0[n];
var x[n] >= -1 <= 1;
minimize d: sum_squares(x - x0);
subject to l1: norm1(x) <= k;
"""


def problems(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    m, n = 200, 500
    A = rng.normal(size=(m, n))
    b = A @ rng.dirichlet(np.full(n, 0.05)) + 0.1 * rng.normal(size=m)
    lsq = dfl.parse(spec_text("simplex_lsq.opt"), "simplex_lsq.opt").bind(
        {"m": m, "n": n, "A": A.tolist(), "b": b.tolist()})
    proj = dfl.parse(PROJ_SIMPLEX, "proj_simplex.opt").bind(
        {"n": 2000, "x0": rng.normal(0.0, 0.05, 2000).tolist()})
    sparse = dfl.parse(K_SPARSE, "k_sparse.opt").bind(
        {"n": 1000, "k": 10, "x0": rng.normal(0.0, 1.0, 1000).tolist()})
    return {"simplex_lsq": lsq, "proj_simplex": proj, "k_sparse": sparse}


def run(inst, variant: str, tol: float, max_iter: int, time_limit: float) -> dict:
    form = inst.linear_form()
    trace: list = []
    start = time.perf_counter()
    result = frank_wolfe(form, variant=variant, tol=tol, max_iter=max_iter,
                         time_limit=time_limit, trace=trace)
    result["seconds"] = time.perf_counter() - start
    result["trace"] = trace
    result["lmo"] = _LMO(form).kind
    return result


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.6))
    for ax, (name, by_variant) in zip(np.atleast_1d(axes), results.items(), strict=True):
        for variant, res in by_variant.items():
            its = np.array([t[0] for t in res["trace"]]) + 1
            gaps = np.maximum([t[1] for t in res["trace"]], 1e-16)
            ax.loglog(its, gaps, label=variant, lw=1.2)
        ax.axhline(1e-6, color="gray", lw=0.8, ls=":")
        ax.set_title(name)
        ax.set_xlabel("iteration + 1")
        ax.grid(True, which="both", alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("certified primal–dual gap")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=20_000)
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "fw_gap.png")
    args = ap.parse_args()
    results: dict = {}
    rows = []
    for name, inst in problems().items():
        exact = inst.solve("highs").objective
        results[name] = {}
        for variant in VARIANTS:
            res = run(inst, variant, args.tol, args.max_iter, args.time_limit)
            results[name][variant] = res
            objective = inst.linear_form().model_objective(res["objective"])
            rows.append([name, res["lmo"], variant, res["iterations"], f"{res['seconds']:.3f}",
                         f"{res['gap']:.1e}", "yes" if res["converged"] else "no",
                         f"{objective - exact:.1e}"])
    print(table(["problem", "LMO", "variant", "iterations", "seconds", "certified gap",
                 f"gap <= {args.tol:g}", "f − f*(HiGHS)"], rows))
    if args.plot:
        plot(results, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
