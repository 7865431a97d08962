"""Build speed: seconds from a model + data to that model inside HiGHS, side by side.

Families
  transport  n × n, n in {100, 300, 1000}: the spec's transport.opt (n² variables, 2n rows).
  facility   G = F in {25, 50, 75}: the facility-location benchmark of the JuMP papers
             (Dunning, Huchette & Lubin 2017; Lubin et al. 2023), linearized: the paper's
             second-order cone ||r||₂ <= s becomes the Chebyshev ||r||∞ <= s (see facility.opt).
             A MILP: like the paper (time limit 0), we time the build only, never the solve.

Competitors (each size and competitor in its own subprocess, so peak memory is its own)
  ours     dfl.parse + bind + compile + linear_form + HighsModel (passModel)
  pyomo    ConcreteModel with indexed Vars/Constraints written the usual way (rules, quicksum),
           handed over by appsi's Highs.set_instance
  cvxpy    cp.Problem of vectorized expressions, get_problem_data(cp.HIGHS) (canonicalization),
           then CVXPY's own HiGHS interface up to the moment it would call run() (passModel done)
  linopy   a linopy.Model over labeled coordinates (one vectorized expression per constraint
           family), handed over by linopy.io.to_highspy (its direct interface)
  highspy  the floor: numpy/scipy arrays straight into Highs.passModel

(The peers' code is in peers.py.) "to HiGHS" is the sum of every stage before the solve. Times
are the best of --repeats runs (fewer when one run is slow; more, up to 50, while they total
under a second); the ratios compare the medians of the same runs. Transport LPs
up to --solve-max are also solved (separately timed); a tiny instance of each family is solved
by every competitor first, and the objectives must agree. A competitor is skipped at a size
when extrapolation from its smaller sizes says it would take more than --cap seconds.

    python benchmarks/build_speed.py [--quick] [--only ours,pyomo,cvxpy,linopy,highspy]
                                     [--family transport,facility] [--sizes 100,1000]
                                     [--json OUT.json]

Not run in CI.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import (
    Stopwatch,
    maxrss_mb,
    spec_text,
    table,
    transport_arrays,
    transport_names,
)
from peers import cvxpy, highspy_floor, linopy_model, pyomo

HERE = Path(__file__).resolve().parent
PLOT = HERE.parent / "docs" / "img" / "build_speed.png"
COMPETITORS = ("ours", "pyomo", "cvxpy", "linopy", "highspy")
FAMILIES = {
    "transport": {"sizes": (100, 300, 1000), "quick": (100, 300), "check": 20},
    "facility": {"sizes": (25, 50, 75), "quick": (10, 25), "check": 3},
}
TARGETS = {"pyomo": 10.0, "cvxpy": 2.0, "linopy": 3.0, "highspy": 1.5}  # ×faster / within ×


def work(family: str, size: int) -> float:
    """What a build's time scales with: the number of model nonzeros, up to a constant."""
    return size * size if family == "transport" else (size + 1) ** 2 * size


# ====================================================================== ours
def ours(family: str, size: int, solve: bool):
    import dfl_dsl as dfl
    from dfl_dsl.backends.highs import HighsModel

    if family == "transport":
        # the same in-memory arrays the floor starts from (bind_speed.py times JSON-style lists)
        supply, demand, cost = transport_arrays(size)
        orig, dest = transport_names(size)
        data = {"ORIG": orig, "DEST": dest, "supply": supply, "demand": demand, "cost": cost}
        text, name = spec_text("transport.opt"), "transport.opt"
    else:
        text, name, data = (HERE / "facility.opt").read_text(), "facility.opt", {
            "G": size, "F": size}

    def run():
        watch = Stopwatch()
        model = dfl.parse(text, name)
        watch.lap("parse/check")
        inst = model.bind(data)
        watch.lap("bind")
        inst.compile()
        watch.lap("compile")
        form = inst.linear_form()
        watch.lap("linear form")
        hm = HighsModel(form)
        watch.lap("hand-over")
        objective = None
        if solve:
            res = hm.solve(want_duals=False)
            watch.lap("solve")
            objective = form.model_objective(res.objective)
        return watch.laps, objective

    return run


MAKERS = {"ours": ours, "pyomo": pyomo, "cvxpy": cvxpy, "linopy": linopy_model,
          "highspy": highspy_floor}


# ====================================================================== worker
MIN_TIME_S = 1.0  # fast builds repeat until they have run this long: a stable best
MAX_RUNS = 50


def worker(competitor: str, family: str, size: int, repeats: int, solve: bool,
           budget_s: float) -> dict:
    """Runs in its own process, after one untimed run on the family's tiny instance (so no
    competitor's time holds its lazy imports or first-call set-up): best of `repeats` runs
    (stops early past `budget_s`), and of more (up to MAX_RUNS) while they have taken under
    MIN_TIME_S in all, so a build of a few milliseconds isn't judged on three samples. Every
    competitor gets the same rule."""
    _mute_highs_banner()
    MAKERS[competitor](family, FAMILIES[family]["check"], solve)()  # untimed: first-use costs
    run = MAKERS[competitor](family, size, solve)
    rss_before = maxrss_mb()
    runs, spent = [], 0.0
    while (not runs or spent < budget_s) and (
            len(runs) < repeats or (spent < MIN_TIME_S and len(runs) < MAX_RUNS)):
        start = time.perf_counter()
        laps, objective = run()
        spent += time.perf_counter() - start
        runs.append((laps, objective))
        gc.collect()
    laps, objective = min(runs, key=lambda r: _to_highs(r[0]))
    median = float(np.median([_to_highs(r[0]) for r in runs]))
    return {"laps": laps, "objective": objective, "runs": len(runs), "median_to_highs": median,
            "rss_before_mb": rss_before, "peak_rss_mb": maxrss_mb()}


def _to_highs(laps: dict) -> float:
    return sum(v for k, v in laps.items() if k != "solve")


def _mute_highs_banner() -> None:
    """HiGHS prints a banner on stdout when its first object is made; keep stdout for JSON."""
    import highspy

    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def spawn(competitor: str, family: str, size: int, args, solve: bool) -> dict:
    cmd = [sys.executable, __file__, "--worker", competitor, family, str(size),
           "--repeats", str(args.repeats), "--budget", str(args.budget)]
    if solve:
        cmd.append("--solve")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              cwd=HERE)
    except subprocess.TimeoutExpired:
        return {"skipped": f"timeout after {args.timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"skipped": "failed: " + " / ".join(tail)}


# ====================================================================== driver
def extrapolate(done: list[tuple[float, float]], w: float) -> float | None:
    """Seconds at work `w` from (work, seconds) measured at smaller sizes, with the log-log
    slope of the last two points (at least 1: builds don't get cheaper per nonzero)."""
    if not done:
        return None
    (w1, t1) = done[-1]
    slope = 1.0
    if len(done) >= 2:
        (w0, t0) = done[-2]
        slope = max(1.0, math.log(t1 / t0) / math.log(w1 / w0))
    return t1 * (w / w1) ** slope


def check_objectives(family: str, args, competitors) -> str:
    size = FAMILIES[family]["check"]
    values = {}
    for comp in competitors:
        res = spawn(comp, family, size, argparse.Namespace(**{**vars(args), "repeats": 1}), True)
        values[comp] = res.get("objective")
    finite = [v for v in values.values() if v is not None]
    ok = bool(finite) and len(finite) == len(values) and (
        max(finite) - min(finite) <= 1e-6 * max(1.0, abs(max(finite))))
    listing = ", ".join(f"{c} {v:.6f}" if v is not None else f"{c} -" for c, v in values.items())
    return f"{family} size {size} solved by each: {listing}: " + ("agree" if ok else "DISAGREE")


def measure(args) -> dict:
    families = args.family.split(",")
    competitors = [c for c in COMPETITORS if c in args.only.split(",")]
    _mute_highs_banner()
    results: dict = {"machine": machine(), "families": {}, "checks": []}
    for family in families:
        if not args.no_check:
            line = check_objectives(family, args, competitors)
            print("check:", line, flush=True)
            results["checks"].append(line)
        sizes = args.sizes or FAMILIES[family]["quick" if args.quick else "sizes"]
        fam = results["families"][family] = {}
        history: dict[str, list[tuple[float, float]]] = {c: [] for c in competitors}
        for size in sizes:
            solve = family == "transport" and size <= args.solve_max
            for comp in competitors:
                est = extrapolate(history[comp], work(family, size))
                if est is not None and est > args.cap:
                    res = {"skipped": f"extrapolated {est:.0f} s > cap {args.cap:.0f} s"}
                else:
                    res = spawn(comp, family, size, args, solve)
                if "laps" in res:
                    history[comp].append((work(family, size), _to_highs(res["laps"])))
                fam.setdefault(str(size), {})[comp] = res
                print(f"{family} {size} {comp}: " + (
                    f"{_to_highs(res['laps']):.3f} s to HiGHS, peak {res['peak_rss_mb']:.0f} MiB"
                    if "laps" in res else res["skipped"]), flush=True)
    return results


def machine() -> dict:
    import platform

    import cvxpy as cp
    import highspy
    import linopy
    import pyomo.version

    return {
        "nproc": os.cpu_count(), "processor": platform.processor(),
        "python": platform.python_version(), "loadavg_start": os.getloadavg(),
        "versions": {"numpy": np.__version__, "pyomo": pyomo.version.version,
                     "cvxpy": cp.__version__, "linopy": linopy.__version__,
                     "highspy": _highs_version(highspy)},
    }


def _highs_version(highspy) -> str:
    h = highspy.Highs()
    return f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def report(results: dict) -> str:
    out = []
    for family, by_size in results["families"].items():
        label = "n" if family == "transport" else "G = F"
        rows = []
        for size, comps in by_size.items():
            for comp, res in comps.items():
                if "laps" not in res:
                    rows.append([size, comp, res["skipped"], "-", "-", "-", "-", "-", "-"])
                    continue
                laps = res["laps"]
                stages = [k for k in laps if k not in ("hand-over", "solve")]
                build = " + ".join(f"{laps[k]:.3f}" for k in stages)
                rows.append([
                    size, comp, f"{build} ({' + '.join(stages)})", laps["hand-over"],
                    _to_highs(laps), laps.get("solve", "-"), f"{res['rss_before_mb']:.0f}",
                    f"{res['peak_rss_mb']:.0f}", res["runs"],
                ])
        out.append(f"\n{family} ({label}): seconds, best of the runs shown\n")
        out.append(table([label, "competitor", "build stages (s)", "hand-over (s)",
                          "to HiGHS (s)", "solve (s)", "RSS before build (MiB)",
                          "peak RSS (MiB)", "runs"], rows))
        out.append(f"\n{family}: ratios of the median time to HiGHS (targets: Pyomo/ours >= 10, "
                   "CVXPY/ours >= 2; linopy/ours >= 3 and ours/floor <= 1.5 judged at "
                   "transport 1000²)\n")
        ratio_rows = [_ratio_row(family, size, comps) for size, comps in by_size.items()]
        out.append(table([label, "ours (s)", "Pyomo (s)", "CVXPY (s)", "linopy (s)",
                          "floor (s)", "Pyomo / ours", "CVXPY / ours", "linopy / ours",
                          "ours / floor"], ratio_rows))
    return "\n".join(out)


def _ratio_row(family: str, size: str, comps: dict) -> list:
    """Median seconds to HiGHS per competitor, and ours against each (best of the runs where
    an older result has no median)."""
    t = {c: r.get("median_to_highs", _to_highs(r["laps"])) for c, r in comps.items()
         if "laps" in r}
    ours_t = t.get("ours")
    row = [size] + [t.get(c, "-") for c in COMPETITORS]
    for comp in ("pyomo", "cvxpy", "linopy", "highspy"):
        if ours_t is None or comp not in t:
            row.append("-")
            continue
        inverted = comp == "highspy"
        ratio = ours_t / t[comp] if inverted else t[comp] / ours_t
        met = ratio <= TARGETS[comp] if inverted else ratio >= TARGETS[comp]
        judged = comp in ("pyomo", "cvxpy") or (family == "transport" and size == "1000")
        row.append(f"{ratio:.2f}×" + ((" met" if met else " missed") if judged else ""))
    return row


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = list(results["families"])
    fig, axes = plt.subplots(1, len(families), figsize=(6 * len(families), 4.5), squeeze=False)
    styles = {"ours": "o-", "pyomo": "s--", "cvxpy": "^-.", "linopy": "v--", "highspy": "d:"}
    names = {"ours": "dfl-dsl (ours)", "pyomo": "Pyomo + appsi", "cvxpy": "CVXPY",
             "linopy": "linopy", "highspy": "highspy arrays (floor)"}
    for ax, family in zip(axes[0], families, strict=True):
        by_size = results["families"][family]
        for comp in COMPETITORS:
            pts = [(int(s), _to_highs(c[comp]["laps"])) for s, c in by_size.items()
                   if comp in c and "laps" in c[comp]]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, styles[comp], label=names[comp])
        ax.set_xscale("log")
        ax.set_yscale("log")
        sizes = [int(s) for s in by_size]
        ax.set_xticks(sizes, [str(s) for s in sizes])
        ax.minorticks_off()
        ax.set_xlabel("n (n × n transport)" if family == "transport" else "G = F (facility)")
        ax.set_ylabel("seconds from model + data to HiGHS")
        ax.set_title(family)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--only", default=",".join(COMPETITORS), help="competitors to run")
    parser.add_argument("--sizes", type=lambda text: [int(v) for v in text.split(",")],
                        help="sizes to run, comma-separated (default: the family's)")
    parser.add_argument("--family", default=",".join(FAMILIES), help="families to run")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--budget", type=float, default=30.0,
                        help="no further repeat once a competitor's runs took this long (s)")
    parser.add_argument("--cap", type=float, default=120.0,
                        help="skip a size whose extrapolated build time exceeds this (s)")
    parser.add_argument("--timeout", type=float, default=600.0, help="per subprocess (s)")
    parser.add_argument("--solve-max", type=int, default=300,
                        help="also time the solve of transport LPs up to this n")
    parser.add_argument("--no-check", action="store_true", help="skip the tiny solve check")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    parser.add_argument("--plot", type=Path, default=PLOT, help="where the plot goes")
    parser.add_argument("--report", type=Path, help="print and plot saved --json results")
    parser.add_argument("--worker", nargs=3, metavar=("COMPETITOR", "FAMILY", "SIZE"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--solve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        comp, family, size = args.worker
        res = worker(comp, family, int(size), args.repeats, args.solve, args.budget)
        print("RESULT " + json.dumps(res), flush=True)
        return 0
    if args.report:
        results = json.loads(args.report.read_text())
    else:
        results = measure(args)
        results["machine"]["loadavg_end"] = os.getloadavg()
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    print(f"\nmachine: {json.dumps(results['machine'])}")
    print(report(results))
    plot(results, args.plot)
    print(f"\nplot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
