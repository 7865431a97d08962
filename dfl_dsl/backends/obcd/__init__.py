"""OBCD for STIEFEL models: minimize f(X) + h(X) subject to XᵀX = I.

Orthogonality-preserving block coordinate descent (Yuan, "A block coordinate descent method for
nonsmooth composite optimization under orthogonality constraints", arXiv 2304.03641): every
step replaces k rows X_B by V·X_B with V ∈ O(k), so iterates stay feasible. For k = 2 V is the
global minimizer of the pair's subproblem, by a breakpoint search (`pair`) for h = λ₁‖X‖₁,
λ₀‖X‖₀ and X >= 0, and h = 0 (where, with f majorized, it is the polar factor of a 2 × 2
matrix); k > 2 blocks (the default for L1 or h = 0 with a Kronecker-quadratic f, see
`solver.default_k`) take a batched proximal step on their O(k) orbit (`blockk`). f's pair
models come from `model`. Working sets for pairs: random, cyclic or greedy (WSS-OR / WSS-SV
scores over sampled pairs), see `select`. Torch on CPU or CUDA; disjoint blocks are solved and
applied together (`solver`).
"""

from __future__ import annotations

import time

from ...compile.stiefel import build_stiefel
from ...errors import DflError
from ...instance import Instance
from ...solution import Solution
from .solver import OBCDResult, obcd

__all__ = ["OBCDResult", "obcd", "solve_instance"]


def solve_instance(inst: Instance, *, time_limit=None, seed=None, device: str = "cpu",
                   **opts) -> Solution:
    """Options: k, strategy (random|cyclic|greedy), score (or|sv), batch, sample, max_rounds,
    tol, X0 (a starting point)."""
    start = time.perf_counter()
    form = build_stiefel(inst)
    try:
        result = obcd(form, time_limit=time_limit, seed=seed, device=device, **opts)
    except DflError as exc:
        raise exc.located(inst.model.filename, inst.model.source) from None
    x = result.X.reshape(-1)
    what = "converged" if result.converged else "stopped"
    return Solution(
        "feasible", -result.objective if form.maximize else result.objective, x, "obcd",
        time.perf_counter() - start, inst,
        message=f"OBCD {what} after {result.rounds} rounds ({result.updates} block updates); "
                f"‖XᵀX − I‖∞ = {result.orthogonality:.1e}",
        extra={"orthogonality": result.orthogonality, "rounds": result.rounds,
               "updates": result.updates, "converged": result.converged},
    )
