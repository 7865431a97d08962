"""dfl-dsl against PyEPO, side by side in one run, on the same arrays.

Shortest path 5×5 and knapsack (2 dims, 32 items), 5 features, deg 4, noise 0.5, 1000 train /
1000 test, a linear model, Adam lr 1e-2, batch 32, 10 epochs, with SPO+ and PFYL. PyEPO uses its
Pyomo models with the appsi_highs solver; this project trains from the .opt models in
examples/ (shortest_path, knapsack). Both predictors start from the same
initial weights and take the same batches, and both are scored by PyEPO's own
`pyepo.metric.regret` and by ours.

    python benchmarks/vs_pyepo.py                 # everything (several minutes)
    python benchmarks/vs_pyepo.py --quick         # 2 epochs, 200 samples

Decision quality (`--quality`): shortest path 5×5, 1000 train / 1000 test, noise 0.5, lr 1e-2,
batch 32, a linear model, every loss both have, per degree and seed; both sides start from the
same weights (torch seeded with the seed), both scored by PyEPO's regret:

    nice -n 5 python benchmarks/vs_pyepo.py --quality --epochs 20 --json q.jsonl
    python benchmarks/vs_pyepo.py --table q.jsonl     # the markdown table of a run
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
from dfl_dsl.generators.pyepo_compatible import GeneratedData, grid_arcs  # noqa: E402
from dfl_dsl.learn.dataset import DFLData  # noqa: E402
from dfl_dsl.learn.enumeration import feasible_points  # noqa: E402
from dfl_dsl.learn.recipe import read_recipe  # noqa: E402
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
    # the batches our Trainer (seed 135) takes, so the regrets compare run for run
    train_loader = DataLoader(train_set, batch_size=batch, sampler=TrainerOrder(n, 135))
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


# ---------------------------------------------------------------------- decision quality
# `--quality`: every loss both libraries have, trained side by side on identical arrays from
# identical initial weights, scored by PyEPO's regret; each side shuffles with its own loop
# (PyEPO: a DataLoader on torch's global generator, seeded; ours: the Trainer's).
# `dpo-plain` is DPO without its leave-one-out baseline (variance_reduction off on both sides);
# `--config notebook` trains PyEPO's tutorial's settings on its data, the seed seeding only the
# initial weights and the order.
QUALITY_LOSSES = ("spo+", "pfyl", "dpo", "dbb", "nce", "imle", "aimle", "listwise", "pairwise",
                  "pointwise", "cave")
SP_BINARY = MODELS["shortest_path"].read_text().replace("var flow{ARCS} in [0, 1];",
                                                       "var flow{ARCS} binary;")


def grid_paths(rows: int, cols: int) -> np.ndarray:
    """Every source-to-sink path of the grid (right and down moves), as arc-incidence rows
    in PyEPO's arc order: the vertices of the shortest-path LP (70 on a 5×5 grid)."""
    index = {arc: k for k, arc in enumerate(grid_arcs(rows, cols))}
    paths, stack = [], [(0, [])]
    while stack:
        v, used = stack.pop()
        if v == rows * cols - 1:
            row = np.zeros(len(index))
            row[used] = 1.0
            paths.append(row)
            continue
        i, j = divmod(v, cols)
        if j + 1 < cols:
            stack.append((v + 1, [*used, index[(v, v + 1)]]))
        if i + 1 < rows:
            stack.append((v + cols, [*used, index[(v, v + cols)]]))
    return np.array(paths)


def path_list_model(grid=(5, 5)):
    """A PyEPO optModel answering argmin over the grid's listed paths: the shortest-path LP's
    exact optimum (its vertices are the paths), about 100× sooner than Pyomo + HiGHS (2.2 ms
    a solve here), so a 20-epoch run of PFYL or DPO takes minutes instead of hours.
    `--solver highs` keeps PyEPO's own Pyomo model instead."""
    from pyepo.model.opt import optModel

    class PathList(optModel):
        def _getModel(self):
            self.paths = grid_paths(*grid)
            self.cost = np.zeros(self.paths.shape[1])
            return None, list(range(self.paths.shape[1]))

        def setObj(self, c):
            self.cost = np.asarray(c, dtype=float)

        def solve(self):
            values = self.paths @ self.cost
            best = int(np.argmin(values))
            return self.paths[best].copy(), float(values[best])

    return PathList()


# each loss's settings (ours: loss_options; PyEPO's modules take the same): the defaults both
# share, and PyEPO's tutorial "03 Training and Testing" (deg 4, its DPO/I-MLE/AI-MLE on L1 to w*)
CONFIGS = {
    "defaults": {"dpo-plain": {"variance_reduction": False}},
    "notebook": {"pfyl": {"n_samples": 3, "sigma": 1.0},
                 "dpo": {"n_samples": 3, "sigma": 1.0, "task_loss": "l1"},
                 "dbb": {"lambd": 20.0}, "nce": {"solve_ratio": 0.05},
                 "imle": {"n_samples": 3, "sigma": 1.0, "lambd": 10.0},
                 "aimle": {"n_samples": 3, "sigma": 1.0}},
}


def pyepo_loss(name: str, optmodel, train_set, opts: dict):
    """PyEPO's module for `name` with the settings `opts` (else the defaults ours has), as
    (cp, c, w, z) -> loss; DPO and DBB return decisions, trained on their regret (cᵀw - z*)
    as ours are, or on `task_loss` l1; I-MLE and AI-MLE on L1 to w*, as ours are by default."""
    import pyepo.func as f

    samples = dict(n_samples=opts.get("n_samples", 10), sigma=opts.get("sigma", 1.0))
    ratio = opts.get("solve_ratio", 1.0)
    if name == "spo+":
        spo = f.SPOPlus(optmodel)
        return lambda cp, c, w, z: spo(cp, c, w, z)
    if name == "pfyl":
        pfy = f.perturbedFenchelYoung(optmodel, **samples, seed=135)
        return lambda cp, c, w, z: pfy(cp, w)
    if name == "nce":
        nce = f.NCE(optmodel, solve_ratio=ratio, dataset=train_set)
        return lambda cp, c, w, z: nce(cp, w)
    if name in ("listwise", "pairwise", "pointwise"):
        ltr = {"listwise": f.lsLTR, "pairwise": f.prLTR, "pointwise": f.ptLTR}[name](
            optmodel, solve_ratio=ratio, dataset=train_set)
        return lambda cp, c, w, z: ltr(cp, c)
    if name == "cave":
        return pyepo_cave(optmodel)
    if name in ("imle", "aimle"):
        layer = (f.implicitMLE(optmodel, **samples, lambd=opts.get("lambd", 10))
                 if name == "imle" else f.adaptiveImplicitMLE(optmodel, **samples))
        task = "l1"
    else:
        layer = (f.perturbedOpt(optmodel, **samples, seed=135, solve_ratio=ratio,
                                dataset=train_set,
                                variance_reduction=opts.get("variance_reduction", True))
                 if name.startswith("dpo") else f.blackboxOpt(optmodel,
                                                              lambd=opts.get("lambd", 10)))
        task = opts.get("task_loss", "regret")
    if task == "l1":
        return lambda cp, c, w, z: nn.functional.l1_loss(layer(cp), w)
    return lambda cp, c, w, z: ((layer(cp) - w) * c).sum(1).mean()


def pyepo_cave(optmodel):
    """PyEPO's CaVE (max_iter 3, CaVE+) fed the binding normals at each w*: PyEPO reads them
    from Gurobi (optDatasetConstrs), not installed here, so they come from our model's rows
    (dfl_dsl.learn.losses_cave.binding_normals; the 5×5 grid's flow model, as PyEPO's)."""
    import pyepo.func as f
    from torch.nn.utils.rnn import pad_sequence

    from dfl_dsl.learn.losses_cave import binding_normals

    form = dfl.load(MODELS["shortest_path"]).bind(
        shortest_path(1, 5, (5, 5), 1, 0.5, 1).instance).linear_form()
    cave = f.coneAlignedCosine(optmodel)

    def loss(cp, c, w, z):
        normals = [torch.as_tensor(binding_normals(form, row), dtype=cp.dtype)
                   for row in np.round(w.numpy())]
        return cave(cp, pad_sequence(normals, batch_first=True))

    return loss


class TrainerOrder(torch.utils.data.Sampler):
    """The Trainer's sample order (a torch.randperm per epoch from a generator seeded with
    its seed), for PyEPO's DataLoader: with `--order same` both sides see the same batches."""

    def __init__(self, n: int, seed: int) -> None:
        self.n, self.generator = n, torch.Generator().manual_seed(seed)

    def __iter__(self):
        return iter(torch.randperm(self.n, generator=self.generator).tolist())

    def __len__(self) -> int:
        return self.n


def quality_pyepo(name, data, n, init, epochs, seed, optmodel, order="same", opts=None):
    import pyepo
    from torch.utils.data import DataLoader

    x, c = data.features, data.targets["cost"]
    train_set = pyepo.data.dataset.optDataset(optmodel, x[:n], c[:n])
    test_set = pyepo.data.dataset.optDataset(optmodel, x[n:], c[n:])
    torch.manual_seed(seed)
    loader = (DataLoader(train_set, batch_size=32, sampler=TrainerOrder(n, seed))
              if order == "same" else DataLoader(train_set, batch_size=32, shuffle=True))
    predictor = nn.Linear(x.shape[1], c.shape[1])
    predictor.load_state_dict(init)
    opt = torch.optim.Adam(predictor.parameters(), lr=1e-2)
    loss_fn = pyepo_loss(name, optmodel, train_set, opts or {})
    start = time.perf_counter()
    for _ in range(epochs):
        for xb, cb, wb, zb in loader:
            loss = loss_fn(predictor(xb), cb, wb, zb)
            opt.zero_grad()
            loss.backward()
            opt.step()
    seconds = (time.perf_counter() - start) / epochs
    test_loader = DataLoader(test_set, batch_size=32)
    return float(pyepo.metric.regret(predictor, optmodel, test_loader)), seconds, test_loader


def quality_ours(name, data, n, init, epochs, seed, solver, loss_options=None):
    inst = (dfl.parse(SP_BINARY, "shortest_path.opt") if solver == "enumerate"
            else dfl.load(MODELS["shortest_path"])).bind(data.instance)
    train_data, _ = data.split(n)
    predictor = nn.Linear(data.features.shape[1], data.targets["cost"].shape[1])
    predictor.load_state_dict(init)
    trainer = Trainer(inst, name, predictor, epochs=epochs, batch_size=32, lr=1e-2, seed=seed,
                      oracle="enumerate" if solver == "enumerate" else "auto", progress=False,
                      loss_options=loss_options)
    history = trainer.fit(DFLData.from_arrays(inst, train_data.arrays()))
    trainer.oracle.close()
    return predictor, float(np.mean([e["train_time_s"] for e in history.epochs]))


def quality_data(args, deg: int, seed: int) -> GeneratedData:
    """The data set of one row: PyEPO's generator at `deg` and `seed`, or (`--config
    notebook`) PyEPO's tutorial's data, split as it splits it, whatever the seed."""
    if args.config == "notebook":
        train, test = read_recipe(MODELS["shortest_path"].with_name(
            "pyepo_notebook.gen.yaml")).generate()
        return GeneratedData(np.vstack([train.features, test.features]),
                             {"cost": np.vstack([train.targets["cost"], test.targets["cost"]])},
                             train.instance)
    return shortest_path(2 * args.n, 5, (5, 5), deg, 0.5, seed)


def quality(args) -> None:
    """The runs, one JSON line each appended to `args.json` (a rerun skips the rows it has).
    The seed seeds the data (not under --config notebook), the initial weights and the order."""
    import pyepo

    out = args.json or Path("vs_pyepo_quality.jsonl")
    done = set()
    if out.exists():
        done = {(r["loss"], r["deg"], r["seed"]) for r in map(json.loads, out.read_text()
                                                            .splitlines())}
    for deg in map(int, args.degs.split(",")):
        for seed in map(int, args.seeds.split(",")):
            data = quality_data(args, deg, seed)
            torch.manual_seed(seed)
            init = nn.Linear(5, data.targets["cost"].shape[1]).state_dict()
            optmodel = (path_list_model() if args.solver == "enumerate" else
                        pyepo_model("shortest_path", data))
            for name in args.losses.split(","):
                if (name, deg, seed) in done:
                    continue
                opts = CONFIGS[args.config].get(name, {})
                p_regret, p_time, loader = quality_pyepo(name, data, args.n, init, args.epochs,
                                                         seed, optmodel, args.order, opts)
                predictor, o_time = quality_ours(name.removesuffix("-plain"), data, args.n,
                                                 init, args.epochs, seed, args.solver, opts)
                o_regret = float(pyepo.metric.regret(predictor, optmodel, loader))
                row = {"loss": name, "deg": deg, "seed": seed, "epochs": args.epochs,
                       "solver": args.solver, "order": args.order, "config": args.config,
                       "pyepo_regret": round(p_regret, 6),
                       "ours_regret": round(o_regret, 6), "pyepo_s_per_epoch": round(p_time, 3),
                       "ours_s_per_epoch": round(o_time, 3),
                       "load_avg_1m": round(os.getloadavg()[0], 2)}
                print(json.dumps(row), flush=True)
                with out.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")


def quality_table(path: Path) -> None:
    """Mean regret over the seeds per loss and degree, PyEPO beside ours, as markdown."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    losses = list(dict.fromkeys(r["loss"] for r in rows))
    degs = sorted({r["deg"] for r in rows})
    print("| loss | " + " | ".join(f"deg {d} PyEPO / ours" for d in degs)
          + " | mean PyEPO / ours | ours vs PyEPO |")
    print("|---" * (len(degs) + 3) + "|")
    for name in losses:
        cells, pm, om = [], [], []
        for d in degs:
            sel = [r for r in rows if r["loss"] == name and r["deg"] == d]
            if not sel:
                cells.append("-")
                continue
            p, o = np.mean([r["pyepo_regret"] for r in sel]), np.mean([r["ours_regret"]
                                                                     for r in sel])
            pm.append(p)
            om.append(o)
            cells.append(f"{p:.4f} / {o:.4f}")
        p, o = np.mean(pm), np.mean(om)
        print(f"| {name} | " + " | ".join(cells) + f" | {p:.4f} / {o:.4f} | {(o - p) / p:+.1%} |")
    loads = [r["load_avg_1m"] for r in rows]
    print(f"\n{len(rows)} runs, seeds {sorted({r['seed'] for r in rows})}, "
          f"load average {min(loads):.1f}-{max(loads):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--epochs", type=int, default=None, help="10 (speed) or 20 (--quality)")
    ap.add_argument("--quality", action="store_true", help="the decision-quality comparison")
    ap.add_argument("--table", type=Path, default=None, help="print a --quality run's table")
    ap.add_argument("--degs", default="1,2,4,6")
    ap.add_argument("--seeds", default="135,1,2")
    ap.add_argument("--order", choices=("same", "own"), default="same",
                    help="--quality: both sides the same batches (default), or PyEPO's "
                         "DataLoader shuffling on torch's global generator")
    ap.add_argument("--config", choices=tuple(CONFIGS), default="defaults",
                    help="--quality: the losses' settings: the defaults both share, or PyEPO's "
                         "tutorial's (its data too: deg 4, seed 42, split as it splits)")
    ap.add_argument("--n", type=int, default=1000, help="training (and test) samples")
    ap.add_argument("--solver", choices=("enumerate", "highs"), default="enumerate",
                    help="--quality: list the grid's paths on both sides, or solve the LP "
                         "(PyEPO: Pyomo + HiGHS; ours: the default oracle)")
    ap.add_argument("--problems", default="shortest_path,knapsack")
    ap.add_argument("--losses", default=None, help="spo+,pfyl (speed) or all five (--quality)")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--no-highs-oracle", action="store_true",
                    help="where ours lists the feasible set, skip the extra HiGHS-oracle rows")
    args = ap.parse_args()
    if args.table:
        quality_table(args.table)
        return
    if args.quality:
        args.epochs = args.epochs or 20
        args.losses = args.losses or ",".join(QUALITY_LOSSES)
        quality(args)
        return
    n = 200 if args.quick else 1000
    epochs = 2 if args.quick else (args.epochs or 10)
    import pyepo

    rows = []
    for problem in args.problems.split(","):
        data = make_data(problem, n)
        for loss_name in (args.losses or "spo+,pfyl").split(","):
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
