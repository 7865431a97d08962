"""Predicted params into a layer: one batch tensor in (`stack_params`), and the decisions
shaped as the params came (`as_given`): [n] for one sample without a batch axis, as torch
layers answer an unbatched input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind

pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

QP = """param q[3] : predicted;
var x[3] in [-1, 1];
minimize f: 0.5 * sum_squares(x) + q @ x;
"""


@pytest.mark.parametrize("method", ["dbb", "cvxpylayers", "flexqp"])
def test_every_layer_answers_one_sample_without_a_batch_axis(method):
    layer = bind(QP).layer(method)
    q = torch.tensor([0.5, -2.0, 0.25], dtype=torch.float64)
    one = layer(q)
    batch = layer(torch.stack([q, -q]))
    assert one.shape == (3,) and batch.shape == (2, 3)
    np.testing.assert_allclose(one.detach(), batch[0].detach(), atol=1e-5)
    np.testing.assert_allclose(one.detach(), [-0.5, 1.0, -0.25], atol=1e-4)
    assert layer(q[None]).shape == (1, 3)  # a batch of one stays a batch
