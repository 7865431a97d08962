"""Learning-to-rank losses over a solution pool (Mandi, Bucarey, Tchomba & Guns, "Decision-
focused learning: through the lens of learning to rank", ICML 2022).

Each scores the pool S of feasible solutions seen so far (the training set's true solutions,
grown by solving a `solve_ratio` share of the steps' predictions, as NCE does) by their
objectives under the prediction, ĉᵀw, and trains that ranking to agree with the one under the
true costs, cᵀw (the oracle's minimized space: a lower objective ranks first):

    listwise   ℓ = -Σ_{w ∈ S} softmax(-cᵀS)_w · log softmax(-ĉᵀS)_w
    pairwise   ℓ = Σ_{w ∈ S} max(0, ĉᵀw_best - ĉᵀw) / (|S| - 1),  w_best = argmin_{w ∈ S} cᵀw
    pointwise  ℓ = mean_{w ∈ S} ((c - ĉ)ᵀw)²

No solver runs in the backward pass; a step that doesn't grow the pool solves nothing.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .losses import LOSSES, NCE


class _PoolRanking(NCE):
    """A ranking loss over NCE's solution pool (the same pool and `solve_ratio`)."""

    def scores(self, theta_hat, theta, keys):
        """(ĉᵀS, cᵀS), each (B, |S|): the pool's objectives under the prediction and the
        truth, after growing the pool with this step's solutions (with `solve_ratio`'s odds)."""
        c_hat = self.oracle.costs(theta_hat)
        if self.rng.random() < self.solve_ratio or not self.oracle.pool:
            self.oracle.decisions(c_hat, keys=keys, slot="ltr")
        pool = torch.as_tensor(self.oracle.pool_array(), dtype=c_hat.dtype, device=c_hat.device)
        c = self.oracle.costs(theta.to(c_hat)).detach()
        return c_hat @ pool.T, c @ pool.T


class ListwiseLTR(_PoolRanking):
    """Listwise: the cross-entropy between the pool's softmax rankings under c and under ĉ
    (the true ranking's probabilities floored at 1e-8, as PyEPO does)."""

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        predicted, true = self.scores(theta_hat, theta, keys)
        target = F.softmax(-true, dim=1).clamp(min=1e-8)
        return self._reduce(-(target * F.log_softmax(-predicted, dim=1)).sum(1))


class PairwiseLTR(_PoolRanking):
    """Pairwise: a hinge keeping the pool's truly best solution ahead of each other one under
    ĉ (margin 0), averaged over the |S| - 1 pairs."""

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        predicted, true = self.scores(theta_hat, theta, keys)
        best = predicted.gather(1, true.argmin(1, keepdim=True))
        pairs = max(predicted.shape[1] - 1, 1)
        return self._reduce(torch.relu(best - predicted).sum(1) / pairs)


class PointwiseLTR(_PoolRanking):
    """Pointwise: each pool solution's objective under ĉ regressed on its objective under c."""

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        predicted, true = self.scores(theta_hat, theta, keys)
        return self._reduce(((true - predicted) ** 2).mean(1))


LOSSES["listwise"] = ListwiseLTR
LOSSES["pairwise"] = PairwiseLTR
LOSSES["pointwise"] = PointwiseLTR
