"""Training data: features and the true values of the model's predicted params (LANGUAGE.md §5),
with the true optimal decisions and objectives the losses need, computed once by the oracle."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError
from .metrics import true_objective
from .oracle import Oracle


@dataclass
class DFLData:
    features: np.ndarray  # (N, p)
    theta: np.ndarray  # (N, k) the predicted params' entries, in declaration order
    w: np.ndarray | None = None  # (N, n) true optimal decisions (canonical, with auxiliaries)
    z: np.ndarray | None = None  # (N,) true optimal objective, the model's sense

    def __len__(self) -> int:
        return len(self.features)

    @classmethod
    def from_arrays(cls, inst, arrays, source: str = "<arrays>") -> DFLData:
        features = _features(arrays, source)
        n = len(features)
        if not inst.predicted:
            raise DataError("the model has no `predicted` param to train", filename=source,
                            hint="mark the numbers a network predicts with `: predicted`")
        parts = []
        for entity in inst.predicted:
            if entity.name not in arrays:
                raise DataError(
                    f"the training file has no array for predicted param `{entity.name}`",
                    filename=source,
                    hint=f"add `{entity.name}` with shape [N, {', '.join(map(str, entity.shape))}]",
                )
            values = np.asarray(arrays[entity.name], dtype=float)
            want = (n, *entity.shape)
            # (N, *shape) or the entries flattened per sample, (N, size)
            if values.shape[:1] != (n,) or int(np.prod(values.shape[1:])) != entity.size:
                raise DataError(
                    f"`{entity.name}` should have shape {list(want)}, got {list(values.shape)}",
                    filename=source,
                )
            parts.append(values.reshape(n, entity.size))
        theta = np.concatenate(parts, axis=1)
        for name, arr in (("features", features), ("predicted params", theta)):
            if not np.all(np.isfinite(arr)):
                raise DataError(f"the training file's {name} hold NaN or inf", filename=source)
        return cls(features, theta)

    @classmethod
    def from_npz(cls, inst, path: str | Path) -> DFLData:
        from ..data import load_data

        source = load_data(path)
        return cls.from_arrays(inst, source.values, str(path))

    def solved(self, oracle: Oracle) -> DFLData:
        """With the true optimal decisions and objectives filled in."""
        if self.w is None:
            import torch

            costs = oracle.costs(torch.as_tensor(self.theta, dtype=torch.float64))
            self.w = oracle.solve(costs.numpy()).w
            self.z = true_objective(oracle, self.theta, self.w)
        return self

    def subset(self, idx: np.ndarray) -> DFLData:
        return DFLData(
            self.features[idx],
            self.theta[idx],
            None if self.w is None else self.w[idx],
            None if self.z is None else self.z[idx],
        )


@dataclass
class ScenarioData:
    """Features and draws of the model's `uncertain` params: (N, S, K) with S >= 1 draws per
    sample from the true p(ξ | x). Training reads the first draw (one observed outcome per
    context); evaluation takes all S as the sample's true scenario set."""

    features: np.ndarray  # (N, p)
    draws: np.ndarray  # (N, S, K) the uncertain params' entries, in declaration order

    def __len__(self) -> int:
        return len(self.features)

    @property
    def observed(self) -> np.ndarray:
        return self.draws[:, 0]

    @classmethod
    def from_arrays(cls, inst, arrays, source: str = "<arrays>") -> ScenarioData:
        features = _features(arrays, source)
        n = len(features)
        parts = []
        for entity in inst.uncertain:
            if entity.name not in arrays:
                raise DataError(
                    f"the training file has no array for uncertain param `{entity.name}`",
                    filename=source,
                    hint=f"add `{entity.name}` with shape [N, {', '.join(map(str, entity.shape))}]"
                         " (one draw per sample) or [N, S, ...] (S draws)",
                )
            values = np.asarray(arrays[entity.name], dtype=float)
            size = int(np.prod(values.shape[1:])) if values.ndim > 1 else 1
            if values.shape[:1] != (n,) or size % entity.size:
                raise DataError(
                    f"`{entity.name}` should have shape [N, {', '.join(map(str, entity.shape))}]"
                    f" or [N, S, ...], got {list(values.shape)}", filename=source)
            parts.append(values.reshape(n, size // entity.size, entity.size))
        if len({p.shape[1] for p in parts}) > 1:
            raise DataError("every uncertain param needs the same number of draws per sample",
                            filename=source)
        draws = np.concatenate(parts, axis=2)
        if not np.all(np.isfinite(draws)) or not np.all(np.isfinite(features)):
            raise DataError("the training file holds NaN or inf", filename=source)
        return cls(features, draws)

    @classmethod
    def from_npz(cls, inst, path: str | Path) -> ScenarioData:
        from ..data import load_data

        return cls.from_arrays(inst, load_data(path).values, str(path))


def _features(arrays, source: str) -> np.ndarray:
    if "features" not in arrays:
        raise DataError("a training file needs a `features` array (N × p)", filename=source)
    features = np.asarray(arrays["features"], dtype=float)
    if features.ndim != 2:
        raise DataError(f"`features` must be N × p, got shape {list(features.shape)}",
                        filename=source)
    return features
