"""Predicted params as one batch tensor: what every layer (learn/layers.py, the FlexQP layer)
takes from its caller, positionally or by name."""

from __future__ import annotations

import torch

from .instance import Instance


def stack_params(inst: Instance, args: tuple, kwargs: dict) -> torch.Tensor:
    """One positional tensor (a single predicted param) or keyword tensors by name -> (B, k)."""
    given = _by_name(inst, args, kwargs)
    parts = []
    for entity in inst.predicted:
        value = torch.as_tensor(given[entity.name])
        shape = tuple(entity.shape)
        batched = _batched(entity, value)
        # one sample in the param's shape or flattened: any other arrangement of its entries
        # would be read scrambled, and other sizes failed inside torch's reshape
        if tuple(value.shape[1:] if batched else value.shape) not in (shape, (entity.size,)):
            dims = ", ".join(map(str, shape))
            flat = f", [B, {entity.size}] (a batch, flattened)" if len(shape) > 1 else ""
            raise ValueError(f"predicted param `{entity.name}` takes [B{', ' if dims else ''}"
                             f"{dims}] (a batch){flat} or [{dims}] (one sample), got "
                             f"{list(value.shape)}")
        parts.append(value.reshape(value.shape[0] if batched else 1, entity.size))
    if len({part.shape[0] for part in parts}) > 1:
        sizes = {e.name: part.shape[0] for e, part in zip(inst.predicted, parts, strict=True)}
        raise ValueError(f"the predicted params come in batches of different sizes: {sizes}")
    return torch.cat(parts, dim=1)


def as_given(inst: Instance, args: tuple, kwargs: dict, out: torch.Tensor) -> torch.Tensor:
    """A layer's decisions (B, n) for the params `stack_params` read: [n] when they came as one
    sample without a batch axis, as a torch layer answers an unbatched input."""
    given = _by_name(inst, args, kwargs)
    if any(_batched(e, torch.as_tensor(given[e.name])) for e in inst.predicted):
        return out
    return out[0]


def _batched(entity, value: torch.Tensor) -> bool:
    """Whether `value` has a batch axis before the param's own — or is a batch of samples
    flattened, [B, size], as a `nn.Linear(p, size)` answers and as the losses and the training
    file take a matrix param (a layer refused it, for `cost{W, J}`, while taking one flattened
    sample); [B, size] is never the param's own shape then, so it reads one way only."""
    if value.dim() > len(entity.shape):
        return True
    return (len(entity.shape) > 1 and value.dim() == 2 and value.shape[1] == entity.size
            and tuple(value.shape) != tuple(entity.shape))


def _by_name(inst: Instance, args: tuple, kwargs: dict) -> dict:
    """The predicted params' values by name, given positionally (a single one) or by name."""
    predicted = inst.predicted
    if args and kwargs:
        raise TypeError("pass the predicted params either positionally or by name, not both")
    if args:
        if len(args) != 1 or len(predicted) != 1:
            names = ", ".join(e.name for e in predicted)
            raise TypeError(f"this model has several predicted params ({names}): pass them by name")
        kwargs = {predicted[0].name: args[0]}
    missing = [e.name for e in predicted if e.name not in kwargs]
    unknown = sorted(set(kwargs) - {e.name for e in predicted})
    if missing or unknown:
        raise TypeError(f"missing predicted params {missing}" if missing else
                        f"unknown params {unknown}")
    return kwargs
