"""Why Gen-DFL's decision-focused term adds little over the two-stage flow: measurements on the
tasks of benchmarks/gen_dfl.py (Wang et al., "Gen-DFL", ICLR 2026, arXiv 2502.05468).

* `grads`: after the NLL pretraining, the size of each term's gradient in the flow's weights,
  ‖∇ℓ_Gen-DFL‖ and ‖∇NLL‖, their cosine and the loss values, averaged over the training
  batches — how large β must be for the decision term to steer the update at all;
* `sweep`: the test regret of Gen-DFL over β, the target decision w* (the NLL fit's scenarios,
  "proxy", or the training samples' true draws, "draws") and the pool (grown by the decisions
  under each step's scenarios, solve ratio 1, or the targets alone, solve ratio 0), beside the
  two-stage flow trained for as many epochs, per seed.

    python benchmarks/gen_dfl_probe.py grads [--tasks ...] [--alpha 0.9] [--seeds ...]
    python benchmarks/gen_dfl_probe.py sweep [--tasks ...] [--betas 10 100 1000] ...
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from gen_dfl import TASKS, data_for

from dfl_dsl.learn.scenario_trainer import ScenarioTrainer


def _trainer(inst, seed: int, args, **plan) -> ScenarioTrainer:
    return ScenarioTrainer(inst, scenarios=args.scenarios, seed=seed, progress=False,
                           threads=1, lr=1e-3, **plan)


def grads(name: str, seed: int, args) -> dict:
    """Gradient sizes of the two terms at the start of the Gen-DFL phase (after pretraining:
    one epoch with β = 0 sets the loss up without moving the flow off the NLL fit)."""
    inst, train, _ = data_for(TASKS[name], args.alpha, seed, args)
    out = {}
    for target in args.targets:
        trainer = _trainer(inst, seed, args, loss="gen-dfl", epochs=1, beta=0.0,
                           pretrain_epochs=args.pretrain, loss_options={"target": target})
        trainer.fit(train)
        params = [p for p in trainer.model.parameters() if p.requires_grad]
        x_all = torch.as_tensor(train.features, dtype=torch.float32)
        y_all = torch.as_tensor(train.observed, dtype=torch.float32)
        rows = []
        for idx in torch.arange(len(x_all)).split(args.batch_size):
            dfl, nll = trainer.gen_dfl_terms(idx, x_all[idx], y_all[idx])
            g_dfl = torch.cat([g.flatten() for g in torch.autograd.grad(dfl, params)])
            g_nll = torch.cat([g.flatten() for g in torch.autograd.grad(nll, params)])
            cos = float(g_dfl @ g_nll / (g_dfl.norm() * g_nll.norm() + 1e-30))
            rows.append((float(dfl), float(nll), float(g_dfl.norm()), float(g_nll.norm()), cos))
        dfl, nll, n_dfl, n_nll, cos = np.mean(rows, axis=0)
        out[target] = {"dfl": dfl, "nll": nll, "grad_dfl": n_dfl, "grad_nll": n_nll,
                       "cos": cos, "beta_to_match": n_nll / max(n_dfl, 1e-30)}
        print(f"{name} seed {seed} target {target:8s}: ℓ_Gen-DFL {dfl:.3e}, NLL {nll:.2f}, "
              f"‖∇ℓ‖ {n_dfl:.3e}, ‖∇NLL‖ {n_nll:.3e}, cos {cos:+.3f}, β for equal norms "
              f"{n_nll / max(n_dfl, 1e-30):.0f}", flush=True)
    return out


def variants(args) -> dict[str, dict]:
    """The sweep's Gen-DFL settings, and the two-stage flow with as many epochs."""
    out = {"two-stage flow (NLL)": dict(loss="nll", epochs=args.pretrain + args.epochs)}
    if 0 in args.betas:  # Gen-DFL's schedule without its term: the two-stage flow's weights
        out["Gen-DFL β=0"] = dict(loss="gen-dfl", epochs=args.epochs, beta=0.0,
                                  pretrain_epochs=args.pretrain,
                                  loss_options={"solve_ratio": 0.0})
    for target in args.targets:
        for beta in (b for b in args.betas if b > 0):
            for ratio in args.solve_ratios:
                label = f"Gen-DFL w*={target} β={beta:g} solve ratio {ratio:g}"
                out[label] = dict(loss="gen-dfl", epochs=args.epochs, beta=beta,
                                  pretrain_epochs=args.pretrain,
                                  loss_options={"target": target, "solve_ratio": ratio})
    return out


def sweep(name: str, seed: int, args) -> dict:
    inst, train, test = data_for(TASKS[name], args.alpha, seed, args)
    out = {}
    for label, plan in variants(args).items():
        start = time.perf_counter()
        trainer = _trainer(inst, seed, args, **plan)
        trainer.fit(train)
        out[label] = trainer.risk_regret(test)
        print(f"{name} seed {seed}: {label:45s} {out[label]:.4f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    return out


def report(results: dict, args) -> None:
    load = os.getloadavg()
    print(f"\nload average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; α = {args.alpha}, "
          f"S = {args.scenarios}, seeds {args.seeds}")
    for name in args.tasks:
        per_seed = [results[(name, s)] for s in args.seeds]
        print(f"\n{TASKS[name].title}\n")
        if args.what == "grads":
            print("| w* | ℓ_Gen-DFL | ‖∇ℓ_Gen-DFL‖ | ‖∇NLL‖ | cosine | β for equal norms |")
            print("|---|---:|---:|---:|---:|---:|")
            for t in args.targets:
                m = {k: np.mean([r[t][k] for r in per_seed]) for k in per_seed[0][t]}
                print(f"| {t} | {m['dfl']:.2e} | {m['grad_dfl']:.2e} | {m['grad_nll']:.2e} | "
                      f"{m['cos']:+.3f} | {m['beta_to_match']:.0f} |")
            continue
        flow = np.array([r["two-stage flow (NLL)"] for r in per_seed])
        print("| variant | regret mean ± std | gap to the flow per seed (flow − variant) |")
        print("|---|---:|---|")
        for label in per_seed[0]:
            v = np.array([r[label] for r in per_seed])
            gaps = ", ".join(f"{g:+.4f}" for g in flow - v)
            print(f"| {label} | {v.mean():.4f} ± {v.std(ddof=1):.4f} | {gaps} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["grads", "sweep"])
    parser.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    parser.add_argument("--alpha", type=float, default=0.9)
    parser.add_argument("--seeds", type=int, nargs="+", default=[135, 7, 11])
    parser.add_argument("--targets", nargs="+", default=["proxy", "draws"])
    parser.add_argument("--betas", type=float, nargs="+", default=[0.0, 10.0, 100.0, 1000.0])
    parser.add_argument("--solve-ratios", type=float, nargs="+", default=[1.0])
    parser.add_argument("--train", type=int, default=400)
    parser.add_argument("--test", type=int, default=100)
    parser.add_argument("--draws", type=int, default=64)
    parser.add_argument("--scenarios", type=int, default=32)
    parser.add_argument("--pretrain", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    run = grads if args.what == "grads" else sweep
    results = {(name, seed): run(name, seed, args) for name in args.tasks
               for seed in args.seeds}
    report(results, args)


if __name__ == "__main__":
    main()
