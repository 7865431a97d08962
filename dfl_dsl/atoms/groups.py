"""Row groups starts[g]:starts[g+1] of a reducing `AtomNode`, reduced along the last axis of a
torch tensor whatever its leading axes (a batch of decisions, scenarios): sums by one
`index_add`, maxima and minima through one padded gather, so no loop runs over the groups."""

from __future__ import annotations

import math

import numpy as np
import torch


class Groups:
    def __init__(self, starts: np.ndarray) -> None:
        starts = np.asarray(starts, dtype=np.int64)
        lengths = np.diff(starts)
        self.count = len(lengths)
        self.owner = torch.as_tensor(np.repeat(np.arange(self.count), lengths))
        self.width = int(lengths.max()) if self.count else 0
        offset = np.arange(self.width)[None, :]
        # entries past a group's end point at a filler column appended after the rows
        index = np.where(offset < lengths[:, None], starts[:-1, None] + offset, starts[-1])
        self.gather = torch.as_tensor(index.ravel())

    def sum(self, v: torch.Tensor) -> torch.Tensor:
        return v.new_zeros((*v.shape[:-1], self.count)).index_add(
            -1, self.owner.to(v.device), v)

    def max(self, v: torch.Tensor) -> torch.Tensor:
        return self._padded(v, -math.inf).amax(-1)

    def min(self, v: torch.Tensor) -> torch.Tensor:
        return self._padded(v, math.inf).amin(-1)

    def _padded(self, v: torch.Tensor, fill: float) -> torch.Tensor:
        lead = v.shape[:-1]
        filler = v.new_full((*lead, 1), fill)
        blocks = torch.cat([v, filler], -1)[..., self.gather.to(v.device)]
        return blocks.reshape(*lead, self.count, self.width)
