"""The scenario problem of a model with `uncertain` params as an oracle: S scenarios per
sample in, decisions out, for Gen-DFL's losses and its risk regret.

`lift` records how the bridged scenario problem depends on the scenario values (θ = vec(Ξ)),
once; `ScenarioOracle` then solves a batch of samples by changing numbers only — in one warm
HiGHS model, or as one batch of LPs in torch (Gen-DFL, Wang et al., ICLR 2026, decides
on the scenarios of every sample of every step: on a GPU that is one batched solve).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
import torch

from ..backends.batchlp import solve_batch
from ..backends.batchlp.parametric import ParametricLP
from ..backends.highs import HighsModel
from ..compile.bridges import bridge
from ..compile.linear import LinearForm, assemble
from ..errors import DflError
from .executors import NO_SOLUTION_HINTS
from .oracle import NON_FINITE_HINT


def uncertain_columns(inst) -> np.ndarray:
    """Columns of z holding the uncertain params' entries, in declaration order (ξ's order)."""
    if not inst.uncertain:
        raise DflError("the model has no `uncertain` param", filename=inst.model.filename,
                       hint="mark the numbers a generative model samples with `: uncertain`")
    if inst.predicted:
        raise DflError("a model with both `predicted` and `uncertain` params can't be trained "
                       "with the scenario losses yet", filename=inst.model.filename)
    return np.concatenate([e.columns() for e in inst.uncertain])


class _WarmHighs(HighsModel):
    """A HiGHS model whose θ-dependent numbers are replaced in place; an LP keeps its basis so
    the next solve starts warm."""

    def set_theta(self, theta: np.ndarray, warm: bool = True) -> None:
        basis = None if self.form.is_mip or not warm else self.h.getBasis()
        self._load(theta)
        if basis is not None and basis.valid:
            self.h.setBasis(basis)


class ScenarioOracle:
    """argmin_x of the scenario problem for S scenarios per sample, batched.

    The scenario bridge fixes uncertain params at numbers; the compiled form is affine in them,
    so the map Ξ -> (c, A, row bounds) is recorded once by probing the bridge (a few builds; see
    `lift`). After that a sample only changes numbers: `highs` re-solves one warm HiGHS model
    per sample; `batched` solves the whole batch as one batch of LPs in torch on `device`
    (backends/batchlp: certified optima, HiGHS for any it can't certify), for scenario problems
    that are LPs; `auto` is batched on a GPU when the problem is an LP, HiGHS otherwise."""

    def __init__(self, inst, n_scenarios: int, *, time_limit: float | None = None,
                 method: str = "auto", device: str | torch.device = "cpu") -> None:
        self.inst, self.s = inst, int(n_scenarios)
        self.unc = uncertain_columns(inst)
        self.k = len(self.unc)
        self.form = lift(inst, self.s)
        self.nx = inst.n_vars
        self._model = _WarmHighs(self.form, theta=np.zeros(self.form.n_theta),
                                 time_limit=time_limit)
        self.solver_calls = self.fallbacks = 0
        self.method = _scenario_method(method, self.form, torch.device(device), inst)
        self._family = (ParametricLP(self.form, device) if self.method == "batched" else None)

    def solve(self, xi, *, cold: bool = False) -> np.ndarray:
        """ξ (B, S, K) -> decisions x (B, nx). With HiGHS each sample starts from the previous
        one's basis; `cold` starts the first from none, so the decisions depend on ξ alone,
        not on what the oracle solved before (a degenerate LP's vertex, or its last digits,
        can): evaluation asks for that, so `dfl eval` of a checkpoint replays `dfl train`'s
        regret exactly. The batched solver has no warm start: its decisions are ξ's alone."""
        xi = np.asarray(xi.detach().cpu().double().numpy() if isinstance(xi, torch.Tensor)
                        else xi, dtype=float)
        if xi.ndim != 3 or xi.shape[1:] != (self.s, self.k):
            raise ValueError(f"scenarios must be (B, {self.s}, {self.k}), got {xi.shape}")
        if not np.all(np.isfinite(xi)):
            raise DflError("the generative model's scenarios are not finite (NaN or inf)",
                           hint=NON_FINITE_HINT)
        thetas = xi.reshape(len(xi), -1)
        if self._family is None:
            return self._solve_highs(thetas, range(len(thetas)), cold)
        result = solve_batch(self._family.at(torch.as_tensor(thetas)))
        out = result.x[:, : self.nx].cpu().numpy()
        failed = np.flatnonzero(~result.certified.cpu().numpy())
        if len(failed):
            self.fallbacks += len(failed)
            out[failed] = self._solve_highs(thetas[failed], range(len(failed)), True)
        self.solver_calls += len(thetas) - len(failed)
        return out

    def _solve_highs(self, thetas: np.ndarray, rows, cold: bool) -> np.ndarray:
        out = np.empty((len(thetas), self.nx))
        for i in rows:
            self._model.set_theta(thetas[i], warm=not cold or i > 0)
            x = self._model.solve_fast()
            if x is None:
                status = self._model.solve(want_duals=False).status
                raise DflError(f"the scenario problem has no solution (status {status})",
                               hint=NO_SOLUTION_HINTS.get(status),
                               filename=self.inst.model.filename)
            out[i] = x[: self.nx]
            self.solver_calls += 1
        return out


def _scenario_method(method: str, form: LinearForm, device: torch.device, inst) -> str:
    """The solver the scenario oracle uses (see ScenarioOracle)."""
    if method not in ("auto", "highs", "batched"):
        raise DflError(f"unknown oracle method `{method}`", hint="use auto, highs or batched")
    why_not = ("the scenario problem has integer variables" if form.is_mip else
               "the scenario problem is quadratic" if form.is_qp else None)
    if method == "batched" and why_not is not None:
        raise DflError(f"the batched oracle solves LP scenario problems; {why_not}",
                       hint="use --oracle highs (or auto)", filename=inst.model.filename)
    if method == "batched" or (method == "auto" and why_not is None and device.type == "cuda"):
        return "batched"
    return "highs"


def lift(inst, n_scenarios: int, seed: int = 0) -> LinearForm:
    """The scenario problem's LinearForm with θ = vec(Ξ) (scenario-major, S × K).

    Built by probing the bridge, which is affine in the scenario values: a base point, one
    probe per scenario (which outputs each scenario reaches) and one per param entry (their
    coefficients) recover the map when each output depends on one scenario or on all of them
    through their mean (what the bridge's copies and averages produce); a random point checks
    the map, and if it fails every (scenario, entry) pair is probed instead."""
    s, unc = int(n_scenarios), uncertain_columns(inst)
    k = len(unc)
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.5, 1.5, (s, k))
    probe = _Prober(inst, s, rng)
    out0 = probe(base)
    jac = _separable_jacobian(probe, base, out0, rng)
    check = rng.uniform(0.5, 1.5, (s, k))
    if jac is None or not _agrees(probe, jac, base, out0, check):
        jac = sp.csc_array(np.stack([probe(base + _unit(s, k, j)) - out0
                                     for j in range(s * k)], axis=1))
    return probe.form(out0 - jac @ base.ravel(), jac)


def _unit(s: int, k: int, j: int) -> np.ndarray:
    e = np.zeros(s * k)
    e[j] = 1.0
    return e.reshape(s, k)


def _agrees(probe, jac, base, out0, point) -> bool:
    predicted = out0 + jac @ (point - base).ravel()
    actual = probe(point)
    return bool(np.allclose(predicted, actual, rtol=1e-8, atol=1e-8 * (1 + np.abs(actual).max())))


def _separable_jacobian(probe, base, out0, rng) -> sp.csc_array | None:
    s, k = base.shape
    dep = np.zeros((len(out0), s), dtype=bool)
    for i in range(s):
        shifted = base.copy()
        shifted[i] += rng.uniform(0.5, 1.5, k)
        dep[:, i] = ~np.isclose(probe(shifted), out0, rtol=1e-12, atol=1e-12)
    count = dep.sum(1)
    if ((count > 1) & (count < s)).any():
        return None
    per_entry = np.stack([probe(base + np.outer(np.ones(s), np.eye(k)[j])) - out0
                          for j in range(k)], axis=1)  # (outputs, K): Σ_s J[e, (s, j)]
    rows, cols, vals = [], [], []
    for scen in range(s):
        mask = dep[:, scen] & (count == 1) if s > 1 else count >= 1
        shared = dep[:, scen] & (count == s) & (s > 1)
        e1, j1 = np.nonzero(per_entry * mask[:, None])
        e2, j2 = np.nonzero(per_entry * shared[:, None])
        rows += [e1, e2]
        cols += [scen * k + j1, scen * k + j2]
        vals += [per_entry[e1, j1], per_entry[e2, j2] / s]
    return sp.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(len(out0), s * k))


class _Prober:
    """Builds the bridged form at a given scenario matrix and flattens its numbers into one
    vector over a fixed layout: c, c0, row shifts, then A's entries on a fixed pattern."""

    def __init__(self, inst, s: int, rng: np.random.Generator) -> None:
        self.inst, self.s = inst, s
        self.entities = inst.uncertain
        self.sizes = [e.size for e in self.entities]
        self.expanded = inst.compile()
        k = sum(self.sizes)
        first = self._build(rng.uniform(0.5, 1.5, (s, k)))
        self.template = first
        self.finite_lo = np.isfinite(first.rl)
        # A's pattern: every entry the scenario values could touch (the union of the patterns
        # at two generic points, so no accidental zero hides one)
        other = self._build(rng.uniform(0.5, 1.5, (s, k)))
        pattern = (abs(first.A) + abs(other.A)).tocoo()
        self.a_rows, self.a_cols = pattern.row.astype(np.int64), pattern.col.astype(np.int64)

    def _build(self, xi: np.ndarray) -> LinearForm:
        """The bridged form at Ξ; the instance's own scenarios are put back afterwards."""
        saved = [e.extra.get("scenarios") for e in self.entities]
        at = 0
        try:
            for e, size in zip(self.entities, self.sizes, strict=True):
                e.extra["scenarios"] = xi[:, at : at + size]
                at += size
            return assemble(bridge(self.expanded, self.inst), self.inst)
        finally:
            for e, value in zip(self.entities, saved, strict=True):
                if value is None:
                    e.extra.pop("scenarios", None)
                else:
                    e.extra["scenarios"] = value

    def __call__(self, xi: np.ndarray) -> np.ndarray:
        form = self._build(xi)
        shift = np.where(self.finite_lo, form.rl, np.where(np.isfinite(form.ru), form.ru, 0.0))
        # (scipy's fancy index of no entries gives a sparse array, not an empty vector: a
        # model without constraint rows has no A entries to read)
        a = (np.asarray(form.A.tocsr()[self.a_rows, self.a_cols]).ravel() if len(self.a_rows)
             else np.zeros(0))
        return np.concatenate([form.c, [form.c0], shift, a])

    def form(self, out: np.ndarray, jac: sp.csc_array) -> LinearForm:
        """The LinearForm at Ξ = 0 with the θ-maps from `jac` (θ = vec(Ξ))."""
        t = self.template
        n, m = t.n, t.m
        jac = sp.csr_array(jac)
        c, c0 = out[:n], float(out[n])
        shift = out[n + 1 : n + 1 + m]
        a = out[n + 1 + m :]
        gap = np.where(self.finite_lo & np.isfinite(t.ru), t.ru - t.rl, np.inf)
        rl = np.where(self.finite_lo, shift, -np.inf)
        ru = np.where(self.finite_lo, shift + gap, np.where(np.isfinite(t.ru), shift, np.inf))
        a_jac = jac[n + 1 + m :].tocoo()
        return dataclasses.replace(
            t, n_theta=jac.shape[1], c=c, c0=c0,
            A=sp.csr_array((a, (self.a_rows, self.a_cols)), shape=(m, n)),
            rl=rl, ru=ru, c_theta=jac[:n].tocsr(), c0_theta=jac[[n]].toarray().ravel(),
            row_theta=-jac[n + 1 : n + 1 + m].tocsr(),
            a_theta=(self.a_rows[a_jac.row], self.a_cols[a_jac.row],
                     a_jac.col.astype(np.int64), a_jac.data.astype(float)),
        )
