"""How many CPU threads torch uses while training.

A decision-focused training step is a small predictor (a linear map or a small MLP) on a batch
of a few dozen samples, plus solver calls. Torch's default spreads every tensor operation over
all cores; on such small tensors the threads only wait for one another, and on a busy machine
each wait is a descheduled thread: a batch-32 SPO+ epoch on a loaded 2-core machine took 3.46 s
with torch's two threads against 0.48 s with one (same regret). So training runs one thread
unless its steps are large enough for more to pay (`--threads` overrides); the block that
sets them is `devices.torch_threads`.
"""

from __future__ import annotations

SMALL_STEP = 2**22  # multiply-adds of a step's largest layer below which one thread is faster


def training_threads(requested: int | None, batch_size: int, widths: list[int]) -> int | None:
    """`requested` when given; else 1 when a batch through the widest layer (batch × in ×
    out, over consecutive `widths`) is small, else None (torch's own choice)."""
    if requested is not None:
        return requested
    largest = max((a * b for a, b in zip(widths, widths[1:], strict=False)), default=0)
    return 1 if batch_size * largest <= SMALL_STEP else None
