"""Which true sample of a training or test file leaves the model without a solution, said
at that file: the sample's row, the arrays it reads, and for an infeasible LP the rows of an
irreducible infeasible subset, as `dfl solve` names them. (The oracle sees a batch of cost
vectors and can't tell the truth from a prediction; the data set that asked can.)"""

from __future__ import annotations

import numpy as np
import torch

from ..errors import DflError


def first_failing(oracle, theta: np.ndarray) -> tuple[int, DflError] | None:
    """The first sample whose true params the oracle finds no solution for, and its error:
    one solve per sample, run only after the batch failed."""
    for i in range(len(theta)):
        costs = oracle.costs(torch.as_tensor(theta[i:i + 1], dtype=torch.float64))
        try:
            oracle.solve(costs.numpy(), remember=False)
        except DflError as exc:
            return i, exc
    return None


def true_sample_error(oracle, theta: np.ndarray, source: str, batch_error: DflError
                      ) -> DflError:
    """`batch_error` (the oracle's, for the whole data set) restated at the file `source`:
    the sample that fails, the predicted arrays it gives, why."""
    found = first_failing(oracle, theta)
    if found is None:  # (a solve that fails only in a batch: say what the oracle said)
        return batch_error
    i, exc = found
    status = getattr(exc, "status", None) or "no solution"
    inst = oracle.inst
    names = ", ".join(f"`{e.name}`" for e in inst.predicted)
    message = (f"true sample {i} (row {i} of {names}) leaves the model "
               f"{status if status in ('infeasible', 'unbounded') else 'without a solution'}"
               f": {exc.message}")
    if status == "infeasible":
        rows = iis_labels(inst, oracle.form)
        if rows:
            message += "; an irreducible infeasible subset of rows: " + ", ".join(rows[:20])
    place = (f" (model {inst.model.filename})" if inst.model.filename else "")
    hint = exc.hint if status != "unbounded" else (
        "check this sample's values, or give the variables finite bounds "
        "(`var x{...} >= 0, <= U;`) or constraints that hold them")
    error = DflError(message + place, filename=source, hint=hint)
    error.status = status
    return error


def iis_labels(inst, form) -> list[str] | None:
    """An infeasible LP's IIS rows by their constraints' labels (the objective, hence the
    predicted params, plays no part in it); None for a MILP or where HiGHS finds none."""
    if form.is_mip:
        return None
    from ..backends.common import row_labels
    from ..backends.highs import HighsModel
    from ..compile.bridges import build_linear

    if form.kept_rows is not None:  # rows turned into bounds hide from an IIS
        form = build_linear(inst, reduce=False)
    rows = HighsModel(form, theta=np.zeros(form.n_theta)).solve().iis_rows
    return row_labels(inst, form, rows) if rows else None
