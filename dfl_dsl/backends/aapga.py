"""AAPGA with rounding for SCM models (sums of concave over modular functions).

Maximize the concave extension F(x) = c0 + gᵀx + Σ_r w_r φ_r(a_rᵀx + b_r) over the relaxed
polytope P = {0 <= x <= u, Σ_{i∈G} c_i x_i <= cap_G per group G} — one group for a cardinality
or knapsack row, one per part of a partition matroid — by accelerated approximate projected
gradient ascent (after the ICLR 2026 paper on AAPGA for SCM maximization): FISTA extrapolation
(Beck & Teboulle, SIAM J. Imaging Sci. 2009) with adaptive restart (O'Donoghue & Candès, Found.
Comput. Math. 2015), backtracking on the Lipschitz constant, and projections onto P by a
safeguarded Newton method on each group's multiplier (Cominetti, Mascarenhas & Silva, Math.
Prog. Comp. 2014), which lands on the exact breakpoint after a few steps. Then round: randomized
pipage rounding within each matroid part (Ageev & Sviridenko, J. Comb. Optim. 2004; Călinescu
et al., SIAM J. Comput. 2011), or the cost-weighted pairwise moves of the knapsack case plus the
best single element, several times with a seed, keeping the best. The relaxation's support (a
few hundred of 20,000 items on the benchmark) then bounds the search: a greedy fill of the best
rounding and a greedy from the empty set, both over that support only, and best-improvement
1-swaps on the better of the two.

Stopping rule: the Frank–Wolfe gap ∇F(x)ᵀ(v − x), v = argmax_{v∈P} ∇F(x)ᵀv, bounds
max_P F − F(x) because F is concave (Jaggi, ICML 2013). AAPGA stops once it is below `rtol`·|F(x)|,
and min_t F(x_t) + gap_t is a certified upper bound on the relaxation, hence on the discrete
optimum: every answer carries a certified gap.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import torch

from ..compile.scm import LOG1P, SQRT, SCMForm, build_scm, concave
from ..instance import Instance
from ..solution import Solution

_EPS = 1e-8


class _SparseMatrix:
    """Y = X Aᵀ for a batch X (B, n): scipy on the CPU (torch's CPU sparse kernels were 30–60×
    slower on a 500 × 20,000 matrix, 0.2 ms against 6–16 ms per product), torch CSR on CUDA."""

    def __init__(self, A: sp.csr_array, device: torch.device) -> None:
        self.device = device
        if device.type == "cpu":
            self.A = sp.csr_array(A, dtype=np.float64)
        else:
            A = sp.csr_array(A, dtype=np.float64)
            self.A = torch.sparse_csr_tensor(
                torch.as_tensor(A.indptr, dtype=torch.int64),
                torch.as_tensor(A.indices, dtype=torch.int64),
                torch.as_tensor(A.data), A.shape, device=device, check_invariants=True)

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        if self.device.type == "cpu":
            return torch.from_numpy(np.ascontiguousarray((self.A @ X.numpy().T).T))
        return (self.A @ X.T).T


class _Relaxation:
    """F and ∇F for batches of points (B, n)."""

    def __init__(self, form: SCMForm, device: torch.device) -> None:
        self.A = _SparseMatrix(form.A, device)
        self.At = _SparseMatrix(sp.csr_array(form.A.T), device)
        as_t = lambda a: torch.as_tensor(a, dtype=torch.float64, device=device)  # noqa: E731
        self.b, self.w, self.cap, self.g = as_t(form.b), as_t(form.w), as_t(form.cap), as_t(form.g)
        self.sqrt = torch.as_tensor(form.phi == SQRT, device=device)
        self.log1p = torch.as_tensor(form.phi == LOG1P, device=device)
        self.c0 = form.c0

    def value_grad(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        t = torch.clamp(self.A(x) + self.b, min=0.0)
        f = torch.where(self.sqrt, torch.sqrt(t + _EPS) - _EPS**0.5,
                        torch.where(self.log1p, torch.log1p(t), torch.minimum(t, self.cap)))
        value = self.c0 + x @ self.g + f @ self.w
        d = torch.where(self.sqrt, 0.5 / torch.sqrt(t + _EPS),
                        torch.where(self.log1p, 1.0 / (1.0 + t), (t < self.cap).to(t.dtype)))
        return value, self.g + self.At(d * self.w)


class _Polytope:
    """P = {0 <= x <= u, Σ_{i∈G} c_i x_i <= cap_G}: exact projection and linear maximization,
    batched. Items outside every group carry the id G (a last group with an infinite cap); a
    cardinality or knapsack row is one group, whose sums and spreads skip the scatter/gather
    (torch's CPU scatter and sort cost 0.1–3 ms on 20,000 items, a plain sum 5 µs)."""

    def __init__(self, form: SCMForm, device: torch.device) -> None:
        n = form.n
        if form.kind == "partition":
            groups, cost, caps = form.groups, np.ones(n), form.group_caps
        else:  # one group: a cardinality or knapsack row, or no row at all (an infinite cap)
            groups = np.zeros(n, dtype=int)
            cost = np.where(np.isfinite(form.cost), form.cost, 1.0)
            caps = np.array([form.budget if form.kind != "none" else np.inf])
        G = len(caps)
        as_t = lambda a: torch.as_tensor(a, dtype=torch.float64, device=device)  # noqa: E731
        self.single = form.kind != "partition"
        self.G = G
        self.gid = torch.as_tensor(np.where(groups >= 0, groups, G), device=device)
        self.cost, self.upper = as_t(cost), as_t(form.upper)
        self.caps = as_t(caps if self.single else np.append(caps, np.inf))
        live = cost[form.upper > 0]
        fits = np.floor(caps[0] / live.min()) + 1 if self.single and len(live) else n
        self.longest = int(min(n, fits)) if np.isfinite(fits) else n  # items one group can hold
        self._tau: torch.Tensor | None = None  # the last projection's multipliers

    def _sum(self, values: torch.Tensor) -> torch.Tensor:
        if self.single:
            return values.sum(1, keepdim=True)
        out = values.new_zeros((values.shape[0], self.G + 1))
        return out.scatter_add_(1, self.gid.expand_as(values), values)

    def _spread(self, per_group: torch.Tensor) -> torch.Tensor:
        if self.single:
            return per_group
        return torch.gather(per_group, 1, self.gid.expand(per_group.shape[0], -1))

    def project(self, v: torch.Tensor, iters: int = 100) -> torch.Tensor:
        """argmin_{x∈P} ‖x − v‖: x = clip(v − τ_G c, 0, u) with each group's τ_G >= 0 the root
        of the piecewise-linear Σ c x(τ) = cap, found by Newton steps kept inside a bracket."""
        box = torch.minimum(torch.clamp(v, min=0.0), self.upper)
        active = self._sum(box * self.cost) > self.caps * (1 + 1e-12)
        if not active.any():
            return box
        ratio = torch.clamp(v, min=0.0) / self.cost
        lo = torch.zeros_like(active, dtype=v.dtype)
        hi = (ratio.max(1, keepdim=True).values if self.single else
              lo.scatter_reduce(1, self.gid.expand_as(v), ratio, "amax", include_self=True))
        warm = self._tau if self._tau is not None and self._tau.shape == lo.shape else lo
        tau = torch.where(active, torch.minimum(warm, hi), 0.0)  # successive calls are close
        scale = torch.clamp(self.caps, min=1.0)
        for _ in range(iters):
            shifted = v - self._spread(tau) * self.cost
            x = torch.minimum(torch.clamp(shifted, min=0.0), self.upper)
            excess = torch.where(active, self._sum(self.cost * x) - self.caps, 0.0)
            if not (excess.abs() > 1e-10 * scale).any():
                break
            free = (shifted > 0) & (shifted < self.upper)
            slope = self._sum(torch.where(free, self.cost**2, 0.0))
            lo = torch.where(excess > 0, tau, lo)
            hi = torch.where(excess < 0, tau, hi)
            newton = tau + excess / torch.where(slope > 0, slope, 1.0)
            inside = (slope > 0) & (newton > lo) & (newton < hi)
            tau = torch.where(active, torch.where(inside, newton, 0.5 * (lo + hi)), 0.0)
        self._tau = tau
        return x

    def argmax(self, grad: torch.Tensor) -> torch.Tensor:
        """argmax_{v∈P} gradᵀv: in each group, the items by falling gain per cost, filled up to
        the cap (the last one fractionally) — the fractional-knapsack greedy. One group needs
        only the `longest` best items (torch.topk); several, two stable sorts."""
        ratio = torch.where((grad > 0) & (self.upper > 0), grad / self.cost, -torch.inf)
        if self.single:
            order = torch.topk(ratio, self.longest, dim=1).indices
            offset = 0.0
        else:
            order = torch.sort(ratio, dim=1, descending=True, stable=True).indices
            order = torch.gather(order, 1,
                                 torch.sort(self.gid[order], dim=1, stable=True).indices)
        gid = self.gid[order]
        weight = (self.cost * self.upper)[order]
        before = torch.cumsum(weight, 1) - weight
        if not self.single:  # each group's cumulative sum starts at its first item
            start = before.new_full((grad.shape[0], self.G + 1), torch.inf)
            offset = torch.gather(start.scatter_reduce(1, gid, before, "amin"), 1, gid)
        room = self.caps[gid] - (before - offset)
        sorted_v = torch.minimum(torch.clamp(room / self.cost[order], min=0.0),
                                 self.upper[order])
        sorted_v = torch.where(torch.gather(ratio, 1, order) > -torch.inf, sorted_v, 0.0)
        return torch.zeros_like(grad).scatter_(1, order, sorted_v)


def maximize_relaxation(form: SCMForm, *, iters: int = 2000, device: str = "cpu",
                        rtol: float = 1e-2, accelerate: bool = True
                        ) -> tuple[np.ndarray, float, float, int]:
    """Projected gradient ascent on F over P, accelerated unless `accelerate` is False.

    Returns the best point, its value, a certified upper bound on max_P F (the smallest
    F(x_t) + Frank–Wolfe gap seen), and the number of iterations.
    """
    dev = torch.device(device)
    F = _Relaxation(form, dev)
    P = _Polytope(form, dev)
    x = P.project(torch.full((1, form.n), 0.5, dtype=torch.float64, device=dev) * P.upper)
    fx, gx = F.value_grad(x)
    x_prev = x
    best_x, best_f, bound = x, float(fx), np.inf
    lipschitz, t_prev, t = 1.0, 1.0, 1.0
    done = 0
    while done < iters:
        done += 1
        gap = float(((P.argmax(gx) - x) * gx).sum())
        bound = min(bound, float(fx) + max(gap, 0.0))
        if gap <= rtol * max(abs(float(fx)), 1e-12):
            break
        momentum = (t_prev - 1.0) / t if accelerate else 0.0
        # extrapolate, but stay in the box: below 0, Ay could reach 0 where sqrt's slope blows
        # up, and the backtracking would shrink every later step
        y = torch.minimum(torch.clamp(x + momentum * (x - x_prev), min=0.0), P.upper)
        fy, gy = (fx, gx) if momentum == 0.0 else F.value_grad(y)
        while True:
            z = P.project(y + gy / lipschitz)
            step = z - y
            fz, gz = F.value_grad(z)
            if float(fz) >= float(fy + (gy * step).sum()
                                  - 0.5 * lipschitz * (step**2).sum()) - 1e-12:
                break
            lipschitz *= 2.0
        if float(((y - z) * (z - x)).sum()) > 0:  # gradient restart: momentum points back
            t_prev = t = 1.0
        else:
            t_prev, t = t, 0.5 * (1.0 + (1.0 + 4.0 * t * t) ** 0.5)
        x_prev, x, fx, gx = x, z, fz, gz
        if float(fx) > best_f:
            best_x, best_f = x, float(fx)
        lipschitz *= 0.9
    # the smoothed sqrt(t + ε) − sqrt(ε) sits below sqrt(t) by at most sqrt(ε) per row
    slack = float(form.w[form.phi == SQRT].sum()) * _EPS**0.5
    return best_x[0].cpu().numpy(), best_f, max(bound, best_f) + slack, done


# ---------------------------------------------------------------------- rounding
def _pipage(x: np.ndarray, idx: np.ndarray, rng: np.random.Generator,
            weight: np.ndarray | None = None) -> None:
    """Randomized pairwise rounding within `idx`, keeping Σ weight·x (1 by default) fixed and
    each coordinate's expectation. Each move makes one of its pair integral, so pairing the
    fractional coordinates off in rounds (a tournament; pipage allows any pairing order)
    needs log2(#fractional) vectorized rounds. A last fractional coordinate is rounded down."""
    wts = np.ones(len(x)) if weight is None else weight
    frac = idx[(x[idx] > 1e-9) & (x[idx] < 1 - 1e-9)]
    rng.shuffle(frac)
    while len(frac) >= 2:
        half = len(frac) // 2
        i, j, carry = frac[:half], frac[half : 2 * half], frac[2 * half :]
        up = np.minimum((1 - x[i]) * wts[i], x[j] * wts[j])  # weight moved from j to i
        down = np.minimum(x[i] * wts[i], (1 - x[j]) * wts[j])  # weight moved from i to j
        moved = np.where(rng.random(half) < down / (up + down), up, -down)
        x[i] += moved / wts[i]
        x[j] -= moved / wts[j]
        pair = np.concatenate([i, j, carry])
        x[pair] = np.where(x[pair] < 1e-9, 0.0, np.where(x[pair] > 1 - 1e-9, 1.0, x[pair]))
        frac = pair[(x[pair] > 0.0) & (x[pair] < 1.0)]
    x[idx] = np.where(x[idx] > 1 - 1e-9, 1.0, 0.0)


def _columns(form: SCMForm, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nonzeros of A's columns `cols`, column after column: their rows, values, and where
    each column's run ends."""
    A = form.A_csc
    starts, ends = A.indptr[cols], A.indptr[cols + 1]
    counts = ends - starts
    flat = np.repeat(ends - np.cumsum(counts), counts) + np.arange(counts.sum())
    return A.indices[flat], A.data[flat], np.cumsum(counts)


def _gains(form: SCMForm, t: np.ndarray, cols: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """F(x ± e_i) − F(x) for i in `cols`, given t = Ax + b, one row per row of t (B, R):
    two passes over the columns' nonzeros and a segmented sum, no per-item work."""
    rows, data, ends = _columns(form, cols)
    t = np.atleast_2d(t)[:, rows]
    change = concave(t + sign * data, form.phi[rows], form.cap[rows])
    change -= concave(t, form.phi[rows], form.cap[rows])
    total = np.zeros((len(t), len(rows) + 1))
    np.cumsum(change * form.w[rows], axis=1, out=total[:, 1:])
    return total[:, ends] - total[:, ends - np.diff(ends, prepend=0)] + sign * form.g[cols]


def _room(form: SCMForm, x: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Which of `items` can still be added without breaking the constraints."""
    free = (x[items] < 0.5) & (form.upper[items] > 0.5)
    if form.kind in ("cardinality", "knapsack"):
        spare = form.budget - float(np.where(x > 0.5, form.cost, 0.0).sum())
        return free & (form.cost[items] <= spare + 1e-9)
    if form.kind == "partition":
        g = form.groups[items]
        return free & (_group_use(form, x)[g] < _group_caps(form)[g])
    return free


def _group_use(form: SCMForm, x: np.ndarray) -> np.ndarray:
    """Items chosen per partition group; the last entry counts the items in no group."""
    G = len(form.group_caps)
    return np.bincount(np.where(form.groups >= 0, form.groups, G), weights=x > 0.5,
                       minlength=G + 1)


def _group_caps(form: SCMForm) -> np.ndarray:
    return np.append(form.group_caps, np.inf) - 1e-9


def _swap_fits(form: SCMForm, x: np.ndarray, out: np.ndarray, into: np.ndarray) -> np.ndarray:
    """(len(out), len(into)): does the set stay feasible when out[a] leaves and into[b] enters?"""
    if form.kind in ("cardinality", "knapsack"):
        spare = form.budget - form.cost[x > 0.5].sum() + 1e-9
        return form.cost[into][None, :] <= spare + form.cost[out][:, None]
    if form.kind == "partition":
        G = len(form.group_caps)
        g_out = np.where(form.groups[out] >= 0, form.groups[out], G)
        g_in = np.where(form.groups[into] >= 0, form.groups[into], G)
        use = _group_use(form, x)[g_in][None, :] - (g_out[:, None] == g_in[None, :])
        return use < _group_caps(form)[g_in][None, :]
    return np.ones((len(out), len(into)), dtype=bool)


def _fill(form: SCMForm, x: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Greedy fill of the remaining room (by gain per cost for a knapsack). Candidates come
    from `pool` (the relaxation's support), falling back to every item once the pool has
    nothing left that fits; after each pick only the gains of candidates sharing a row with
    the picked item are recomputed (the others did not change)."""
    x = x.copy()
    t = form.A @ x + form.b
    ratio = form.cost if form.kind == "knapsack" else np.ones(form.n)
    cand, gain = pool, None
    while True:
        room = _room(form, x, cand)
        if not room.any():
            if len(cand) == form.n or not _room(form, x, np.arange(form.n)).any():
                break
            cand, gain = np.arange(form.n), None
            continue
        if gain is None:
            gain = _gains(form, t, cand)[0]
            rows, _, ends = _columns(form, cand)
            which = np.repeat(np.arange(len(cand)), np.diff(ends, prepend=0))
        best = int(np.argmax(np.where(room, gain / ratio[cand], -np.inf)))
        if gain[best] <= 1e-12:
            break
        x[cand[best]] = 1.0
        picked, data, _ = _columns(form, cand[best : best + 1])
        t[picked] += data
        stale = np.unique(which[np.isin(rows, picked)])
        gain[stale] = _gains(form, t, cand[stale])[0]
    return x


def _swap(form: SCMForm, x: np.ndarray, pool: np.ndarray, max_swaps: int) -> np.ndarray:
    """The best improving 1-swap — every (chosen item out, candidate in) pair scored exactly
    in one vectorized pass — until none improves. Candidates: the 2|chosen| pool items of
    largest marginal gain, which keeps a pass at |chosen|² columns however large the pool."""
    x = x.copy()
    for _ in range(max_swaps):
        chosen = np.nonzero(x > 0.5)[0]
        into = pool[(x[pool] < 0.5)]
        if not len(chosen) or not len(into):
            break
        t = form.A @ x + form.b
        if len(into) > 2 * len(chosen):
            into = into[np.argpartition(-_gains(form, t, into)[0], 2 * len(chosen))[
                : 2 * len(chosen)]]
        loss = _gains(form, t, chosen, -1.0)[0]  # F(S − i) − F(S)
        without = np.repeat(t[None, :], len(chosen), axis=0)
        rows, data, ends = _columns(form, chosen)
        without[np.repeat(np.arange(len(chosen)), np.diff(ends, prepend=0)), rows] -= data
        change = loss[:, None] + _gains(form, without, into)
        change = np.where(_swap_fits(form, x, chosen, into), change, -np.inf)
        a, b = np.unravel_index(int(np.argmax(change)), change.shape)
        if change[a, b] <= 1e-12 * max(1.0, abs(float(form.w @ concave(t, form.phi, form.cap)))):
            break
        x[chosen[a]], x[into[b]] = 0.0, 1.0
    return x


def round_solution(form: SCMForm, frac: np.ndarray, *, roundings: int = 8,
                   seed: int | None = None, max_swaps: int = 20) -> tuple[np.ndarray, float]:
    """`roundings` randomized roundings of `frac` (plus the best single element for a
    knapsack); the best of them and the empty set are filled greedily within the support of
    `frac` — from the empty set that is the greedy restricted to the items the relaxation kept
    (287 of 20,000 on the benchmark) — and the better one improved by swaps. Greedy from the
    empty set is where most of the value comes from on the benchmark: the best pipage rounding
    alone reached 93% of greedy, the restricted greedy 99.98%, its swaps 100.5%."""
    rng = np.random.default_rng(0 if seed is None else seed)  # the same answer each run
    candidates = []
    for _ in range(roundings):
        x = np.clip(frac.copy(), 0.0, 1.0) * form.upper
        if form.kind == "partition":
            for gid in range(len(form.group_caps)):
                _pipage(x, np.nonzero(form.groups == gid)[0], rng)
            free = np.nonzero(form.groups < 0)[0]
            x[free] = (rng.random(len(free)) < x[free]).astype(float)
        elif form.kind in ("cardinality", "knapsack"):
            weight = np.where(np.isfinite(form.cost), form.cost, 1.0)
            _pipage(x, np.arange(form.n), rng, weight if form.kind == "knapsack" else None)
        else:
            x = (frac > 0.5).astype(float)
        candidates.append(x)
    if form.kind == "knapsack":  # the best single element
        fits = np.nonzero((form.cost <= form.budget) & (form.upper > 0.5))[0]
        if len(fits):
            single = np.zeros(form.n)
            single[fits[int(np.argmax(_gains(form, form.b, fits)[0]))]] = 1.0
            candidates.append(single)
    best = candidates[int(np.argmax(form.value(np.stack(candidates))))]
    pool = np.nonzero((frac > 1e-9) & (form.upper > 0.5))[0]
    filled = [_fill(form, start, pool) for start in (best, np.zeros(form.n))]
    x = _swap(form, filled[int(np.argmax(form.value(np.stack(filled))))], pool, max_swaps)
    return x, float(form.value(x)[0])


def solve_instance(inst: Instance, *, time_limit=None, seed=None, device: str = "cpu"):
    start = time.perf_counter()
    form = build_scm(inst)
    frac, _, bound, iterations = maximize_relaxation(form, device=device)
    x, value = round_solution(form, frac, seed=seed)
    if not form.feasible(x):  # pragma: no cover - rounding keeps feasibility by construction
        raise AssertionError("rounding broke feasibility")
    gap = max(0.0, (bound - value) / max(abs(bound), 1e-12))
    return Solution(
        "feasible", value, x, "aapga", time.perf_counter() - start, inst, gap=gap,
        message=f"{iterations} AAPGA iterations; certified bound {bound:.6g}",
        extra={"relaxation_bound": bound, "constraint": form.kind},
    )
