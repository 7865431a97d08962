"""A model's form as the checker sees it, before any data, and what each reduction makes of
it: what the backends' chains are planned with (backends/chains.py), as MathOptInterface
plans its bridges from constraint types (Legat et al., "MathOptInterface: a data structure
for mathematical optimization problems", INFORMS J. Computing 2022).

The runtime reductions (compile/reductions) carry out the same steps on the bound model;
`STEPS` says, for each by name, which forms it accepts and which form it leaves. This module
imports nothing, so `dfl check` plans without numpy's sparse machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

# the objective, after the DCP check (it has the right curvature for its sense):
#   linear     affine, or no objective
#   quadratic  a convex quadratic polynomial
#   piecewise  atoms whose epigraphs are linear (abs, max, norm1, cvar, ...)
#   lowerable  atoms whose lowerings leave a QP (huber, a quadratic plus piecewise terms)
#   conic      any other convex atoms (norm2, sqrt, log_sum_exp, ...)
#   scm        a sum of concave over modular functions of binary variables
#   stiefel    f(X) + h(X) over the Stiefel manifold
# the rows: linear (affine), piecewise (epigraphs make them linear), conic
# traits: integer, scenarios (uncertain params), risk (mean/cvar/worst), predicted,
#   bounded (a smooth objective over linear rows on bounded columns: Frank–Wolfe's home)


@dataclass(frozen=True)
class Form:
    objective: str
    rows: str = "linear"
    traits: frozenset[str] = frozenset()

    def without(self, trait: str) -> Form:
        return replace(self, traits=self.traits - {trait})


@dataclass(frozen=True)
class Step:
    """A reduction's effect on a form: `reaches` is the form it leaves, or None where it
    does not apply."""

    name: str
    reaches: Callable[[Form], Form | None]


def _risk(form: Form) -> Form | None:
    return form.without("risk") if "risk" in form.traits else None


def _scenarios(form: Form) -> Form | None:
    # risk measures first: what stays uncertain outside them must hold in every scenario
    if "scenarios" not in form.traits or "risk" in form.traits:
        return None
    return form.without("scenarios")


_LOWERED = {"piecewise": "linear", "lowerable": "quadratic"}


def _epigraphs(form: Form) -> Form | None:
    if form.traits & {"risk", "scenarios"}:  # (their copies and rows first)
        return None
    objective = _LOWERED.get(form.objective, form.objective)
    rows = _LOWERED.get(form.rows, form.rows)
    if (objective, rows) == (form.objective, form.rows):
        return None
    return replace(form, objective=objective, rows=rows)


STEPS: tuple[Step, ...] = (
    Step("risk measures", _risk),
    Step("scenario split", _scenarios),
    Step("epigraphs", _epigraphs),
)


def lowered(form: Form) -> Form:
    """The form once every step that applies has run (what classifies a model)."""
    changed = True
    while changed:
        changed = False
        for step in STEPS:
            after = step.reaches(form)
            if after is not None:
                form, changed = after, True
    return form


def class_name(form: Form) -> str:
    """LP, MILP, QP, MIQP, SOCP, SCM or STIEFEL: the class of LANGUAGE.md §4."""
    low = lowered(form)
    special = {"scm": "SCM", "stiefel": "STIEFEL"}.get(low.objective)
    if special:
        return special
    if "conic" in (low.objective, low.rows):
        return "SOCP"
    mixed = "integer" in low.traits
    if low.objective == "quadratic":
        return "MIQP" if mixed else "QP"
    return "MILP" if mixed else "LP"
