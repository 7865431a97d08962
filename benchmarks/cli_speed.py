"""End to end: `dfl solve` on an n × n transport LP as a user runs it, against Pyomo and linopy
building and solving the same LP in process.

  ours    `python -m dfl_dsl solve transport.opt --data transport.json --backend highs --json
          > /dev/null`: the whole command, wall clock — interpreter start-up, imports, reading
          the JSON data, parse, bind, compile, HiGHS, and writing every keyed value and dual.
  pyomo   build (ConcreteModel, rules, quicksum) + appsi HiGHS set_instance + solve.
  linopy  build (labeled arrays) + Model.solve(solver_name="highs", io_api="direct"): the
          hand-over, HiGHS, and the solution and duals written back onto the arrays.

The peers are timed inside their process (build_speed.py's workers, peers.py's models, the
same supply/demand/cost arrays), so their interpreter start-up, imports and data loading are
not counted: the comparison leans their way. For scale, the last column times each peer as a
script run once (`python -c`: start-up, imports, build, solve; the data made in memory, no
solution written). Each time is the best of --repeats; the objectives must agree. Last, the
floor for any command: the hand-written highspy build as a script (start-up, numpy, highspy,
passModel, solve), what a command that did nothing else would take.

    python benchmarks/cli_speed.py [--n 600] [--repeats 3]

Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import build_speed
from _common import best_wall, spec_text, table, transport_data

# the laps that make "build + solve" (linopy's solve hands the model over again itself)
BUILD_AND_SOLVE = {"pyomo": ("build", "hand-over", "solve"), "linopy": ("build", "solve")}
TARGETS = {"pyomo": 6.0, "linopy": 1.0}  # peer / ours at least this


def ours(n: int, repeats: int, folder: Path) -> tuple[float, float]:
    """Best wall seconds of the whole command, and the objective it printed."""
    model, data = folder / "transport.opt", folder / "transport.json"
    model.write_text(spec_text("transport.opt"))
    data.write_text(json.dumps(transport_data(n)))
    cmd = [sys.executable, "-m", "dfl_dsl", "solve", str(model), "--data", str(data),
           "--backend", "highs", "--json"]
    best = best_wall(cmd, repeats)  # stdout to /dev/null
    printed = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return best, json.loads(printed)["objective"]  # (one more run, untimed)


def peer(name: str, n: int, repeats: int) -> tuple[float, float] | None:
    args = argparse.Namespace(repeats=repeats, budget=600.0, timeout=1200.0)
    res = build_speed.spawn(name, "transport", n, args, True)
    if "laps" not in res:
        print(f"{name}: {res['skipped']}")
        return None
    return sum(res["laps"][k] for k in BUILD_AND_SOLVE[name]), res["objective"]


def whole_process(name: str, n: int, repeats: int) -> float:
    """Best wall seconds of a fresh interpreter that imports the peer, builds and solves once."""
    code = f"import build_speed; build_speed.MAKERS[{name!r}]('transport', {n}, True)()"
    return best_wall([sys.executable, "-c", code], repeats, cwd=Path(__file__).parent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=600, help="transport size (n × n)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(argv)
    os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        times = {"ours (dfl solve, whole command)": ours(args.n, args.repeats, Path(tmp))}
    scripts = {}
    for name in BUILD_AND_SOLVE:
        result = peer(name, args.n, args.repeats)
        if result is not None:
            times[f"{name} (build + solve, in process)"] = result
            scripts[name] = whole_process(name, args.n, args.repeats)
    # the least any command can take: start-up, numpy + highspy, the arrays by hand, HiGHS
    floor_script = whole_process("highspy", args.n, args.repeats)
    print(f"load average after: {os.getloadavg()}")
    ours_t, ours_obj = next(iter(times.values()))
    rows = []
    for label, (seconds, objective) in times.items():
        name = label.split()[0]
        ratio = seconds / ours_t
        verdict = "" if name not in TARGETS else (
            f" (target >= {TARGETS[name]:g}: {'met' if ratio >= TARGETS[name] else 'missed'})")
        agree = abs(objective - ours_obj) <= 1e-6 * max(1.0, abs(ours_obj))
        script = scripts.get(name)
        rows.append([label, seconds, f"{ratio:.2f}×{verdict}", f"{objective:.4f}",
                     "agree" if agree else "DISAGREE",
                     "-" if script is None else f"{script:.3f} ({script / ours_t:.2f}×)"])
    print(f"\ntransport {args.n} × {args.n}: seconds, best of {args.repeats}\n")
    print(table(["competitor", "seconds", "÷ ours", "objective", "check",
                 "as a script run once (s, ÷ ours)"], rows))
    print(f"\nfloor for any command: a script that builds the arrays by hand and runs HiGHS "
          f"(python -c: start-up, numpy, highspy, passModel, solve) takes {floor_script:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
