"""Training data: features and the true values of the model's predicted params (LANGUAGE.md §5),
with the true optimal decisions and objectives the losses need, computed once by the oracle."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError, DataWarning, DflError
from ..param_checks import first_breach
from .metrics import true_objective
from .oracle import Oracle
from .true_samples import true_sample_error


@dataclass
class DFLData:
    features: np.ndarray  # (N, p)
    theta: np.ndarray  # (N, k) the predicted params' entries, in declaration order
    w: np.ndarray | None = None  # (N, n) true optimal decisions (canonical, with auxiliaries)
    z: np.ndarray | None = None  # (N,) true optimal objective, the model's sense
    source: str = "<arrays>"  # the file the samples came from (errors name it)

    def __len__(self) -> int:
        return len(self.features)

    @classmethod
    def from_arrays(cls, inst, arrays, source: str = "<arrays>") -> DFLData:
        if not inst.predicted:
            raise DataError("the model has no `predicted` param to train",
                            filename=inst.model.filename,
                            hint="mark the numbers a network predicts with `: predicted`")
        features = _features(arrays, source)
        n = len(features)
        parts = []
        for entity in inst.predicted:
            if entity.name not in arrays:
                raise _missing(entity, "predicted", _shape("N", entity), arrays, source)
            values = _numbers(arrays[entity.name], entity.name, source)
            # (N, *shape) or the entries flattened per sample, (N, size); any other arrangement
            # of the same number of entries (a transposed matrix) would be read scrambled
            if values.shape[:1] != (n,) or values.shape[1:] not in _layouts(entity):
                raise DataError(
                    f"`{entity.name}` should have shape {_shape(n, entity)}, got "
                    f"{list(values.shape)}", filename=source,
                )
            parts.append(values.reshape(n, entity.size))
        theta = np.concatenate(parts, axis=1)
        if not np.all(np.isfinite(theta)):
            raise DataError("the training file's predicted params hold NaN or inf",
                            filename=source)
        for entity, part in zip(inst.predicted, parts, strict=True):
            _check_declared(inst, entity, part, source)
        _warn_unread(inst, arrays, inst.predicted, source)
        return cls(features, theta, source=source)

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
            try:
                self.w = oracle.solve(costs.numpy(), remember=False).w  # NCE seeds its own
            except DflError as exc:
                if getattr(exc, "status", None) is None:
                    raise
                raise true_sample_error(oracle, self.theta, self.source, exc) from None
            self.z = true_objective(oracle, self.theta, self.w)
        return self

    def subset(self, idx: np.ndarray) -> DFLData:
        return DFLData(
            self.features[idx],
            self.theta[idx],
            None if self.w is None else self.w[idx],
            None if self.z is None else self.z[idx],
            self.source,
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
            want = (f"{_shape('N', entity)} (one draw per sample) or {_shape('N, S', entity)}"
                    " (S draws)")
            if entity.name not in arrays:
                raise _missing(entity, "uncertain", want, arrays, source)
            values = _numbers(arrays[entity.name], entity.name, source)
            # one draw (N, *shape) or S draws (N, S, *shape), each draw possibly flattened;
            # (N, S·size) or a transposed (N, size, S) would read as scrambled scenarios
            layouts = _layouts(entity)
            if values.shape[:1] == (n,) and values.shape[1:] in layouts:
                draws = 1
            elif values.shape[:1] == (n,) and values.ndim >= 2 and values.shape[2:] in layouts:
                draws = values.shape[1]
            else:
                raise DataError(f"`{entity.name}` should have shape {want}, got "
                                f"{list(values.shape)}", filename=source)
            parts.append(values.reshape(n, draws, entity.size))
        if len({p.shape[1] for p in parts}) > 1:
            raise DataError("every uncertain param needs the same number of draws per sample",
                            filename=source)
        draws = np.concatenate(parts, axis=2)
        _within_float32(draws, "the uncertain params' draws", "the generative model", source)
        for entity, part in zip(inst.uncertain, parts, strict=True):
            _check_declared(inst, entity, part.reshape(-1, entity.size), source, part.shape[1])
        _warn_unread(inst, arrays, inst.uncertain, source)
        return cls(features, draws)

    @classmethod
    def from_npz(cls, inst, path: str | Path) -> ScenarioData:
        from ..data import load_data

        return cls.from_arrays(inst, load_data(path).values, str(path))


def _features(arrays, source: str) -> np.ndarray:
    if "features" not in arrays:
        raise DataError("a training file needs a `features` array (N × p)", filename=source)
    features = _numbers(arrays["features"], "features", source)
    if features.ndim != 2:
        raise DataError(f"`features` must be N × p, got shape {list(features.shape)}",
                        filename=source)
    if len(features) == 0:
        raise DataError("the training file has no samples (`features` has 0 rows)",
                        filename=source)
    _within_float32(features, "`features`", "the predictor", source)
    return features


def _check_declared(inst, entity, rows: np.ndarray, source: str, draws: int = 1) -> None:
    """A param's training values (one row per sample, or per draw) against its declared checks
    (`>= 0`, `int`, `psd`, ...), as bind checks its data: a breach is refused at the check in
    the model, naming the file, the array, the sample and the entry (the values are the truth a
    predictor learns, so one the model rules out would train it towards impossible costs)."""
    breach = first_breach(inst.evaluator, entity.decl, entity, rows)
    if breach is None:
        return
    sample, draw = divmod(breach.row, draws)
    entry = "" if breach.entry is None else entity.entry_label(breach.entry)
    of = f", draw {draw + 1}" if draws > 1 else ""
    subject = (f"`{entity.name}`{entry} in sample {sample + 1}{of} of {source}'s array "
               f"`{entity.name}` (row {sample})")
    hint = breach.hint or (f"the model declares this check on `{entity.name}` (line "
                           f"{breach.pos.line}); fix the training data, or the check")
    raise DataError(breach.said(subject), breach.pos, hint=hint, filename=inst.model.filename,
                    source=inst.model.source)


def _missing(entity, kind: str, want: str, arrays, source: str) -> DataError:
    """No array for a param: what to add, and what the file has instead — above all for a
    data recipe, whose generator names its arrays itself (PyEPO's knapsack writes `value`; a
    user's `profit` found no array, and the hint said to add one to a file the user can't
    edit)."""
    from .recipe import is_recipe

    others = ", ".join(f"`{k}` {list(np.shape(v))}" for k, v in arrays.items()
                       if k != "features")
    if is_recipe(source):
        hint = (f"the recipe's generator writes {others or 'no such array'}: name the param "
                "after its array, or write a training file (.npz) with "
                f"`{entity.name}` shaped {want}")
    else:
        hint = f"add `{entity.name}` with shape {want}" + (f"; the file has {others}"
                                                          if others else "")
    return DataError(f"the training file has no array for {kind} param `{entity.name}`",
                     filename=source, hint=hint)


def _warn_unread(inst, arrays, read, source: str) -> None:
    """One `DataWarning` naming the arrays of a training file that training doesn't read (it
    reads `features` and the arrays of `read`): not an error, as for a data file's unknown keys
    (one file may serve several models), but never silent — an array named after one of the
    model's data params reads as if it gave that param per sample, and it doesn't."""
    wanted = {"features", *(e.name for e in read)}
    unread = sorted(k for k in arrays if k not in wanted)
    if not unread:
        return
    model = inst.model
    declared = [k for k in unread if k in model.symbols]
    names = ", ".join(f"`{k}`" for k in unread)
    hint = None
    if declared:
        hint = (", ".join(f"`{k}`" for k in declared) + f" in {model.filename} take"
                + "s" * (len(declared) == 1) + " the instance data's value (--data), the same "
                "for every sample")
    text = DataError(f"{'this array is' if len(unread) == 1 else 'these arrays are'} not read: "
                     f"{names} (training reads `features` and "
                     + ", ".join(f"`{e.name}`" for e in read) + ")",
                     filename=source, hint=hint).format("warning")
    warnings.warn(DataWarning(text), stacklevel=3)


FLOAT32_MAX = float(np.finfo(np.float32).max)


def _within_float32(values: np.ndarray, what: str, reader: str, source: str) -> None:
    """Finite and within float32's range: the networks compute in float32, where 1e308 is
    inf (its predictions were then non-finite costs reaching the solver, exit 3)."""
    bad = ~np.isfinite(values) | (np.abs(values) > FLOAT32_MAX)
    if bad.any():
        sample = int(np.argwhere(bad)[0][0])
        value = values[np.unravel_index(int(np.flatnonzero(bad)[0]), values.shape)]
        raise DataError(f"{what} holds {value:g} (sample {sample + 1}): {reader} computes in "
                        f"float32, whose numbers are finite and within ±{FLOAT32_MAX:.3g}",
                        filename=source, hint="scale the data (or drop the broken samples)")


def _numbers(values, name: str, source: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"`{name}` must hold numbers", filename=source) from None


def _layouts(entity) -> tuple[tuple[int, ...], ...]:
    """The shapes one sample's values of `entity` may come in: its own, or flattened."""
    return (tuple(entity.shape), (entity.size,))


def _shape(lead, entity) -> str:
    """`[N, 3, 4]`: the leading axes, then the param's shape (none for a scalar)."""
    return "[" + ", ".join(map(str, (lead, *entity.shape))) + "]"
