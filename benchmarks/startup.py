"""Start-up: wall seconds of `dfl check` and `dfl solve --backend highs` on spec models, as a
user types them, beside `python -c pass` for scale; and what each command imports.

Each command runs --repeats times in a fresh interpreter (best of the runs is reported); then
once more under `python -X importtime`, whose per-package totals (self time, microseconds
summed by top-level package) say where the start-up goes, and which heavy packages that the
command doesn't need (torch, cvxpy, pyomo, matplotlib, rich tables off a terminal) it loaded.

    python benchmarks/startup.py [--repeats 5]

Not run in CI.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys

from _common import SPEC, best_wall, installed_env

HEAVY = ("torch", "cvxpy", "pyomo", "matplotlib", "rich.table", "pandas", "scipy.linalg")
TARGETS = {"check": 0.35, "solve": 0.5}


def commands() -> dict[str, list[str]]:
    dfl = [sys.executable, "-m", "dfl_dsl"]  # what the `dfl` script runs: cli.main
    transport, data = str(SPEC / "transport.opt"), str(SPEC / "transport.json")
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "check": [*dfl, "check", transport],
        "check --data": [*dfl, "check", transport, "--data", data],
        "solve": [*dfl, "solve", transport, "--data", data, "--backend", "highs"],
        "solve --json": [*dfl, "solve", transport, "--data", data, "--backend", "highs",
                         "--json"],
    }


def imports(cmd: list[str]) -> tuple[collections.Counter, list[str]]:
    """Self import time (µs) per top-level package, and the heavy modules it loaded."""
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True,
                          text=True, check=True, env=installed_env())
    totals: collections.Counter = collections.Counter()
    loaded = set()
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \| +(\S+)", line)
        if match:
            totals[match.group(2).split(".")[0]] += int(match.group(1))
            loaded.add(match.group(2))
    return totals, [m for m in HEAVY if m in loaded]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="best of this many runs")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"load average before: {os.getloadavg()}")
    for label, cmd in commands().items():
        best = best_wall(cmd, args.repeats)
        target = TARGETS.get(label)
        verdict = "" if target is None else (
            f"   target < {target} s: {'met' if best < target else 'missed'}")
        print(f"{label:16s} {best:.3f} s (best of {args.repeats}){verdict}")
    print(f"load average after: {os.getloadavg()}")
    for label, cmd in list(commands().items())[1:]:
        totals, heavy = imports(cmd)
        top = ", ".join(f"{name} {us / 1000:.0f}" for name, us in totals.most_common(8))
        print(f"\n{label}: imports {sum(totals.values()) / 1000:.0f} ms self time; "
              f"largest (ms): {top}")
        print(f"  heavy modules loaded: {', '.join(heavy) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
