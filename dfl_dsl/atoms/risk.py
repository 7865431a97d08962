"""Risk aggregators over the scenarios of `uncertain` params: `mean(L)`, `cvar(α, L)`,
`worst(L)`.

For a minimized loss, `cvar` (Rockafellar & Uryasev, "Optimization of conditional
value-at-risk", J. Risk 2000) and `worst` are convex and nondecreasing; in a maximized
objective they measure the lower tail and are concave. Their lowering (`aggregate`) takes the
loss once per scenario, as the risk reduction (compile/reductions) fixes the scenarios.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..check.info import Curv
from ..errors import DflError
from .base import INCR, Atom, AtomError

if TYPE_CHECKING:
    from ..evaluate.nonlinear import AtomNode
    from ..evaluate.poly import Poly
    from .epigraph import Lowering


class Risk(Atom):
    risk = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.nargs = (2, 2) if name == "cvar" else (1, 1)
        self.data_args = (0,) if name == "cvar" else ()

    def shape(self, args):
        return args[-1].shape

    def function_curvature(self, sense):
        if self.name == "mean":
            return Curv.AFFINE
        return Curv.CONVEX if sense == "minimize" else Curv.CONCAVE

    def monotonicity(self, i, args):
        return INCR

    def sign(self, args):
        return args[-1].sign

    def vdeg(self, args):
        d = args[-1].vdeg
        if self.name == "mean":
            return d
        return 0 if d == 0 else None

    def ldeg(self, args):
        d = args[-1].ldeg
        if self.name == "mean" or d is None:
            return d
        return 1 if d <= 1 else None

    def apply(self, args, sense="minimize"):
        info = super().apply(args, sense)
        if self.name != "mean" and args[-1].pdeg:
            raise AtomError(f"a predicted param enters `{self.name}` nonlinearly", len(args) - 1)
        if args[-1].shape != ():
            raise AtomError(f"`{self.name}` aggregates a scalar loss over the scenarios", 1)
        return info.but(udeg=0, pdeg=args[-1].pdeg, nonsmooth=info.nonsmooth or self.name != "mean")

    def compose(self, args, sense):
        return super().compose(args[-1:], sense)

    def evaluate(self, ev, node, frame):
        from ..evaluate.nonlinear import NL, AtomNode
        from ..evaluate.values import EvalError, Val

        level = None
        if self.name == "cvar":
            alpha = ev.number(node.args[0], frame)
            if alpha.symbolic or alpha.framed or alpha.shape != ():
                raise DflError("cvar's level must be one number from data", node.args[0].pos)
            level = float(np.asarray(alpha.payload))
            if not 0 <= level < 1:
                raise DflError(f"cvar's level must be in [0, 1), got {level:g}",
                               node.args[0].pos)
        arg = ev.number(node.args[-1], frame)
        if arg.shape != ():
            raise EvalError(f"`{self.name}` aggregates a scalar over the scenarios")
        if not arg.symbolic:
            return arg  # no uncertain param inside: every scenario agrees
        atom = AtomNode(self.name, (arg.payload,), arg.payload.rows, None, level)
        return Val(NL.of(atom, ev.width), arg.framed, ())

    def aux_columns(self, node, scenarios=1):
        """`worst`: t per row; `cvar`: η per row and u per row and scenario."""
        return {"mean": 0, "worst": node.rows}.get(self.name, node.rows * (1 + scenarios))

    def aggregate(self, node: AtomNode, per: list[Poly], weights, upper: bool,
                  low: Lowering) -> Poly:
        """The lowered aggregate of the losses `per` (one Poly per scenario), combined by
        `weights` (see `epigraph.weighted`): the upper tail for a minimized loss or a bound
        from above, else the lower tail."""
        from ..evaluate.poly import Poly
        from .epigraph import weighted

        width, s_count = low.width, len(per)
        if self.name == "mean":
            total = per[0]
            for p in per[1:]:
                total = total + p
            return weighted(total.scale(np.full(total.rows, 1.0 / s_count)), weights, width)
        r = node.rows
        if self.name == "worst":
            t = Poly.symbols(low.new(r), width)
            for p in per:
                low.rows("worst", t - p, 0.0 if upper else -np.inf, np.inf if upper else 0.0)
            return weighted(t, weights, width)
        alpha = float(node.param)
        eta = low.new(r)
        u = low.new(r * s_count, lower=0.0)
        ee = Poly.symbols(eta, width)
        k = 1.0 / ((1.0 - alpha) * s_count)
        tail = None
        for s, p in enumerate(per):
            us = Poly.symbols(u[s * r : (s + 1) * r], width)
            # upper tail: u_s >= L_s - η ; lower tail: u_s >= η - L_s
            low.rows("cvar", us - p + ee if upper else us + p - ee, 0.0, np.inf)
            tail = us if tail is None else tail + us
        value = ee + tail.scale(np.full(r, k)) if upper else ee - tail.scale(np.full(r, k))
        return weighted(value, weights, width)


ATOMS = [Risk(name) for name in ("mean", "cvar", "worst")]
