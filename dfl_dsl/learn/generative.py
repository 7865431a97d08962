"""Conditional generative models p(ξ | features) for `uncertain` params (Gen-DFL).

Gen-DFL (Wang, Chen, Liang, Fioretto & Zhu, "Gen-DFL: Decision-Focused Generative Learning for
Robust Decision Making", ICLR 2026, arXiv 2502.05468) replaces a point forecast by a conditional
generative model and decides against scenarios drawn from it. Two models share one interface:

* `ConditionalFlow`: a conditional RealNVP (Dinh, Sohl-Dickstein & Bengio, "Density estimation
  using Real NVP", ICLR 2017) — affine couplings whose scale and shift networks also read the
  features; the paper's default of 4 couplings with hidden size 128. Its NLL is exact:
  log p(ξ|x) = log N(z; 0, I) + log |det ∂z/∂ξ|.
* `ConditionalVAE`: a conditional VAE (Sohn, Lee & Yan, "Learning structured output
  representation using deep conditional generative models", NeurIPS 2015); its `nll` is the
  negative ELBO, an upper bound of the NLL.

Both sample with the reparameterization trick, so a decision loss on the samples
back-propagates into the model's weights, batched on whatever device the model lives on.
"""

from __future__ import annotations

import math

import torch
from torch import nn

GENERATIVE = ("flow", "vae", "point")
_LOG_2PI = math.log(2 * math.pi)


class _Scaler(nn.Module):
    """Fixed affine standardization of ξ (fitted once from training data), part of the density:
    it keeps couplings well conditioned whatever the units of the params (prices, returns)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("loc", torch.zeros(dim))
        self.register_buffer("scale", torch.ones(dim))

    def fit(self, y: torch.Tensor) -> None:
        y = y.reshape(-1, y.shape[-1]).to(self.loc)
        self.loc.copy_(y.mean(0))
        self.scale.copy_(y.std(0).clamp_min(1e-6) if len(y) > 1 else torch.ones_like(self.loc))


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                        nn.Linear(hidden, n_out))
    nn.init.zeros_(net[-1].weight)  # every coupling starts as the identity
    nn.init.zeros_(net[-1].bias)
    return net


class _Coupling(nn.Module):
    """y_B = z_B ⊙ exp(s(z_A, x)) + t(z_A, x), y_A = z_A, for the split A/B given by `mask`."""

    def __init__(self, mask: torch.Tensor, n_features: int, hidden: int) -> None:
        super().__init__()
        dim = len(mask)
        self.register_buffer("mask", mask.float())
        self.net = _mlp(dim + n_features, hidden, 2 * dim)

    def _st(self, kept: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.net(torch.cat([kept, x], -1)).chunk(2, -1)
        free = 1 - self.mask
        return torch.tanh(s) * free, t * free  # tanh: bounded scales, stable training

    def forward(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        s, t = self._st(z * self.mask, x)
        return z * torch.exp(s) + t

    def inverse(self, y: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z and log |det ∂z/∂y| = -Σ s."""
        s, t = self._st(y * self.mask, x)
        return (y - t) * torch.exp(-s), -s.sum(-1)


class ConditionalFlow(nn.Module):
    """Conditional normalizing flow ξ = g(z; x), z ~ N(0, I), from `couplings` affine couplings
    with alternating masks (even/odd coordinates). With one coordinate the couplings read only
    the features: a heteroscedastic Gaussian per coupling stack."""

    def __init__(self, dim: int, n_features: int, couplings: int = 4, hidden: int = 128) -> None:
        super().__init__()
        if dim < 1 or couplings < 1:
            raise ValueError("a flow needs dim >= 1 and at least one coupling")
        self.dim, self.n_features = dim, n_features
        self.scaler = _Scaler(dim)
        even = (torch.arange(dim) % 2 == 0).float() if dim > 1 else torch.zeros(1)
        self.couplings = nn.ModuleList(
            _Coupling(even if k % 2 == 0 else (1 - even if dim > 1 else even), n_features, hidden)
            for k in range(couplings)
        )

    def fit_scaling(self, y: torch.Tensor) -> None:
        self.scaler.fit(y)

    def log_prob(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Exact log p(y | x) per row: change of variables through every coupling."""
        z = (y - self.scaler.loc) / self.scaler.scale
        log_det = -torch.log(self.scaler.scale).sum().expand(len(y))
        for coupling in reversed(self.couplings):
            z, ld = coupling.inverse(z, x)
            log_det = log_det + ld
        return -0.5 * (z**2).sum(-1) - 0.5 * self.dim * _LOG_2PI + log_det

    def nll(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return -self.log_prob(y, x).mean()

    def sample(self, x: torch.Tensor, n: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        """(B, n, dim) draws for the B feature rows, differentiable in the weights."""
        b = len(x)
        z = torch.randn((b * n, self.dim), generator=generator, device=x.device, dtype=x.dtype)
        xx = x.repeat_interleave(n, 0)
        for coupling in self.couplings:
            z = coupling(z, xx)
        y = z * self.scaler.scale + self.scaler.loc
        return y.reshape(b, n, self.dim)


class ConditionalVAE(nn.Module):
    """Conditional VAE: q(h | ξ, x) = N(μ, σ²), p(ξ | h, x) = N(m(h, x), diag v(h, x))."""

    def __init__(self, dim: int, n_features: int, latent: int = 8, hidden: int = 128) -> None:
        super().__init__()
        self.dim, self.n_features, self.latent = dim, n_features, latent
        self.scaler = _Scaler(dim)
        self.encoder = _mlp(dim + n_features, hidden, 2 * latent)
        self.decoder = _mlp(latent + n_features, hidden, 2 * dim)

    def fit_scaling(self, y: torch.Tensor) -> None:
        self.scaler.fit(y)

    def _decode(self, h: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean, log_var = self.decoder(torch.cat([h, x], -1)).chunk(2, -1)
        return mean, log_var.clamp(-8.0, 8.0)

    def nll(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The negative ELBO (an upper bound of -log p(y | x)), mean over rows."""
        u = (y - self.scaler.loc) / self.scaler.scale
        mu, log_var = self.encoder(torch.cat([u, x], -1)).chunk(2, -1)
        log_var = log_var.clamp(-8.0, 8.0)
        h = mu + torch.exp(0.5 * log_var) * torch.randn_like(mu)
        mean, dec_log_var = self._decode(h, x)
        rec = 0.5 * (((u - mean) ** 2) / torch.exp(dec_log_var) + dec_log_var + _LOG_2PI).sum(-1)
        kl = 0.5 * (mu**2 + torch.exp(log_var) - 1 - log_var).sum(-1)
        return (rec + kl).mean() + torch.log(self.scaler.scale).sum()

    def sample(self, x: torch.Tensor, n: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        b = len(x)
        xx = x.repeat_interleave(n, 0)
        h = torch.randn((b * n, self.latent), generator=generator, device=x.device, dtype=x.dtype)
        mean, log_var = self._decode(h, xx)
        noise = torch.randn(mean.shape, generator=generator, device=x.device, dtype=x.dtype)
        u = mean + torch.exp(0.5 * log_var) * noise
        return (u * self.scaler.scale + self.scaler.loc).reshape(b, n, self.dim)


class PointForecast(nn.Module):
    """The degenerate model of a point forecast ξ̂ = m(x) (linear or MLP): `sample` repeats the
    point and `nll` is the mean squared error in standardized units (a unit-variance Gaussian's
    NLL up to a constant) — the two-stage `mse` and SPO+ baselines share the generative API."""

    def __init__(self, dim: int, n_features: int, hidden: int = 64, kind: str = "linear"
                 ) -> None:
        super().__init__()
        self.dim, self.n_features = dim, n_features
        self.scaler = _Scaler(dim)
        self.net = nn.Linear(n_features, dim) if kind == "linear" else nn.Sequential(
            nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, dim))

    def fit_scaling(self, y: torch.Tensor) -> None:
        self.scaler.fit(y)

    def point(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x) * self.scaler.scale + self.scaler.loc

    def nll(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return (((y - self.scaler.loc) / self.scaler.scale - self.net(x)) ** 2).mean()

    def sample(self, x: torch.Tensor, n: int, generator: torch.Generator | None = None
               ) -> torch.Tensor:
        return self.point(x)[:, None, :].expand(len(x), n, self.dim)


def make_generative(kind: str, dim: int, n_features: int, hidden: int = 128,
                    couplings: int = 4) -> nn.Module:
    """`flow` (the paper's default), `vae`, or `point` (a linear point forecast)."""
    if kind == "flow":
        return ConditionalFlow(dim, n_features, couplings, hidden)
    if kind == "vae":
        return ConditionalVAE(dim, n_features, hidden=hidden)
    if kind == "point":
        return PointForecast(dim, n_features, hidden)
    raise ValueError(f"unknown generative model `{kind}` (use flow, vae or point)")
