"""Decisions under scenarios of `uncertain` params, and the Gen-DFL loss.

Gen-DFL (Wang, Chen, Liang, Fioretto & Zhu, "Gen-DFL: Decision-Focused Generative Learning for
Robust Decision Making", ICLR 2026, arXiv 2502.05468): draw S scenarios ξ̂_1..ξ̂_S from a
conditional generative model, decide w(ξ̂) = argmin_w ρ_s[f(w, ξ̂_s)] for the model's risk
aggregator ρ (`mean`, `cvar(α, ·)`, `worst`), and train the generator on

    β · max_{w ∈ pool} ( ρ_s[f(w*, ξ̂_s)] - ρ_s[f(w, ξ̂_s)] )  +  NLL(ξ | x),

the CVaR-regret of the target decision w* against a solution pool, where w* is the decision
under scenarios of a frozen proxy flow fitted by NLL (the true p(ξ | x) being unknown).

Two pieces live here (the scenario problem's oracle is `.scenario_oracle`):
* `ScenarioObjective`: the model's objective as a torch function of decisions and scenarios
  (exact empirical CVaR, differentiable in the scenarios), read off the compiled objective —
  bilinear polynomials and the piecewise-linear atoms the LP bridge takes (the newsvendor's
  `cvar(0.8, x + b * pos(d - x))`);
* the losses (`GenDFLLoss`, `PointSPOPlus`) and the metric (`relative_risk_regret`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from .. import ast
from ..errors import DflError
from ..evaluate.nonlinear import NL
from ..evaluate.poly import Poly
from .metrics import per_scale, regret_kind
from .scenario_oracle import ScenarioOracle, uncertain_columns

RISK = ("mean", "cvar", "worst")


def uncertain_constraints(inst) -> list[str]:
    """The model's constraints whose rows hold an uncertain param (body or bounds)."""
    unc = uncertain_columns(inst)
    names = []
    for rows in inst.compile().constraints:
        polys = [part.poly if isinstance(part, NL) else part for part in (rows.body, rows.lo,
                                                                          rows.hi)]
        polys += [arg for part in (rows.body, rows.lo, rows.hi) if isinstance(part, NL)
                  for _, node in part.terms for arg in node.args if isinstance(arg, Poly)]
        if any(isinstance(p, Poly) and np.isin(p.columns(), unc).any() for p in polys):
            names.append(rows.name)
    return names


# ---------------------------------------------------------------------- objective
class _Bilinear:
    """Rows of a Poly that is bilinear in (x, ξ): a + Gx x + Gξ ξ + xᵀ H ξ + (ξ·ξ terms)."""

    # a polynomial leaf is linear in x (x·x is refused); an atom over decisions isn't, and
    # the composites above it record its name here
    nonlinear = None

    def __init__(self, poly: Poly, nx: int, unc: np.ndarray, what: str,
                 where: _Where | None = None, near: str | None = None) -> None:
        width, k = poly.width, len(unc)
        xi_of = np.full(width, -1, dtype=np.int64)
        xi_of[unc] = np.arange(k)
        lin = poly.lin.tocoo()
        r, c, v = lin.row, lin.col, lin.data
        on_x = c < nx
        self.a = torch.as_tensor(poly.const, dtype=torch.float64)
        rows = poly.rows
        gx = np.zeros((rows, nx))
        np.add.at(gx, (r[on_x], c[on_x]), v[on_x])
        gxi = np.zeros((rows, k))
        np.add.at(gxi, (r[~on_x], xi_of[c[~on_x]]), v[~on_x])
        h = np.zeros((rows, nx, k))
        self.qxi = None
        if poly.quad is not None and poly.quad.nnz:
            q = poly.quad.tocoo()
            a, b = poly.pairs[q.col, 0], poly.pairs[q.col, 1]
            xa, xb = a < nx, b < nx
            if (xa & xb).any():
                message = (f"{what} is quadratic in the decisions; the scenario losses need "
                           "it linear in them")
                if where is None:
                    raise DflError(message)
                # at the square if it is written as one, else at the atom that holds it
                raise where.error(message, "power", "sum_squares", "quad_form", near)
            mixed = xa ^ xb
            var = np.where(xa, a, b)[mixed]
            par = xi_of[np.where(xa, b, a)[mixed]]
            np.add.at(h, (q.row[mixed], var, par), q.data[mixed])
            both = ~xa & ~xb
            if both.any():
                self.qxi = (torch.as_tensor(q.row[both]), torch.as_tensor(xi_of[a[both]]),
                            torch.as_tensor(xi_of[b[both]]),
                            torch.as_tensor(q.data[both], dtype=torch.float64), rows)
        self.gx = torch.as_tensor(gx)
        self.gxi = torch.as_tensor(gxi)
        self.h = torch.as_tensor(h)
        self.touches_x = bool(gx.any() or h.any())

    def __call__(self, x: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        """x (B, P, nx) — or (P, nx), one pool shared by the batch — and ξ (B, S, K) ->
        values (B, P, S, R)."""
        dt = xi.dtype
        if x.dim() == 2:
            x = x.to(xi)
            const = self.a.to(x) + x @ self.gx.to(x).T
            xh = torch.einsum("pn,rnk->prk", x, self.h.to(x))
            by_xi = self._by_xi(xi)
            bil = torch.einsum("prk,bsk->bpsr", xh, xi)
            return const[None, :, None, :] + by_xi[:, None, :, :] + bil
        const = self.a.to(xi.device, dt) + torch.einsum("bpn,rn->bpr", x, self.gx.to(x))
        xh = torch.einsum("bpn,rnk->bprk", x, self.h.to(x))
        bil = torch.einsum("bprk,bsk->bpsr", xh, xi)
        return const[:, :, None, :] + self._by_xi(xi)[:, None, :, :] + bil

    def _by_xi(self, xi: torch.Tensor) -> torch.Tensor:
        """The terms without x: Gξ ξ and the ξ·ξ products, (B, S, R)."""
        by_xi = torch.einsum("bsk,rk->bsr", xi, self.gxi.to(xi))
        if self.qxi is not None:
            row, a, b, v, rows = self.qxi
            terms = xi[..., a] * xi[..., b] * v.to(xi)
            by_xi = by_xi + torch.zeros((*xi.shape[:2], rows), dtype=xi.dtype,
                                        device=xi.device).index_add_(-1, row.to(xi.device), terms)
        return by_xi


def empirical_cvar(values: torch.Tensor, alpha: float, dim: int = -1) -> torch.Tensor:
    """Upper-tail CVaR_α of S equally likely values: the mean of the worst (1-α)·S of them,
    with a fractional weight on the boundary one — the exact optimum of Rockafellar & Uryasev's
    min_η η + Σ_s (v_s - η)₊ / ((1-α) S) that the LP bridge solves."""
    s = values.shape[dim]
    k = (1.0 - alpha) * s
    top = torch.sort(values, dim=dim, descending=True).values
    weights = (k - torch.arange(s, dtype=values.dtype, device=values.device)).clamp(0.0, 1.0)
    shape = [1] * values.dim()
    shape[dim] = s
    return (top * weights.reshape(shape)).sum(dim) / k


class ScenarioObjective:
    """The model's objective as a function of decisions x and a scenario set Ξ, in the
    canonical (minimized) sense: sign × [mean_s f0(x, ξ_s) + Σ_t w_t ρ_t(L_t(x, ξ_s))].

    Read from the compiled objective (the same NL tree the bridge turns into an LP), so the
    LP's optimal value and `value` agree on every scenario set. f0 and the losses L_t are
    bilinear polynomials in (x, ξ) (`_Bilinear`) combined by the piecewise-linear atoms pos,
    abs, max, min (pairwise or over an index), norm1 and norm_inf, nested to any depth — the
    newsvendor's `cvar(0.8, x + b * pos(d - x))`; each is evaluated batched over (B, P, S)."""

    def __init__(self, inst) -> None:
        self.unc = uncertain_columns(inst)
        self.nx, self.k = inst.n_vars, len(self.unc)
        self.where = _Where(inst)
        ex = inst.compile()
        self.sign = 1.0 if ex.sense == "minimize" else -1.0
        objective = ex.objective
        terms = objective.terms if isinstance(objective, NL) else []
        poly = objective.poly if isinstance(objective, NL) else objective
        # the terms outside a risk aggregator mean their average over the scenarios
        plain = [(m, node) for m, node in terms if node.name not in RISK]
        self.base = _evaluator(NL(poly, plain) if plain else poly, self, "the objective")
        self.terms = []
        for matrix, node in terms:
            if node.name not in RISK:
                continue
            weights = np.asarray(matrix.toarray()).ravel()
            alpha = float(node.param) if node.name == "cvar" else None
            self.terms.append((torch.as_tensor(weights), node.name, alpha,
                               _evaluator(node.args[0], self, f"`{node.name}`'s loss",
                                          node.name)))
        parts = [self.base] + [t[3] for t in self.terms]
        # the first atom whose argument holds decisions: the cost is then not linear in x
        self.nonlinear = next((p.nonlinear for p in parts if p.nonlinear), None)
        cvars = [t[2] for t in self.terms if t[1] == "cvar"]
        self.alpha = cvars[0] if cvars else None
        self.measure = "CVaR" if cvars else ("worst-case" if any(
            t[1] == "worst" for t in self.terms) else "expected")

    def value(self, x: torch.Tensor, xi: torch.Tensor, *, pool: bool = False) -> torch.Tensor:
        """Canonical objective of decisions under scenario sets ξ (B, S, K): x (B, nx) -> (B,);
        x (B, P, nx) -> (B, P); with `pool`, x (P, nx) is shared by the batch -> (B, P)."""
        single = x.dim() == 2 and not pool
        x = x[:, None] if single else x
        total = self.base(x, xi).mean(2).sum(-1)
        for weights, name, alpha, loss in self.terms:
            values = loss(x, xi)  # (B, P, S, R)
            w = weights.to(values)
            upper = w * self.sign >= 0  # a minimized loss risks its upper tail
            oriented = torch.where(upper, values, -values)
            if name == "mean":
                agg = oriented.mean(2)
            elif name == "worst":
                agg = oriented.max(2).values
            else:
                agg = empirical_cvar(oriented, alpha, dim=2)
            total = total + (torch.where(upper, agg, -agg) * w).sum(-1)
        out = self.sign * total
        return out[:, 0] if single else out

    def require_linear(self, loss: str) -> None:
        """Refuse `loss` (SPO+) where the cost is not linear in x: SPO+'s surrogate and
        `point_cost` take c(ξ) = ∇_x f(x, ξ), which is the cost only for an f linear in x."""
        if self.nonlinear is not None:
            raise self.where.error(
                f"`{loss}` needs an objective linear in the decisions (SPO+ is defined for a "
                f"cost c(ξ)ᵀx); here `{self.nonlinear}` takes decisions in its argument, so the "
                "cost is only piecewise linear in them", self.nonlinear,
                hint="train with --loss mse (a point forecast), nll or gen-dfl")

    def point_cost(self, xi: torch.Tensor) -> torch.Tensor:
        """Canonical cost vector over x for one scenario per row, ξ (B, K) -> (B, nx): with a
        single scenario every aggregator is the loss itself, linear in x (`require_linear`)."""
        self.require_linear("spo+")
        x = torch.zeros((len(xi), self.nx), dtype=xi.dtype, device=xi.device,
                        requires_grad=True)
        value = self.value(x, xi[:, None]).sum()
        (grad,) = torch.autograd.grad(value, x, create_graph=True)
        return grad


# the atoms `ScenarioObjective` evaluates: those the LP bridge turns into epigraph rows
PIECEWISE = ("pos", "abs", "max", "min", "norm1", "norm_inf")


class _Where:
    """Locates the scenario losses' errors in the model: at the atom's call in the objective
    (FILE:LINE:COL), or at the objective where the atom is not written there (an `expr`'s)."""

    def __init__(self, inst) -> None:
        self.model = inst.model

    def error(self, message: str, *atoms: str | None, hint: str | None = None) -> DflError:
        """The error at the first of `atoms` written in the objective, else at the objective."""
        objective = self.model.objective
        pos = objective.pos if objective is not None else None
        for atom in atoms if objective is not None else ():
            found = _find_atom(objective.body, atom) if atom else None
            if found is not None:
                pos = found
                break
        return DflError(message, pos, hint=hint, filename=self.model.filename,
                        source=self.model.source)


def _find_atom(node, name: str):
    """The position of the first place `name` is written in an expression tree."""
    for n in ast.walk(node):
        if (isinstance(n, ast.Call) and n.func == name) or (
                isinstance(n, ast.Reduce) and n.op == name) or (
                isinstance(n, ast.Power) and name == "power"):
            return n.pos
    return None


def _evaluator(payload, objective: ScenarioObjective, what: str, near: str | None = None):
    """A torch evaluator of a payload of the compiled objective: x, ξ -> (B, P, S, rows);
    `near` names the atom it is an argument of (where its errors point)."""
    if isinstance(payload, Poly):
        return _Bilinear(payload, objective.nx, objective.unc, what, objective.where, near)
    if isinstance(payload, NL):
        base = _Bilinear(payload.poly, objective.nx, objective.unc, what, objective.where,
                         near)
        if not payload.terms:
            return base
        return _Combination(base, [(_RowMap(matrix), _atom(node, objective, what))
                                   for matrix, node in payload.terms])
    return _Constant(payload)


def _atom(node, objective: ScenarioObjective, what: str):
    if node.name in RISK:
        raise objective.where.error(
            f"`{node.name}` inside another atom of the objective: the scenario losses take "
            "mean/cvar/worst as terms of the objective (a weighted sum of them and of "
            "per-scenario terms), not nested", node.name)
    if node.name not in PIECEWISE:
        raise objective.where.error(
            f"`{node.name}` in the objective: the scenario losses evaluate objectives built "
            "from mean/cvar/worst of polynomial losses and the piecewise-linear atoms "
            + ", ".join(PIECEWISE), node.name,
            hint="`dfl solve` takes this model; `dfl train` needs an LP scenario problem")
    return _Atom(node, [_evaluator(arg, objective, what, node.name) for arg in node.args])


class _RowMap:
    """A sparse matrix applied over the last axis: (..., R_in) -> (..., R_out)."""

    def __init__(self, matrix) -> None:
        m = sp.coo_array(matrix)
        self.out = torch.as_tensor(m.row.astype(np.int64))
        self.col = torch.as_tensor(m.col.astype(np.int64))
        self.weight = torch.as_tensor(m.data, dtype=torch.float64)
        self.rows = m.shape[0]

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        terms = values[..., self.col.to(values.device)] * self.weight.to(values)
        return values.new_zeros((*values.shape[:-1], self.rows)).index_add(
            -1, self.out.to(values.device), terms)


class _Constant:
    """Data rows (a pairwise `max(x, c)`'s c): the same for every decision and scenario."""

    touches_x, nonlinear = False, None

    def __init__(self, data) -> None:
        self.c = torch.as_tensor(np.asarray(data, dtype=float).ravel())

    def __call__(self, x: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        return self.c.to(xi).expand(len(xi), x.shape[-2], xi.shape[1], len(self.c))


class _Combination:
    """An NL payload: its polynomial rows plus sparse combinations of atom rows."""

    def __init__(self, base: _Bilinear, parts: list) -> None:
        self.base, self.parts = base, parts
        self.touches_x = base.touches_x or any(p.touches_x for _, p in parts)
        self.nonlinear = next((p.nonlinear for _, p in parts if p.nonlinear), None)

    def __call__(self, x: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        out = self.base(x, xi)
        for rowmap, part in self.parts:
            out = out + rowmap(part(x, xi))
        return out


class _Atom:
    """A piecewise-linear atom over its arguments' rows: elementwise (pos, abs, pairwise
    max/min), or reducing row groups starts[g]:starts[g+1] (max/min over an index, norm1,
    norm_inf) through one padded gather, so no loop runs over the rows."""

    def __init__(self, node, args: list) -> None:
        self.name, self.args = node.name, args
        self.touches_x = any(a.touches_x for a in args)
        inner = next((a.nonlinear for a in args if a.nonlinear), None)
        self.nonlinear = inner or (self.name if self.touches_x else None)
        self.starts = None
        if node.starts is not None:
            starts = np.asarray(node.starts, dtype=np.int64)
            lengths = np.diff(starts)
            self.groups = len(lengths)
            self.owner = torch.as_tensor(np.repeat(np.arange(self.groups), lengths))
            self.width = int(lengths.max()) if self.groups else 0
            offset = np.arange(self.width)[None, :]
            # entries past a group's end point at a filler column appended after the rows
            index = np.where(offset < lengths[:, None], starts[:-1, None] + offset, starts[-1])
            self.starts, self.gather = starts, torch.as_tensor(index.ravel())

    def __call__(self, x: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        values = [arg(x, xi) for arg in self.args]
        name = self.name
        if self.starts is None:
            if name == "pos":
                return values[0].clamp_min(0.0)
            if name == "abs":
                return values[0].abs()
            pick = torch.maximum if name == "max" else torch.minimum
            out = values[0]
            for v in values[1:]:
                out = pick(out, v)
            return out
        v = values[0].abs() if name in ("norm1", "norm_inf") else values[0]
        lead = v.shape[:-1]
        if name == "norm1":
            return v.new_zeros((*lead, self.groups)).index_add(-1, self.owner.to(v.device), v)
        upper = name in ("max", "norm_inf")
        filler = v.new_full((*lead, 1), -math.inf if upper else math.inf)
        blocks = torch.cat([v, filler], -1)[..., self.gather.to(v.device)]
        blocks = blocks.reshape(*lead, self.groups, self.width)
        return blocks.amax(-1) if upper else blocks.amin(-1)


# ---------------------------------------------------------------------- losses and metric
class GenDFLLoss(nn.Module):
    """The paper's decision loss (Gen-DFL, Wang et al. 2026, the contrastive CVaR-regret with a
    solution pool): for generated scenarios Ξ̂ of each sample and its target decision w*,

        ℓ(Ξ̂) = max_{w ∈ pool} ( F(w*, Ξ̂) - F(w, Ξ̂) ),   F = the model's risk objective,

    which is >= 0 once w* is in the pool and reaches 0 when the generated scenarios make w* the
    best decision of the pool. The gradient flows through Ξ̂ into the generator. With
    `solve_ratio`, that fraction of the steps adds the decisions under Ξ̂ to the pool."""

    def __init__(self, objective: ScenarioObjective, oracle: ScenarioOracle,
                 pool: np.ndarray, solve_ratio: float = 1.0, seed: int = 0,
                 reduction: str = "mean") -> None:
        super().__init__()
        if not 0 <= solve_ratio <= 1:
            raise ValueError("solve_ratio must be in [0, 1]")
        self.objective, self.oracle = objective, oracle
        self.pool = np.unique(np.round(np.asarray(pool, dtype=float), 9), axis=0)
        self.solve_ratio, self.reduction = solve_ratio, reduction
        self.rng = np.random.default_rng(seed)

    def forward(self, xi_hat: torch.Tensor, w_target: torch.Tensor) -> torch.Tensor:
        if self.rng.random() < self.solve_ratio:
            found = self.oracle.solve(xi_hat)
            self.pool = np.unique(np.concatenate([self.pool, np.round(found, 9)]), axis=0)
        pool = torch.as_tensor(self.pool, dtype=xi_hat.dtype, device=xi_hat.device)
        target = self.objective.value(w_target.to(xi_hat), xi_hat)  # (B,)
        others = self.objective.value(pool, xi_hat, pool=True)  # (B, P)
        loss = (target[:, None] - others).max(1).values
        return loss.mean() if self.reduction == "mean" else loss


class PointSPOPlus(nn.Module):
    """SPO+ (Elmachtoub & Grigas, Management Science 2022) on a point forecast ξ̂ of the
    uncertain params: with one scenario the problem is linear in x with cost ĉ = c(ξ̂), and

        ℓ = -min_w (2ĉ - c)ᵀw + 2ĉᵀw*(c) - z*(c),

    where 2c(ξ̂) - c(ξ) = c(2ξ̂ - ξ) because c(·) is affine, so one solve per sample suffices."""

    def __init__(self, objective: ScenarioObjective, oracle: ScenarioOracle) -> None:
        super().__init__()
        if oracle.s != 1:
            raise ValueError("SPO+ decides with one (point) scenario")
        objective.require_linear("spo+")
        self.objective, self.oracle = objective, oracle

    def forward(self, xi_hat: torch.Tensor, xi: torch.Tensor, w_true: torch.Tensor
                ) -> torch.Tensor:
        w = torch.as_tensor(self.oracle.solve((2 * xi_hat - xi)[:, None]), dtype=xi_hat.dtype)
        c_hat = self.objective.point_cost(xi_hat)
        c = self.objective.point_cost(xi).detach()
        w_true = w_true.to(c_hat)
        loss = -((2 * c_hat - c) * w).sum(-1) + 2 * (c_hat * w_true).sum(-1) - (c * w_true).sum(-1)
        return loss.mean()


def relative_risk_regret(objective: ScenarioObjective, decisions: np.ndarray,
                         best: np.ndarray, xi_true: np.ndarray) -> float:
    """Σ_i [F(ŵ_i, Ξ_i) - F(w*_i, Ξ_i)] / Σ_i |F(w*_i, Ξ_i)| over the true scenario sets Ξ_i,
    F the model's risk objective (the relative CVaR regret at the model's α for a `cvar`
    model; normalized as PyEPO normalizes regret, `metrics.per_scale`)."""
    f_hat = _risk_values(objective, decisions, xi_true)
    f_best = _risk_values(objective, best, xi_true)
    regret = float((f_hat - f_best).clamp_min(0.0).sum())
    return per_scale(regret, float(f_best.abs().sum()), len(f_best), "risk objective F(w*, Ξ)")


def risk_regret_kind(objective: ScenarioObjective, best: np.ndarray, xi_true: np.ndarray
                     ) -> str:
    """Which figure `relative_risk_regret` reports here (`metrics.regret_kind`)."""
    return regret_kind(float(_risk_values(objective, best, xi_true).abs().sum()))


def _risk_values(objective: ScenarioObjective, decisions: np.ndarray, xi_true: np.ndarray
                 ) -> torch.Tensor:
    """F(w_i, Ξ_i) per sample."""
    with torch.no_grad():
        return objective.value(torch.as_tensor(decisions, dtype=torch.float64),
                               torch.as_tensor(np.asarray(xi_true, dtype=float)))
