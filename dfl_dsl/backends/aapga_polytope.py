"""The relaxed polytope of an SCM form, P = {0 <= x <= u, Σ_{i∈G} c_i x_i <= cap_G per group}:
exact Euclidean projection and linear maximization, batched over rows (B, n), in torch so that
the same code runs on the CPU and on CUDA.

One group is a cardinality or knapsack row, one per part of a partition matroid; items in no
group carry the id G (a last group with an infinite cap). The projection finds each group's
multiplier by a safeguarded Newton method (Cominetti, Mascarenhas & Silva, Math. Prog. Comp.
2014), which lands on the exact breakpoint after a few steps; the linear maximization is the
fractional-knapsack greedy.
"""

from __future__ import annotations

import numpy as np
import torch

from ..compile.scm import SCMForm


class Polytope:
    """P for one form on one device. A cardinality or knapsack row is one group, whose sums and
    spreads skip the scatter/gather (torch's CPU scatter and sort cost 0.1–3 ms on 20,000
    items, a plain sum 5 µs)."""

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
        self.unit = bool(np.all(cost == 1.0))  # a cardinality row: no products with the costs
        self.G = G
        self.gid = torch.as_tensor(np.where(groups >= 0, groups, G), device=device)
        self.cost, self.upper = as_t(cost), as_t(form.upper)
        self.cost2, self.zero = self.cost**2, torch.zeros_like(self.upper)
        self.kinks = torch.cat([-self.cost2, self.cost2])  # slope changes of Σ c x(τ)
        self.full = (self.cost * self.upper).sum().reshape(1, 1)  # Σ c u
        self.caps = as_t(caps if self.single else np.append(caps, np.inf))
        self.cap = float(caps[0])  # one group's cap, without reading it back from the device
        self.weight = self.cost * self.upper
        live = cost[form.upper > 0]
        self.cheapest = float(live.min()) if len(live) else np.inf  # bounds what a cap holds
        self._tau: torch.Tensor | None = None  # the last projection's multipliers

    def inside(self) -> torch.Tensor:
        """A start (1, n) in P: u/2, scaled down until every group's cap holds it (for a
        cardinality row, k/n each — the projection of u/2 — without a sort of 2n points)."""
        load = self._load(0.5 * self.upper[None])
        scale = torch.clamp(self.caps / torch.clamp(load, min=1e-300), max=1.0)
        return 0.5 * self.upper[None] * self._spread(scale)

    def _sum(self, values: torch.Tensor) -> torch.Tensor:
        if self.single:
            return values.sum(1, keepdim=True)
        out = values.new_zeros((values.shape[0], self.G + 1))
        return out.scatter_add_(1, self.gid.expand_as(values), values)

    def _spread(self, per_group: torch.Tensor) -> torch.Tensor:
        if self.single:
            return per_group
        return torch.gather(per_group, 1, self.gid.expand(per_group.shape[0], -1))

    def _load(self, x: torch.Tensor) -> torch.Tensor:
        """Σ_{i∈G} c_i x_i per row and group."""
        return self._sum(x if self.unit else x * self.cost)

    def project(self, v: torch.Tensor, iters: int = 100) -> torch.Tensor:
        """argmin_{x∈P} ‖x − v‖: x = clip(v − τ_G c, 0, u) with each group's τ_G >= 0 the root
        of the piecewise-linear Σ c x(τ) = cap: read off the sorted breakpoints for one
        group, found by Newton steps kept inside a bracket for several."""
        box = torch.clamp(v, self.zero, self.upper)
        active = self._load(box) > self.caps * (1 + 1e-12)
        if not bool(active.any()):
            return box
        if self.single:
            return torch.where(active, self._project_single(v), box)
        return self._project_groups(v, active, iters)

    def _project_single(self, v: torch.Tensor) -> torch.Tensor:
        """One group, exactly and without a loop: s(τ) = Σ c_i clip(v_i − τ c_i, 0, u_i) falls
        from Σ c u, its slope dropping by c_i² where item i leaves u ((v_i − u_i)/c_i) and
        rising by c_i² where it reaches 0 (v_i/c_i); s at the sorted breakpoints is a cumulative
        sum, and τ is interpolated on the segment where s crosses the cap (Helgason, Kennington
        & Lall, Math. Prog. 1980; about 25 tensor operations against 4–6 Newton steps of 20)."""
        B = v.shape[0]
        points = torch.cat([(v - self.upper) / self.cost, v / self.cost], 1)
        points, order = torch.sort(points, dim=1)
        slope = torch.cumsum(self.kinks.expand(B, -1).gather(1, order), 1)
        rise = slope[:, :-1] * torch.diff(points, dim=1)
        s = torch.cat([self.full.expand(B, 1), self.full + torch.cumsum(rise, 1)], 1)
        last = torch.clamp((s > self.caps).sum(1, keepdim=True) - 1, min=0)
        s0, t0, k0 = s.gather(1, last), points.gather(1, last), slope.gather(1, last)
        tau = torch.where(k0 < 0, t0 + (self.caps - s0) / torch.where(k0 < 0, k0, -1.0), t0)
        return torch.clamp(v - tau * self.cost, self.zero, self.upper)

    def _project_groups(self, v: torch.Tensor, active: torch.Tensor,
                        iters: int) -> torch.Tensor:
        """Several groups: each group's τ by safeguarded Newton steps, all groups at once,
        warm-started at the last call's multipliers (successive calls are close)."""
        ratio = torch.clamp(v, min=0.0) / self.cost
        lo = torch.zeros_like(active, dtype=v.dtype)
        hi = lo.scatter_reduce(1, self.gid.expand_as(v), ratio, "amax", include_self=True)
        warm = self._tau if self._tau is not None and self._tau.shape == lo.shape else lo
        tau = torch.where(active, torch.minimum(warm, hi), 0.0)
        tol = 1e-10 * torch.clamp(self.caps, min=1.0)
        for _ in range(iters):
            shifted = v - self._spread(tau) * self.cost
            x = torch.clamp(shifted, self.zero, self.upper)
            excess = torch.where(active, self._load(x) - self.caps, 0.0)
            if not bool((excess.abs() > tol).any()):
                break
            slope = self._sum(torch.where((shifted > 0) & (shifted < self.upper),
                                          self.cost2, 0.0))
            lo = torch.where(excess > 0, tau, lo)
            hi = torch.where(excess < 0, tau, hi)
            newton = tau + excess / torch.where(slope > 0, slope, 1.0)
            inside = (slope > 0) & (newton > lo) & (newton < hi)
            tau = torch.where(active, torch.where(inside, newton, 0.5 * (lo + hi)), 0.0)
        self._tau = tau
        return x

    def _greedy(self, grad: torch.Tensor, widen: float) -> tuple[torch.Tensor, torch.Tensor]:
        """The fractional-knapsack greedy over P with every cap × `widen`: in each group, the
        items by falling gain per cost, filled up to the cap (the last one fractionally).
        Returns the items in that order and the amount each gets (B, m). One group needs only
        the items its cap can hold (torch.topk); several, two stable sorts."""
        ratio = torch.where((grad > 0) & (self.upper > 0),
                            grad if self.unit else grad / self.cost, -torch.inf)
        caps = self.caps * widen
        if self.single:
            fits = self.cap * widen / self.cheapest + 1 if self.cheapest > 0 else np.inf
            order = torch.topk(ratio, int(min(self.upper.shape[0], fits)), dim=1).indices
            weight = self.weight[order]
            room = caps - (torch.cumsum(weight, 1) - weight)
        else:
            order = torch.sort(ratio, dim=1, descending=True, stable=True).indices
            order = torch.gather(order, 1,
                                 torch.sort(self.gid[order], dim=1, stable=True).indices)
            gid = self.gid[order]
            weight = self.weight[order]
            before = torch.cumsum(weight, 1) - weight
            start = before.new_full((grad.shape[0], self.G + 1), torch.inf)
            offset = torch.gather(start.scatter_reduce(1, gid, before, "amin"), 1, gid)
            room = caps[gid] - (before - offset)  # each group's sum starts at its first item
        amount = torch.minimum(torch.clamp(room / self.cost[order], min=0.0), self.upper[order])
        return order, torch.where(torch.gather(ratio, 1, order) > -torch.inf, amount, 0.0)

    def argmax(self, grad: torch.Tensor, widen: float = 1.0) -> torch.Tensor:
        """argmax_{v∈P} gradᵀv (with the caps × `widen`), for each row of grad (B, n)."""
        order, amount = self._greedy(grad, widen)
        return torch.zeros_like(grad).scatter_(1, order, amount)

    def linear_max(self, grad: torch.Tensor) -> torch.Tensor:
        """max_{v∈P} gradᵀv per row, without building v (the Frank–Wolfe gap's half)."""
        order, amount = self._greedy(grad, 1.0)
        return (torch.gather(grad, 1, order) * amount).sum(1)
