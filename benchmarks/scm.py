"""Feature-based selection, maximize Σ_f sqrt(Σ_i x_i X[i, f]) over at most k items (and under a
knapsack), side by side in one run: AAPGA (our backend's relaxation + rounding, called on an
SCMForm built from the arrays) against apricot's FeatureBasedSelection (lazy greedy) and plain
projected gradient ascent with the same stopping rule and the same rounding; a sweep over n
locates where AAPGA overtakes greedy. Every method runs on one thread (BLAS and OpenMP pinned
through threadpoolctl, torch through set_num_threads); seconds are the median of `--repeats`.

    python benchmarks/scm.py [--repeats 3] [--sizes 1000,...,100000] [--plot docs/img/scm_sweep.png]
    python benchmarks/scm.py --case 20000x500 [--device cuda] [--json]   # one instance only
    python benchmarks/scm.py --case 100000x1000
    python benchmarks/scm.py --alternate 5     # greedy and AAPGA taking turns at 20,000 × 500
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from _common import table
from threadpoolctl import threadpool_limits

from dfl_dsl.backends.aapga import maximize_relaxation
from dfl_dsl.backends.aapga_rounding import round_solution
from dfl_dsl.compile.scm import SCMForm

ROOT = Path(__file__).resolve().parents[1]


def sparse_features(n: int, d: int = 500, density: float = 0.02, seed: int = 0) -> sp.csr_matrix:
    """n × d, nonnegative, exponential values on a random 2% of the entries."""
    rng = np.random.default_rng(seed)
    return sp.random(n, d, density=density, random_state=seed, format="csr",
                     data_rvs=lambda size: rng.exponential(1.0, size))


def digits() -> np.ndarray:
    from sklearn.datasets import load_digits

    return load_digits().data.astype(float)


def timed(run: Callable[[], np.ndarray], repeats: int) -> tuple[np.ndarray, float]:
    """The answer and the median wall time of `repeats` runs."""
    times, answer = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        answer = run()
        times.append(time.perf_counter() - start)
    return answer, float(np.median(times))


def reuse_apricot_kernels() -> None:
    """apricot compiles its numba gain kernels anew in every fit (2–4 s each here, more than
    the greedy itself): memoize the kernel factories so that the timings measure the greedy,
    not the compiler."""
    from apricot.functions import featureBased

    for name in ("calculate_gains", "calculate_gains_sparse", "calculate_gains_sieve",
                 "calculate_gains_sieve_sparse"):
        factory, cache = getattr(featureBased, name), {}

        def memo(*args, _factory=factory, _cache=cache):
            key = tuple(id(a) for a in args)  # module-level constants: numpy.sqrt, dtypes
            if key not in _cache:
                _cache[key] = _factory(*args)
            return _cache[key]

        setattr(featureBased, name, memo)


def greedy(X, k: int | None, cost: np.ndarray | None = None,
           budget: float | None = None) -> np.ndarray:
    """apricot's lazy greedy; with costs, its cost-benefit greedy (gain per cost), then the
    better of that and the best single item that fits (the classic ½(1 − 1/e) guarantee)."""
    from apricot import FeatureBasedSelection

    n = X.shape[0]
    if cost is None:
        sel = FeatureBasedSelection(k, concave_func="sqrt", optimizer="lazy").fit(X)
        x = np.zeros(n)
        x[sel.ranking] = 1.0
        return x
    sel = FeatureBasedSelection(budget, concave_func="sqrt", optimizer="lazy")
    sel.fit(X, sample_cost=cost)
    x = np.zeros(n)
    x[sel.ranking] = 1.0
    fits = np.nonzero(cost <= budget)[0]
    rows = X[fits]
    single_values = np.asarray((rows.sqrt() if sp.issparse(rows) else np.sqrt(rows)).sum(axis=1))
    single = np.zeros(n)
    single[fits[int(np.argmax(single_values.ravel()))]] = 1.0
    return x if _value(X, x) >= _value(X, single) else single


def _value(X, x: np.ndarray) -> float:
    return float(np.sqrt(np.asarray(X.T @ x).ravel()).sum())


def ascent(X, accelerate: bool, device: str = "cpu", screen: bool = True,
           **constraint) -> Callable[[], tuple[np.ndarray, dict]]:
    def run():
        form = SCMForm.from_features(X, **constraint)
        start = time.perf_counter()
        frac, _, bound, iters = maximize_relaxation(form, accelerate=accelerate, device=device,
                                                    screen=screen)
        mid = time.perf_counter()
        x, _ = round_solution(form, frac, seed=0)
        return x, {"iters": iters, "bound": bound, "relax_s": mid - start,
                   "round_s": time.perf_counter() - mid}
    return run


def compare(name: str, X, repeats: int, **constraint) -> list[list]:
    cost, budget = constraint.get("cost"), constraint.get("budget")
    base, t_greedy = timed(lambda: greedy(X, constraint.get("k"), cost, budget), repeats)
    ref = _value(X, base)
    rows = [[name, "apricot greedy" + (" (cost-benefit)" if cost is not None else " (lazy)"),
             f"{ref:.2f}", "100.0%", f"{t_greedy:.3f}", "-", "-", "-"]]
    for label, accelerate in (("AAPGA", True), ("plain PGA", False)):
        (x, info), t = timed(ascent(X, accelerate, **constraint), repeats)
        assert (cost if cost is not None else np.ones(len(x))) @ x <= (budget or constraint["k"])
        value = _value(X, x)
        rows.append([name, label, f"{value:.2f}", f"{100 * value / ref:.1f}%", f"{t:.3f}",
                     f"{t_greedy / t:.2f}x", info["iters"], f"{info['bound']:.2f}"])
    return rows


def sweep(sizes: list[int], k: int, repeats: int) -> list[list]:
    rows = []
    for n in sizes:
        X = sparse_features(n)
        base, t_greedy = timed(lambda X=X: greedy(X, k), repeats)
        (x, _), t_ours = timed(ascent(X, True, k=k), repeats)
        (y, _), t_plain = timed(ascent(X, False, k=k), repeats)
        ref = _value(X, base)
        rows.append([n, f"{t_greedy:.3f}", f"{t_ours:.3f}", f"{t_plain:.3f}",
                     f"{t_greedy / t_ours:.2f}x", f"{100 * _value(X, x) / ref:.1f}%",
                     f"{100 * _value(X, y) / ref:.1f}%"])
    return rows


def alternate(X, k: int, rounds: int) -> list[list]:
    """Greedy and AAPGA taking turns on one instance, so both see the same load."""
    times: dict[str, list[float]] = {"apricot greedy (lazy)": [], "AAPGA": []}
    values = {}
    for _ in range(rounds):
        for label, run in (("apricot greedy (lazy)", lambda: greedy(X, k)),
                           ("AAPGA", lambda: ascent(X, True, k=k)()[0])):
            start = time.perf_counter()
            values[label] = _value(X, run())
            times[label].append(time.perf_counter() - start)
    return [[label, f"{values[label]:.2f}", f"{min(ts):.3f}", f"{np.median(ts):.3f}"]
            for label, ts in times.items()]


def plot(rows: list[list], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for col, label, style in ((1, "apricot lazy greedy", "o-"), (2, "AAPGA + rounding", "s-"),
                              (3, "plain PGA + rounding", "^--")):
        ax.loglog(n, [float(r[col]) for r in rows], style, label=label)
    ax.set_xlabel("items n (500 features, 2% dense)")
    ax.set_ylabel("seconds (median of repeats)")
    ax.set_title("feature-based selection, k = 50, sqrt")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def one_case(name: str, k: int, repeats: int, device: str, screen: bool = True) -> dict:
    """One instance, `name` = "NxD": apricot's lazy greedy (CPU) and AAPGA (on `device`) taking
    turns `repeats` times; the medians, the value ratio and AAPGA's stages."""
    n, d = (int(v) for v in name.split("x"))
    X = sparse_features(n, d)
    run = ascent(X, True, device, screen, k=k)
    run()  # warm up (CUDA context and kernels, caches)
    times: dict[str, list[float]] = {"greedy": [], "aapga": []}
    for _ in range(repeats):
        start = time.perf_counter()
        base = greedy(X, k)
        times["greedy"].append(time.perf_counter() - start)
        start = time.perf_counter()
        x, info = run()
        times["aapga"].append(time.perf_counter() - start)
    greedy_s, aapga_s = (float(np.median(times[key])) for key in ("greedy", "aapga"))
    return {"case": f"{n}x{d}, k={k}", "device": device, "working_set": screen,
            "greedy_s": round(greedy_s, 4),
            "aapga_s": round(aapga_s, 4), "speedup": round(greedy_s / aapga_s, 2),
            "greedy_value": round(_value(X, base), 3), "aapga_value": round(_value(X, x), 3),
            "value_ratio": round(_value(X, x) / _value(X, base), 4), "iters": info["iters"],
            "relax_s": round(info["relax_s"], 4), "round_s": round(info["round_s"], 4),
            "greedy_runs_s": [round(t, 4) for t in times["greedy"]],
            "aapga_runs_s": [round(t, 4) for t in times["aapga"]],
            "load_average": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--sizes", default="1000,2000,5000,10000,20000,50000,100000")
    ap.add_argument("--plot", default=str(ROOT / "docs" / "img" / "scm_sweep.png"),
                    help="where the sweep's plot goes; '' for none")
    ap.add_argument("--alternate", type=int, default=0,
                    help="only time greedy and AAPGA taking turns this many times at 20,000")
    ap.add_argument("--case", default=None,
                    help="only this instance, items x features (20000x500, 100000x1000)")
    ap.add_argument("--device", default="cpu", help="where AAPGA runs with --case")
    ap.add_argument("--json", action="store_true", help="with --case: one JSON line")
    ap.add_argument("--screen", action=argparse.BooleanOptionalAction, default=True,
                    help="with --case: AAPGA on a working set (default) or every item at once")
    args = ap.parse_args()
    # one thread for everyone: apricot's lazy-greedy kernels are single-threaded; unpinned,
    # OpenBLAS threads spinning on the loaded 2-core machine made greedy 2.4x slower
    # (122 ms against 51 ms) and one 20,000-long dot product 12 ms instead of 0.4 ms
    threadpool_limits(1)
    torch.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; one thread each")
    reuse_apricot_kernels()
    greedy(sparse_features(200), 5)  # compile apricot's numba kernels outside the timings
    greedy(digits()[:200], 5)
    if args.case:
        result = one_case(args.case, args.k, args.repeats, args.device, args.screen)
        print(json.dumps(result) if args.json else table(list(result), [list(result.values())]))
        return
    X = sparse_features(20_000)
    if args.alternate:
        print(table(["method", "value", "best s", "median s"],
                    alternate(X, args.k, args.alternate)))
        return
    rng = np.random.default_rng(1)
    cost = rng.uniform(0.5, 1.5, X.shape[0])
    headers = ["instance", "method", "value", "of greedy", "seconds", "speed-up", "iters",
               "certified bound"]
    rows = compare("sparse 20000x500, k=50", X, args.repeats, k=args.k)
    rows += compare("digits 1797x64, k=50", digits(), args.repeats, k=args.k)
    rows += compare("sparse 20000x500, knapsack B=50", X, args.repeats, cost=cost,
                    budget=float(args.k))
    print(table(headers, rows))
    sizes = [int(s) for s in args.sizes.split(",")]
    grid = sweep(sizes, args.k, args.repeats)
    print()
    print(table(["n", "greedy s", "AAPGA s", "plain PGA s", "AAPGA speed-up", "AAPGA value",
                 "PGA value"], grid))
    slower = [i for i, r in enumerate(grid) if float(r[2]) >= float(r[1])]
    start = slower[-1] + 1 if slower else 0
    print(f"crossover: AAPGA is faster than greedy from n = {grid[start][0]} on"
          if start < len(grid) else "crossover: AAPGA was not faster than greedy at any n tried")
    if args.plot:
        plot(grid, Path(args.plot))
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
