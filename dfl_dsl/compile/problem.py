"""What the reductions pass along: an objective and blocks of rows lo <= body <= hi over
z = [x; θ; aux], where each reduction appends the auxiliary columns it needs.

Every block knows where it came from: a model constraint's own rows have no `origin`; rows a
reduction added say which (and for which atom or scenario). Duals, IIS labels and messages read
that, never a block's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ..errors import DflError
from ..evaluate.nonlinear import NL
from ..evaluate.poly import Poly
from ..instance import Instance
from .expand import Expanded


@dataclass(frozen=True)
class Origin:
    """The reduction that added a row block: its `atom` (an epigraph's or a risk measure's
    rows) or its `scenario` (a constraint's copy for one scenario; None: the rows of a split
    constraint that hold no uncertain param, kept once). `rows`: the positions, among the
    constraint's rows, of the rows the block holds (None: all of them, in order)."""

    reduction: str  # "epigraph" | "risk" | "scenario"
    atom: str | None = None
    scenario: int | None = None
    rows: tuple[int, ...] | None = None

    def describe(self, owner: str) -> str:
        """How an IIS or a message names a row of this block; `owner` is the constraint it
        belongs to ("" for the objective's)."""
        if self.reduction == "scenario":
            return owner if self.scenario is None else f"{owner}@{self.scenario}"
        return f"{owner or 'objective'} (epigraph of `{self.atom}`)"


@dataclass
class RowBlock:
    name: str  # the model constraint the rows belong to ("" for the objective's)
    body: Poly | NL
    lo: np.ndarray
    hi: np.ndarray
    labels: list[str] | None = None
    origin: Origin | None = None  # None: the model's own rows


@dataclass
class Problem:
    """min/max objective s.t. lo <= rows <= hi, over `width` columns of z: the instance's
    [x; θ], then the auxiliaries with bounds `aux_lower`/`aux_upper`."""

    sense: str
    objective: Poly | NL
    rows: list[RowBlock]
    width: int
    aux_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # the columns of z the uncertain params take, and their scenarios (S × columns)
    uncertain: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scenarios: np.ndarray = field(default_factory=lambda: np.zeros((1, 0)))
    structures: list = field(default_factory=list)  # what the lowerings declared (L1Pairs)

    @staticmethod
    def of(ex: Expanded, inst: Instance, *, label_rows: bool = False) -> Problem:
        """The expanded model, one block per constraint (bounds may still be symbolic)."""
        blocks = [RowBlock(r.name, r.body, r.lo, r.hi, r.labels() if label_rows else None)
                  for r in ex.constraints]
        cols, scenarios = uncertain(inst)
        return Problem(ex.sense, ex.objective, blocks, inst.width, uncertain=cols,
                       scenarios=scenarios)

    def widened(self, rows: list[RowBlock], objective: Poly | NL, aux: Aux) -> Problem:
        """The problem with `rows` and `objective` and the auxiliaries of `aux` appended."""
        lower = np.concatenate([self.aux_lower, *aux.lower])
        upper = np.concatenate([self.aux_upper, *aux.upper])
        return replace(self, objective=objective, rows=rows, width=aux.end,
                       aux_lower=lower, aux_upper=upper)

    def at_width(self) -> Problem:
        """Every polynomial at the problem's width (a reduction's rows keep the width they
        were made at; the matrices need one)."""
        objective = widen(self.objective, self.width)
        rows = [replace(b, body=widen(b.body, self.width)) for b in self.rows]
        return replace(self, objective=objective, rows=rows)


class Aux:
    """Allocates auxiliary columns after `start`, up to a width counted beforehand (every
    Poly a reduction makes is built at its final width)."""

    def __init__(self, start: int, count: int) -> None:
        self.start, self.end = start, start + count
        self.lower: list[np.ndarray] = []
        self.upper: list[np.ndarray] = []
        self.used = 0

    def new(self, k: int, lower: float = -np.inf, upper: float = np.inf) -> np.ndarray:
        cols = self.start + self.used + np.arange(k, dtype=np.int64)
        self.used += k
        self.lower.append(np.full(k, lower))
        self.upper.append(np.full(k, upper))
        return cols

    def check(self) -> None:
        assert self.start + self.used == self.end, (self.start + self.used, self.end)


def widen(payload: Poly | NL, width: int) -> Poly | NL:
    """A Poly over more columns of z (the new ones unused); an NL's own polynomial."""
    if isinstance(payload, NL):
        return payload
    if payload.lin.shape[1] == width:
        return payload
    lin = payload.lin.tocsr()
    lin = sp.csr_array((lin.data, lin.indices, lin.indptr), shape=(payload.rows, width))
    return Poly(payload.const, lin, payload.quad, payload.pairs)


def uncertain(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """The columns of z the uncertain params take, and their scenarios (S × columns)."""
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
