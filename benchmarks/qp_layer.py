"""Deep FlexQP as a QP layer, side by side with its peers in one run:

1. B QPs (n = 50, m = 100, shared P and A, a different q each) through `inst.layer("flexqp")`:
   forward + backward against cvxpylayers (`inst.layer("cvxpylayers")`, SCS at the project's
   1e-8), and the forward pass against a loop of warm-started OSQP (one problem after another,
   each warm-started from the previous solution) at the same tolerance as ours.
2. Iterations to reach 1e-4 (OSQP's residual test) on the OSQP benchmark classes at a size
   larger than the shipped policy was trained on: fixed-parameter FlexQP (ρ = 0.1, α = 1.6),
   the policy's untrained rule, and the trained Deep FlexQP policy — the ADMM alone (polishing
   off: what the policy does; residuals tested at every iteration, so the counts are exact),
   then with polishing as the solver runs by default (residuals tested every
   `Settings.check_every` iterations).

Timings are the best of several runs, the methods taking turns (--peer-repeats rounds; in each,
--repeats runs of ours and of the OSQP loop and one cvxpylayers call), and the header prints
the load average: the machine may be shared.

    python benchmarks/qp_layer.py                       # CPU, B = 64 (torch on one thread,
                                                        # like OSQP)
    python benchmarks/qp_layer.py --batch 10000 --device cuda --no-peers
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from _common import table

import dfl_dsl as dfl
from dfl_dsl.backends.flexqp import DeepPolicy, QPBatch, Settings, default_policy, solve
from dfl_dsl.generators.qp_classes import CLASSES, random_qp

MODEL = """param n : int; param m : int; param P[n, n] psd; param q[n] : predicted;
param A[m, n]; param u[m];
var x[n];
minimize f: 0.5 * quad_form(x, P) + q @ x;
subject to rows: A @ x <= u;
"""


def instance(n: int, m: int, seed: int):
    data = random_qp(n, batch=1, seed=seed, m=m, shared=True)
    inst = dfl.parse(MODEL, "qp_layer.opt").bind(
        {"n": n, "m": m, "P": data.P.tolist(), "q": np.zeros(n).tolist(), "A": data.A.tolist(),
         "u": data.hi[0].tolist()})
    return inst, data


def time_layer(layer, q: torch.Tensor, w: torch.Tensor, repeats: int) -> tuple[float, float]:
    """(forward s, forward + backward s), best of `repeats`."""
    fwd, both = [], []
    for _ in range(repeats):
        qq = q.clone().requires_grad_()
        sync(q)
        t0 = time.perf_counter()
        x = layer(qq)
        sync(q)
        t1 = time.perf_counter()
        (x * w).sum().backward()
        sync(q)
        t2 = time.perf_counter()
        fwd.append(t1 - t0)
        both.append(t2 - t0)
    return min(fwd), min(both)


def sync(t: torch.Tensor) -> None:
    if t.is_cuda:
        torch.cuda.synchronize()


def osqp_loop(data, q: np.ndarray, eps: float, repeats: int) -> tuple[float, np.ndarray, float]:
    """Seconds per problem (best of `repeats` loops), solutions, mean iterations: one OSQP,
    re-solved with each q."""
    import osqp
    import scipy.sparse as sp

    best = float("inf")
    for _ in range(repeats):
        solver = osqp.OSQP()
        solver.setup(sp.csc_matrix(data.P), q[0], sp.csc_matrix(data.A),
                     np.full(data.m, -np.inf), data.hi[0], verbose=False, eps_abs=eps,
                     eps_rel=eps, polish=False, warm_starting=True, max_iter=100_000)
        xs, iters = [], []
        start = time.perf_counter()
        for qi in q:
            solver.update(q=qi)
            result = solver.solve()
            xs.append(result.x)
            iters.append(result.info.iter)
        best = min(best, (time.perf_counter() - start) / len(q))
    return best, np.array(xs), float(np.mean(iters))


def layer_part(args) -> None:
    device = torch.device(args.device)
    inst, data = instance(50, 100, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    q = torch.as_tensor(rng.standard_normal((args.batch, 50)), device=device)
    w = torch.as_tensor(rng.standard_normal((args.batch, 50)), device=device)
    ours = inst.layer("flexqp", eps=args.eps, warm_start=False)
    ours(q[:2])  # load the policy, build the dense form
    cvx = inst.layer("cvxpylayers") if args.peers else None
    # the methods take turns, a round each (on a shared machine a neighbour's load comes and
    # goes: interleaved, each method gets the same chances at a quiet moment); best of all
    rounds = args.peer_repeats if args.peers else 1
    fwd = both = cfwd = cboth = per = float("inf")
    for _ in range(rounds):
        f, b = time_layer(ours, q, w, args.repeats)
        fwd, both = min(fwd, f), min(both, b)
        if args.peers:
            f, b = time_layer(cvx, q.cpu(), w.cpu(), 1)
            cfwd, cboth = min(cfwd, f), min(cboth, b)
            p, xs, iters = osqp_loop(data, q.cpu().numpy(), args.eps, args.repeats)
            per = min(per, p)
    result = ours.last_result
    reference = solve(QPBatch.from_numpy(data.P, q.cpu().numpy(), data.A,
                                         np.full(data.m, -np.inf), data.hi[0]),
                      default_policy(), Settings(eps_abs=1e-10, eps_rel=1e-10)).x.numpy()
    with torch.no_grad():
        err = float(np.abs(ours(q).cpu().numpy() - reference).max())
    rows = [["Deep FlexQP layer (" + args.device + ")", fwd, both, fwd / args.batch * 1e3,
             float(result.iterations.float().mean()), f"{err:.1e}"]]
    print(f"\n## {args.batch} QPs, n = 50, m = 100, shared P and A, varying q "
          f"(eps {args.eps:g}; torch threads {torch.get_num_threads()}; {rounds} interleaved "
          f"rounds: ours best of {args.repeats} a round, cvxpylayers 1 call and the OSQP loop "
          f"best of {args.repeats} a round; load average {os.getloadavg()[0]:.1f})\n")
    if args.peers:
        with torch.no_grad():
            cerr = float(np.abs(cvx(q.cpu()).numpy() - reference).max())
        rows.append(["cvxpylayers (SCS 1e-8)", cfwd, cboth, cfwd / args.batch * 1e3, "",
                     f"{cerr:.1e}"])
        rows.append(["OSQP loop, warm-started", per * args.batch, "", per * 1e3, iters,
                     f"{float(np.abs(xs - reference).max()):.1e}"])
        print(table(["method", "forward s", "fwd+bwd s", "forward ms/problem", "iterations",
                     "max |x - x*|"], rows))
        print(f"\nspeed-up forward+backward vs cvxpylayers: {cboth / both:.1f}x (target >= 20x)")
        print(f"per problem vs OSQP: ours {fwd / args.batch * 1e3:.3f} ms, OSQP {per * 1e3:.3f} "
              f"ms, ratio {per / (fwd / args.batch):.2f}x (target >= 1x)")
    else:
        print(table(["method", "forward s", "fwd+bwd s", "forward ms/problem", "iterations",
                     "max |x - x*|"], rows))


def iterations_part(args) -> None:
    trained = default_policy(args.device)
    untrained = DeepPolicy(trained.body[0].out_features, trained.every).double().to(args.device)
    size = args.size
    for polish in (False, True):
        what = ("ADMM iterations, polishing off: the parameter policies compared" if not polish
                else "with polishing (the default) for all three")
        print(f"\n## Iterations to 1e-4, {args.per_class} problems per class, size {size} "
              f"(the shipped policy trained at size {trained.meta.get('size')}); {what}\n")
        rows, ratios = [], []
        settings = Settings(eps_abs=1e-4, eps_rel=1e-4, polish=polish)
        if not polish:  # the exact iteration at which the ADMM reaches the tolerance
            settings.check_every = 1
        for name, make in CLASSES.items():
            data = make(size, batch=args.per_class, seed=args.seed + 1000)
            qp = QPBatch.from_numpy(*data.arrays(), device=args.device)
            counts = []
            for policy in (None, untrained, trained):
                result = solve(qp, policy, settings)
                ok = sum(s == "optimal" for s in result.status)
                counts.append((float(result.iterations.float().mean()), ok))
            ratio = counts[0][0] / counts[2][0]
            ratios.append(ratio)
            rows.append([name, data.n, data.m,
                         *(f"{c:.0f} ({k}/{args.per_class})" for c, k in counts), ratio])
        print(table(["class", "n", "m", "fixed FlexQP", "untrained rule", "Deep FlexQP",
                     "fixed / deep"], rows))
        print(f"\ngeometric mean fixed/deep: {float(np.exp(np.mean(np.log(ratios)))):.2f}x"
              + (" (target >= 2x)" if not polish else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--eps", type=float, default=1e-6)
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs of our layer and of the OSQP loop in each round")
    parser.add_argument("--peer-repeats", type=int, default=3,
                        help="interleaved rounds (one timed cvxpylayers call each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=20, help="class size for the iterations")
    parser.add_argument("--per-class", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-peers", dest="peers", action="store_false")
    parser.add_argument("--no-iterations", dest="iterations", action="store_false")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    layer_part(args)
    if args.iterations:
        iterations_part(args)


if __name__ == "__main__":
    main()
