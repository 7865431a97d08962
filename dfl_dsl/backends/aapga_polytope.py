"""The relaxed polytope of an SCM form, P = {0 <= x <= u, Σ_{i∈G} c_i x_i <= cap_G per group}:
exact Euclidean projection and linear maximization, batched over rows (B, n), written against
`ops.xp` (aapga_arrays.py) so that the same code runs in numpy on the CPU and in torch on CUDA.

One group is a cardinality or knapsack row, one per part of a partition matroid; items in no
group carry the id G (a last group with an infinite cap). The projection finds each group's
multiplier by a safeguarded Newton method (Cominetti, Mascarenhas & Silva, Math. Prog. Comp.
2014), which lands on the exact breakpoint after a few steps; the linear maximization is the
fractional-knapsack greedy.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..compile.scm import SCMForm
from .aapga_arrays import ArrayOps


class Polytope:
    """P for one form in one array namespace. A cardinality or knapsack row is one group,
    whose sums and spreads skip the scatter/gather (a scatter costs 0.1–3 ms on 20,000
    items, a plain sum 5 µs)."""

    def __init__(self, form: SCMForm, ops: ArrayOps) -> None:
        n = form.n
        if form.kind == "partition":
            groups, cost, caps = form.groups, np.ones(n), form.group_caps
        else:  # one group: a cardinality or knapsack row, or no row at all (an infinite cap)
            groups = None
            cost = np.where(np.isfinite(form.cost), form.cost, 1.0)
            caps = np.array([form.budget if form.kind != "none" else np.inf])
        G = len(caps)
        self.ops, as_t = ops, ops.asarray
        self.single = form.kind != "partition"
        self.unit = bool(np.all(cost == 1.0))  # a cardinality row: no products with the costs
        self.free = bool(np.all(form.upper > 0))  # no item fixed out: no mask for them
        self.G = G
        if not self.single:  # one group needs no ids: its sums are plain sums
            self.gid = ops.ints(np.where(groups >= 0, groups, G))
        self.cost, self.upper = as_t(cost), as_t(form.upper)
        self.weight = self.cost * self.upper
        self.full = self.weight.sum().reshape(1, 1)  # Σ c u
        self.full_value = float(self.full[0, 0])
        self.caps = as_t(caps if self.single else np.append(caps, np.inf))
        self.over = self.caps * (1 + 1e-12)  # a load above this is over the cap
        self.cap = float(caps[0])  # one group's cap, without reading it back from the device
        live = cost if self.free else cost[form.upper > 0]
        self.cheapest = float(live.min()) if len(live) else np.inf  # bounds what a cap holds
        self._tau = None  # the last projection's multipliers

    @cached_property
    def cost2(self):
        return self.cost**2

    @cached_property
    def kinks(self):
        """The slope changes of Σ c x(τ) (only projections need them: the full problem's
        polytope, 20,000 items on the benchmark, only picks and starts)."""
        return self.ops.xp.concatenate([-self.cost2, self.cost2])

    def inside(self):
        """A start (1, n) in P: u/2, scaled down until every group's cap holds it (for a
        cardinality row, k/n each — the projection of u/2 — without a sort of 2n points)."""
        load = self._load(0.5 * self.upper[None])
        scale = self.ops.xp.clip(self.caps / self.ops.xp.clip(load, 1e-300, None), None, 1.0)
        return 0.5 * self.upper[None] * self._spread(scale)

    @cached_property
    def zero(self):
        return self.ops.xp.zeros_like(self.upper)

    def clip(self, v):
        """v clipped to the box [0, u]."""
        return self.ops.xp.minimum(self.ops.xp.maximum(v, self.zero), self.upper)

    def _sum(self, values):
        if self.single:
            return values.sum(axis=1, keepdims=True)
        return self.ops.group_sum(values, self.gid, self.G + 1)

    def _spread(self, per_group):
        if self.single:
            return per_group
        return per_group[:, self.gid]

    def _load(self, x):
        """Σ_{i∈G} c_i x_i per row and group."""
        return self._sum(x if self.unit else x * self.cost)

    def project(self, v, iters: int = 100):
        """argmin_{x∈P} ‖x − v‖: x = clip(v − τ_G c, 0, u) with each group's τ_G >= 0 the root
        of the piecewise-linear Σ c x(τ) = cap: read off the sorted breakpoints for one
        group, found by Newton steps kept inside a bracket for several."""
        box = self.clip(v)
        active = self._load(box) > self.over
        if not bool(active.any()):
            return box
        if self.single:
            if v.shape[0] == 1:
                return self._project_point(v)
            return self.ops.xp.where(active, self._project_single(v), box)
        return self._project_groups(v, active, iters)

    def _project_point(self, v):
        """`_project_single` for one point (1, n) (the ascent's case), in one dimension with
        τ as a number: the same arithmetic in two thirds of the calls."""
        xp, w = self.ops.xp, v[0]
        if self.unit:
            points = xp.concatenate([w - self.upper, w])
        else:
            points = xp.concatenate([(w - self.upper) / self.cost, w / self.cost])
        order = xp.argsort(points)
        points = points[order]
        slope = xp.cumsum(self.kinks[order], axis=0)
        s = self.full_value + xp.cumsum(slope[:-1] * (points[1:] - points[:-1]), axis=0)
        last = int((s > self.cap).sum())  # s falls from Σ c u > cap at the first breakpoint
        s0 = self.full_value if last == 0 else float(s[last - 1])
        t0, k0 = float(points[last]), float(slope[last])
        tau = t0 + (self.cap - s0) / k0 if k0 < 0 else t0
        return self.clip(v - (tau if self.unit else tau * self.cost))

    def _project_single(self, v):
        """One group, exactly and without a loop: s(τ) = Σ c_i clip(v_i − τ c_i, 0, u_i) falls
        from Σ c u, its slope dropping by c_i² where item i leaves u ((v_i − u_i)/c_i) and
        rising by c_i² where it reaches 0 (v_i/c_i); s at the sorted breakpoints is a cumulative
        sum, and τ is interpolated on the segment where s crosses the cap (Helgason, Kennington
        & Lall, Math. Prog. 1980; about 25 tensor operations against 4–6 Newton steps of 20)."""
        ops, xp = self.ops, self.ops.xp
        if self.unit:
            points = xp.concatenate([v - self.upper, v], axis=1)
        else:
            points = xp.concatenate([(v - self.upper) / self.cost, v / self.cost], axis=1)
        order = ops.argsort(points, stable=False)
        points = ops.take(points, order)
        slope = xp.cumsum(self.kinks[order], axis=1)
        rise = xp.cumsum(slope[:, :-1] * (points[:, 1:] - points[:, :-1]), axis=1)
        full = self.full if v.shape[0] == 1 else xp.broadcast_to(self.full, (v.shape[0], 1))
        s = xp.concatenate([full, self.full + rise], axis=1)
        # the segment where s crosses the cap: s falls from s[0] = Σ c u > cap (an active row)
        last = (s[:, 1:] > self.caps).sum(axis=1, keepdims=True)
        s0, t0, k0 = ops.take(s, last), ops.take(points, last), ops.take(slope, last)
        tau = xp.where(k0 < 0, t0 + (self.caps - s0) / xp.where(k0 < 0, k0, -1.0), t0)
        return self.clip(v - (tau if self.unit else tau * self.cost))

    def _project_groups(self, v, active, iters: int):
        """Several groups: each group's τ by safeguarded Newton steps, all groups at once,
        warm-started at the last call's multipliers (successive calls are close)."""
        ops, xp = self.ops, self.ops.xp
        ratio = xp.clip(v, 0.0, None) / self.cost
        lo = ops.zeros(active.shape)
        hi = ops.group_reduce(ratio, self.gid, self.G + 1, "max", 0.0)
        warm = self._tau if self._tau is not None and self._tau.shape == lo.shape else lo
        tau = xp.where(active, xp.minimum(warm, hi), 0.0)
        tol = 1e-10 * xp.clip(self.caps, 1.0, None)
        for _ in range(iters):
            shifted = v - self._spread(tau) * self.cost
            x = self.clip(shifted)
            excess = xp.where(active, self._load(x) - self.caps, 0.0)
            if not bool((abs(excess) > tol).any()):
                break
            slope = self._sum(xp.where((shifted > 0) & (shifted < self.upper), self.cost2, 0.0))
            lo = xp.where(excess > 0, tau, lo)
            hi = xp.where(excess < 0, tau, hi)
            newton = tau + excess / xp.where(slope > 0, slope, 1.0)
            inside = (slope > 0) & (newton > lo) & (newton < hi)
            tau = xp.where(active, xp.where(inside, newton, 0.5 * (lo + hi)), 0.0)
        self._tau = tau
        return x

    def _ranked(self, grad, widen: float):
        """The items by falling gain per cost, group after group, that the greedy over P with
        every cap × `widen` looks at, and their gains per cost (B, m): at most 0 where
        nothing is gained, −inf for an item fixed out. One group needs only the items its cap
        can hold (`ops.top`); several, two stable sorts. (Masking the gains before ranking
        cost two passes over the 20,000 items of the benchmark's full checks; an item that
        gains nothing ranks after every one that does anyway.)"""
        ops, xp = self.ops, self.ops.xp
        ratio = grad if self.unit else grad / self.cost
        if not self.free:
            ratio = xp.where(self.upper > 0, ratio, -np.inf)
        if self.single:
            order = ops.top(ratio, self._holds(widen))
        else:
            order = ops.argsort(ratio, descending=True)
            order = ops.take(order, ops.argsort(self.gid[order]))
        return order, ops.take(ratio, order)

    def _holds(self, widen: float) -> int:
        """How many items one group's cap × `widen` can hold at most."""
        fits = self.cap * widen / self.cheapest + 1 if self.cheapest > 0 else np.inf
        return int(min(self.upper.shape[0], fits))

    def _amounts(self, order, gains, widen: float):
        """The fractional-knapsack greedy's amounts (B, m) for the items in `order` (gaining
        `gains` per cost): each group's items filled up to its cap × `widen`, the last one
        fractionally, none for an item that gains nothing."""
        ops, xp = self.ops, self.ops.xp
        caps = self.caps * widen
        weight = self.weight[order]
        if self.single:
            room = caps - (xp.cumsum(weight, axis=1) - weight)
        else:
            gid = self.gid[order]
            before = xp.cumsum(weight, axis=1) - weight
            first = ops.group_reduce(before, gid, self.G + 1, "min", np.inf)
            room = caps[gid] - (before - ops.take(first, gid))  # each group starts at its first
        amount = xp.minimum(ops.positive(room if self.unit else room / self.cost[order]),
                            self.upper[order])
        return xp.where(gains > 0, amount, 0.0)

    def _greedy(self, grad, widen: float):
        """The fractional-knapsack greedy over P with every cap × `widen`: the items it looks
        at, in its order, and the amount each gets (B, m)."""
        order, gains = self._ranked(grad, widen)
        return order, self._amounts(order, gains, widen)

    def argmax(self, grad, widen: float = 1.0):
        """argmax_{v∈P} gradᵀv (with the caps × `widen`), for each row of grad (B, n)."""
        order, amount = self._greedy(grad, widen)
        return self.ops.put(self.ops.xp.zeros_like(grad), order, amount)

    def picked(self, grad, widen: float = 1.0) -> np.ndarray:
        """The items that argmax(grad, widen) gives a positive amount, for grad's first row,
        in increasing order (no n-wide point built)."""
        order, amount = self._greedy(grad[:1], widen)
        return np.sort(self.ops.numpy(order[0][amount[0] > 0]))

    def linear_max(self, grad):
        """max_{v∈P} gradᵀv per row, without building v (the Frank–Wolfe gap's half)."""
        order, amount = self._greedy(grad, 1.0)
        return (self.ops.take(grad, order) * amount).sum(axis=1)

    def picked_and_max(self, grad, widen: float) -> tuple[np.ndarray, float]:
        """picked(grad, widen) and linear_max(grad) for grad's first row from one ranking:
        the widened greedy's order starts with the plain one's (two passes over 20,000
        gains on the benchmark instead of four)."""
        order, gains = self._ranked(grad[:1], widen)
        wide = self._amounts(order, gains, widen)
        picked = np.sort(self.ops.numpy(order[0][wide[0] > 0]))
        if self.single:
            order, gains = order[:, : self._holds(1.0)], gains[:, : self._holds(1.0)]
        best = (self.ops.take(grad[:1], order) * self._amounts(order, gains, 1.0)).sum(axis=1)
        return picked, float(best[0])
