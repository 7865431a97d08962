"""Gen-DFL's two tasks as its paper sets them up (Wang et al., "Gen-DFL", ICLR 2026,
arXiv 2502.05468), every method side by side on the same data in one run:

* portfolio: 50 assets, 5 features, degree 4, PyEPO's return formulas (noise level 1);
  maximize the CVaR_α of the return (examples/portfolio_cvar);
* shortest path: PyEPO's 5 × 5 grid, 5 features, degree 6, multiplicative noise U[0.5, 1.5];
  minimize the CVaR_α of the route's length (examples/shortest_path_cvar).

Methods: the two-stage point forecast (MSE), SPO+ on the point forecast, the two-stage flow
(NLL, then decide with S sampled scenarios) and Gen-DFL (NLL pretraining, then β · Gen-DFL +
NLL), with its target decision w* from the NLL fit ("proxy", this project's default) and, as
in the paper's code, from each training sample's draws of the true distribution ("draws").
The metric is the relative regret of the risk objective over each test sample's true scenario
set (lower is better); tables give mean ± std (ddof 1) over the seeds, methods by row and CVaR
levels by column, as the paper's tables do.

    python benchmarks/gen_dfl.py [--tasks portfolio shortest_path] [--alphas 0.5 0.9]
        [--seeds 135 7 11] [--json out.json] [--plot docs/img/gen_dfl_alpha.png]

Every method gets the same data and passes over it (point and two-stage: pretrain + epochs;
Gen-DFL: pretrain of NLL, then epochs of β · Gen-DFL + NLL) and decides with the same oracle.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dfl_dsl as dfl
from dfl_dsl.generators.portfolio_cvar import portfolio_cvar
from dfl_dsl.generators.shortest_path_cvar import shortest_path_cvar
from dfl_dsl.learn.dataset import ScenarioData
from dfl_dsl.learn.scenario_trainer import ScenarioTrainer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass(frozen=True)
class Task:
    title: str
    model: Path
    generator: object
    args: dict  # the generator's task settings (degree, noise, sizes)


TASKS = {
    "portfolio": Task("portfolio (50 assets, deg 4, noise level 1)",
                      EXAMPLES / "portfolio_cvar" / "portfolio_cvar.opt", portfolio_cvar,
                      dict(num_features=5, num_assets=50, deg=4, noise_level=1.0)),
    "shortest_path": Task("shortest path (5 × 5 grid, deg 6, noise half-width 0.5)",
                          EXAMPLES / "shortest_path_cvar" / "shortest_path_cvar.opt",
                          shortest_path_cvar,
                          dict(num_features=5, grid=(5, 5), deg=6, noise_width=0.5)),
}
METHODS = ["two-stage (MSE)", "SPO+", "two-stage flow (NLL)", "Gen-DFL (proxy w*)",
           "Gen-DFL (true-draw w*)"]


def plans(args) -> dict[str, dict]:
    """Each method's ScenarioTrainer settings."""
    total = args.pretrain + args.epochs
    gen = dict(loss="gen-dfl", epochs=args.epochs, pretrain_epochs=args.pretrain, lr=1e-3,
               beta=args.beta)
    every = {
        "two-stage (MSE)": dict(loss="mse", epochs=total, lr=1e-2),
        "SPO+": dict(loss="spo+", epochs=total, lr=1e-2),
        "two-stage flow (NLL)": dict(loss="nll", epochs=total, lr=1e-3),
        "Gen-DFL (proxy w*)": dict(gen, loss_options={"target": "proxy"}),
        "Gen-DFL (true-draw w*)": dict(gen, loss_options={"target": "draws"}),
    }
    return {m: every[m] for m in args.methods}


def data_for(task: Task, alpha: float, seed: int, args):
    data = task.generator(num_data=args.train + args.test, draws=args.draws, seed=seed,
                          alpha=alpha, **task.args)
    inst = dfl.load(task.model).bind(data.instance)
    train, test = (ScenarioData.from_arrays(inst, part.arrays()) for part in
                   data.split(args.train))
    return inst, train, test


def run(name: str, alpha: float, seed: int, args) -> dict:
    """One (task, α, seed): every method on the same data."""
    inst, train, test = data_for(TASKS[name], alpha, seed, args)
    row = {"task": name, "alpha": alpha, "seed": seed}
    for method, plan in plans(args).items():
        start = time.perf_counter()
        trainer = ScenarioTrainer(inst, scenarios=args.scenarios, seed=seed, progress=False,
                                  threads=1, **plan)
        trainer.fit(train)
        row[method] = trainer.risk_regret(test)
        row[f"{method} time_s"] = round(time.perf_counter() - start, 1)
        print(f"{name} alpha {alpha} seed {seed}: {method:24s} relative regret "
              f"{row[method]:.4f} ({row[f'{method} time_s']} s)", flush=True)
    return row


def _stats(rows: list[dict], method: str) -> tuple[float, float]:
    values = np.array([r[method] for r in rows])
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def table(rows: list[dict], name: str, args) -> str:
    """One task's table: methods by row, CVaR levels by column, mean ± std over the seeds
    (the lowest mean of each column in bold), then Gen-DFL's per-seed gap to the two-stage
    flow — the paired difference the seed spread is judged against."""
    alphas = sorted({r["alpha"] for r in rows if r["task"] == name})
    per = {a: [r for r in rows if r["task"] == name and r["alpha"] == a] for a in alphas}
    best = {a: min(_stats(per[a], m)[0] for m in args.methods) for a in alphas}
    lines = [f"{TASKS[name].title}: relative CVaR regret on the test set, mean ± std over "
             f"{len(args.seeds)} seeds ({', '.join(map(str, args.seeds))})", "",
             "| method | " + " | ".join(f"α = {a}" for a in alphas) + " |",
             "|---|" + "---:|" * len(alphas)]
    for m in args.methods:
        cells = []
        for a in alphas:
            mean, std = _stats(per[a], m)
            cell = f"{mean:.4f} ± {std:.4f}"
            cells.append(f"**{cell}**" if mean == best[a] else cell)
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    flow = "two-stage flow (NLL)"
    for m in (m for m in args.methods if m.startswith("Gen-DFL") and flow in args.methods):
        for a in alphas:
            gaps = np.array([r[flow] - r[m] for r in per[a]])
            spread = max(_stats(per[a], flow)[1], _stats(per[a], m)[1])
            lines.append(f"\n{m} vs {flow} at α = {a}: gap (flow − Gen-DFL) per seed "
                         + ", ".join(f"{g:+.4f}" for g in gaps)
                         + f"; mean {gaps.mean():+.4f}, seed std {spread:.4f}")
    return "\n".join(lines)


def plot(rows: list[dict], args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(args.tasks), figsize=(6 * len(args.tasks), 3.6),
                             squeeze=False)
    for ax, name in zip(axes[0], args.tasks, strict=True):
        for m, marker in zip(args.methods, "sovD^", strict=False):
            stats = [_stats([r for r in rows if r["task"] == name and r["alpha"] == a], m)
                     for a in args.alphas]
            ax.errorbar(args.alphas, [s[0] for s in stats], yerr=[s[1] for s in stats],
                        marker=marker, capsize=3, label=m)
        ax.set_xlabel("CVaR level α")
        ax.set_ylabel("relative CVaR regret")
        ax.set_title(TASKS[name].title, fontsize=9)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=METHODS)
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.5, 0.9])
    parser.add_argument("--train", type=int, default=400)
    parser.add_argument("--test", type=int, default=100)
    parser.add_argument("--draws", type=int, default=64)
    parser.add_argument("--scenarios", type=int, default=32)
    parser.add_argument("--pretrain", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--beta", type=float, default=10.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[135, 7, 11])
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = [run(name, a, seed, args) for name in args.tasks for a in args.alphas
            for seed in args.seeds]
    load = os.getloadavg()
    print(f"\n{time.perf_counter() - start:.0f} s in all; load average {load[0]:.1f} "
          f"{load[1]:.1f} {load[2]:.1f}; S = {args.scenarios}, β = {args.beta}, "
          f"{args.train} train / {args.test} test samples, {args.draws} true draws each\n")
    for name in args.tasks:
        print(table(rows, name, args) + "\n")
    if args.json is not None:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "rows": rows}, indent=1))
    if args.plot is not None:
        plot(rows, args)


if __name__ == "__main__":
    main()
