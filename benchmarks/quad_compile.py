"""Compile speed of quadratic matrix forms: how fast `bind` + `compile` turn a dense quadratic
written with matrices into the compiled polynomial (one row, ~n²·r/2 quadratic pairs).

Forms (data made with numpy, models parsed from strings; the sparse PCA model is the spec's
sparse_pca.opt verbatim):
  trace      -0.5 * trace(X.T @ C @ X) + lam * norm1(X), C = A.T @ A, X[n, r] in stiefel;
             also the STIEFEL form extraction (`build_stiefel`, the obcd backend's input)
  sumsq      sum_squares(A @ X - B), X[n, r] continuous, A (m × n)
  quad_form  quad_form(x, P), P (n × n) dense psd
  xPx        x @ P @ x with x = X[0..n-1, 0], X[n, 1] in stiefel (the language accepts a
             product of two variable expressions only in a STIEFEL model), P dense

Each size prints: bind s, compile s, the number of quadratic pairs, and the peer, side by side:
numpy's dense value of the smooth objective at a random point vs the compiled polynomial's
value there (relative difference: the compiled form is exact), and for the convex forms the
time CVXPY takes to build the same problem's solver data (`get_problem_data`, OSQP).

    python benchmarks/quad_compile.py [--forms trace,sumsq,quad_form,xPx] [--quick]
        [--no-cvxpy]

`--quick` runs only the small sizes. Not run in CI.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from _common import spec_text, table

import dfl_dsl as dfl
from dfl_dsl.compile.stiefel import build_stiefel
from dfl_dsl.evaluate.nonlinear import NL


@dataclass
class Case:
    """One form at one size: the model text, its data, the smooth objective in numpy (the
    reference value) and, for convex forms, a CVXPY builder (the peer)."""

    form: str
    size: str
    text: str
    data: dict
    reference: Callable[[np.ndarray], float]  # z (the variables, row-major) -> f
    cvxpy: Callable[[], object] | None = None


def trace_case(n: int, r: int, m: int = 50, seed: int = 0) -> Case:
    A = np.random.default_rng(seed).normal(size=(m, n))
    C = A.T @ A

    def ref(z: np.ndarray) -> float:
        X = z.reshape(n, r)
        return float(-0.5 * np.trace(X.T @ C @ X))

    data = {"m": m, "n": n, "r": r, "A": A, "lam": 1.0}
    return Case("trace", f"n={n} r={r}", spec_text("sparse_pca.opt"), data, ref)


def sumsq_case(n: int, r: int, m: int, seed: int = 0) -> Case:
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(m, n)), rng.normal(size=(m, r))
    text = ("param m : int; param n : int; param r : int; param A[m, n]; param B[m, r];\n"
            "var X[n, r];\nminimize f: sum_squares(A @ X - B);")

    def ref(z: np.ndarray) -> float:
        return float(np.sum((A @ z.reshape(n, r) - B) ** 2))

    def peer():
        import cvxpy as cp

        X = cp.Variable((n, r))
        return cp.Problem(cp.Minimize(cp.sum_squares(A @ X - B))).get_problem_data(cp.OSQP)

    data = {"m": m, "n": n, "r": r, "A": A, "B": B}
    return Case("sumsq", f"m={m} n={n} r={r}", text, data, ref, peer)


def psd_matrix(n: int, seed: int = 0) -> np.ndarray:
    G = np.random.default_rng(seed).normal(size=(n, n))
    return G @ G.T / n + np.eye(n)


def quad_form_case(n: int, seed: int = 0) -> Case:
    P = psd_matrix(n, seed)
    text = "param n : int; param P[n, n] psd;\nvar x[n];\nminimize f: quad_form(x, P);"

    def peer():
        import cvxpy as cp

        x = cp.Variable(n)
        return cp.Problem(cp.Minimize(cp.quad_form(x, cp.psd_wrap(P)))).get_problem_data(
            cp.OSQP)

    return Case("quad_form", f"n={n}", text, {"n": n, "P": P}, lambda z: float(z @ P @ z), peer)


def xpx_case(n: int, seed: int = 0) -> Case:
    P = np.random.default_rng(seed).normal(size=(n, n))
    text = ("param n : int; param P[n, n];\nvar X[n, 1] in stiefel;\n"
            "expr x = X[0..n-1, 0];\nminimize f: x @ P @ x;")
    return Case("xPx", f"n={n}", text, {"n": n, "P": P}, lambda z: float(z @ P @ z))


SIZES: dict[str, tuple[list[Callable[[], Case]], list[Callable[[], Case]]]] = {
    # form: (quick sizes, full sizes)
    "trace": ([lambda: trace_case(300, 10)], [lambda: trace_case(1000, 10)]),
    "sumsq": ([lambda: sumsq_case(300, 10, 300)], [lambda: sumsq_case(1000, 10, 1000),
                                                  lambda: sumsq_case(2000, 1, 2000)]),
    "quad_form": ([lambda: quad_form_case(500)], [lambda: quad_form_case(2000)]),
    "xPx": ([lambda: xpx_case(500)], [lambda: xpx_case(2000)]),
}


def poly_value(poly, z: np.ndarray) -> float:
    """The compiled one-row polynomial at z: const + lin·z + Σ quad·z_a·z_b."""
    value = poly.const[0] + (poly.lin @ z)[0]
    if poly.quad is not None and poly.quad.nnz:
        value += (poly.quad @ (z[poly.pairs[:, 0]] * z[poly.pairs[:, 1]]))[0]
    return float(value)


def run(case: Case, with_cvxpy: bool) -> list[object]:
    t0 = time.perf_counter()
    inst = dfl.parse(case.text, f"{case.form}.opt").bind(case.data)
    t1 = time.perf_counter()
    objective = inst.compile().objective
    t2 = time.perf_counter()
    extra = "—"
    if inst.klass.name == "STIEFEL" and case.form == "trace":
        build_stiefel(inst)
        extra = f"{time.perf_counter() - t2:.3f}"
    poly = objective.poly if isinstance(objective, NL) else objective
    z = np.random.default_rng(1).normal(size=inst.width)
    ours, theirs = poly_value(poly, z), case.reference(z)
    rel = abs(ours - theirs) / max(1.0, abs(theirs))
    peer = "—"
    if with_cvxpy and case.cvxpy is not None:
        t3 = time.perf_counter()
        case.cvxpy()
        peer = f"{time.perf_counter() - t3:.3f}"
    pairs = poly.quad.nnz if poly.quad is not None else 0
    return [case.form, case.size, f"{t1 - t0:.3f}", f"{t2 - t1:.3f}", extra, pairs,
            f"{rel:.1e}", peer]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--forms", default="trace,sumsq,quad_form,xPx")
    parser.add_argument("--quick", action="store_true", help="only the small sizes")
    parser.add_argument("--no-cvxpy", action="store_true", help="skip the CVXPY peer")
    args = parser.parse_args()
    rows = []
    for form in args.forms.split(","):
        quick, full = SIZES[form]
        for make in quick + ([] if args.quick else full):
            rows.append(run(make(), not args.no_cvxpy))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    print()
    print(table(["form", "size", "bind s", "compile s", "stiefel form s", "quad pairs",
                 "rel. diff vs numpy", "cvxpy data s"], rows))


if __name__ == "__main__":
    main()
