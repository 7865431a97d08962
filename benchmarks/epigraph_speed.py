"""How fast the epigraph chain builds the linear form of many atom rows: (a) 10^4 rows
`abs(x[i] - c[i]) <= 3` over 20 scenarios of c (the scenario split's copies, each lowered),
(b) 10^5 rows `abs(x[i] - t[i]) <= 1`. Times `inst.linear_form()` only (expand, the reductions,
assembly and rows-to-bounds), the best of --repeats fresh instances after --warm ones; one
BLAS thread.

    python benchmarks/epigraph_speed.py [--repeats 12] [--warm 3]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import dfl_dsl as dfl  # noqa: E402

SCENARIOS = ("set I; param c{I} : uncertain; var x{I} >= -10 <= 10;\n"
             "minimize o: sum{i in I} x[i];\nsubject to r{i in I}: abs(x[i] - c[i]) <= 3;")
ROWS = ("set I; param t{I}; var x{I};\nminimize o: sum{i in I} x[i];\n"
        "subject to r{i in I}: abs(x[i] - t[i]) <= 1;")


def timed(text: str, data, repeats: int, warm: int) -> tuple[float, float, tuple[int, int]]:
    model = dfl.parse(text)
    times, shape = [], (0, 0)
    for k in range(warm + repeats):
        inst = model.bind(data())
        inst.compile()
        start = time.perf_counter()
        form = inst.linear_form()
        if k >= warm:
            times.append(time.perf_counter() - start)
        shape = (form.n, form.m)
    return min(times), float(np.median(times)), shape


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=12)
    ap.add_argument("--warm", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    cases = {
        "10^4 rows x 20 scenarios": (SCENARIOS, lambda: {
            "I": list(range(10_000)), "c": rng.normal(size=(20, 10_000)).tolist()}),
        "10^5 rows": (ROWS, lambda: {
            "I": list(range(100_000)), "t": rng.normal(size=100_000).tolist()}),
    }
    print(f"load average {os.getloadavg()[0]:.1f}; best and median of {args.repeats}")
    for name, (text, data) in cases.items():
        best, median, (n, m) = timed(text, data, args.repeats, args.warm)
        print(f"{name}: linear form {best:.4f} s best, {median:.4f} s median (n = {n}, m = {m})")


if __name__ == "__main__":
    main()
