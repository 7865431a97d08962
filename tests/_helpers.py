"""Helpers for the tests: the acceptance spec, models from text, evaluating a Poly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dfl_dsl as dfl

SPEC = Path(__file__).resolve().parents[1] / ".." / "shared" / "spec"


def spec_dir() -> Path:
    if not (SPEC / "expected.json").is_file():
        pytest.skip("the acceptance spec (../shared/spec) is not here")
    return SPEC


def expected() -> dict:
    return json.loads((spec_dir() / "expected.json").read_text())


def bind(text: str, data=None, name: str = "m.opt"):
    """Parse, check and bind a model given as text."""
    return dfl.parse(text, name).bind(data if data is not None else {})


def poly_at(poly, z: np.ndarray) -> np.ndarray:
    """Every row of a Poly evaluated at z."""
    out = poly.const + poly.lin @ z
    if poly.quad is not None and poly.quad.nnz:
        out = out + poly.quad @ (z[poly.pairs[:, 0]] * z[poly.pairs[:, 1]])
    return np.asarray(out, dtype=float)


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, indent=1))
    return path


def scm_forms(n: int = 12, seed: int = 0) -> list:
    """Small SCM forms over the same features: at most 3 items (sqrt), a knapsack (log1p), a
    partition matroid with some items in no group, and no constraint at all."""
    from dfl_dsl.compile.scm import SCMForm

    rng = np.random.default_rng(seed)
    X = rng.exponential(1.0, (n, 5)) * (rng.random((n, 5)) < 0.6)
    groups = rng.integers(-1, 3, n)
    return [
        SCMForm.from_features(X, k=3),
        SCMForm.from_features(X, phi="log1p", cost=rng.uniform(0.5, 2.0, n), budget=2.5),
        SCMForm.from_features(X, groups=groups, caps=np.array([1.0, 2.0, 1.0])),
        SCMForm.from_features(X),
    ]


def spec_qp_with(*changes: tuple[str, int, int, float]) -> tuple[str, dict]:
    """The spec's `qp` model and its data with entries (param, i, j, value) replaced."""
    spec = spec_dir()
    data = json.loads((spec / "qp.json").read_text())
    for name, i, j, value in changes:
        data[name][i][j] = value
    return (spec / "qp.opt").read_text(), data


# benchmarks/fuzz.py `solved` inputs HiGHS 1.16's QP solver got wrong (docs/reliability.md):
# the spec's `qp` with one entry near 1e6 (5036872 also halves A[0, 1]), and the optimum
# Clarabel finds
SEED_5036872 = (("A", 0, 1, -0.83567624328504), ("A", 27, 5, 789867.2098844763))
SEED_5000398 = (("G", 3, 9, -1337589.5049472426),)
SEED_5013383 = (("P", 11, 11, 906350.3749012689),)
OPTIMUM = {5036872: -1.37552088646, 5000398: -1.42298938999, 5013383: 0.70599460728}
