"""Shared by the AMPL tests: where the models live, their hand-written JSON numbers, and a
Pyomo + HiGHS solve for the independent references.

Each model is a folder `models/NAME/` holding `NAME.mod` (plain AMPL), `NAME.dat` (AMPL data,
absent when the data sits after `data;` inside the .mod), `NAME.json` (the same numbers copied by
hand, in the JSON form a .dat maps to) and `reference.py`: `reference(d, objective)` builds the
same problem in Pyomo from the JSON numbers (never through dfl_dsl) and returns its optimum;
`OBJECTIVES` lists the objectives to compare (None: the model's only one)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

MODELS = Path(__file__).parent / "models"
BROKEN = Path(__file__).parent / "broken"


def names() -> list[str]:
    return sorted(p.name for p in MODELS.iterdir() if (p / f"{p.name}.mod").is_file())


def mod(name: str) -> Path:
    return MODELS / name / f"{name}.mod"


def dat(name: str) -> Path | None:
    path = MODELS / name / f"{name}.dat"
    return path if path.is_file() else None


def numbers(name: str) -> dict[str, Any]:
    """The hand-written JSON copy of the model's data."""
    return json.loads((MODELS / name / f"{name}.json").read_text())


def reference(name: str) -> ModuleType:
    path = MODELS / name / "reference.py"
    spec = importlib.util.spec_from_file_location(f"ampl_ref_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def at(table: Any, *keys: Any) -> Any:
    """`table[k1][k2]...` with JSON's string keys (`at(d["cost"], "GARY", 1)`)."""
    for key in keys:
        table = table[str(key)]
    return table


def get(table: dict, default: Any, *keys: Any) -> Any:
    """`at(...)`, or `default` where the data leaves the entry out."""
    try:
        return at(table, *keys)
    except KeyError:
        return default


def solve_result(model: Any) -> Any:
    """Solve a Pyomo model with HiGHS to proven optimality (no MIP gap); Pyomo's results.
    (No thread count: HiGHS keeps the one its first solve in the process set, and asking
    for another made Pyomo report `unknown` after any earlier HiGHS solve in the run.)"""
    from pyomo.contrib.solver.common.factory import SolverFactory

    result = SolverFactory("highs").solve(
        model, solver_options={"mip_rel_gap": 0.0, "mip_abs_gap": 0.0})
    assert str(result.termination_condition).endswith("convergenceCriteriaSatisfied"), \
        result.termination_condition
    return result


def solve(model: Any) -> float:
    """The optimum of a Pyomo model (see `solve_result`)."""
    return float(solve_result(model).incumbent_objective)

