"""Frank–Wolfe for smooth convex objectives over polytopes (the SMOOTH-POLYTOPE class).

Each step calls a linear minimization oracle (LMO) v = argmin_{v ∈ P} ∇f(x)ᵀv — in closed form
when the LinearForm has the structure of a simplex, capped simplex, knapsack row, partition
polytope, box, L1 ball or k-sparse polytope (see `_LMO`), through HiGHS for any other polytope —
and the Frank–Wolfe gap G = ∇f(x)ᵀ(x − v) >= f(x) − f* makes every answer certified. Steps:

* `vanilla`: γ = 2/(t+2) (Frank & Wolfe 1956; Jaggi, ICML 2013);
* `short`: the short step γ = min{1, G / (L‖v − x‖²)} with the global L = λ_max(P)
  (Demyanov & Rubinov 1970);
* `primal-dual`: the same rule with L the curvature along v − x (the local smoothness of
  Pedregosa et al., AISTATS 2020; on a quadratic objective, exact line search), and the
  primal–dual gap as stopping certificate (after Martínez-Rubio & Pokutta, "Beyond short steps
  in Frank–Wolfe algorithms", ICLR 2026);
* `optimistic`: optimistic dual averaging (the optimistic FW of the same paper, as we read it):
  v_t = argmin ⟨Σ_{s<=t} a_s ∇f(x_s) + a_{t+1} ∇f(x_t), v⟩ — the next gradient predicted by the
  last — and x_{t+1} the a-weighted average of the vertices, a_s = s, so γ = 2/(t+2); its
  dual-averaging lower bound tightens the certificate;
* `pairwise` (default): pairwise steps between the FW vertex and the worst active vertex with
  exact line search (Lacoste-Julien & Jaggi, NeurIPS 2015) — linear convergence on polytopes.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..compile.bridges import linear_form
from ..compile.linear import LinearForm
from ..errors import DflError
from ..instance import Instance
from ..solution import Solution

VARIANTS = ("pairwise", "vanilla", "short", "primal-dual", "optimistic")


class _LMO:
    """argmin over the feasible polytope of a linear function; vertices are returned with keys
    so an active set can track them. The structure is read off the LinearForm, whatever the
    model calls its variables:

    * `blocks`: rows with disjoint supports and one-signed coefficients, every variable in a
      row bounded below, those in no row boxed — the simplex, the capped simplex
      {0 <= x <= 1, Σx = k} (the k-sparse polytope split as x = p − q), a knapsack row, the
      partition polytope, a box. Closed form: in each row, the fractional-knapsack greedy by
      gradient per coefficient;
    * `l1`: the L1 ball `norm1(x) <= r` — |x_i| <= s_i as norm1's epigraph declared it on the
      form (`LinearForm.l1_pairs`), and rows of the `blocks` kind over s — or with |x_i| <= 1
      the k-sparse polytope {‖x‖∞ <= 1, ‖x‖₁ <= k}. Each coordinate then costs ∂s − |∂x| per
      unit of s, a `blocks` problem over s;
    * `highs`: any other polytope, by HiGHS with a warm start.
    """

    def __init__(self, form: LinearForm) -> None:
        self.form = form
        self.kind = "highs"
        blocks = _Blocks.detect(form.A, form.rl, form.ru, form.lb, form.ub)
        if blocks is not None:
            self.kind, self.blocks = "blocks", blocks
        elif (l1 := _L1.of(form)) is not None:
            self.kind, self.l1 = "l1", l1
        else:
            from .highs import HighsModel

            self._model = HighsModel(_without_objective(form))

    def __call__(self, g: np.ndarray) -> tuple[object, np.ndarray]:
        if self.kind == "blocks":
            v = self.blocks.argmin(g)
        elif self.kind == "l1":
            v = self.l1.argmin(g)
        else:
            self._model.set_objective(g, 0.0)
            v = self._model.solve_fast()
            if v is None:
                result = self._model.solve(want_duals=False)
                if result.status in ("unbounded", "infeasible_or_unbounded"):
                    raise DflError("the feasible set is unbounded; Frank–Wolfe needs a polytope")
                raise DflError(f"the linear oracle failed ({result.status})")
        return np.round(v, 12).tobytes(), v


class _Blocks:
    """{lb <= x <= ub, rl_r <= a_rᵀx <= ru_r} with disjoint rows of one-signed coefficients."""

    def __init__(self, gid, coef, lb, ub, lo, hi) -> None:
        self.gid, self.coef, self.lb, self.ub, self.lo, self.hi = gid, coef, lb, ub, lo, hi
        self.member = gid >= 0
        span = ub - lb
        finite = np.concatenate([np.abs(lo[np.isfinite(lo)]), np.abs(hi[np.isfinite(hi)]),
                                 (coef * span)[self.member & np.isfinite(span)]])
        self.big = 2.0 * (finite.sum() if len(finite) else 1.0) + 1.0  # stands in for ∞ room

    @staticmethod
    def detect(A, rl, ru, lb, ub) -> _Blocks | None:
        A = sp.csr_array(A)
        m, n = A.shape
        counts = np.diff(A.indptr)
        if (counts == 0).any():
            return None
        coo = A.tocoo()
        if np.bincount(coo.col, minlength=n).max(initial=0) > 1:
            return None  # a variable in two rows
        row_min = np.full(m, np.inf)
        row_max = np.full(m, -np.inf)
        np.minimum.at(row_min, coo.row, coo.data)
        np.maximum.at(row_max, coo.row, coo.data)
        if np.any((row_min < 0) & (row_max > 0)):
            return None
        flip = np.where(row_max < 0, -1.0, 1.0)  # a row of negative coefficients, negated
        lo = np.where(flip > 0, rl, -ru)
        hi = np.where(flip > 0, ru, -rl)
        gid = np.full(n, -1)
        gid[coo.col] = coo.row
        coef = np.zeros(n)
        coef[coo.col] = coo.data * flip[coo.row]
        member = gid >= 0
        if not np.all(np.isfinite(lb[member])):
            return None
        if not np.all(np.isfinite(lb[~member]) & np.isfinite(ub[~member])):
            return None
        shift = np.bincount(gid[member], weights=(coef * lb)[member], minlength=m)
        span = (coef * (ub - lb))[member]
        room = np.bincount(gid[member], weights=np.where(np.isfinite(span), span, 0.0),
                           minlength=m)
        open_rows = np.bincount(gid[member], weights=~np.isfinite(span), minlength=m) > 0
        lo, hi = lo - shift, hi - shift
        if np.any(~np.isfinite(hi) & open_rows):
            return None  # unbounded: HiGHS says so
        if np.any(hi < -1e-12) or np.any(~open_rows & (lo > room + 1e-12)):
            return None  # empty: HiGHS says so
        return _Blocks(gid, coef, lb, ub, lo, hi)

    def argmin(self, g: np.ndarray) -> np.ndarray:
        """Per row, the items by rising gradient per coefficient; fill the room a_rᵀ(x − lb)
        up to the target: everything that pays (negative ratio), clipped into [lo, hi]."""
        v = np.where(g > 0, self.lb, self.ub)
        v[~self.member & (g == 0)] = self.lb[~self.member & (g == 0)]
        idx = np.nonzero(self.member)[0]
        if not len(idx):
            return v
        ratio = g[idx] / self.coef[idx]
        order = idx[np.lexsort((ratio, self.gid[idx]))]
        gid = self.gid[order]
        weight = np.minimum(self.coef[order] * (self.ub[order] - self.lb[order]), self.big)
        pays = np.bincount(gid, weights=np.where(g[order] < 0, weight, 0.0),
                           minlength=len(self.lo))
        target = np.clip(pays, self.lo, self.hi)
        before = np.cumsum(weight) - weight
        first = np.r_[0, np.nonzero(np.diff(gid))[0] + 1]
        start = np.zeros(len(self.lo))
        start[gid[first]] = before[first]
        room = target[gid] - (before - start[gid])
        step = np.clip(room / self.coef[order], 0.0, self.ub[order] - self.lb[order])
        v[order] = self.lb[order] + step
        return v


class _L1:
    """|x_i| <= s_i (rows s − x >= 0 and s + x >= 0), symmetric bounds on x, and a `blocks`
    polytope over s; other variables boxed."""

    def __init__(self, xs, ss, blocks, rest, lb, ub) -> None:
        self.xs, self.ss, self.blocks, self.rest = xs, ss, blocks, rest
        self.lb, self.ub = lb, ub

    @staticmethod
    def of(form: LinearForm) -> _L1 | None:
        """The pairs |x_i| <= s_i norm1's epigraph declared (`form.l1_pairs`, its rows
        s − x >= 0 and s + x >= 0), when every other row is over s alone."""
        if not form.l1_pairs:
            return None
        xs = np.concatenate([p.x for p in form.l1_pairs])
        ss = np.concatenate([p.s for p in form.l1_pairs])
        order = np.argsort(ss)
        xs, ss = xs[order], ss[order]
        if len(np.unique(xs)) != len(xs) or np.intersect1d(xs, ss).size:
            return None
        A = sp.csr_array(form.A)
        pair_of = np.full(form.n, -1)
        pair_of[xs] = pair_of[ss] = np.arange(len(ss))
        two = np.flatnonzero(np.diff(A.indptr) == 2)
        cols = A.indices[A.indptr[two][:, None] + np.arange(2)]
        owner = pair_of[cols]
        pair = two[(owner[:, 0] >= 0) & (owner[:, 0] == owner[:, 1])]
        rest_rows = np.setdiff1d(np.arange(A.shape[0]), pair)
        sub = A[rest_rows]
        if sub.nnz and not np.isin(sub.tocoo().col, ss).all():
            return None
        if not np.allclose(form.lb[xs], -form.ub[xs]) or np.any(form.lb[ss] < 0):
            return None
        # s_i is two items in its row: up to min(ub_s, ub_x) where x_i = ±s_i pays |∂x_i|,
        # then the rest of s_i's range, which pays only ∂s_i (taken later: it costs more)
        cap = np.minimum(form.ub[ss], form.ub[xs])
        beyond = np.zeros(len(ss))
        np.subtract(form.ub[ss], cap, out=beyond, where=cap < form.ub[ss])
        blocks = _Blocks.detect(sp.hstack([sub[:, ss], sub[:, ss]]), form.rl[rest_rows],
                                form.ru[rest_rows], np.zeros(2 * len(ss)),
                                np.concatenate([cap, beyond]))
        rest = np.setdiff1d(np.arange(form.n), np.concatenate([xs, ss]))
        if blocks is None or not np.all(np.isfinite(form.lb[rest]) & np.isfinite(form.ub[rest])):
            return None
        return _L1(xs, ss, blocks, rest, form.lb, form.ub)

    def argmin(self, g: np.ndarray) -> np.ndarray:
        v = np.where(g > 0, self.lb, self.ub)
        v[self.rest[g[self.rest] == 0]] = self.lb[self.rest[g[self.rest] == 0]]
        gx, gs = g[self.xs], g[self.ss]
        paired, extra = np.split(self.blocks.argmin(np.concatenate([gs - np.abs(gx), gs])), 2)
        v[self.ss] = paired + extra
        v[self.xs] = -np.sign(gx) * paired
        return v


def _without_objective(form: LinearForm) -> LinearForm:
    from dataclasses import replace

    return replace(form, P=None, c=np.zeros(form.n), c0=0.0)


def frank_wolfe(form: LinearForm, *, variant: str = "pairwise", tol: float = 1e-6,
                max_iter: int = 100_000, time_limit: float | None = None,
                trace: list | None = None) -> dict:
    """Minimize ½xᵀPx + cᵀx over the form's polytope. Every variant stops on the same
    certificate, the primal–dual gap f(x_t) − max_{s<=t} (f(x_s) − G_s) <= G_t, which bounds
    f(x_t) − f* because each FW gap G_s bounds f(x_s) − f*. `trace`, when given, receives
    (iteration, certified gap, seconds) per iteration."""
    if variant not in VARIANTS:
        raise DflError(f"unknown Frank–Wolfe variant `{variant}`",
                       hint="choose one of: " + ", ".join(VARIANTS))
    P = sp.csr_array(form.P) if form.P is not None else sp.csr_array((form.n, form.n))
    c = form.c
    lmo = _LMO(form)

    def f(x):
        return 0.5 * x @ (P @ x) + c @ x + form.c0

    def grad(x):
        return P @ x + c

    lipschitz = _lambda_max(P) if variant == "short" else None
    key, x = lmo(c)  # start at a vertex
    active = {key: [x.copy(), 1.0]}
    g = grad(x)
    start = time.perf_counter()
    lower, certified = -np.inf, np.inf
    summed, weights, affine = np.zeros(form.n), 0.0, 0.0  # optimistic: Σ a_s ∇f_s, Σ a_s, ...
    it = 0
    for it in range(1, max_iter + 1):
        key, v = lmo(g)
        fx = float(f(x))
        lower = max(lower, fx - float(g @ (x - v)))
        if variant == "optimistic":  # f* >= (Σ a_s [f_s + ∇f_sᵀ(w − x_s)]) / Σ a_s for all w
            summed, weights, affine = summed + it * g, weights + it, affine + it * (fx - g @ x)
            lower = max(lower, (affine + float(summed @ lmo(summed)[1])) / weights)
        certified = max(fx - lower, 0.0)
        if trace is not None:
            trace.append((it - 1, certified, time.perf_counter() - start))
        if certified <= tol:
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            break
        if variant == "optimistic":  # the next gradient predicted by this one
            key, v = lmo(summed + (it + 1) * g)
        d, gamma_max, away_key = _direction(variant, active, g, v, x)
        gamma = _step(variant, it, d, float(g @ d), float(d @ (P @ d)), gamma_max, lipschitz,
                      weights)
        x = x + gamma * d
        if variant == "pairwise":
            active.setdefault(key, [v.copy(), 0.0])[1] += gamma
            active[away_key][1] -= gamma
            if active[away_key][1] <= 1e-15:
                del active[away_key]
        g = grad(x)
    return {"x": x, "objective": float(f(x)), "gap": certified, "iterations": it,
            "converged": certified <= tol}


def _direction(variant: str, active: dict, g: np.ndarray, v: np.ndarray, x: np.ndarray):
    """The step's direction, its longest step, and (pairwise) the away vertex it drains:
    pairwise moves weight from the active vertex worst for g to v, the others move x to v."""
    if variant == "pairwise":
        away_key = max(active, key=lambda k: float(g @ active[k][0]))
        a, weight = active[away_key]
        return v - a, weight, away_key
    return v - x, 1.0, None


def _step(variant: str, it: int, d: np.ndarray, slope: float, curvature: float,
          gamma_max: float, lipschitz: float | None, weights: float) -> float:
    """The step along d of each variant (see the module's docstring)."""
    if variant == "vanilla":
        return 2.0 / (it + 2.0)
    if variant == "optimistic":  # x_{t+1} = Σ a_s v_s / Σ a_s, a_s = s
        return (it + 1.0) / (weights + it + 1.0)
    if variant == "short":
        return min(1.0, -slope / (lipschitz * float(d @ d))) if lipschitz > 0 else 1.0
    # pairwise, primal-dual: the short step on the curvature along d
    return gamma_max if curvature <= 0 else min(gamma_max, max(0.0, -slope / curvature))


def _lambda_max(P: sp.csr_array) -> float:
    if P.shape[0] == 0 or P.nnz == 0:
        return 0.0
    x = np.random.default_rng(0).standard_normal(P.shape[0])
    for _ in range(200):
        y = P @ x
        norm = np.linalg.norm(y)
        if norm == 0:
            return 0.0
        x = y / norm
    return float(x @ (P @ x))


def solve_instance(inst: Instance, *, time_limit=None, seed=None, variant: str = "pairwise",
                   tol: float = 1e-6):
    start = time.perf_counter()
    form = linear_form(inst)
    if form.is_mip:
        raise DflError("Frank–Wolfe takes continuous models")
    if form.theta_in_constraints or form.n_theta and inst.predicted:
        theta = inst.theta_for_solve()
        c, c0 = form.objective_at(theta)
        from dataclasses import replace

        form = replace(form, c=c, c0=c0)
    result = frank_wolfe(form, variant=variant, tol=tol, time_limit=time_limit)
    status = "optimal" if result["converged"] else "feasible"
    objective = form.model_objective(result["objective"])
    return Solution(
        status, objective, result["x"][: form.n_model], "fw", time.perf_counter() - start, inst,
        gap=result["gap"],
        message=f"{variant} Frank–Wolfe, {result['iterations']} iterations, certified gap "
                f"{result['gap']:.2e}",
        extra={"certified_gap": result["gap"], "iterations": result["iterations"]},
    )
