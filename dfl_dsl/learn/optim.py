"""Optimizers: Adam, AdamW, SGD, and cautious weight decay around any of them."""

from __future__ import annotations

import torch

OPTIMIZERS = ("adam", "adamw", "sgd")


class CautiousWeightDecay:
    """Decoupled weight decay applied only to coordinates whose sign agrees with the
    optimizer's update direction (Chen et al., "Cautious Weight Decay", ICLR 2026):

        x ← x - η (u + λ·1[u ⊙ x >= 0] ⊙ x),

    where x - ηu is the base optimizer's step. Wraps any optimizer built with
    weight_decay = 0: the update u is read off the step it takes.
    """

    def __init__(self, optimizer: torch.optim.Optimizer, weight_decay: float) -> None:
        self.optimizer = optimizer
        self.weight_decay = weight_decay
        self.param_groups = optimizer.param_groups

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optimizer.zero_grad(set_to_none=set_to_none)

    @torch.no_grad()
    def step(self) -> None:
        before = [[p.detach().clone() for p in g["params"]] for g in self.param_groups]
        self.optimizer.step()
        for group, olds in zip(self.param_groups, before, strict=True):
            lr = group["lr"]
            for p, old in zip(group["params"], olds, strict=True):
                step = p - old  # = -lr * u
                agree = (-step * old) >= 0
                p.sub_(lr * self.weight_decay * agree * old)

    def state_dict(self):
        return self.optimizer.state_dict()


def make_optimizer(params, name: str = "adam", lr: float = 1e-2, weight_decay: float = 0.0,
                   cautious: bool = False):
    name = name.lower()
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer `{name}` (use adam, adamw or sgd)")
    if cautious:  # the named optimizer without decay of its own, wrapped (sgd stays sgd)
        return CautiousWeightDecay(make_optimizer(params, name, lr), weight_decay)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
    return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
