"""Deep FlexQP's feedback policy (arXiv 2512.01565, §4): a small MLP applied to each constraint
of each problem, so one trained network serves any number of constraints and variables.

Every `every` ADMM iterations it reads, per constraint, normalized residuals and ADMM state (ρᵢ,
the row's primal residual, how close the slack is to a bound, |yᵢ|/μᵢ, equality or not, and the
problem's normalized primal and dual residuals) and returns a new ρᵢ and μᵢ; a pooled head sets
the problem's α. Its output is a residual on OSQP's adaptive-ρ rule (ρ ← ρ·sqrt of the ratio of
normalized primal to dual residuals; Stellato et al. 2020, §5.2): with the last layer at zero the
policy *is* that rule, and unrolled training (see `train.py`) learns per-constraint corrections.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from .admm import Params, Settings, State
from .problem import QPBatch

N_FEATURES = 8
# ρ's range: in float32 a wider spread leaves the factored matrix too ill-conditioned to solve
RHO_RANGE = {torch.float64: (1e-6, 1e6), torch.float32: (1e-3, 1e3)}
DEFAULT_POLICY = Path(__file__).with_name("policy.pt")


def _log(v: torch.Tensor) -> torch.Tensor:
    return torch.log10(v + 1e-12).clamp(-12, 6) / 6


def features(qp: QPBatch, s: State, p: Params) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-constraint features (B, m, F) and the residual-balancing log-step (B, 1)."""
    Ax, Px, ATy = qp.Ax(s.x), qp.Px(s.x), qp.ATy(s.y)
    scale_p = torch.maximum(Ax.abs().amax(-1), s.z.abs().amax(-1)).clamp(min=1e-12)
    scale_d = torch.stack([Px.abs().amax(-1), ATy.abs().amax(-1),
                           qp.q.abs().amax(-1)]).amax(0).clamp(min=1e-12)
    r_row = (Ax - s.z).abs() / scale_p.unsqueeze(-1)
    r_p = r_row.amax(-1)
    r_d = (Px + qp.q + ATy).abs().amax(-1) / scale_d
    balance = (0.5 * torch.log10((r_p + 1e-12) / (r_d + 1e-12))).clamp(-2, 2).unsqueeze(-1)
    gap = torch.minimum(s.z - qp.lo, qp.hi - s.z).clamp(min=0) / (1 + s.z.abs())
    B, m = qp.lo.shape
    feats = torch.stack([
        torch.log10(p.rho) / 6,
        _log(r_row),
        _log(gap),
        (s.y.abs() / p.mu).clamp(max=1),
        (qp.lo == qp.hi).to(qp.q.dtype),
        balance.expand(B, m),
        _log(r_p).unsqueeze(-1).expand(B, m),
        _log(r_d).unsqueeze(-1).expand(B, m),
    ], dim=-1)
    return feats, balance


class DeepPolicy(nn.Module):
    """ρᵢ, μᵢ per constraint and α per problem from per-constraint features."""

    def __init__(self, hidden: int = 16, every: int = 10) -> None:
        super().__init__()
        self.every = every
        self.body = nn.Sequential(nn.Linear(N_FEATURES, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.row_head = nn.Linear(hidden, 2)  # Δlog10 ρ, log10 μ/μ_ref
        self.alpha_head = nn.Linear(hidden, 1)  # on the mean over constraints
        for head in (self.row_head, self.alpha_head):
            nn.init.zeros_(head.weight)
            nn.init.zeros_(head.bias)
        self.meta: dict = {}

    def initial(self, qp: QPBatch, params: Params) -> Params:
        return params

    def update(self, qp: QPBatch, s: State, p: Params, settings: Settings | None = None) -> Params:
        feats, balance = features(qp, s, p)  # the policy holds the batch's dtype and device
        h = self.body(feats)
        row = self.row_head(h)
        # trained on feasible problems only: once a problem shows violated rows (μ pinned),
        # its ρ and α follow the rule alone
        step = (0.5 * balance + torch.where(p.mu_free, row[..., 0], 0.0)).clamp(-1, 1)
        low, high = RHO_RANGE.get(qp.q.dtype, RHO_RANGE[torch.float32])
        rho = (p.rho * 10 ** step).clamp(low, high)
        # μ only grows, to at most 10 μ_ref (a μ moving both ways would change the problem
        # under the iterations), and only while no row has shown itself violated
        mu = torch.where(p.mu_free, torch.maximum(p.mu, p.mu_ref * 10 ** torch.tanh(row[..., 1])),
                         p.mu_ref)
        base = math.log(0.6 / 0.3)  # α = 1.6 with the head at zero
        logit = self.alpha_head(h.mean(1))
        alpha = 1 + 0.9 * torch.sigmoid(torch.where(p.mu_free, logit, 0.0) + base)
        return Params(rho, mu, alpha, p.mu_ref, p.mu_free)

    def save(self, path: Path, **meta) -> None:
        torch.save({"state": self.state_dict(), "hidden": self.body[0].out_features,
                    "every": self.every, "meta": meta}, path)

    @classmethod
    def load(cls, path: Path | str = DEFAULT_POLICY) -> DeepPolicy:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        policy = cls(saved["hidden"], saved["every"])
        policy.load_state_dict(saved["state"])
        policy.meta = saved.get("meta", {})
        return policy.eval().requires_grad_(False)


_cache: dict[str, DeepPolicy] = {}


def default_policy(device="cpu", dtype=torch.float64) -> DeepPolicy:
    """The shipped trained policy (loaded once per device and dtype)."""
    key = f"{device}/{dtype}"
    if key not in _cache:
        _cache[key] = DeepPolicy.load(DEFAULT_POLICY).to(device=device, dtype=dtype)
    return _cache[key]
