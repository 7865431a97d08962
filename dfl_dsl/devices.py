"""The one check of a `--device` argument, shared by every command that takes one."""

from __future__ import annotations

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
