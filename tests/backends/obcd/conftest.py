"""OBCD's tests run torch single-threaded, as the solver does: its rounds are small batched
kernels, where threads only contend."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
