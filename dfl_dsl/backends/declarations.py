"""What each backend takes, stated without importing it (a solver's module pulls in HiGHS,
Pyomo, CVXPY or torch): the forms of objective and rows (forms.py), the traits a model may
(or must) have, its options, where it stands among the backends for each class, and what else
it offers (a device, differentiable layers). The chain search (chains.py), the `--backend`
help, the option checks and `dfl check`'s "backends:" line all read these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..forms import Form

LINEAR_ROWS = frozenset({"linear"})
LP_QP = frozenset({"linear", "quadratic"})


@dataclass(frozen=True)
class Option:
    name: str
    help: str = ""  # the CLI flag's help, for the options `dfl solve` has a flag for


@dataclass(frozen=True)
class Backend:
    name: str
    module: str  # under dfl_dsl.backends
    objectives: frozenset[str]  # the objective forms it takes
    rows: frozenset[str] = LINEAR_ROWS  # the row forms it takes
    traits: frozenset[str] = frozenset({"predicted"})  # what else a model may have
    needs: frozenset[str] = frozenset()  # traits a model must have (Frank–Wolfe: bounded)
    integer: frozenset[str] = frozenset()  # the objectives it takes with integer columns
    rank: Mapping[str, int] = field(default_factory=dict)  # its place per class, lowest first
    options: tuple[Option, ...] = ()
    features: frozenset[str] = frozenset()  # device, differentiable, violations
    bounds_as_rows: bool = False  # keeps single-variable rows (each violation is named)

    def takes(self, form: Form) -> bool:
        if form.objective not in self.objectives or form.rows not in self.rows:
            return False
        if not self.needs <= form.traits or not form.traits <= self.traits | self.needs | {
                "integer"}:
            return False
        return "integer" not in form.traits or form.objective in self.integer

    @property
    def option_names(self) -> list[str]:
        return sorted(o.name for o in self.options)


DEVICE = Option("device", "cpu | cuda: where the torch backends ({}) run.")

BACKENDS: tuple[Backend, ...] = (
    Backend("highs", "highs", LP_QP, integer=frozenset({"linear"}),
            traits=frozenset({"predicted", "bounded"}), rank={"LP": 0, "MILP": 0, "QP": 0}),
    Backend("pyomo", "pyomo_backend", LP_QP, integer=frozenset({"linear"}),
            traits=frozenset({"predicted", "bounded"}), rank={"LP": 1, "MILP": 1, "QP": 2},
            options=(Option("write", "pyomo: also write the model as .lp, .mps or .nl."),)),
    Backend("cvxpy", "cvxpy_backend",
            frozenset({"linear", "quadratic", "piecewise", "lowerable", "conic"}),
            rows=frozenset({"linear", "piecewise", "conic"}),
            integer=frozenset({"linear", "piecewise"}), traits=frozenset({"predicted",
                                                                          "bounded"}),
            rank={"LP": 2, "MILP": 2, "QP": 1, "SOCP": 0}, features=frozenset({"differentiable"})),
    Backend("flexqp", "flexqp", LP_QP, traits=frozenset({"predicted", "bounded"}),
            rank={"LP": 3, "QP": 3},
            options=(DEVICE, Option("dtype"), Option("eps"), Option("max_iter"),
                     Option("policy")),
            features=frozenset({"device", "differentiable", "violations"}), bounds_as_rows=True),
    Backend("obcd", "obcd", frozenset({"stiefel"}), rank={"STIEFEL": 0},
            options=(DEVICE, *(Option(name) for name in (
                "X0", "batch", "k", "majorize", "max_rounds", "record", "restarts", "sample",
                "score", "strategy", "threads", "tol"))),
            features=frozenset({"device"})),
    Backend("fw", "fw", frozenset({"quadratic"}), needs=frozenset({"bounded"}), rank={"QP": 4},
            options=(Option("variant", "fw: pairwise | vanilla | short | primal-dual | "
                                       "optimistic."), Option("tol"))),
    Backend("aapga", "aapga", frozenset({"scm"}), integer=frozenset({"scm"}), rank={"SCM": 0},
            options=(DEVICE,),
            features=frozenset({"device"})),
)

BY_NAME: dict[str, Backend] = {b.name: b for b in BACKENDS}


def option_help(name: str) -> str:
    """The CLI help of an option, from the backend(s) that declare it."""
    owners = [b.name for b in BACKENDS if name in b.option_names]
    text = next(o.help for b in BACKENDS for o in b.options if o.name == name)
    return text.format(", ".join(owners))


def backend_help() -> str:
    return " | ".join(["auto", *BY_NAME]) + " (auto: by class)."
