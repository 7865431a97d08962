"""Every spec model (../shared/spec) on every backend, and what `dfl check` offers for it:
the figures a refactor must leave unchanged.

For each model (qp_infeasible is qp.opt on qp_infeasible.json) and each backend name the CLI
knows, one solve with seed 0: its status and objective, or the error it refuses the model with
(the message only, so a refusal that moves to another file still compares). The backends line
is `dfl check`'s list, best first. Prints one JSON object; `--compare OLD.json` prints the
entries that differ (objectives within --rtol) and exits 1 when any does.

    python benchmarks/spec_backends.py --out before.json
    python benchmarks/spec_backends.py --compare before.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import dfl_dsl as dfl
from dfl_dsl.errors import DflError

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec"
BACKENDS = ("highs", "pyomo", "cvxpy", "flexqp", "fw", "obcd", "aapga")


def _cases(spec: Path) -> list[tuple[str, Path, Path]]:
    cases = []
    for model in sorted(spec.glob("*.opt")):
        cases.append((model.stem, model, spec / f"{model.stem}.json"))
    cases.append(("qp_infeasible", spec / "qp.opt", spec / "qp_infeasible.json"))
    return cases


def _run(inst, backend: str) -> dict:
    start = time.perf_counter()
    try:
        sol = inst.solve(backend, seed=0, time_limit=60)
    except DflError as exc:
        return {"refused": exc.message}
    out: dict = {"status": sol.status}
    if sol.objective is not None:
        out["objective"] = round(float(sol.objective), 6)
    out["time_s"] = round(time.perf_counter() - start, 3)
    return out


def measure(spec: Path) -> dict:
    from dfl_dsl.backends import accepting

    results = {}
    for name, model_path, data_path in _cases(spec):
        model = dfl.load(model_path)
        entry = {"class": model.klass.label, "backends": accepting(model.klass), "solves": {}}
        for backend in BACKENDS:
            inst = model.bind(data_path)  # a fresh instance: no form cached by another backend
            entry["solves"][backend] = _run(inst, backend)
        results[name] = entry
    return results


def compare(old: dict, new: dict, rtol: float) -> list[str]:
    """The differences, one line each (times are not compared)."""
    lines = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            lines.append(f"{name}: only in {'new' if a is None else 'old'}")
            continue
        for key in ("class", "backends"):
            if a[key] != b[key]:
                lines.append(f"{name} {key}: {a[key]} -> {b[key]}")
        for backend in sorted(set(a["solves"]) | set(b["solves"])):
            x, y = a["solves"].get(backend, {}), b["solves"].get(backend, {})
            if x.get("status") != y.get("status") or x.get("refused") != y.get("refused"):
                lines.append(f"{name} {backend}: {x} -> {y}")
            elif "objective" in x or "objective" in y:
                u, v = x.get("objective"), y.get("objective")
                if u is None or v is None or not math.isclose(u, v, rel_tol=rtol, abs_tol=rtol):
                    lines.append(f"{name} {backend}: objective {u} -> {v}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--rtol", type=float, default=1e-6)
    args = parser.parse_args()
    results = measure(args.spec)
    text = json.dumps(results, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    if args.compare:
        lines = compare(json.loads(args.compare.read_text()), results, args.rtol)
        print("\n".join(lines) if lines else "same results as " + str(args.compare))
        return 1 if lines else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
