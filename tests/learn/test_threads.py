"""Training's thread count: one for small steps, the user's when given, restored after."""

from __future__ import annotations

import torch

from dfl_dsl.devices import torch_threads
from dfl_dsl.learn.threads import SMALL_STEP, training_threads


def test_small_steps_take_one_thread_and_large_ones_torchs_choice():
    assert training_threads(None, 32, [5, 40]) == 1
    assert training_threads(None, 32, [5, 64, 40]) == 1
    assert training_threads(None, 1024, [4096, 4096]) is None
    assert 1024 * 4096 * 4096 > SMALL_STEP


def test_the_users_count_wins():
    assert training_threads(3, 32, [5, 40]) == 3
    assert training_threads(1, 1024, [4096, 4096]) == 1


def test_the_setting_is_restored_after_the_block():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
