"""Training Deep FlexQP's policy by unrolling (arXiv 2512.01565, §4.2): run the ADMM for a fixed
number of iterations with the policy in the loop, measure the normalized distance to the solution
‖x_k − x*‖ / ‖x*‖ at every iteration (on a log scale, so late digits count as much as early
ones), and backpropagate through the iterations — the linear-system steps included — into the
policy's weights. Problems are small draws from the OSQP benchmark classes; the policy is
applied per constraint, so it then runs on problems of any size.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from ...generators.qp_classes import CLASSES
from .admm import initial_params, solve, step
from .iterates import Settings, State
from .linsys import LinearSystem
from .policy import DeepPolicy
from .problem import QPBatch


def unroll_loss(qp: QPBatch, policy: DeepPolicy, x_star: torch.Tensor, keep: torch.Tensor,
                iters: int, settings: Settings) -> torch.Tensor:
    """Mean over iterations and kept problems of log10 ‖x_k − x*‖/‖x*‖ (the policy in the loop)."""
    scaled, _ = qp.row_scaled()
    params = initial_params(scaled, settings)
    lin = LinearSystem(scaled, params.rho, settings.sigma)
    zeros = torch.zeros_like
    state = State(zeros(qp.q), zeros(qp.lo), zeros(qp.lo))
    norm = x_star.norm(dim=-1).clamp(min=1e-6)
    total = qp.q.new_zeros(())
    for k in range(1, iters + 1):
        state = step(scaled, state, params, lin, settings.sigma)
        if k % policy.every == 0:
            params = policy.update(scaled, state, params, settings)
            lin = LinearSystem(scaled, params.rho, settings.sigma)
        dist = (state.x - x_star).norm(dim=-1) / norm
        total = total + torch.log10(dist + 1e-9)[keep].mean()
    return total / iters


def train_solver(*, classes: Sequence[str] = tuple(CLASSES), size: int = 6, batch: int = 16,
                 steps: int = 140, unroll: int = 60, lr: float = 3e-3, hidden: int = 16,
                 every: int = 10, seed: int = 0, save: Path | str | None = None,
                 progress: Callable[[int, float], None] | None = None,
                 ) -> tuple[DeepPolicy, list[float]]:
    """Train a DeepPolicy on `steps` batches (one class after another, each `batch` problems of
    the class's `size`); return it and the loss history (and save it to `save`)."""
    from ...errors import DflError

    unknown = [c for c in classes if c not in CLASSES]
    if unknown:
        raise DflError(f"unknown QP class `{unknown[0]}`", hint="choose from: " +
                       ", ".join(CLASSES))
    if unroll <= every:
        raise DflError(f"unroll ({unroll}) must exceed the policy's update interval ({every})")
    torch.manual_seed(seed)
    policy = DeepPolicy(hidden, every).double()
    prior = DeepPolicy(hidden, every).double().requires_grad_(False)  # the untrained rule
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    settings = Settings()
    reference = Settings(eps_abs=1e-9, eps_rel=1e-9, max_iter=20_000)
    history: list[float] = []
    start = time.perf_counter()
    for k in range(steps):
        name = classes[k % len(classes)]
        data = CLASSES[name](size, batch=batch, seed=seed * 1_000_003 + k)
        qp = QPBatch.from_numpy(*data.arrays())
        solved = solve(qp, prior, reference)
        keep = torch.tensor([s == "optimal" for s in solved.status])
        if not keep.any():
            continue
        loss = unroll_loss(qp, policy, solved.x, keep, unroll, settings)
        if not torch.isfinite(loss):
            continue
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        history.append(float(loss.detach()))
        if progress is not None:
            progress(k, history[-1])
    policy.eval().requires_grad_(False)
    if save is not None:
        policy.save(Path(save), classes=list(classes), size=size, batch=batch, steps=steps,
                    unroll=unroll, lr=lr, seed=seed, seconds=round(time.perf_counter() - start, 1),
                    final_loss=history[-1] if history else None)
    return policy, history
