"""Every GPU path and GPU benchmark in one short run, with a JSON report.

For a machine with CUDA (the project's CI has none): each check runs as its own subprocess
with a time limit, so one failure doesn't hide the others, and the whole run stays under
8 minutes. The report lists, per check, its command, exit status, wall time, what it measured
(the JSON it printed, when it prints one) and the tail of its output.

    python benchmarks/gpu_check.py --out gpu_report.json
    python benchmarks/gpu_check.py --device cpu --only flexqp_solve   # try the script here

On a lent GPU machine (no registry there): carry the runtime packages as wheels and the spec
beside the checkout, e.g. `.whl/` and a copy of ../shared/spec in `.spec/` (both ignored),
and start the command with `pip install --no-index --no-deps --target /tmp/site .whl/*.whl;
export PYTHONPATH=/tmp/site:$PWD; mkdir -p ../shared && cp -r .spec ../shared/spec`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "spec"
DFL = [sys.executable, "-m", "dfl_dsl.cli"]
BATCHED = [sys.executable, str(ROOT / "benchmarks" / "batched_oracle.py")]


def checks(device: str) -> list[tuple[str, list[str], float]]:
    """(name, argv, time limit in s); run in this order."""
    sp = ROOT / "examples" / "shortest_path" / "shortest_path.opt"
    energy = ROOT / "examples" / "energy_schedule" / "energy_schedule.opt"
    portfolio = ROOT / "examples" / "portfolio_cvar" / "portfolio_cvar.opt"
    markowitz = ROOT / "examples" / "portfolio_qp"
    return [
        ("torch_cuda", [sys.executable, "-c", (
            "import json, torch; print(json.dumps({'cuda': torch.cuda.is_available(), "
            "'device': torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "
            "'torch': torch.__version__}))")], 30),
        ("flexqp_solve", [*DFL, "solve", str(SPEC / "qp.opt"), "--data", str(SPEC / "qp.json"),
                          "--backend", "flexqp", "--device", device, "--json"], 60),
        ("flexqp_relaxed", [*DFL, "solve", str(SPEC / "qp.opt"), "--data",
                            str(SPEC / "qp_infeasible.json"), "--backend", "flexqp", "--device",
                            device, "--json"], 60),
        ("qp_layer_batch_10000", [sys.executable, str(ROOT / "benchmarks" / "qp_layer.py"),
                                  "--batch", "10000", "--device", device, "--no-peers"], 150),
        ("obcd_sparse_pca", [*DFL, "solve", str(SPEC / "sparse_pca.opt"), "--data",
                             str(SPEC / "sparse_pca.json"), "--backend", "obcd", "--device",
                             device, "--json"], 60),
        ("aapga_coverage", [*DFL, "solve", str(SPEC / "coverage.opt"), "--data",
                            str(SPEC / "coverage.json"), "--backend", "aapga", "--device", device,
                            "--json"], 60),
        # 20,000 × 500, k = 50: AAPGA on the device beside apricot's lazy greedy on one CPU
        # thread, medians of 3; prints the value ratio, both times and the speed-up as JSON
        ("aapga_20k_vs_greedy", [sys.executable, str(ROOT / "benchmarks" / "scm.py"), "--case",
                                 "20000x500", "--device", device, "--repeats", "3", "--json"],
         60),
        ("train_shortest_path", [*DFL, "train", str(sp), "--epochs", "2", "--device", device,
                                 "--json"], 90),
        # a convex QP trained through HiGHS: the Hessian's term of regret on the device
        ("portfolio_qp_data", [sys.executable, str(markowitz / "make_data.py")], 60),
        ("train_qp_portfolio", [*DFL, "train", str(markowitz / "portfolio_qp.opt"), "--data",
                                "portfolio.json", "--train", "train.npz", "--test", "test.npz",
                                "--loss", "pfyl", "--epochs", "2", "--device", device, "--json"],
         90),
        # the batched LP oracle: 10,000 LPs at once, exact after polishing, beside HiGHS
        ("oracle_10000_lps_5x5", [*BATCHED, "throughput", "--grid", "5", "--batch", "10000",
                                  "--device", device, "--highs-sample", "1000"], 90),
        ("oracle_10000_lps_20x20", [*BATCHED, "throughput", "--grid", "20", "--batch", "10000",
                                    "--device", device, "--highs-sample", "200", "--repeat",
                                    "1"], 120),
        # the interior-point method on the 20×20 grid's 400 rows (auto takes PDHG above 256 rows:
        # on a CPU the IPM's (B, 400, 400) factorizations cost more than PDHG's ~1,400
        # iterations, 9.0 vs 5.6 s for 200 LPs); on a GPU the factorizations are batched
        # throughput and PDHG's iterations are latency — this measures which wins there
        ("oracle_2000_lps_20x20_ipm", [*BATCHED, "throughput", "--grid", "20", "--batch", "2000",
                                       "--method", "ipm", "--device", device, "--highs-sample",
                                       "100", "--repeat", "1"], 90),
        # SPO+ training with the batched oracle on the device beside HiGHS on the CPU
        ("train_spo_batch_32", [*BATCHED, "train", "--batch-size", "32", "--num", "1000",
                                "--epochs", "3", "--device", device], 90),
        ("train_spo_batch_1000", [*BATCHED, "train", "--batch-size", "1000", "--num", "10000",
                                  "--epochs", "2", "--device", device], 120),
        # Gen-DFL with its scenario LPs solved batched on the device
        ("train_gen_dfl_portfolio", [*DFL, "train", str(portfolio), "--loss", "gen-dfl",
                                     "--epochs", "1", "--device", device, "--json"], 150),
        ("train_gen_dfl_energy", [*DFL, "train", str(energy), "--loss", "gen-dfl", "--epochs",
                                  "1", "--device", device, "--save", "gen.pt", "--json"], 120),
        # replays the regret the training run printed, on the same device (same scenarios)
        ("eval_gen_dfl_energy", [*DFL, "eval", str(energy), "--checkpoint", "gen.pt",
                                 "--device", device, "--json"], 60),
        ("cuda_tests", [sys.executable, "-m", "pytest", "-q", "-x", "-k", "cuda or gpu",
                        str(ROOT / "tests")], 150),
    ]


def run_check(name: str, argv: list[str], limit: float, work: Path) -> dict:
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=limit,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                  [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])})
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = "timeout", exc.stdout or "", exc.stderr or ""
        stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
        stderr = stderr.decode() if isinstance(stderr, bytes) else stderr
    wall = time.perf_counter() - start
    measured = None
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                measured = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(measured.get("variables"), dict):
                measured.pop("variables")  # keep the report readable
            break
    return {"check": name, "command": " ".join(argv), "rc": rc, "ok": rc == 0,
            "wall_s": round(wall, 2), "limit_s": limit, "measured": measured,
            "tail": (stdout + stderr)[-2000:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default=None, help="comma-separated check names")
    ap.add_argument("--out", type=Path, default=Path("gpu_report.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        selected = checks(args.device)
        if args.only:
            wanted = set(args.only.split(","))
            selected = [c for c in selected if c[0] in wanted]
        report = {"device": args.device, "checks": []}
        total = time.perf_counter()
        for name, argv, limit in selected:
            row = run_check(name, argv, limit, work)
            report["checks"].append(row)
            print(f"{name:24} {'ok' if row['ok'] else 'FAILED (' + str(row['rc']) + ')':14} "
                  f"{row['wall_s']:8.2f} s  {json.dumps(row['measured'])[:600]}", flush=True)
            # written after every check: a run cut short still leaves what it measured
            report["total_s"] = round(time.perf_counter() - total, 2)
            args.out.write_text(json.dumps(report, indent=1))
    failed = [c["check"] for c in report["checks"] if not c["ok"]]
    print(f"total {report['total_s']} s; {len(failed)} failed {failed or ''}; "
          f"report in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
