"""A batch of QPs in the box form every FlexQP routine works on:

    minimize ½ xᵀPx + qᵀx   subject to   lo <= Ax <= hi      (B problems at once)

P and A are either shared by the batch (2-D, one factorization serves every problem) or given
per problem (3-D). Variable bounds are rows of A (the L1 relaxation penalizes them like any
other constraint, so an infeasible bound is reported as a violated row too).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch


def mv(M: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """M v for each problem: M shared (m, n) or batched (B, m, n); v (B, n) -> (B, m)."""
    return v @ M.T if M.dim() == 2 else torch.bmm(M, v.unsqueeze(-1)).squeeze(-1)


def mtv(M: torch.Tensor, v: torch.Tensor, add: torch.Tensor | None = None, beta: float = 1.0,
        alpha: float = 1.0) -> torch.Tensor:
    """Mᵀ v for each problem, v (B, m) -> (B, n); with `add`, beta·add + alpha·Mᵀv (one fused
    product for a shared M)."""
    if add is not None and M.dim() == 2:
        return torch.addmm(add, v, M, beta=beta, alpha=alpha)
    out = v @ M if M.dim() == 2 else torch.bmm(v.unsqueeze(1), M).squeeze(1)
    return out if add is None else beta * add + alpha * out


@dataclass
class QPBatch:
    P: torch.Tensor  # (n, n) or (B, n, n), symmetric PSD
    q: torch.Tensor  # (B, n)
    A: torch.Tensor  # (m, n) or (B, m, n)
    lo: torch.Tensor  # (B, m), may hold -inf
    hi: torch.Tensor  # (B, m), may hold +inf
    _outer: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def batch(self) -> int:
        return self.q.shape[0]

    @property
    def n(self) -> int:
        return self.q.shape[1]

    @property
    def m(self) -> int:
        return self.lo.shape[1]

    @property
    def shared(self) -> bool:
        """P and A are the same for every problem (one factorization for all)."""
        return self.P.dim() == 2 and self.A.dim() == 2

    def to(self, dtype: torch.dtype | None = None, device=None) -> QPBatch:
        return QPBatch(*(t.to(dtype=dtype, device=device) for t in
                         (self.P, self.q, self.A, self.lo, self.hi)))

    @classmethod
    def from_numpy(cls, P, q, A, lo, hi, *, dtype=torch.float64, device="cpu") -> QPBatch:
        """Arrays -> a batch; a 1-D q (one problem) gets a batch axis, as do lo and hi."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        B = q.shape[0]
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (B, np.shape(lo)[-1]))
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (B, np.shape(hi)[-1]))
        return cls(*(torch.tensor(np.asarray(a, dtype=float), dtype=dtype, device=device)
                     for a in (P, q, A, lo, hi)))

    def select(self, keep: torch.Tensor) -> QPBatch:
        """The problems where `keep` is true (shared matrices and their cache stay)."""
        return QPBatch(self.P if self.P.dim() == 2 else self.P[keep], self.q[keep],
                       self.A if self.A.dim() == 2 else self.A[keep], self.lo[keep],
                       self.hi[keep], self._outer)

    def row_outer(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The lower triangles of the outer products aᵢaᵢᵀ of a shared A's rows, (m, n(n+1)/2),
        and where that triangle and its mirror sit in a flattened n × n matrix; computed once:
        a new per-problem ρ then refactors with one matrix product."""
        if self._outer is None:
            i, j = torch.tril_indices(self.n, self.n, device=self.A.device)
            self._outer = (self.A[:, i] * self.A[:, j], i * self.n + j, j * self.n + i)
        return self._outer

    def Px(self, x: torch.Tensor) -> torch.Tensor:
        return mv(self.P, x)

    def Ax(self, x: torch.Tensor) -> torch.Tensor:
        return mv(self.A, x)

    def ATy(self, y: torch.Tensor, add: torch.Tensor | None = None, beta: float = 1.0,
            alpha: float = 1.0) -> torch.Tensor:
        """Aᵀy; with `add`, beta·add + alpha·Aᵀy."""
        return mtv(self.A, y, add, beta, alpha)

    def objective(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * (x * self.Px(x)).sum(-1) + (self.q * x).sum(-1)

    def violation(self, x: torch.Tensor, ax: torch.Tensor | None = None) -> torch.Tensor:
        """Each row's distance from its interval, dist(aᵢᵀx, [lᵢ, uᵢ]): the L1 relaxation's
        penalty per unit of μ (`ax`: Ax when already at hand)."""
        ax = self.Ax(x) if ax is None else ax
        return (ax - self.hi).clamp(min=0) + (self.lo - ax).clamp(min=0)

    def row_scaled(self) -> tuple[QPBatch, torch.Tensor]:
        """Rows scaled to unit ∞-norm (a cheap equilibration: ADMM's ρ then means the same for
        every row) and the scale D (shape of l), so that the scaled A is D A."""
        norms = self.A.abs().amax(-1)
        D = torch.where(norms > 0, 1.0 / norms.clamp(min=1e-30), torch.ones_like(norms))
        A = D.unsqueeze(-1) * self.A
        Db = D if D.dim() == 2 else D.expand(self.batch, -1)
        return QPBatch(self.P, self.q, A, self.lo * Db, self.hi * Db), Db
