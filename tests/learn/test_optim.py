"""Cautious weight decay: decoupled decay only where the update and the parameter agree in sign
(x ← x - η(u + λ·1[u ⊙ x >= 0] ⊙ x)), and the optimizer factory."""

from __future__ import annotations

import pytest
import torch

from dfl_dsl.learn.optim import CautiousWeightDecay, make_optimizer


def _param(values, grad):
    p = torch.nn.Parameter(torch.tensor(values, dtype=torch.float64))
    p.grad = torch.tensor(grad, dtype=torch.float64)
    return p


def test_decay_only_where_update_and_parameter_agree_in_sign():
    # SGD: the update u is the gradient itself
    x = [1.0, -1.0, 2.0, -2.0, 0.5, -0.5]
    u = [0.5, 0.5, -0.5, -0.5, 3.0, -3.0]
    agree = [True, False, False, True, True, True]  # sign(u) == sign(x)
    lr, wd = 0.1, 0.5
    p = _param(x, u)
    opt = CautiousWeightDecay(torch.optim.SGD([p], lr=lr), weight_decay=wd)
    opt.step()
    expected = [xi - lr * ui - (lr * wd * xi if a else 0.0)
                for xi, ui, a in zip(x, u, agree, strict=True)]
    torch.testing.assert_close(p.detach(), torch.tensor(expected, dtype=torch.float64))


def test_a_zero_update_counts_as_agreeing():
    # the indicator is u ⊙ x >= 0: where the optimizer doesn't move, plain decay applies
    p = _param([2.0, -4.0], [0.0, 0.0])
    CautiousWeightDecay(torch.optim.SGD([p], lr=0.5), weight_decay=0.1).step()
    torch.testing.assert_close(p.detach(), torch.tensor([1.9, -3.8], dtype=torch.float64))


def test_cautious_adam_from_the_factory():
    x = torch.tensor([1.0, -1.0, 2.0, -2.0], dtype=torch.float64)
    g = torch.tensor([0.3, 0.3, -0.3, -0.3], dtype=torch.float64)
    lr, wd = 0.01, 0.2
    p = _param(x.tolist(), g.tolist())
    opt = make_optimizer([p], "adamw", lr=lr, weight_decay=wd, cautious=True)
    assert isinstance(opt, CautiousWeightDecay)
    opt.step()
    # Adam's first step is u = g / (|g| + eps) ≈ sign(g); decay where sign(g) == sign(x)
    plain = _param(x.tolist(), g.tolist())
    torch.optim.Adam([plain], lr=lr).step()
    mask = torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=torch.float64)
    torch.testing.assert_close(p.detach(), plain.detach() - lr * wd * mask * x)
    opt.zero_grad()
    assert p.grad is None
    assert opt.param_groups[0]["lr"] == lr and "state" in opt.state_dict()


def test_factory_names():
    p = [torch.nn.Parameter(torch.zeros(2))]
    adam = make_optimizer(p, "Adam", lr=0.1, weight_decay=0.01)
    assert type(adam) is torch.optim.Adam and adam.param_groups[0]["weight_decay"] == 0.01
    assert type(make_optimizer(p, "adamw", weight_decay=0.1)) is torch.optim.AdamW
    with pytest.raises(ValueError, match="unknown optimizer `rmsprop`"):
        make_optimizer(p, "rmsprop")


def test_sgd_with_momentum():
    p = [torch.nn.Parameter(torch.ones(2))]
    opt = make_optimizer(p, "sgd", lr=0.1)
    assert isinstance(opt, torch.optim.SGD) and opt.defaults["momentum"] == 0.9


def test_cautious_decay_wraps_the_named_optimizer():
    """`--optimizer sgd --cautious-wd` used to train with Adam: the factory ignored the name."""
    p = _param([1.0, -1.0], [0.5, 0.5])
    opt = make_optimizer([p], "sgd", lr=0.1, weight_decay=0.5, cautious=True)
    assert isinstance(opt, CautiousWeightDecay) and isinstance(opt.optimizer, torch.optim.SGD)
    assert opt.optimizer.defaults["momentum"] == 0.9
    assert opt.optimizer.defaults["weight_decay"] == 0  # decayed by the wrapper only
    opt.step()  # SGD's first step is lr * g; decay where sign(g) == sign(x): the first entry
    torch.testing.assert_close(p.detach(), torch.tensor([1.0 - 0.05 - 0.05, -1.05],
                                                        dtype=torch.float64))
    for name, kind in (("adam", torch.optim.Adam), ("adamw", torch.optim.AdamW)):
        opt = make_optimizer([_param([1.0], [1.0])], name, weight_decay=0.1, cautious=True)
        assert type(opt.optimizer) is kind and opt.optimizer.defaults["weight_decay"] == 0
