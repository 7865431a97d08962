"""Filters pushed into joins: flow balance written three ways, bound and compiled.

A min-cost flow on N nodes and A arcs (a ring both ways plus random arcs), its balance rows
written as AMPL models write them:

    pattern     sum{(i, k) in ARCS} x[i, k] - sum{(k, j) in ARCS} x[k, j]
    equality    sum{(i, j) in ARCS: j == k} x[i, j] - sum{(i, j) in ARCS: i == k} x[i, j]
    membership  sum{i in NODES: (i, k) in ARCS} x[i, k] - sum{j in NODES: (k, j) in ARCS} x[k, j]

each bound and compiled to the LP's standard form with the push-down (evaluate/pushdown.py) on
and, for scale, off (the filter over the cross join: N × A and N × N rows per sum; a run that
would pass the size cap is shown as refused). The three forms' matrices are checked equal.
Best of --repeats (one run with the push-down off); the traced memory peak of one more run.

    python benchmarks/filter_joins.py [--nodes 5000] [--arcs 40000] [--repeats 3]

Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _common import table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "min_cost_flow"))
from make_data import network  # noqa: E402  (the example's ring-plus-random-arcs network)

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import build_linear
from dfl_dsl.errors import DflError
from dfl_dsl.evaluate.evaluator import Evaluator

HEAD = """set NODES; set ARCS within NODES * NODES;
param b{NODES}; param c{ARCS} >= 0; param u{ARCS} >= 0;
var x{(i, j) in ARCS} >= 0, <= u[i, j];
minimize cost: sum{(i, j) in ARCS} c[i, j] * x[i, j];
subject to balance{k in NODES}: """
FORMS = {
    "pattern": "sum{(i, k) in ARCS} x[i, k] - sum{(k, j) in ARCS} x[k, j] == b[k];",
    "equality": "sum{(i, j) in ARCS: j == k} x[i, j] - sum{(i, j) in ARCS: i == k} x[i, j] "
                "== b[k];",
    "membership": "sum{i in NODES: (i, k) in ARCS} x[i, k] - sum{j in NODES: (k, j) in ARCS} "
                  "x[k, j] == b[k];",
}


def flow_data(nodes: int, arcs: int, seed: int = 0) -> dict:
    """The example's network (examples/min_cost_flow/make_data.py) as a data mapping."""
    pairs, rng = network(nodes, arcs, seed)
    names = [f"n{i}" for i in range(nodes)]
    supply = np.zeros(nodes)
    supply[0], supply[-1] = -100.0, 100.0
    return {"NODES": names, "ARCS": [[names[i], names[j]] for i, j in pairs],
            "b": supply.tolist(), "c": rng.uniform(1, 10, len(pairs)).tolist(),
            "u": rng.uniform(50, 200, len(pairs)).tolist()}


def build(form: str, data: dict):
    model = dfl.parse(HEAD + FORMS[form], f"{form}.opt")
    return build_linear(model.bind(data), reduce=False).A


def timed(form: str, data: dict, repeats: int) -> tuple[float | str, float, object]:
    """Best seconds (or the refusal), the traced memory peak of one more run (MiB: numpy
    reports its buffers to tracemalloc), the matrix."""
    best, A = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            A = build(form, data)
        except DflError as exc:
            return f"refused ({exc.message.split(';')[0]})", 0.0, None
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    build(form, data)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, peak, A


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--arcs", type=int, default=40000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = flow_data(args.nodes, args.arcs)
    print(f"flow: {args.nodes:,} nodes, {len(data['ARCS']):,} arcs; load average "
          f"{os.getloadavg()[0]:.2f}")
    rows, reference = [], None
    for push in (True, False):
        if not push:
            Evaluator._pushdown = lambda self, index: None  # the filter over the cross join
        for form in FORMS:
            if not push and form == "pattern":
                continue
            best, grown, A = timed(form, data, args.repeats if push else 1)
            if A is not None:
                reference = A if reference is None else reference
                same = "equal" if (A != reference).nnz == 0 else "DIFFERENT"
            else:
                same = "-"
            shown = best if isinstance(best, str) else f"{best:.3f}"
            rows.append([form, "on" if push else "off", shown, f"{grown:.0f}", same])
    print(table(["balance written as", "push-down", "bind + compile (s)", "memory peak (MiB)",
                 "matrix vs pattern"], rows))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
