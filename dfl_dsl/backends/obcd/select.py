"""Working-set selection: which disjoint row pairs OBCD updates in one round.

* `random`: a random perfect matching of the rows (the paper's random strategy);
* `cyclic`: the round-robin (circle-method) schedule, which visits every one of the n(n−1)/2
  pairs once per n − 1 rounds, each round a matching — the ordering of parallel Jacobi methods;
* `greedy`: score sampled pairs and keep a large disjoint set of high scores. Scores follow the
  paper's working-set strategies (arXiv 2304.03641, §5): `or` = the objective reduction the
  pair's subproblem achieves (WSS-OR), `sv` = the pair's stationarity violation
  |(Ĝ Xᵀ − X Ĝᵀ)_pq| with Ĝ = ∇f + λ₁·sign(X) (WSS-SV).
"""

from __future__ import annotations

import torch

STRATEGIES = ("random", "cyclic", "greedy")
SCORES = ("or", "sv")


def random_pairs(n: int, count: int, gen: torch.Generator, device) -> tuple[torch.Tensor, ...]:
    perm = torch.randperm(n, generator=gen).to(device)
    pairs = perm[: 2 * count].view(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def cyclic_pairs(n: int, round_: int, count: int, device) -> tuple[torch.Tensor, ...]:
    """Round `round_` of the circle method (a dummy row n when n is odd), cut to `count`
    pairs; consecutive calls walk through a round's pairs chunk by chunk."""
    m = n + (n % 2)
    per_round = m // 2
    chunks = max(1, -(-per_round // count))
    r, chunk = divmod(round_, chunks)
    r %= m - 1
    others = torch.roll(torch.arange(1, m, device=device), r)
    order = torch.cat([torch.zeros(1, dtype=torch.long, device=device), others])
    p, q = order[:per_round], order.flip(0)[:per_round]
    keep = (p < n) & (q < n)
    p, q = p[keep], q[keep]
    return p[chunk * count:(chunk + 1) * count], q[chunk * count:(chunk + 1) * count]


def sample_pairs(n: int, count: int, gen: torch.Generator, device) -> tuple[torch.Tensor, ...]:
    p = torch.randint(n, (count,), generator=gen)
    q = (p + torch.randint(1, n, (count,), generator=gen)) % n
    return p.to(device), q.to(device)


def sv_scores(X: torch.Tensor, grad: torch.Tensor, l1: float, p, q) -> torch.Tensor:
    g = grad + l1 * torch.sign(X) if l1 else grad
    return ((g[p] * X[q]).sum(-1) - (X[p] * g[q]).sum(-1)).abs()


def disjoint(p: torch.Tensor, q: torch.Tensor, score: torch.Tensor, n: int,
             count: int, rounds: int = 8) -> torch.Tensor:
    """Indices of a disjoint subset of high-score pairs: repeatedly keep every pair that is the
    best remaining pair of both its rows (a locally dominant matching, vectorized), then drop
    the pairs that touch a used row."""
    order = torch.argsort(score, descending=True)
    p, q = p[order], q[order]
    rank = torch.arange(len(p), device=p.device)
    alive = p != q
    used = torch.zeros(n, dtype=torch.bool, device=p.device)
    chosen = []
    for _ in range(rounds):
        if not alive.any():
            break
        first = torch.full((n,), len(p), dtype=torch.long, device=p.device)
        live = rank[alive]
        first.scatter_reduce_(0, p[alive], live, "amin")
        first.scatter_reduce_(0, q[alive], live, "amin")
        take = alive & (first[p] == rank) & (first[q] == rank)
        chosen.append(rank[take])
        used[p[take]] = True
        used[q[take]] = True
        alive = alive & ~used[p] & ~used[q]
    picked = torch.sort(torch.cat(chosen)).values if chosen else rank[:0]
    return order[picked[:count]]
