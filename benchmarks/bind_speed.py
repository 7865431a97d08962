"""Bind speed: how fast a big instance goes from .opt text + data to evaluated arrays.

(a) transport 1000 × 1000 (1M variables; the spec's transport.opt; ORIG/DEST are string
    elements; the data is a Python dict of nested lists, as JSON would give it): parse + check,
    bind and compile, each timed. Target: parse + check + bind < 5 s.
(b) a 70 × 70 grid shortest path (9,660 arcs, right and down, laid out like the spec's
    shortest_path.json; source = node 0 top-left, sink = bottom-right) with the spec's
    shortest_path.opt: bind + compile, which evaluates the tuple-pattern balance rows
    `sum{(i, v) in ARCS}` as joins. Target: < 1 s.

Each time is the best of --repeats runs (the first, cold run is shown too: it includes building
the LALR parser). Memory: the tracemalloc peak of each stage in one extra, untimed run (numpy
reports its buffers to tracemalloc), and the process's peak RSS (ru_maxrss) at the end.

    python benchmarks/bind_speed.py [--n 1000] [--grid 70] [--repeats 3]

Exits 1 when a target is missed. Not run in CI.
"""

from __future__ import annotations

import argparse
import gc
import sys

import numpy as np
from _common import (
    Stopwatch,
    best_of,
    grid_data,
    maxrss_mb,
    spec_text,
    table,
    traced_peaks,
    transport_data,
)

import dfl_dsl as dfl

TRANSPORT_TARGET_S = 5.0  # parse + check + bind
GRID_TARGET_S = 1.0  # bind + compile


def transport_run(text: str, data: dict) -> Stopwatch:
    watch = Stopwatch()
    model = dfl.parse(text, "transport.opt")
    watch.lap("parse + check")
    inst = model.bind(data)
    watch.lap("bind")
    inst.compile()
    watch.lap("compile")
    return watch


def grid_run(text: str, data: dict) -> Stopwatch:
    model = dfl.parse(text, "shortest_path.opt")
    watch = Stopwatch()
    inst = model.bind(data)
    watch.lap("bind")
    inst.compile()
    watch.lap("compile")
    return watch


def check_grid_solution(text: str, data: dict, k: int) -> str:
    """Solve the grid once (untimed) and compare with Dijkstra: shows the rows are right."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import dijkstra

    from dfl_dsl.backends.highs import HighsModel

    inst = dfl.parse(text, "shortest_path.opt").bind(data)
    # `cost` is `predicted`: its data value enters as θ, the form keeps c(θ) as a map
    res = HighsModel(inst.linear_form(), theta=inst.theta_for_solve()).solve()
    arcs = np.asarray(data["ARCS"])
    graph = csr_array((data["cost"], (arcs[:, 0], arcs[:, 1])), shape=(k * k, k * k))
    best = dijkstra(graph, indices=0)[k * k - 1]
    ok = res.status == "optimal" and abs(res.objective - best) < 1e-6 * max(1.0, best)
    return f"HiGHS {res.status} {res.objective:.6f} vs Dijkstra {best:.6f}: " + (
        "match" if ok else "MISMATCH")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="transport size n (n × n)")
    parser.add_argument("--grid", type=int, default=70, help="grid side k (k × k nodes)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    # ------------------------------------------------------------ (a) transport
    n = args.n
    text = spec_text("transport.opt")
    data = transport_data(n)
    best, cold = best_of(args.repeats, lambda: transport_run(text, data))
    mem = traced_peaks(lambda: transport_run(text, data))
    gc.collect()
    head = best["parse + check"] + best["bind"]
    rows = [[stage, best[stage], cold[stage], mem[stage]] for stage in best]
    rows.append(["parse + check + bind", head, cold["parse + check"] + cold["bind"], "-"])
    ok_a = head < TRANSPORT_TARGET_S
    print(f"\n(a) transport {n} x {n}: {n * n:,} variables, {2 * n:,} rows "
          f"(best of {args.repeats})\n")
    print(table(["stage", "best (s)", "first run (s)", "tracemalloc peak (MiB)"], rows))
    print(f"\nparse + check + bind = {head:.3f} s; target < {TRANSPORT_TARGET_S:.0f} s: "
          + ("MET" if ok_a else "MISSED"))

    # ------------------------------------------------------------ (b) grid shortest path
    k = args.grid
    text = spec_text("shortest_path.opt")
    data = grid_data(k)
    best, cold = best_of(args.repeats, lambda: grid_run(text, data))
    mem = traced_peaks(lambda: grid_run(text, data))
    total = best["bind"] + best["compile"]
    rows = [[stage, best[stage], cold[stage], mem[stage]] for stage in best]
    rows.append(["bind + compile", total, cold["bind"] + cold["compile"], "-"])
    ok_b = total < GRID_TARGET_S
    print(f"\n(b) shortest path on a {k} x {k} grid: {k * k:,} nodes, {len(data['ARCS']):,} arcs "
          f"(best of {args.repeats})\n")
    print(table(["stage", "best (s)", "first run (s)", "tracemalloc peak (MiB)"], rows))
    print(f"\nbind + compile = {total:.3f} s; target < {GRID_TARGET_S:.0f} s: "
          + ("MET" if ok_b else "MISSED"))
    print("check: " + check_grid_solution(text, data, k))

    print(f"\npeak RSS of this process (ru_maxrss): {maxrss_mb():.0f} MiB")
    return 0 if ok_a and ok_b else 1


if __name__ == "__main__":
    sys.exit(main())
