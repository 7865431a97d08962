"""The arrays AAPGA computes with: numpy on the CPU, torch on a GPU.

The ascent and the polytope are written once against `ops.xp`, in the names numpy and torch
share (`where`, `minimum`, `cumsum(..., axis=1)`, `concatenate`, `sum(axis=..., keepdims=...)`,
indexing); this module holds the few operations whose names differ. On the CPU the steps are
a few hundred items wide, so what a step costs is the number of calls: a torch call costs
1.1–3.5 µs there and numpy's 0.5–1 µs, and torch's CPU sort of 20,000 values took 1.2 ms
against numpy's 0.19 ms (one thread). numpy made each projection, value-and-gradient and
linear maximization about twice as fast on the 20,000 × 500 benchmark's working set.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch


class NumpyOps:
    """numpy arrays and scipy's sparse products, on the CPU."""

    xp = np
    cuda = False

    def asarray(self, a) -> np.ndarray:
        return np.asarray(a, dtype=np.float64)

    def ints(self, a) -> np.ndarray:
        return np.asarray(a, dtype=np.int64)

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape)

    def numpy(self, a: np.ndarray) -> np.ndarray:
        return a

    def positive(self, a: np.ndarray) -> np.ndarray:
        """max(a, 0) (np.clip costs twice np.maximum's time on a few hundred values)."""
        return np.maximum(a, 0.0)

    def take(self, a: np.ndarray, index: np.ndarray) -> np.ndarray:
        """a[b, index[b, j]] for each row b. The ascent's batches are one point, where plain
        indexing does it in a third of take_along_axis's time (3 against 13 µs)."""
        if a.shape[0] == 1:
            return a[0][index]
        return np.take_along_axis(a, index, axis=1)

    def put(self, a: np.ndarray, index: np.ndarray, values: np.ndarray) -> np.ndarray:
        if a.shape[0] == 1 and index.shape[0] == 1:
            a[0][index[0]] = values[0]
        else:
            np.put_along_axis(a, index, values, axis=1)
        return a

    def argsort(self, a: np.ndarray, descending: bool = False, stable: bool = True
                ) -> np.ndarray:
        """Along each row; `stable`: equal values keep their order."""
        return np.argsort(-a if descending else a, axis=1, kind="stable" if stable else None)

    def top(self, a: np.ndarray, m: int) -> np.ndarray:
        """The indices of each row's m largest values, largest first."""
        if m < a.shape[1]:  # the m largest without negating every value
            part = np.argpartition(a, a.shape[1] - m, axis=1)[:, a.shape[1] - m :]
            return self.take(part, np.argsort(-self.take(a, part), axis=1, kind="stable"))
        return np.argsort(-a, axis=1, kind="stable")

    def group_sum(self, values: np.ndarray, gid: np.ndarray, groups: int) -> np.ndarray:
        """(B, groups): each row's sum of `values` over the items of each group id."""
        B = values.shape[0]
        key = (np.arange(B)[:, None] * groups + gid).ravel()
        return np.bincount(key, weights=values.ravel(), minlength=B * groups).reshape(B, groups)

    def group_reduce(self, values: np.ndarray, gid: np.ndarray, groups: int, how: str,
                     empty: float) -> np.ndarray:
        """(B, groups): each row's max (`how` "max") or min over each group, `empty` where a
        group has no item."""
        out = np.full((values.shape[0], groups), empty)
        ufunc = np.maximum if how == "max" else np.minimum
        rows = np.broadcast_to(np.arange(values.shape[0])[:, None], values.shape)
        ufunc.at(out, (rows, np.broadcast_to(gid, values.shape)), values)
        return out

    def matrix(self, M: sp.sparray):
        """Y = X Mᵀ for a batch X (B, n), in the format M comes in (CSR or CSC: scipy
        multiplies either, and a conversion costs a pass over the nonzeros)."""
        M = M.astype(np.float64, copy=False)

        def product(X: np.ndarray) -> np.ndarray:
            if X.shape[0] == 1:  # a matrix-vector product: no copies of X or of the result
                return (M @ X[0])[None]
            return np.ascontiguousarray((M @ X.T).T)
        return product


class TorchOps:
    """torch tensors on one device (CUDA; the CPU too, for the tests of this path)."""

    xp = torch

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"

    def asarray(self, a) -> torch.Tensor:
        return torch.as_tensor(a, dtype=torch.float64, device=self.device)

    def ints(self, a) -> torch.Tensor:
        return torch.as_tensor(a, dtype=torch.int64, device=self.device)

    def zeros(self, shape: tuple[int, ...]) -> torch.Tensor:
        return torch.zeros(shape, dtype=torch.float64, device=self.device)

    def numpy(self, a: torch.Tensor) -> np.ndarray:
        return a.cpu().numpy()

    def positive(self, a: torch.Tensor) -> torch.Tensor:
        return torch.clamp(a, min=0.0)

    def take(self, a: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(a, 1, index)

    def put(self, a: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        return a.scatter_(1, index, values)

    def argsort(self, a: torch.Tensor, descending: bool = False, stable: bool = True
                ) -> torch.Tensor:
        return torch.sort(a, dim=1, descending=descending, stable=stable).indices

    def top(self, a: torch.Tensor, m: int) -> torch.Tensor:
        return torch.topk(a, m, dim=1).indices

    def group_sum(self, values: torch.Tensor, gid: torch.Tensor, groups: int) -> torch.Tensor:
        out = values.new_zeros((values.shape[0], groups))
        return out.scatter_add_(1, gid.expand_as(values), values)

    def group_reduce(self, values: torch.Tensor, gid: torch.Tensor, groups: int, how: str,
                     empty: float) -> torch.Tensor:
        out = values.new_full((values.shape[0], groups), empty)
        return out.scatter_reduce(1, gid.expand_as(values), values, "a" + how)

    def matrix(self, M: sp.sparray):
        """Y = X Mᵀ through torch's CSR product on the device."""
        M = sp.csr_array(M, dtype=np.float64)
        T = torch.sparse_csr_tensor(
            torch.as_tensor(M.indptr, dtype=torch.int64),
            torch.as_tensor(M.indices, dtype=torch.int64),
            torch.as_tensor(M.data), M.shape, device=self.device, check_invariants=True)
        return lambda X: (T @ X.T).T


ArrayOps = NumpyOps | TorchOps
Array = np.ndarray | torch.Tensor


def array_ops(device: str | ArrayOps) -> ArrayOps:
    """numpy for "cpu", torch for any other device; an ArrayOps passes through (the tests
    run the torch path on the CPU that way)."""
    if isinstance(device, NumpyOps | TorchOps):
        return device
    return NumpyOps() if torch.device(device).type == "cpu" else TorchOps(torch.device(device))
