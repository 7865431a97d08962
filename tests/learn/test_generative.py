"""The generative models: the flow's NLL is the exact change of variables, samples have the
right shapes, and gradients reach the weights through samples and NLL alike."""

from __future__ import annotations

import math

import pytest
import torch

from dfl_dsl.learn.generative import (
    ConditionalFlow,
    ConditionalVAE,
    PointForecast,
    make_generative,
)


def _random_flow(dim: int, couplings: int = 3) -> ConditionalFlow:
    torch.manual_seed(0)
    flow = ConditionalFlow(dim, 2, couplings=couplings, hidden=8).double()
    with torch.no_grad():
        for p in flow.parameters():  # leave the identity start: every coupling acts
            p.add_(0.3 * torch.randn_like(p))
        flow.scaler.loc.copy_(torch.randn(dim))
        flow.scaler.scale.copy_(torch.rand(dim) + 0.5)
    return flow


def _forward(flow: ConditionalFlow, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The sampling map g(z; x) of one row, through the couplings' forward direction."""
    z = z[None]
    for coupling in flow.couplings:
        z = coupling(z, x[None])
    return (z * flow.scaler.scale + flow.scaler.loc)[0]


@pytest.mark.parametrize("dim", [1, 2, 5])
def test_flow_log_prob_is_the_change_of_variables(dim):
    flow = _random_flow(dim)
    x = torch.randn(2, dtype=torch.float64)
    z = torch.randn(dim, dtype=torch.float64)
    y = _forward(flow, z, x)
    jac = torch.autograd.functional.jacobian(lambda v: _forward(flow, v, x), z)
    want = (-0.5 * (z**2).sum() - 0.5 * dim * math.log(2 * math.pi)
            - torch.linalg.slogdet(jac).logabsdet)
    got = flow.log_prob(y[None], x[None])[0]
    assert got.item() == pytest.approx(want.item(), abs=1e-9)


def test_flow_density_integrates_to_one_in_one_dimension():
    flow = _random_flow(1)
    x = torch.zeros(1, 2, dtype=torch.float64)
    grid = torch.linspace(-30, 30, 20001, dtype=torch.float64)[:, None]
    density = flow.log_prob(grid, x.expand(len(grid), 2)).exp()
    assert torch.trapezoid(density, grid[:, 0]).item() == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("kind", ["flow", "vae", "point"])
def test_sample_shapes_and_gradients(kind):
    torch.manual_seed(1)
    model = make_generative(kind, 3, 4, hidden=16)
    x = torch.randn(5, 4)
    y = torch.randn(5, 3)
    model.fit_scaling(y)
    xi = model.sample(x, 7, generator=torch.Generator().manual_seed(0))
    assert xi.shape == (5, 7, 3) and torch.isfinite(xi).all()
    (xi.sum() + model.nll(y, x)).backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)


def test_sampling_is_reproducible_with_a_generator():
    flow = _random_flow(3).float()
    x = torch.randn(2, 2)
    a = flow.sample(x, 4, generator=torch.Generator().manual_seed(3))
    b = flow.sample(x, 4, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_vae_nll_bounds_are_finite_and_point_nll_is_the_squared_error():
    torch.manual_seed(2)
    y, x = torch.randn(6, 2), torch.randn(6, 3)
    assert torch.isfinite(ConditionalVAE(2, 3, hidden=8).nll(y, x))
    point = PointForecast(2, 3)
    want = ((y - point.point(x)) ** 2).mean()
    assert point.nll(y, x).item() == pytest.approx(want.item(), rel=1e-6)


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown generative model"):
        make_generative("gan", 2, 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("kind", ["flow", "vae"])
def test_batched_sampling_on_the_gpu(kind):
    model = make_generative(kind, 6, 3, hidden=32).cuda()
    x = torch.randn(64, 3, device="cuda")
    xi = model.sample(x, 200, generator=torch.Generator(device="cuda").manual_seed(0))
    assert xi.shape == (64, 200, 6) and xi.device.type == "cuda"
    xi.mean().backward()
