"""The chain of reductions that takes a model to a backend: a breadth-first search from the
model's form through the reductions' effects (forms.STEPS) to a form the backend takes, as
MathOptInterface's bridge optimizer finds the fewest bridges to a constraint type a solver
supports (Legat et al., INFORMS J. Computing 2022). A backend no chain reaches does not take
the model."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..forms import STEPS, Form
from .declarations import BACKENDS, Backend


def plan(form: Form, backend: Backend) -> tuple[str, ...] | None:
    """The names of the fewest steps after which `backend` takes `form`, or None."""
    return plan_to(form, backend.takes)


def standard_form(form: Form) -> bool:
    """The LP/MILP/QP standard form (compile/linear.py) every linear backend starts from."""
    return (form.objective in ("linear", "quadratic") and form.rows == "linear"
            and not form.traits & {"risk", "scenarios"})


def plan_to(form: Form, takes: Callable[[Form], bool]) -> tuple[str, ...] | None:
    """The fewest steps (breadth first) from `form` to one that `takes` accepts, or None."""
    seen = {form}
    queue: deque[tuple[Form, tuple[str, ...]]] = deque([(form, ())])
    while queue:
        here, steps = queue.popleft()
        if takes(here):
            return steps
        for step in STEPS:
            there = step.reaches(here)
            if there is not None and there not in seen:
                seen.add(there)
                queue.append((there, (*steps, step.name)))
    return None


def reachable(form: Form, klass: str) -> list[Backend]:
    """The backends some chain reaches, best first for the model's class."""
    able = [b for b in BACKENDS if plan(form, b) is not None]
    return sorted(able, key=lambda b: b.rank.get(klass, len(BACKENDS)))
