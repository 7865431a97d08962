"""Bridges that rewrite what an LP/QP solver lacks into what it has (as MathOptInterface does):

* scenario expansion: uncertain params are fixed at each scenario; a constraint that holds one
  must hold for every scenario, and an objective term outside a risk aggregator means its mean;
* risk aggregators: `cvar(α, L)` by the Rockafellar–Uryasev auxiliary variables
  (Rockafellar & Uryasev, "Optimization of conditional value-at-risk", J. Risk 2000),
  `worst(L)` by an epigraph, `mean(L)` by averaging (in the objective and in constraints);
* piecewise-linear atoms (abs, pos, max, min, norm1, norm_inf, max{}/min{}) by epigraphs, in
  the objective and in constraints alike: a row `body <= hi` whose body holds convex atoms with
  nonnegative weights (concave ones with nonpositive weights) keeps its name and bounds, each
  atom replaced by an epigraph variable `t` with rows `t >= arg` (named `#abs`, `#max`, ...);
  `body >= lo` mirrors it. The user's row is then `poly + Σ w t <= hi`, whose dual is the
  multiplier of the original convex constraint.

The result is a polynomial objective and polynomial rows over z = [x; θ; aux].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..atoms.registry import ATOMS
from ..check.info import Curv
from ..errors import DflError
from ..evaluate.nonlinear import NL, AtomNode
from ..evaluate.poly import Poly
from .expand import Expanded
from .substitute import substitute, uses


def _is_risk(node: AtomNode) -> bool:
    return ATOMS[node.name].risk


@dataclass
class RowBlock:
    name: str
    body: Poly | NL
    lo: np.ndarray
    hi: np.ndarray
    labels: list[str] | None = None


@dataclass
class Bridged:
    """A polynomial problem: min/max objective s.t. lo <= rows <= hi, with aux variables."""

    sense: str
    objective: Poly | NL  # NL only when bridging with keep_nonlinear
    rows: list[RowBlock]
    width: int  # columns of z after aux variables
    aux_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))


class _Aux:
    """Allocates auxiliary variables after the columns of z."""

    def __init__(self, width: int) -> None:
        self.start = width
        self.lower: list[np.ndarray] = []
        self.upper: list[np.ndarray] = []

    @property
    def count(self) -> int:
        return sum(len(x) for x in self.lower)

    def new(self, k: int, lower: float = -np.inf, upper: float = np.inf) -> np.ndarray:
        cols = self.start + self.count + np.arange(k, dtype=np.int64)
        self.lower.append(np.full(k, lower))
        self.upper.append(np.full(k, upper))
        return cols


def bridge(ex: Expanded, inst, *, label_rows: bool = False,
           keep_nonlinear: bool = False) -> Bridged:
    """Bridge scenarios and risk aggregators always; other nonlinear atoms by epigraphs unless
    `keep_nonlinear` (a conic backend such as CVXPY takes them as they are)."""
    unc_cols, scenarios = _uncertain(inst)
    objective = ex.objective
    terms = [] if isinstance(objective, Poly) else objective.terms
    aux = _Aux(inst.width)
    bridged_terms = [t for t in terms if not keep_nonlinear or _is_risk(t[1])]
    rows: list[RowBlock] = []
    # atoms in rows are cut down to the entries their rows use (a row block taken from an
    # `expr`'s, or a scenario's share of a block): they get epigraphs for those only
    cut = _restrict if not keep_nonlinear else (lambda payload: payload)
    # risk aggregators in rows (`cvar(α, L) <= budget`) are bridged first, as in the
    # objective: what stays uncertain outside them must then hold in every scenario
    risk_width = inst.width + sum(
        _aux_needed([t for t in r.body.terms if _is_risk(t[1])], len(scenarios),
                    unc_cols)
        for r in ex.constraints if isinstance(r.body, NL))
    for r in ex.constraints:
        if isinstance(r.body, NL) and keep_nonlinear and not isinstance(r.lo, Poly) and not (
            isinstance(r.hi, Poly)
        ):
            body, lo, hi = r.body, r.lo, r.hi
        elif isinstance(r.lo, Poly) or isinstance(r.hi, Poly):
            body, lo, hi = _normalize_rows(r)
        else:
            body, lo, hi = r.body, r.lo, r.hi
        labels = r.labels() if label_rows else None
        if isinstance(body, NL) and any(_is_risk(n) for _, n in body.terms):
            body = _risk_rows(r.name, body, lo, hi, aux, rows, unc_cols, scenarios, risk_width)
        if len(unc_cols) and body.rows:
            hit = uses(body, unc_cols)
            if hit.any():
                rows.append(RowBlock(r.name, cut(body.take(np.nonzero(~hit)[0])), lo[~hit],
                                     hi[~hit],
                                     [lb for lb, h in zip(labels, hit, strict=True) if not h]
                                     if labels else None))
                picked = cut(body.take(np.nonzero(hit)[0]))
                for s, values in enumerate(scenarios):
                    rows.append(RowBlock(
                        f"{r.name}@{s}", _fix(picked, unc_cols, values), lo[hit], hi[hit],
                        [f"{lb}@scenario{s}" for lb, h in zip(labels, hit, strict=True) if h]
                        if labels else None))
                continue
        rows.append(RowBlock(r.name, cut(body), lo, hi, labels))

    # rows with atoms in them (an LP backend's): which rows bound their body from above (+1),
    # from below (-1) or not at all (0); the epigraphs' variables come before the objective's
    plans = {} if keep_nonlinear else {
        k: _row_plan(b) for k, b in enumerate(rows) if isinstance(b.body, NL)}
    width = (risk_width + _aux_needed(bridged_terms, len(scenarios), unc_cols)
             + sum(_epigraph_width(node) for plan in plans.values() for _, sign, part in plan
                   if sign for _, node in part.terms))
    for k, plan in plans.items():
        block = rows[k]
        rows[k] = RowBlock(block.name, _linear_rows(block, plan, aux, rows, width), block.lo,
                           block.hi, block.labels)

    sign = 1.0 if ex.sense == "minimize" else -1.0
    poly = _widen(objective if isinstance(objective, Poly) else objective.poly, width)
    if len(unc_cols):
        poly = substitute(poly, unc_cols, scenarios.mean(axis=0))
    kept: list = []
    for matrix, node in terms:
        weights = np.asarray(matrix.toarray()).ravel()
        if _is_risk(node):
            poly = poly + _risk(node, weights, sign, aux, rows, unc_cols, scenarios, width)
            continue
        copies = [(node, 1.0)]
        if len(unc_cols) and _holds_uncertain(node, unc_cols):
            copies = [(_fix_node(node, unc_cols, v), 1.0 / len(scenarios)) for v in scenarios]
        for copy, share in copies:
            if keep_nonlinear:
                kept.append((matrix * share, copy))
            else:
                poly = poly + _epigraph(copy, share * weights, sign, aux, rows, width)
    final = aux.start + aux.count
    assert final == width, (final, width)
    result = _widen(poly, final)
    return Bridged(
        ex.sense,
        NL(result, kept) if kept else result,
        [RowBlock(b.name, _widen(b.body, final) if isinstance(b.body, Poly) else b.body, b.lo, b.hi,
                  b.labels) for b in rows],
        final,
        np.concatenate(aux.lower) if aux.lower else np.zeros(0),
        np.concatenate(aux.upper) if aux.upper else np.zeros(0),
    )


def _aux_needed(terms, scenarios: int, unc_cols: np.ndarray) -> int:
    """How many auxiliary variables the bridges will add (so every Poly gets its final width)."""
    total = 0
    for _, node in terms:
        if _is_risk(node):  # the atoms nested in the loss, once per scenario
            arg = node.args[0]
            if isinstance(arg, NL):
                total += scenarios * sum(_epigraph_width(inner) for _, inner in arg.terms)
        if node.name == "mean":
            continue
        if node.name == "worst":
            total += node.rows
        elif node.name == "cvar":
            total += node.rows * (1 + scenarios)
        else:
            uncertain = len(unc_cols) and _holds_uncertain(node, unc_cols)
            total += _epigraph_width(node) * (scenarios if uncertain else 1)
    return total


def _epigraph_width(node: AtomNode) -> int:
    """The auxiliary variables `_epigraph` adds for `node`, the atoms nested in it included."""
    total = node.args[0].rows if node.name == "norm1" else node.rows
    for arg in node.args:
        if isinstance(arg, NL):
            total += sum(_epigraph_width(inner) for _, inner in arg.terms)
    return total


def _risk_rows(name: str, body: NL, lo, hi, aux: _Aux, rows: list[RowBlock], unc_cols,
               scenarios, width: int) -> Poly | NL:
    """A constraint's body with its risk aggregators replaced by their bridges (the rows
    that hold one are bounded from above, or all from below: the checker let `cvar` and
    `worst` bound from above only, as convex functions)."""
    used = np.zeros(body.rows, dtype=bool)
    for matrix, node in body.terms:
        if _is_risk(node):
            used |= np.diff(sp.csr_array(matrix).indptr) > 0
    upper = np.isfinite(np.asarray(hi, dtype=float))[used]
    lower = np.isfinite(np.asarray(lo, dtype=float))[used]
    if (upper & lower).any() or not (upper.all() or lower.all()):
        raise DflError(f"constraint `{name}` bounds a risk aggregator from both sides",
                       hint="bound it from one side only")
    sign = 1.0 if upper.all() else -1.0
    poly = _widen(body.poly, width)
    kept = []
    for matrix, node in body.terms:
        if _is_risk(node):
            poly = poly + _risk(node, sp.csr_array(matrix), sign, aux, rows, unc_cols,
                                scenarios, width)
        else:
            kept.append((matrix, node))
    return NL(poly, kept) if kept else poly


def _row_plan(block: RowBlock) -> list[tuple[np.ndarray | None, float, NL]]:
    """How the rows of a block with atoms in its body are bridged: (rows, sign, their body)
    for the rows bounded above (sign +1: `body <= hi`, convex), below (-1: `body >= lo`,
    concave) and not at all (0: an infinite data bound, the atoms are dropped). rows is None
    when one sign covers the block. The checker let no atom into an `==` row or a chain; a
    row bounded on both sides here is refused all the same."""
    body = block.body
    name = block.name.split("@")[0]  # (a scenario's copy is `name@s`)
    upper = np.isfinite(np.asarray(block.hi, dtype=float))
    lower = np.isfinite(np.asarray(block.lo, dtype=float))
    if (upper & lower).any():
        atoms = ", ".join(sorted({node.name for _, node in body.terms}))
        raise DflError(f"constraint `{name}` bounds an expression with `{atoms}` from both "
                       "sides: only one side of it is convex",
                       hint="bound it from one side only (`<=` for abs, pos, max, norm1, "
                            "norm_inf; `>=` for min)")
    if upper.all():
        return [(None, 1.0, body)]
    if lower.all():
        return [(None, -1.0, body)]
    plan = []
    for mask, sign in ((upper, 1.0), (lower, -1.0), (~upper & ~lower, 0.0)):
        idx = np.flatnonzero(mask)
        if len(idx):
            plan.append((idx, sign, _restrict(body.take(idx)) if sign else body.take(idx)))
    return plan


def _linear_rows(block: RowBlock, plan, aux: _Aux, rows: list[RowBlock], width: int) -> Poly:
    """The block's body with every atom replaced by its epigraph (hypograph) variable, the
    epigraphs' rows appended to `rows` (named `#abs of NAME`: an IIS names their owner)."""
    first = len(rows)
    total = None
    for idx, sign, part in plan:
        try:
            poly = (_arg_poly(part, width, (sign, aux, rows)) if sign
                    else _widen(part.poly, width))
        except DflError as exc:
            raise DflError(f"constraint `{block.name.split('@')[0]}`: {exc.message}",
                           hint=exc.hint) from None
        if idx is not None:
            place = sp.csr_array((np.ones(len(idx)), (idx, np.arange(len(idx)))),
                                 shape=(block.body.rows, len(idx)))
            poly = poly.rowmap(place)
        total = poly if total is None else total + poly
    for k in range(first, len(rows)):
        rows[k].name = f"{rows[k].name} of {block.name}"
    return total


def _restrict(payload):
    """`payload` with each atom node cut down to the rows its matrix uses (`NL.take` keeps
    the nodes whole), the atoms nested in them too; an atom no row uses is dropped."""
    if not isinstance(payload, NL):
        return payload
    terms = []
    for matrix, node in payload.terms:
        m = sp.csr_array(matrix)
        used = np.zeros(node.rows, dtype=bool)
        used[m.indices] = True
        if not used.any():
            continue
        if used.all():
            node = _take_node(node, None)
        else:
            keep = np.flatnonzero(used)
            remap = np.cumsum(used) - 1
            m = sp.csr_array((m.data, remap[m.indices], m.indptr), shape=(m.shape[0], len(keep)))
            node = _take_node(node, keep)
        terms.append((m, node))
    return NL(payload.poly, terms)


def _take_node(node: AtomNode, keep: np.ndarray | None) -> AtomNode:
    """The node's output rows `keep` (all when None), its arguments restricted in turn."""
    if keep is None:
        if not any(isinstance(a, NL) for a in node.args):
            return node
        return AtomNode(node.name, tuple(_restrict(a) for a in node.args), node.rows,
                        node.starts, node.param)
    if node.starts is None:
        idx, starts = keep, None
    else:
        lengths = np.diff(node.starts)[keep]
        ends = np.cumsum(lengths)
        idx = (np.repeat(node.starts[:-1][keep] - (ends - lengths), lengths)
               + np.arange(int(ends[-1]) if len(ends) else 0))
        starts = np.concatenate([[0], ends]).astype(np.int64)
    args = []
    for a in node.args:
        if isinstance(a, (Poly, NL)):
            args.append(_restrict(a.take(idx)))
        elif np.ndim(a):
            args.append(np.asarray(a)[idx])
        else:
            args.append(a)
    return AtomNode(node.name, tuple(args), len(keep), starts, node.param)


def _holds_uncertain(node: AtomNode, unc_cols: np.ndarray) -> bool:
    return any(isinstance(a, (Poly, NL)) and uses(a, unc_cols).any() for a in node.args)


def _normalize_rows(r):
    """Rows with symbolic bounds or a nonlinear body -> body - bounds, with numeric bounds."""
    if isinstance(r.body, NL):
        raise DflError(f"constraint `{r.name}` is nonlinear; an LP/QP backend can't take it")
    body = r.body
    lo, hi = r.lo, r.hi
    if isinstance(lo, Poly) or isinstance(hi, Poly):
        blocks, los, his = [], [], []
        for bound, is_lo in ((lo, True), (hi, False)):
            if isinstance(bound, Poly):
                blocks.append(body - bound)
                los.append(np.zeros(body.rows) if is_lo else np.full(body.rows, -np.inf))
                his.append(np.full(body.rows, np.inf) if is_lo else np.zeros(body.rows))
            else:
                blocks.append(body)
                los.append(bound if is_lo else np.full(body.rows, -np.inf))
                his.append(np.full(body.rows, np.inf) if is_lo else bound)
        stacked = _vstack(blocks)
        return stacked, np.concatenate(los), np.concatenate(his)
    return body, lo, hi


def _vstack(polys: list[Poly]) -> Poly:
    rows = sum(p.rows for p in polys)
    total = None
    at = 0
    for p in polys:
        place = sp.csr_array(
            (np.ones(p.rows), (np.arange(at, at + p.rows), np.arange(p.rows))), shape=(rows, p.rows)
        )
        part = p.rowmap(place)
        total = part if total is None else total + part
        at += p.rows
    return total


def _uncertain(inst) -> tuple[np.ndarray, np.ndarray]:
    cols, values = [], []
    for entity in inst.uncertain:
        scen = entity.extra.get("scenarios")
        if scen is None:
            raise DflError(
                f"uncertain param `{entity.name}` has no scenarios in the data",
                entity.decl.pos,
                hint="give a list of scenarios (or sample them from a trained generator)",
            )
        cols.append(entity.columns())
        values.append(scen)
    if not cols:
        return np.zeros(0, dtype=np.int64), np.zeros((1, 0))
    counts = {v.shape[0] for v in values}
    if len(counts) != 1:  # a mistake in the data: say which params disagree, at the second
        sizes = [v.shape[0] for v in values]
        k = next(k for k, size in enumerate(sizes) if size != sizes[0])
        first, other = inst.uncertain[0], inst.uncertain[k]
        message = (f"every uncertain param needs the same number of scenarios: `{first.name}` "
                   f"has {sizes[0]}, `{other.name}` has {sizes[k]}")
        source = getattr(inst, "source", None)
        if source is None:
            raise DflError(message)
        raise source.error(message, other.name)
    return np.concatenate(cols), np.concatenate(values, axis=1)


def _fix_node(node: AtomNode, cols: np.ndarray, values: np.ndarray) -> AtomNode:
    args = tuple(_fix(a, cols, values) if isinstance(a, (Poly, NL)) else a for a in node.args)
    return AtomNode(node.name, args, node.rows, node.starts, node.param)


def _fix(payload: Poly | NL, cols: np.ndarray, values: np.ndarray) -> Poly | NL:
    """`payload` with the symbols `cols` fixed at `values`, inside atoms too."""
    if isinstance(payload, Poly):
        return substitute(payload, cols, values)
    terms = [(m, _fix_node(n, cols, values)) for m, n in payload.terms]
    return NL(substitute(payload.poly, cols, values), terms)


def _widen(poly: Poly, width: int) -> Poly:
    if poly.lin.shape[1] == width:
        return poly
    lin = poly.lin.tocsr()
    lin = sp.csr_array((lin.data, lin.indices, lin.indptr), shape=(poly.rows, width))
    return Poly(poly.const, lin, poly.quad, poly.pairs)


def _arg_poly(arg, width: int, nested=None) -> Poly:
    """An atom's argument as a Poly. Atoms nested in it (`max{i in I} pos(x[i] - 1)`) become
    epigraph variables in their turn when `nested` = (sign, aux, rows) says how the argument is
    bounded: sign +1 where the outer epigraph bounds it from above (so an inner convex atom may
    be replaced by a variable above it), -1 from below."""
    if isinstance(arg, Poly):
        return _widen(arg, width)
    if isinstance(arg, NL):
        if nested is None:
            raise DflError("nested nonlinear atoms are not supported by the LP/QP bridges")
        sign, aux, rows = nested
        poly = _widen(arg.poly, width)
        for matrix, inner in arg.terms:
            poly = poly + _epigraph(inner, matrix, sign, aux, rows, width)
        return poly
    return Poly.constant(np.asarray(arg, dtype=float), width)


class _Low:
    """The `atoms.epigraph.Lowering` of a bridge: auxiliary columns from `aux`, rows into
    `rows`, arguments lowered with atoms nested in them."""

    def __init__(self, aux: _Aux, rows: list[RowBlock], width: int) -> None:
        self.aux, self.out, self.width = aux, rows, width

    def new(self, k: int, lower: float = -np.inf, upper: float = np.inf) -> np.ndarray:
        return self.aux.new(k, lower, upper)

    def rows(self, atom: str, body: Poly, lo: float, hi: float) -> None:
        _rows(self.out, atom, body, lo, hi)

    def argument(self, arg, sign: float) -> Poly:
        return _arg_poly(arg, self.width, (sign, self.aux, self.out))

    def convex(self, node: AtomNode) -> bool:
        return ATOMS[node.name].curvature is Curv.CONVEX


def _epigraph(node: AtomNode, weights, sign, aux: _Aux, rows: list[RowBlock], width) -> Poly:
    """Replace an atom's rows by its epigraph (or hypograph) variables (`Atom.lower`)."""
    return ATOMS[node.name].lower(node, weights, sign, _Low(aux, rows, width))


def _risk(node, weights, sign, aux: _Aux, rows, unc_cols, scenarios, width) -> Poly:
    """`weights` combines the node's rows into one row (a vector, the objective's) or into
    a constraint's rows (a sparse matrix, rows x node.rows)."""
    w = weights.data if sp.issparse(weights) else weights
    # minimized loss or a bound from above: the upper tail; maximized, bounded below: lower
    upper = (w * sign >= 0).all()
    if node.name != "mean" and not upper and not (w * sign <= 0).all():
        raise DflError(f"`{node.name}` enters with mixed signs")
    # piecewise-linear atoms in the loss (`cvar(a, c * x + b * pos(d - x))`) get epigraph
    # variables per scenario: the loss is bounded from above (upper tail) or from below
    nested = (1.0 if upper else -1.0, aux, rows)
    arg = node.args[0]
    per = [_arg_poly(_fix(arg, unc_cols, v) if len(unc_cols) else arg, width, nested)
           for v in scenarios]
    return ATOMS[node.name].aggregate(node, per, weights, upper, _Low(aux, rows, width))


def _rows(rows: list[RowBlock], name: str, body: Poly, lo: float, hi: float) -> None:
    rows.append(RowBlock(f"#{name}", body, np.full(body.rows, lo), np.full(body.rows, hi)))
