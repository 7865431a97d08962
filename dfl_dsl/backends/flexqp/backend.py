"""`dfl solve --backend flexqp`: one QP through batched FlexQP (B = 1).

A feasible model gets status `optimal`, or at a time or iteration limit `feasible` when the point
reached meets every row within tolerance and `time_limit` (the last iterate, its largest
violation, no objective) when it does not; an infeasible one gets status `relaxed`, the point of
least L1 violation, and each violated row with its violation (`violations` in --json). The CLI
exits 0 for `relaxed`: the answer is a usable point, and the violations say what it breaks. A
model whose objective is unbounded below (on its points of least violation, when infeasible)
gets status `unbounded` and no point, as the other backends report it (the CLI exits 1).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ...compile.bridges import build_linear
from ...errors import DflError
from ...instance import Instance
from ...words import counted
from ..common import KKT_TOLERANCE, RawResult, kkt_residuals, row_labels, to_solution, unproven
from ..magnitudes import SQUARES_OVERFLOW, check_representable, float_limits
from .admm import solve
from .forms import DenseForm
from .iterates import FLOAT32_EPS, Settings
from .policy import DeepPolicy, default_policy

DTYPES = {"float64": torch.float64, "float32": torch.float32}
# the default residual tolerance per dtype: held to 1e-9, a float32 solve never converged and
# ran its 50,000 iterations (~80 s for a two-variable LP) to end `feasible`
DEFAULT_EPS = {"float64": 1e-9, "float32": FLOAT32_EPS}


def policy_named(name, device):
    """`deep` (the shipped trained policy), `fixed` (OSQP's parameters), or a policy file; the
    network runs in float32 on batches of either dtype."""
    if name in (None, "deep"):
        return default_policy(device)
    if name == "fixed":
        return None
    if isinstance(name, DeepPolicy):
        return name.to(device=device, dtype=torch.float32)
    try:
        return DeepPolicy.load(name).to(device=device, dtype=torch.float32)
    except Exception as exc:  # noqa: BLE001 - a user's file: whatever it holds, say so
        raise DflError(f"can't load the FlexQP policy `{name}`: {type(exc).__name__}: "
                       f"{str(exc)[:200]}") from None


def solve_instance(inst: Instance, *, time_limit=None, seed=None, device: str = "cpu",
                   dtype: str = "float64", policy="deep", eps: float | None = None,
                   max_iter: int = 50_000):
    """`eps`: the residual tolerance, by default `DEFAULT_EPS` of the dtype."""
    start = time.perf_counter()
    if dtype not in DTYPES:
        raise DflError(f"unknown dtype `{dtype}`", hint="choose float64 or float32")
    eps = DEFAULT_EPS[dtype] if eps is None else eps
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise DflError("CUDA was asked for but torch sees no GPU", hint="use --device cpu")
    form = build_linear(inst, reduce=False)  # bounds stay rows: each violation has its row
    theta = inst.theta_for_solve()
    check_representable(inst, form, theta, float_limits(torch.finfo(DTYPES[dtype]).max),
                        "FlexQP", SQUARES_OVERFLOW)
    dense = DenseForm(form, dtype=DTYPES[dtype], device=device)
    qp = dense.batch(torch.as_tensor(theta, dtype=DTYPES[dtype], device=device)[None])
    settings = Settings(eps_abs=eps, eps_rel=eps, max_iter=max_iter, time_limit=time_limit)
    result = solve(qp, policy_named(policy, device), settings)
    x = result.x[0].double().cpu().numpy()
    y = result.y[0].double().cpu().numpy()
    status = result.status[0]
    if status == "unbounded":  # the last iterate is only a point along the ray: no solution
        x = None
    # at a limit short of feasibility the last iterate is kept, but no objective: its value
    # (below the optimum, where rows are violated) would read as a result
    claims = x is not None and status != "time_limit"
    raw = RawResult(status, x, dense.objective(x, theta) if claims else None,
                    # OSQP's y enters as +yᵀAx (y > 0 on an active upper bound); the
                    # contract's duals are HiGHS's, the objective's rate in the bound: −y
                    row_duals=-y[: form.m] if status == "optimal" else None,
                    message=f"FlexQP ADMM, {counted(int(result.iterations[0]), 'iteration')}")
    if status == "optimal":
        raw = _verified(form, dense, theta, raw, -y, eps)
    solution = to_solution(inst, form, raw, "flexqp", time.perf_counter() - start)
    solution.extra["iterations"] = int(result.iterations[0])
    viol = result.violation[0].double().cpu().numpy()
    if status == "time_limit":
        solution.extra["max_violation"] = float(viol.max(initial=0.0))
    if status == "relaxed":
        tol = 10 * eps * max(1.0, float(np.abs(result.z[0].cpu().numpy()).max()))
        rows = np.nonzero(viol > tol)[0]
        labels = _labels(inst, form, dense, rows)
        solution.extra["violations"] = {lab: float(viol[r]) for lab, r in
                                        zip(labels, rows, strict=True)}
        solution.extra["total_violation"] = float(viol[rows].sum())
    return solution


def _verified(form, dense: DenseForm, theta, raw: RawResult, duals: np.ndarray,
              eps: float) -> RawResult:
    """FlexQP's `optimal` is OSQP's test on its own row-scaled iterates; checked, like HiGHS's,
    against the KKT conditions at the model's scale (common.kkt_residuals), within the
    solve's own tolerance (float32's 1e-5 is far above float64's); one that fails says it is
    not proven (`common.unproven`: `feasible` at a feasible point, else `error`). `duals`:
    every dense row's, in HiGHS's sign (the bound rows' are the columns' bound duals)."""
    z = np.zeros(form.n)
    z[dense.bound_cols] = duals[form.m : form.m + len(dense.bound_cols)]
    tol = max(KKT_TOLERANCE, 100 * eps)
    verdict = kkt_residuals(form, raw.x, raw.row_duals, z, theta)
    if verdict.holds(tol):
        return raw
    return unproven(raw, verdict, f"FlexQP's `optimal` fails the KKT check "
                    f"({verdict.describe()})", tol)


def _labels(inst: Instance, form, dense: DenseForm, rows: np.ndarray) -> list[str]:
    """Row labels: the model's constraint rows by name and index, bound rows by variable."""
    model_rows = [int(r) for r in rows if r < form.m]
    labels = row_labels(inst, form, model_rows) if model_rows else []
    for r in rows:
        if r >= form.m:
            labels.append(_bound_label(inst, int(dense.bound_cols[r - form.m])))
    return labels


def _bound_label(inst: Instance, col: int) -> str:
    return f"bounds of {inst.column_label(col)}"
