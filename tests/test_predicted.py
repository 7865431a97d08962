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


def test_a_matrix_param_takes_a_flattened_batch():
    """`nn.Linear(p, 4)` answers [B, 4] for `cost{W, J}` ([2, 2]): the losses and the training
    file take that layout; the layer refused it while taking one flattened sample, [4]."""
    inst = bind("set W; set J; param cost{W, J} : predicted; var x{W, J} >= 0;\n"
                "minimize f: sum{w in W, j in J} cost[w, j] * x[w, j];\n"
                "s.t. a{w in W}: sum{j in J} x[w, j] == 1;\n"
                "s.t. b{j in J}: sum{w in W} x[w, j] == 1;", {"W": [1, 2], "J": [1, 2]})
    layer = inst.layer("dbb")
    costs = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]], dtype=torch.float64)
    flat, shaped = layer(costs), layer(costs.reshape(2, 2, 2))
    assert flat.tolist() == shaped.tolist() == [[0, 1, 1, 0], [1, 0, 0, 1]]
    assert layer(costs[0]).tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match=r"\[B, 2, 2\] \(a batch\), \[B, 4\] \(a batch, "
                                         r"flattened\) or \[2, 2\] \(one sample\), got \[2, 3\]"):
        layer(costs[:, :3])
