"""dfl-dsl against PyEPO, side by side in one run, on the same arrays.

Shortest path 5×5 and knapsack (2 dims, 32 items), 5 features, deg 4, noise 0.5, 1000 train /
1000 test, a linear model, Adam lr 1e-2, batch 32, 10 epochs, with SPO+ and PFYL. PyEPO uses its
Pyomo models with the appsi_highs solver; this project trains from the .opt models in
examples/ (shortest_path, knapsack). Both predictors start from the same
initial weights, and both are scored by PyEPO's own `pyepo.metric.regret` and by ours.

    python benchmarks/vs_pyepo.py                 # everything (several minutes)
    python benchmarks/vs_pyepo.py --quick         # 2 epochs, 200 samples
"""

from __future__ import annotations

import os

# Both sides' tensors are tiny (batch 32 × 32 costs): BLAS/OpenMP threads only contend, and on a
# loaded machine their spin-waits cost more than the work. One thread for both, like HiGHS's
# single-threaded simplex.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import dfl_dsl as dfl  # noqa: E402
from dfl_dsl.compile.unimodular import integral_relaxation  # noqa: E402
from dfl_dsl.generators import knapsack, shortest_path  # noqa: E402
from dfl_dsl.learn.dataset import DFLData  # noqa: E402
from dfl_dsl.learn.enumeration import feasible_points  # noqa: E402
from dfl_dsl.learn.trainer import Trainer  # noqa: E402

torch.set_num_threads(1)

ROOT = Path(__file__).resolve().parents[1]
MODELS = {
    "shortest_path": ROOT / "examples" / "shortest_path" / "shortest_path.opt",
    "knapsack": ROOT / "examples" / "knapsack" / "knapsack.opt",
}


def make_data(problem: str, n: int, seed: int = 135):
    if problem == "shortest_path":
        return shortest_path(2 * n, 5, (5, 5), 4, 0.5, seed)
    return knapsack(2 * n, 5, 32, 2, 4, 0.5, seed)


def pyepo_model(problem: str, data):
    from pyepo.model.omo import knapsackModel, shortestPathModel

    if problem == "shortest_path":
        return shortestPathModel(grid=(5, 5), solver="appsi_highs")
    weights = np.asarray(data.instance["weight"])
    return knapsackModel(weights=weights, capacity=data.instance["capacity"],
                         solver="appsi_highs")


def run_pyepo(problem, data, n, loss_name, epochs, lr, batch):
    import pyepo
    from torch.utils.data import DataLoader

    optmodel = pyepo_model(problem, data)
    name = next(iter(data.targets))
    x, c = data.features, data.targets[name]
    train_set = pyepo.data.dataset.optDataset(optmodel, x[:n], c[:n])
    test_set = pyepo.data.dataset.optDataset(optmodel, x[n:], c[n:])
    train_loader = DataLoader(train_set, batch_size=batch, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=batch, shuffle=False)
    torch.manual_seed(135)
    predictor = nn.Linear(x.shape[1], c.shape[1])
    opt = torch.optim.Adam(predictor.parameters(), lr=lr)
    if loss_name == "spo+":
        loss_fn = pyepo.func.SPOPlus(optmodel, processes=1)
    else:
        loss_fn = pyepo.func.perturbedFenchelYoung(optmodel, n_samples=10, sigma=1.0,
                                                   processes=1)
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        for xb, cb, wb, zb in train_loader:
            cp = predictor(xb)
            loss = loss_fn(cp, cb, wb, zb) if loss_name == "spo+" else loss_fn(cp, wb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - start)
    regret = pyepo.metric.regret(predictor, optmodel, test_loader)
    return predictor, float(np.mean(times)), float(regret), test_loader, optmodel


def run_ours(problem, data, n, loss_name, epochs, lr, batch, processes, oracle="auto"):
    inst = dfl.load(MODELS[problem]).bind(data.instance)
    train_data, test_data = data.split(n)
    train = DFLData.from_arrays(inst, train_data.arrays())
    test = DFLData.from_arrays(inst, test_data.arrays())
    torch.manual_seed(135)
    predictor = nn.Linear(data.features.shape[1], next(iter(data.targets.values())).shape[1])
    trainer = Trainer(inst, loss_name, predictor, epochs=epochs, batch_size=batch, lr=lr,
                      processes=processes, oracle=oracle, progress=False)
    history = trainer.fit(train)
    times = [e["train_time_s"] for e in history.epochs]
    regret = trainer.regret(test)
    trainer.oracle.close()
    return predictor, float(np.mean(times)), float(regret), trainer.oracle.method


def variants(problem: str, processes: int, with_highs: bool) -> list[tuple[int, str]]:
    """(processes, oracle) runs of ours: the default oracle on 1 and on `processes` workers,
    the batched oracle where the model allows it (an LP, or an integral relaxation), and (with
    `with_highs`) the HiGHS oracle too where the default lists the feasible set instead, so
    the table shows both; workers only matter for HiGHS."""
    form = dfl.load(MODELS[problem]).bind(make_data(problem, 1).instance).linear_form()
    batched = [(1, "batched")] if not form.is_mip or integral_relaxation(form) is None else []
    if feasible_points(form) is None:
        return [(p, "auto") for p in sorted({1, processes})] + batched
    highs = [(p, "highs") for p in sorted({1, processes})] if with_highs else []
    return [(1, "auto")] + highs + batched


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--problems", default="shortest_path,knapsack")
    ap.add_argument("--losses", default="spo+,pfyl")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--no-highs-oracle", action="store_true",
                    help="where ours lists the feasible set, skip the extra HiGHS-oracle rows")
    args = ap.parse_args()
    n = 200 if args.quick else 1000
    epochs = 2 if args.quick else args.epochs
    import pyepo

    rows = []
    for problem in args.problems.split(","):
        data = make_data(problem, n)
        for loss_name in args.losses.split(","):
            p_pred, p_time, p_regret, loader, optmodel = run_pyepo(
                problem, data, n, loss_name, epochs, 1e-2, 32)
            for procs, oracle in variants(problem, args.processes, not args.no_highs_oracle):
                o_pred, o_time, o_regret, method = run_ours(problem, data, n, loss_name, epochs,
                                                            1e-2, 32, procs, oracle)
                o_regret_pyepo = float(pyepo.metric.regret(o_pred, optmodel, loader))
                row = {
                    "problem": problem, "loss": loss_name, "processes": procs, "oracle": method,
                    "pyepo_s_per_epoch": round(p_time, 4), "ours_s_per_epoch": round(o_time, 4),
                    "speedup": round(p_time / o_time, 2),
                    "pyepo_regret": round(p_regret, 5),
                    "ours_regret": round(o_regret, 5),
                    "ours_regret_by_pyepo_metric": round(o_regret_pyepo, 5),
                    "regret_rel_diff": round((o_regret_pyepo - p_regret) / p_regret, 4),
                    "load_avg_1m": round(os.getloadavg()[0], 2),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    header = (f"{'problem':14} {'loss':5} {'proc':>4} {'oracle':9} {'PyEPO s/ep':>10} "
              f"{'ours s/ep':>9} "
              f"{'speedup':>7} {'PyEPO regret':>12} {'ours regret':>11} {'rel diff':>8}")
    print("\n" + header)
    for r in rows:
        print(f"{r['problem']:14} {r['loss']:5} {r['processes']:>4} {r['oracle']:9} "
              f"{r['pyepo_s_per_epoch']:>10.3f} {r['ours_s_per_epoch']:>9.3f} "
              f"{r['speedup']:>6.1f}x {r['pyepo_regret']:>12.4f} "
              f"{r['ours_regret_by_pyepo_metric']:>11.4f} {r['regret_rel_diff']:>+8.1%}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
