"""The KKT check of QP answers (backends/common.kkt_residuals, highs.verified): on random small
strictly convex QPs with free variables and one entry of A scaled by 10^U(lo, hi), how often
HiGHS alone answers right, wrongly `optimal`, `error` or (wrongly) `unbounded`, against what a
backend now reports, each judged against Clarabel's optimum (within 1e-5 (1 + |optimum|), the
fuzz's test); and what the check costs on a 1000-variable QP.

    python benchmarks/qp_kkt.py [--qps 400] [--scale 5 7] [--backend highs] [--seed 7]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import Counter

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

import dfl_dsl as dfl
from dfl_dsl.backends.common import kkt_residuals
from dfl_dsl.backends.highs import HighsModel

TEXT = """param n : int; param m : int; param P[n, n] psd; param q[n]; param A[m, n]; param u[m];
var x[n];
minimize f: 0.5 * quad_form(x, P) + q @ x;
subject to rows: A @ x <= u;
"""


def random_qp(rng: np.random.Generator, lo: float, hi: float) -> dict:
    n = int(rng.integers(2, 7))
    m = int(rng.integers(n, 3 * n))
    M = rng.normal(size=(n, n))
    A = rng.normal(size=(m, n))
    A[rng.integers(m), rng.integers(n)] *= 10 ** rng.uniform(lo, hi)
    return {"n": n, "m": m, "P": (M @ M.T / n + 0.1 * np.eye(n)).tolist(),
            "q": rng.normal(size=n).tolist(), "A": A.tolist(),
            "u": rng.uniform(0.1, 2, m).tolist()}


def clarabel(data: dict) -> float | None:
    P, q, A, u = (np.array(data[k]) for k in "PqAu")
    x = cp.Variable(data["n"])
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(P)) + q @ x),
                         [A @ x <= u])
    try:
        problem.solve(solver="CLARABEL")
    except cp.error.SolverError:
        return None
    return problem.value if problem.status == "optimal" else None


def judged(status: str, objective: float | None, optimum: float) -> str:
    if status != "optimal":
        return status
    right = abs(objective - optimum) <= 1e-5 * (1 + abs(optimum))
    return "optimal, right" if right else "optimal, WRONG"


def counts(args) -> tuple[Counter, Counter]:
    model = dfl.parse(TEXT, "qp.opt")
    rng = np.random.default_rng(args.seed)
    alone, now = Counter(), Counter()
    for _ in range(args.qps):
        data = random_qp(rng, *args.scale)
        optimum = clarabel(data)
        if optimum is None:
            continue
        inst = model.bind(data)
        raw = HighsModel(inst.linear_form()).solve()
        alone[judged(raw.status, raw.objective, optimum)] += 1
        sol = inst.solve(args.backend)
        now[judged(sol.status, sol.objective, optimum)] += 1
    return alone, now


def cost() -> tuple[float, float]:
    """(HiGHS's build and solve, the check) in seconds on a 1000-variable QP, 550 rows."""
    rng = np.random.default_rng(0)
    n, m = 1000, 550
    M = sp.random(n, n, density=0.003, random_state=1)
    P = sp.csc_array(M @ M.T + 0.1 * sp.eye(n))
    A = sp.random(m, n, density=0.01, random_state=2)
    inst = dfl.parse(TEXT.replace("var x[n];", "var x[n] >= -5 <= 5;"), "qp.opt").bind(
        {"n": n, "m": m, "P": P.toarray().tolist(), "q": rng.normal(size=n).tolist(),
         "A": A.toarray().tolist(), "u": rng.uniform(1, 2, m).tolist()})
    form = inst.linear_form()
    start = time.perf_counter()
    raw = HighsModel(form).solve()
    solve = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(20):
        kkt_residuals(form, raw.x, raw.row_duals, raw.col_duals)
    return solve, (time.perf_counter() - start) / 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qps", type=int, default=400)
    parser.add_argument("--scale", type=float, nargs=2, default=(5.0, 7.0))
    parser.add_argument("--backend", default="highs")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    alone, now = counts(args)
    print(f"{sum(alone.values())} QPs, one entry of A scaled by 10^U{tuple(args.scale)}")
    print(f"  HiGHS alone:            {dict(sorted(alone.items()))}")
    print(f"  --backend {args.backend:<12} {dict(sorted(now.items()))}")
    solve, check = cost()
    print(f"1000-variable QP: HiGHS {solve * 1e3:.0f} ms, the check {check * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
