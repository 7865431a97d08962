"""Gen-DFL vs SPO+ (on the mean prediction) vs the two-stage flow, side by side in one run, on
the Gen-DFL portfolio task (Wang et al., "Gen-DFL", ICLR 2026, arXiv 2502.05468): 50 assets,
5 features, degree 4, PyEPO's return formulas; decisions maximize CVaR_α of the portfolio
return (examples/portfolio_cvar/portfolio_cvar.opt); the metric is the relative CVaR regret
at α over 64 true return scenarios per test sample (lower is better).

    python benchmarks/gen_dfl.py [--alphas 0.5 0.9 0.95] [--seeds 135 7 11]
                                 [--plot docs/img/gen_dfl_alpha.png]

Every method gets the same data, the same number of passes over it (SPO+: `epochs`; the
two-stage flow: pretrain + epochs of NLL; Gen-DFL: pretrain of NLL, then epochs of
β · Gen-DFL + NLL) and decides with the same oracle.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import dfl_dsl as dfl
from dfl_dsl.generators.portfolio_cvar import portfolio_cvar
from dfl_dsl.learn.dataset import ScenarioData
from dfl_dsl.learn.scenario_trainer import ScenarioTrainer

MODEL = Path(__file__).resolve().parents[1] / "examples" / "portfolio_cvar" / "portfolio_cvar.opt"


METHODS = ["SPO+ (mean)", "two-stage flow (NLL)", "Gen-DFL"]


def run(alpha: float, seed: int, args) -> dict:
    data = portfolio_cvar(num_data=args.train + args.test, num_features=5, num_assets=50, deg=4,
                          noise_level=args.noise, draws=args.draws, seed=seed, alpha=alpha)
    inst = dfl.load(MODEL).bind(data.instance)
    train, test = (ScenarioData.from_arrays(inst, part.arrays()) for part in
                   data.split(args.train))
    plans = {
        "SPO+ (mean)": dict(loss="spo+", epochs=args.pretrain + args.epochs, lr=1e-2),
        "two-stage flow (NLL)": dict(loss="nll", epochs=args.pretrain + args.epochs, lr=1e-3),
        "Gen-DFL": dict(loss="gen-dfl", epochs=args.epochs, pretrain_epochs=args.pretrain,
                        lr=1e-3, beta=args.beta),
    }
    row = {"alpha": alpha, "seed": seed}
    for name, plan in plans.items():
        start = time.perf_counter()
        trainer = ScenarioTrainer(inst, scenarios=args.scenarios, seed=seed, progress=False,
                                  **plan)
        trainer.fit(train)
        row[name] = trainer.risk_regret(test)
        row[f"{name} time_s"] = round(time.perf_counter() - start, 1)
        print(f"alpha {alpha} seed {seed}: {name:22s} relative CVaR regret {row[name]:.4f} "
              f"({row[f'{name} time_s']} s)", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.5, 0.9, 0.95])
    parser.add_argument("--train", type=int, default=400)
    parser.add_argument("--test", type=int, default=100)
    parser.add_argument("--draws", type=int, default=64)
    parser.add_argument("--scenarios", type=int, default=32)
    parser.add_argument("--pretrain", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--beta", type=float, default=10.0)
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[135])
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = [run(a, seed, args) for a in args.alphas for seed in args.seeds]
    means = {a: {m: float(np.mean([r[m] for r in rows if r["alpha"] == a])) for m in METHODS}
             for a in args.alphas}
    print(f"\nrelative CVaR regret on the test set (lower is better), mean over seeds "
          f"{args.seeds}")
    print(f"{'alpha':>6} | " + " | ".join(f"{m:>21}" for m in METHODS) + " | Gen-DFL lowest in")
    for a in args.alphas:
        wins = sum(r["Gen-DFL"] < min(r[m] for m in METHODS[:2]) for r in rows if r["alpha"] == a)
        print(f"{a:>6} | " + " | ".join(f"{means[a][m]:>21.4f}" for m in METHODS)
              + f" | {wins}/{len(args.seeds)} seeds")
    if args.json is not None:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "rows": rows, "means": means}, indent=1))
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        for m, marker in zip(METHODS, "sov", strict=True):
            per = [[r[m] for r in rows if r["alpha"] == a] for a in args.alphas]
            mean = np.array([np.mean(p) for p in per])
            err = np.array([[mean[i] - min(p), max(p) - mean[i]] for i, p in enumerate(per)]).T
            ax.errorbar(args.alphas, mean, yerr=err, marker=marker, capsize=3, label=m)
        ax.set_xlabel("CVaR level α")
        ax.set_ylabel("relative CVaR regret")
        ax.set_title(f"portfolio (50 assets, deg 4): mean and range over {len(args.seeds)} seeds")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
