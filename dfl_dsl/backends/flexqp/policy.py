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

from ...outputs import write_atomic
from .admm import Params, Residuals, Settings, State
from .problem import QPBatch

N_FEATURES = 8
# ρ's range: in float32 a wider spread leaves the factored matrix too ill-conditioned to solve
RHO_RANGE = {torch.float64: (1e-6, 1e6), torch.float32: (1e-3, 1e3)}
DEFAULT_POLICY = Path(__file__).with_name("policy.pt")
LOG2_10 = math.log2(10)  # 10**t as exp2(t log2 10): a third of pow's cost


def _log(v: torch.Tensor) -> torch.Tensor:
    return torch.log10(v + 1e-12).clamp(-12, 6) / 6


def features(qp: QPBatch, s: State, p: Params, res: Residuals | None = None,
             dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The per-constraint features (B, m, 5), the per-problem ones (B, 3) — the same for every
    constraint of a problem — and the residual-balancing log-step (B, 1), in `dtype` (default
    the batch's). The ratios are formed in the batch's precision; the logarithms, which cost
    most at these sizes, in `dtype`. `res`: the residuals at s when already at hand."""
    res = res if res is not None else Residuals.of(qp, s)
    dtype = dtype or qp.q.dtype
    scale_p = res.scale_prim.clamp(min=1e-12)
    gap = torch.minimum(s.z - qp.lo, qp.hi - s.z).clamp(min=0) / (1 + s.z.abs())
    # log10 ρ / 6 is _log(ρ) to ~1e-6 (ρ >= 1e-6): one log for ρ, the row residual and the gap
    logged = _log(torch.stack([p.rho, res.prim / scale_p.unsqueeze(-1), gap], dim=-1).to(dtype))
    rows = torch.cat([logged, torch.stack([(s.y.abs() / p.mu).clamp(max=1),
                                           (qp.lo == qp.hi).to(p.rho.dtype)], dim=-1)
                      .to(dtype)], dim=-1)
    # the problem's normalized residuals (each at most 3, so _log's clamp never acts on them)
    logs = torch.log10(torch.stack([res.r_prim / scale_p,
                                    res.r_dual / res.scale_dual.clamp(min=1e-12)], dim=-1)
                       .to(dtype) + 1e-12)
    balance = (0.5 * (logs[:, :1] - logs[:, 1:])).clamp(-2, 2)
    return rows, torch.cat([balance, logs / 6], dim=-1), balance


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

    def hidden(self, rows: torch.Tensor, per_problem: torch.Tensor) -> torch.Tensor:
        """The body on the features [rows, per_problem] of every constraint, with the first
        layer split: the per-problem features' part is one product per problem, added to each
        of its constraints (not repeated m times and concatenated)."""
        first, second = self.body[0], self.body[2]
        k = rows.shape[-1]
        bias = torch.addmm(first.bias, per_problem, first.weight[:, k:].T).unsqueeze(1)
        h = torch.relu_(torch.matmul(rows, first.weight[:, :k].T).add_(bias))
        return torch.relu_(second(h))

    def initial(self, qp: QPBatch, params: Params) -> Params:
        return params

    def update(self, qp: QPBatch, s: State, p: Params, settings: Settings | None = None,
               res: Residuals | None = None) -> Params:
        """New ρ, μ, α from the state. The network runs in its own dtype (float32 for the
        shipped policy, whatever the batch's: its outputs only steer the iterations, and
        float32 costs a third of float64 here); ρ and μ are then formed in the batch's."""
        dtype = self.alpha_head.weight.dtype
        rows, per_problem, balance = features(qp, s, p, res, dtype)
        h = self.hidden(rows, per_problem)
        row = self.row_head(h)
        # trained on feasible problems only: once a problem shows violated rows (μ pinned),
        # its ρ and α follow the rule alone
        step = (0.5 * balance + torch.where(p.mu_free, row[..., 0], 0.0)).clamp(-1, 1)
        low, high = RHO_RANGE.get(qp.q.dtype, RHO_RANGE[torch.float32])
        rho = (p.rho * torch.exp2(LOG2_10 * step).to(p.rho.dtype)).clamp(low, high)
        # μ only grows, to at most 10 μ_ref (a μ moving both ways would change the problem
        # under the iterations), and only while no row has shown itself violated
        grown = p.mu_ref * torch.exp2(LOG2_10 * torch.tanh(row[..., 1])).to(p.mu.dtype)
        mu = torch.where(p.mu_free, torch.maximum(p.mu, grown), p.mu_ref)
        base = math.log(0.6 / 0.3)  # α = 1.6 with the head at zero
        logit = self.alpha_head(h.mean(1))
        alpha = 1 + 0.9 * torch.sigmoid(torch.where(p.mu_free, logit, 0.0) + base)
        return Params(rho, mu, alpha.to(p.alpha.dtype), p.mu_ref, p.mu_free)

    def save(self, path: Path, **meta) -> None:
        """Atomically (a full disk left a truncated .pt behind, and an internal error)."""
        state = {"state": self.state_dict(), "hidden": self.body[0].out_features,
                 "every": self.every, "meta": meta}
        write_atomic(Path(path), lambda handle: torch.save(state, handle))

    @classmethod
    def load(cls, path: Path | str = DEFAULT_POLICY) -> DeepPolicy:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        policy = cls(saved["hidden"], saved["every"])
        policy.load_state_dict(saved["state"])
        policy.meta = saved.get("meta", {})
        return policy.eval().requires_grad_(False)


_cache: dict[str, DeepPolicy] = {}


def default_policy(device="cpu") -> DeepPolicy:
    """The shipped trained policy (loaded once per device), in float32 for batches of either
    dtype."""
    key = str(device)
    if key not in _cache:
        _cache[key] = DeepPolicy.load(DEFAULT_POLICY).to(device=device, dtype=torch.float32)
    return _cache[key]
