"""The one check of a `--device` argument, shared by every command that takes one, and the
one way code sets torch's CPU threads for a while."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .errors import DflError


def checked_device(device: str) -> str:
    """`device` if it names a usable torch device (cpu, cuda, cuda:N), else a clear error."""
    if not (device == "cpu" or device == "cuda" or device.startswith("cuda:")):
        raise DflError(f"unknown device `{device}`", hint="use cpu or cuda")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise DflError("--device cuda: no CUDA device is available here", hint="use cpu")
    return device


@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """torch's intra-op threads set to `count` for the block (None: unchanged), then restored."""
    import torch

    before = torch.get_num_threads()
    if count is not None:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
