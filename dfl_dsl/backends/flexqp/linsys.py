"""The ADMM's linear-system step, (P + σI + Aᵀdiag(ρ)A)⁻¹ for a batch, by Cholesky (OSQP's
direct method, Stellato et al. 2020, §3.1, dense and batched): factored once per ρ and cached,
on the lower triangle into buffers reused across calls."""

from __future__ import annotations

import torch

from .problem import QPBatch

OUTER_LIMIT = 2**25  # entries of the cached row outer products (m × n(n+1)/2) worth keeping


class LinearSystem:
    """(P + σI + Aᵀdiag(ρ)A)⁻¹ by Cholesky: one factor for the batch when P, A and ρ are shared,
    one per problem otherwise.

    `work` (a dict the caller keeps across factorizations, outside autograd) holds the
    per-problem matrices' buffers: the next factorization overwrites them instead of allocating
    — fresh megabyte-sized tensors cost as much in page faults as the factorization itself."""

    def __init__(self, qp: QPBatch, rho: torch.Tensor, sigma: float,
                 work: dict | None = None) -> None:
        n, B = qp.n, qp.batch
        self.shared = qp.shared and bool((rho == rho[:1]).all())
        if self.shared:
            eye = torch.eye(n, dtype=qp.q.dtype, device=qp.q.device)
            M = qp.P + sigma * eye + qp.A.T @ (rho[0, :, None] * qp.A)
            work = None
        elif qp.A.dim() == 2 and qp.m * n * (n + 1) // 2 <= OUTER_LIMIT:
            # shared A, per-problem ρ: Aᵀdiag(ρ)A = Σᵢ ρᵢ aᵢaᵢᵀ is one (B, m) @ (m, n(n+1)/2)
            # product on the lower triangle, written column-major (LAPACK's layout: Cholesky's
            # copy of it is then a straight one). The lower triangle is all that LAPACK reads on
            # the CPU; it is mirrored on a GPU (whose solver makes no such promise through torch)
            # and under autograd (Cholesky's backward takes the matrix as symmetric)
            outer, lower, upper = _row_outer(qp, work)
            base = _base(qp, sigma, lower, work)
            if base.dim() == 1:
                tri = torch.addmm(base, rho, outer, out=_buffer(work, "tri", (B, len(lower)), rho))
            else:
                tri = base + rho @ outer
            M = _buffer(work, "M", (B, n * n), rho)
            M = tri.new_empty(B, n * n) if M is None else M
            M = M.index_copy_(1, upper, tri)
            if M.is_cuda or torch.is_grad_enabled():
                M = M.index_copy_(1, lower, tri)
            M = M.view(B, n, n).mT
        else:
            eye = torch.eye(n, dtype=qp.q.dtype, device=qp.q.device)
            A = qp.A if qp.A.dim() == 3 else qp.A.expand(B, -1, -1)
            M = qp.P + sigma * eye + A.transpose(1, 2) @ (rho.unsqueeze(-1) * A)
        # LAPACK's batched layout is column-major: a buffer in it is factored in place
        self.L = torch.linalg.cholesky(M, out=_buffer(work, "L", (B, n, n), rho, True))

    @classmethod
    def from_factor(cls, L: torch.Tensor) -> LinearSystem:
        """Per-problem Cholesky factors made earlier (B, n, n)."""
        other = object.__new__(cls)
        other.shared, other.L = False, L
        return other

    def select(self, keep: torch.Tensor) -> LinearSystem:
        """The factors of the problems still running."""
        return self if self.shared else LinearSystem.from_factor(self.L[keep])

    def factor_rows(self, batch: int) -> torch.Tensor:
        """The factors as (batch, n, n), a shared one expanded."""
        return self.L.expand(batch, -1, -1) if self.shared else self.L

    def solve(self, rhs: torch.Tensor) -> torch.Tensor:
        if self.shared:
            return torch.cholesky_solve(rhs.T, self.L).T
        # two triangular solves: cholesky_solve copies every factor on each call on the CPU
        w = torch.linalg.solve_triangular(self.L, rhs.unsqueeze(-1), upper=False)
        return torch.linalg.solve_triangular(self.L.mT, w, upper=True).squeeze(-1)


def _base(qp: QPBatch, sigma: float, lower: torch.Tensor, work: dict | None) -> torch.Tensor:
    """The lower triangle of P + σI, flattened; remembered in `work` for a shared P (every
    refactorization of a solve starts from it)."""
    key = ("base", sigma)
    if work is not None and qp.P.dim() == 2 and key in work and work[key][0] is qp.P:
        return work[key][1]
    eye = torch.eye(qp.n, dtype=qp.q.dtype, device=qp.q.device)
    base = (qp.P + sigma * eye).flatten(-2)[..., lower]
    if work is not None and qp.P.dim() == 2:
        work[key] = (qp.P, base)
    return base


def _row_outer(qp: QPBatch, work: dict | None) -> tuple:
    """qp.row_outer(), remembered in `work` for the next batch with the same A (a layer's
    calls share it; comparing A costs little next to recomputing and faulting in the
    products)."""
    if work is not None and qp._outer is None and "outer" in work:
        A, outer = work["outer"]
        if (A.shape == qp.A.shape and A.dtype == qp.A.dtype and A.device == qp.A.device
                and torch.equal(A, qp.A)):
            qp._outer = outer
    outer = qp.row_outer()
    if work is not None:
        work["outer"] = (qp.A, outer)
    return outer


def _buffer(work: dict | None, key: str, shape: tuple, like: torch.Tensor,
            column_major: bool = False) -> torch.Tensor | None:
    """The first shape[0] rows of the buffer `key` in `work` (allocated at the first call's,
    largest, size); None without `work`."""
    if work is None:
        return None
    buf = work.get(key)
    if (buf is None or buf.shape[0] < shape[0] or buf.shape[1:] != shape[1:]
            or buf.dtype != like.dtype or buf.device != like.device):
        if column_major:
            buf = like.new_empty((shape[0], *shape[:0:-1])).mT
        else:
            buf = like.new_empty(shape)
        work[key] = buf
    return buf[: shape[0]]
