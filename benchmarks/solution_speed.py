"""Writing a 1M-entry solution: seconds to write the transport 1000 × 1000 solution (1,000,000
keyed values, 2,000 keyed duals, 1,000,000 reduced costs) as JSON, .npz, .csv and .parquet,
the way `dfl solve --output` writes them (solution_files.solution_writer into a file).

Two solutions of the same instance: the LP's own (a vertex: at most 2,000 nonzero values, the
case a user meets) and the same keys with dense random values (every value distinct, 17
significant digits: the worst case for formatting numbers). For scale, the per-entry loop
that built nested dicts before (one `element_of` and `_json_key` call per entry) and
`json.dumps` of its result.

    python benchmarks/solution_speed.py [--n 1000] [--repeats 3]

Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from _common import spec_text, table, transport_arrays, transport_names

FORMATS = ("sol.json", "sol.npz", "sol.csv", "sol.parquet")
TARGETS = {"sol.json": 0.5, "sol.npz": 0.1}


def per_entry_json(sol) -> str:
    """The previous way, for scale: nested dicts filled entry by entry, then json.dumps."""
    from dfl_dsl.evaluate.elements import element_of

    variables = {}
    for entity in sol.instance.variables:
        flat = sol.x[entity.offset: entity.offset + entity.size]
        out: dict = {}
        for row, value in zip(entity.domain.keys().tolist(), flat.tolist(), strict=True):
            node = out
            for key in row[:-1]:
                node = node.setdefault(str(element_of(key)), {})
            node[str(element_of(row[-1]))] = value if np.isfinite(value) else None
        variables[entity.name] = out
    return json.dumps({"status": sol.status, "variables": variables})


def best(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(sol, repeats: int, folder: Path) -> list:
    from dfl_dsl.outputs import write_atomic
    from dfl_dsl.solution_files import solution_writer

    row = [best(repeats, lambda: per_entry_json(sol))]
    for name in FORMATS:
        path = folder / name
        if name.endswith(".parquet"):
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                row.append("no pyarrow")
                continue
        row.append(best(repeats, lambda p=path: write_atomic(p, solution_writer(sol, p))))
        row[-1] = f"{row[-1]:.3f} ({path.stat().st_size / 2**20:.0f} MiB)"
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="transport size (n × n)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(argv)
    import dfl_dsl as dfl

    supply, demand, cost = transport_arrays(args.n)
    orig, dest = transport_names(args.n)
    data = {"ORIG": orig, "DEST": dest, "supply": supply, "demand": demand, "cost": cost}
    sol = dfl.parse(spec_text("transport.opt"), "transport.opt").bind(data).solve("highs")
    dense = replace(sol, x=np.random.default_rng(0).uniform(0, 100, len(sol.x)))
    print(f"load average before: {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, s in (("LP solution (vertex)", sol), ("dense random values", dense)):
            rows.append([label, int(np.count_nonzero(s.x)), *measure(s, args.repeats,
                                                                     Path(tmp))])
    print(f"load average after: {os.getloadavg()}")
    print(f"\ntransport {args.n} × {args.n}: seconds to write (best of {args.repeats}); "
          f"targets for {args.n ** 2:,} entries: JSON < {TARGETS['sol.json']} s, "
          f"npz < {TARGETS['sol.npz']} s\n")
    print(table(["solution", "nonzeros", "per-entry dicts + json.dumps (before)", *FORMATS],
                rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
