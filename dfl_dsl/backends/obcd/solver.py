"""The OBCD iteration (Yuan, arXiv 2304.03641): rounds of disjoint row blocks, each replaced by
V·X_B with V ∈ O(k) — for pairs the global minimizer of its subproblem, for k > 2 a proximal
step (`blockk`) — so X stays on the Stiefel manifold up to rounding at every step.

Disjoint pairs are solved together (one batched torch call) and applied together. Each pair's
model bounds its own change (exact, or majorized with f's curvature on the pair), but the pairs
interact through f's coupling C_{BB'}; so the round is kept only if F decreases by at least a
quarter of the predicted decrease, else the better half of the pairs is tried, down to one
pair (which always succeeds). With an estimated curvature (autograd f) a failed round doubles
ς instead. Blocks also scale their steps by the round's realized/predicted ratio (`_adapt`).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import torch

from ...compile.stiefel import KronQuadratic, StiefelForm
from ...devices import torch_threads
from ...errors import DflError
from . import blockk, select
from .model import make_model
from .pair import h_rows, solve_pairs


@dataclass
class OBCDResult:
    X: np.ndarray
    objective: float
    rounds: int
    updates: int
    converged: bool
    orthogonality: float
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, F)


def initial_point(form: StiefelForm, seed: int | None = None) -> np.ndarray:
    """The r leading eigenvectors of f's quadratic when f = ½ tr(XᵀCX)·ρ + ... (the PCA
    point), else a random orthonormal X (seed None: 0, as the rounds' generator, so a run
    without a seed gives the same answer every time); for `X >= 0` a disjoint-support point
    built from it."""
    n, r = form.n, form.r
    smooth = form.smooth
    if isinstance(smooth, KronQuadratic) and np.allclose(smooth.R, smooth.R[0, 0] * np.eye(r)) \
            and smooth.R[0, 0] != 0:
        _, vecs = np.linalg.eigh(smooth.C * smooth.R[0, 0])
        X = vecs[:, :r].copy()
    else:
        X, _ = np.linalg.qr(np.random.default_rng(0 if seed is None else seed)
                            .standard_normal((n, r)))
    return disjoint_support(X) if form.nonneg else X


def disjoint_support(X: np.ndarray) -> np.ndarray:
    """A nonnegative orthonormal matrix: each row goes to the column where |X| is largest
    (every column gets at least one row), entries 1/√(rows in the column)."""
    n, r = X.shape
    owner = np.argmax(np.abs(X), axis=1)
    for j in range(r):  # r is small: give each empty column the strongest row of a big one
        if not np.any(owner == j):
            counts = np.bincount(owner, minlength=r)
            donors = np.nonzero(counts[owner] > 1)[0]
            owner[donors[np.argmax(np.abs(X[donors, j]))]] = j
    out = np.zeros((n, r))
    out[np.arange(n), owner] = 1.0
    return out / np.sqrt(out.sum(axis=0))


def orthogonality(X: np.ndarray) -> float:
    """‖XᵀX − I‖∞ (the largest entry)."""
    return float(np.abs(X.T @ X - np.eye(X.shape[1])).max())


def finish(form: StiefelForm, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Re-orthonormalize (polar factor) when rounding has drifted past `tol`, keeping exact
    zeros where they were (sparsity is part of the objective) and X >= 0."""
    if orthogonality(X) <= tol:
        return X
    zeros = X == 0
    u, _, vt = np.linalg.svd(X, full_matrices=False)
    Y = u @ vt
    Y[zeros] = 0.0
    if form.nonneg:
        Y = np.maximum(Y, 0.0)
    return Y


def obcd(form: StiefelForm, *, X0: np.ndarray | None = None, k: int | None = None,
         strategy: str = "random", score: str = "or", batch: int | None = None,
         sample: int | None = None, time_limit: float | None = None,
         max_rounds: int | None = None, tol: float = 1e-8, seed: int | None = None,
         device: str = "cpu", record: bool = False, threads: int | None = 1,
         majorize: bool = True, restarts: int | None = 0) -> OBCDResult:
    """Minimize F = f + h over XᵀX = I from X0 (default `initial_point`). The rounds are many
    small kernels, so CPU torch runs single-threaded unless `threads` says otherwise (None:
    torch's setting); the previous setting is restored. A quadratic f's pair models are the
    curvature majorizer (`majorize`, the default: cheap closed forms; with X >= 0 or L0 a pair
    it would leave in place has its candidates scored by the exact change, `pair.solve_pairs`)
    or exact (quartics; more progress per round, fewer rounds per second), see
    `model.KronModel`. `k` defaults to `default_k`. `restarts` (beyond the paper): how many
    times a stalled run perturbs its best point and descends again, keeping the best
    (`_perturb`); None: until the time limit or `max_rounds`, one of which must then be set."""
    with torch_threads(threads if device == "cpu" else None):
        return _obcd(form, X0, k, strategy, score, batch, sample, time_limit, max_rounds, tol,
                     seed, device, record, majorize, restarts)


def _obcd(form, X0, k, strategy, score, batch, sample, time_limit, max_rounds, tol, seed,
          device, record, majorize, restarts) -> OBCDResult:
    k = default_k(form) if k is None else k
    if strategy not in select.STRATEGIES:
        raise DflError(f"unknown working-set strategy `{strategy}`",
                       hint="choose one of: " + ", ".join(select.STRATEGIES))
    if score not in select.SCORES:
        raise DflError(f"unknown working-set score `{score}`",
                       hint="choose one of: " + ", ".join(select.SCORES))
    if k < 2 or k > form.n:
        raise DflError(f"the block size k must be in 2..n (n = {form.n}), got {k}")
    if restarts is None and time_limit is None and max_rounds is None:
        raise DflError("restarts=None (until the budget is spent) needs a time limit or max_rounds")
    start = time.perf_counter()
    n = form.n
    dev = torch.device(device)
    X = initial_point(form, seed) if X0 is None else np.asarray(X0, dtype=float)
    if X.shape != (n, form.r):
        raise DflError(f"the starting point must be {n} x {form.r}, got {X.shape}")
    if form.nonneg and np.any(X < 0):
        raise DflError("the starting point must satisfy X >= 0")
    Xt = torch.as_tensor(X, dtype=torch.float64, device=dev)
    model = make_model(form, Xt, majorize)
    hx = lambda Z: float(h_rows(Z.reshape(-1), form.l1, form.l0, form.nonneg))  # noqa: E731
    F = model.value() + hx(model.X)
    if not np.isfinite(F):
        raise DflError(
            f"the objective is {F} at the starting point: an atom is evaluated outside its "
            "domain there (`log` or `sqrt` of an entry of X, which ranges over [-1, 1] on the "
            "Stiefel manifold, or over [0, 1] with `X >= 0`)",
            form.pos, hint="keep the atoms' arguments positive on that range (e.g. `log(X + 2)`)")
    gen = torch.Generator().manual_seed(0 if seed is None else seed)
    count = max(1, min(n // k, batch or default_batch(n, k, strategy)))
    per_sweep = -(-(n + n % 2) // 2 // count) * max(1, n + n % 2 - 1)
    window = per_sweep if strategy == "cyclic" else max(10, min(per_sweep, 100))
    recent: deque[float] = deque(maxlen=window)
    history = [(time.perf_counter() - start, F)] if record else []
    rounds = updates = 0
    step = 1.0
    prox = blockk.PROX_STEPS
    converged = False
    best = None  # (X, F) of the best stalled point, once restarts begin
    left = restarts
    while True:
        if time_limit is not None and time.perf_counter() - start >= time_limit:
            break
        if max_rounds is not None and rounds >= max_rounds:
            break
        if k == 2:
            rows, new, delta = _pair_round(form, model, strategy, score, count, sample, rounds,
                                           gen, dev)
        else:
            rows, new, delta = _block_round(form, model, k, count, gen, dev, step, prox)
        F_new, applied = _apply(form, model, rows, new, delta, F, hx, k)
        if k > 2:
            step = _adapt(step, F_new - F, float(delta.sum()))
            if not applied:  # no block descended: solve the block steps more accurately
                prox = min(2 * prox, blockk.MAX_PROX_STEPS)
        recent.append(F - F_new)
        F = F_new
        updates += applied
        rounds += 1
        if record:
            history.append((time.perf_counter() - start, F))
        more = left is None or left > 0
        if len(recent) == window and sum(recent) <= (max(tol, RESTART_TOL) if more else tol) \
                * max(1.0, abs(F)):
            if best is None or F < best[1]:
                best = (model.X, F)
            if not more:
                converged = True
                break
            left = None if left is None else left - 1
            model.reset(_perturb(best[0], form.nonneg, gen))
            F = model.value() + hx(model.X)
            recent.clear()
            step = 1.0
    if best is not None and best[1] < F:  # a restart's descent ended above the best point
        model.reset(best[0])
        F = best[1]
        if record:
            history.append((time.perf_counter() - start, F))
    X = finish(form, model.X.cpu().numpy())
    return OBCDResult(X, form.value(X), rounds, updates, converged, orthogonality(X), history)


RESTART_ROWS = 16  # rows turned by a restart's perturbation (at most n/4)
RESTART_SCALE = 1.0  # the size of its random rotation
RESTART_TOL = 1e-6  # while restarts remain, a window that gains under this · |F| is a stall


def _perturb(X: torch.Tensor, nonneg: bool, gen: torch.Generator) -> torch.Tensor:
    """A random feasible move away from a stalled point (beyond the paper, which stops there):
    m = min(16, n/4) random rows X_B become V·X_B with V = exp(s(G − Gᵀ)/√m), G standard normal,
    s = RESTART_SCALE (with X >= 0, a random permutation of the rows, which keeps X >= 0). The
    run then descends from it as usual and keeps the lower of its next stall and the best point
    so far, so F never ends above the first stall. A heuristic, measured on L1 sparse PCA
    (docs/obcd.md): at ManPG's answer on digits with λ = 10, where no block step and no pair
    step (global over O(2), exact model; random, cyclic and greedy pairs) decreased F, and
    neither did a λ/2 continuation, 10 s of such hops reached −31766 from −31758 with 16 rows
    and s = 1, −31764 with s = 3, at most −31759 with 64 rows. At ManPG's converged answers on
    randn problems it found nothing better in 5 s."""
    n = X.shape[0]
    m = max(2, min(RESTART_ROWS, n // 4))
    rows = torch.randperm(n, generator=gen)[:m].to(X.device)
    if nonneg:
        V = torch.eye(m, dtype=X.dtype)[torch.randperm(m, generator=gen)]
    else:
        G = torch.randn(m, m, generator=gen, dtype=X.dtype)
        V = torch.linalg.matrix_exp((G - G.T) * (RESTART_SCALE / m ** 0.5))
    return X.index_copy(0, rows, V.to(X.device) @ X[rows])


def default_k(form: StiefelForm) -> int:
    """Blocks of min(64, n/2) rows when f is a Kronecker quadratic (the block model is then
    exact) and h is λ‖X‖₁ or 0; else pairs (L0 and X >= 0 need the breakpoint search). Measured
    on L1 sparse PCA (docs/obcd.md): pairs stall where a move must keep zeros in several rows
    at once, and bigger blocks make more progress per round at about the same cost per round
    (dominated by the O(n²r) gradient update once every row moves), up to where the blocks'
    coupling makes the round's safeguard cut the step; blocks with k < r take the slower
    least-squares projection. 64 was first picked on the benchmark's own problems, then checked
    on five others (8 s each, k ∈ {16, 32, 64, 128}): best on three (randn 300 × 600,
    randn 500 × 1000 with r = 20, digits with r = 20 where n/2 = 32), 0.6 behind k = 128 on
    randn 1000 × 500 and 2.9 behind k = 32 on randn 500 × 1000 with r = 5 — a reasonable
    default, not an optimum."""
    if form.l0 or form.nonneg or not isinstance(form.smooth, KronQuadratic) or form.n < 6:
        return 2
    return min(64, form.n // 2)


def default_batch(n: int, k: int, strategy: str) -> int:
    """Blocks per round. Random and cyclic rounds take a full matching (n/k blocks). Greedy
    rounds take the best n/8 (at least 32): the scores fall off fast, so the top pairs
    carry most of a round's decrease, while the gradient update costs O(n·|rows|·r) — with
    a quarter of the rows it is a gather of C's rows instead of a dense n × n product, and
    more, cheaper rounds re-score with fresh gradients. Below ~64 rows a round's fixed
    kernel launches dominate, so small problems keep the full matching."""
    if strategy != "greedy":
        return n // k
    return max(min(n // k, 32), n // 8)


def _pair_round(form, model, strategy, score, count, sample, round_, gen, dev):
    n = form.n
    if strategy == "random":
        p, q = select.random_pairs(n, count, gen, dev)
    elif strategy == "cyclic":
        p, q = select.cyclic_pairs(n, round_, count, dev)
    else:
        p, q = select.sample_pairs(n, sample or 2 * n, gen, dev)
        if score == "sv":
            keep = select.disjoint(p, q, select.sv_scores(model.X, model.grad(), form.l1, p, q),
                                   n, count)
            p, q = p[keep], q[keep]
    search, exact = model.coefficients(p, q, score=bool(form.l0 or form.nonneg))
    step = solve_pairs(model.X[p], model.X[q], search, form.l1, form.l0, form.nonneg, exact)
    if strategy == "greedy" and score == "or":
        keep = select.disjoint(p, q, -step.delta, n, count)
        p, q = p[keep], q[keep]
        step = type(step)(*(getattr(step, f)[keep] for f in
                            ("theta", "reflect", "delta", "x", "y")))
    rows = torch.stack([p, q], 1)
    new = torch.stack([step.x, step.y], 1)
    return rows, new, step.delta


def _block_round(form, model, k, count, gen, dev, step, prox):
    perm = torch.randperm(form.n, generator=gen).to(dev)[: k * count].view(count, k)
    new, delta = blockk.solve_blocks(model, perm, form.l1, form.l0, form.nonneg, step, prox)
    return perm, new, delta


def _adapt(step: float, actual: float, predicted: float) -> float:
    """The blocks' step scale (at most 1), a trust-region rule on the round: blocks are solved
    apart but interact through f's coupling C_{BB'}, so when the round realizes under half of
    the blocks' predicted decrease (or none was predicted) the steps shrink, and above 80 %
    they grow back (each block's line search still picks the best of its trial steps; scales
    above 1 measured worse — long rotations that each block likes but the round does not)."""
    ratio = actual / predicted if predicted < 0 else 0.0
    if ratio < 0.5:
        return max(0.5 * step, 1 / 64)
    return min(1.5 * step, 1.0) if ratio > 0.8 else step


def _apply(form, model, rows, new, delta, F, hx, k) -> tuple[float, int]:
    """Apply the improving blocks, best first, with the safeguard described above."""
    eps = 1e-14 * max(1.0, abs(F))
    good = torch.nonzero(delta < -eps).flatten()
    if not len(good):
        return F, 0
    good = good[torch.argsort(delta[good])]
    while True:
        saved = model.state()
        flat_rows = rows[good].reshape(-1)
        model.update(flat_rows, new[good].reshape(-1, new.shape[-1]))
        F_new = model.value() + hx(model.X)
        predicted = float(delta[good].sum())
        if F_new <= F + 0.25 * predicted:
            return F_new, len(good)
        model.restore(saved)
        if len(good) == 1 or not model.pair_bound:
            if not model.pair_bound:
                model.sigma *= 2.0
            return F, 0
        good = good[: len(good) // 2]
