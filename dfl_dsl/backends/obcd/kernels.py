"""Matrix products for the OBCD rounds.

A block round is dozens of batched products of tiny matrices (k × r, r × r with k ~ 64, r ~ 10)
and one n × n by n × r product. On CPU torch sends both to MKL (batched gemm), which measured
2.5–3× slower than numpy's `matmul` (OpenBLAS, one gemm per matrix) on the machine the
benchmarks run on (AMD EPYC, one thread: 32 vs 11 µs for 15 products (10 × 64)·(64 × 10);
2.7 vs 1.1 ms for (10 × 1000)·(1000 × 1000) with C not in cache). So on CPU the products go
through numpy on the tensors' memory (no copies in or out); elsewhere they stay torch's. The
same products, rounded by a different BLAS: iterates agree with torch's to rounding. numpy's
BLAS threads follow its own settings (OPENBLAS_NUM_THREADS; benchmarks/obcd.py sets 1).

How it generalizes: the choice was measured on one CPU and one BLAS pairing (numpy's OpenBLAS
against torch's MKL); the products agree to rounding either way, so elsewhere it changes speed
only — where torch's batched gemm is the faster (an Intel CPU, several threads), returning
`a @ b` here is the whole change. `benchmarks/obcd.py` times a round to check it.
"""

from __future__ import annotations

import numpy as np
import torch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b (torch's broadcasting rules, which numpy's `matmul` shares)."""
    if a.device.type != "cpu" or a.requires_grad or b.requires_grad:
        return a @ b
    return torch.from_numpy(np.matmul(a.numpy(), b.numpy()))
