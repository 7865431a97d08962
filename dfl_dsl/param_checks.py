"""A param's declared checks (`int`, `binary`, `>= e`, `in SET`, `psd`, ...) tested on rows of
its values: at bind time on the data (one row, or one per scenario: `bind.py`) and on every
sample of a training file (`learn/dataset.py`). Both ask `first_breach` and word the answer for
their reader: the data file's key, or the training file's array and sample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ast
from .bind_sets import text_or_number
from .errors import DflError
from .evaluate.elements import SetValue, element_of
from .evaluate.entities import Domain, Entity
from .evaluate.evaluator import Evaluator
from .evaluate.values import Val, flat_data


@dataclass
class Breach:
    """The first value (or matrix) that fails one of a param's checks."""

    row: int  # the row of the values checked: a scenario, a sample
    entry: int | None  # the entry (None: a whole matrix failed `psd` or `symmetric`)
    text: str  # what is wrong, after the param's name: "value -1 breaks `>= 0`"
    pos: ast.Pos  # the check in the model (the declaration for `int` and `binary`)
    hint: str | None = None

    def said(self, subject: str) -> str:
        """The message about `subject` (the param, the entry and the row, as the reader knows
        them): "param `c`[b]: value -1 breaks `>= 0`", "param `P` is not symmetric: ..."."""
        return f"{subject}{' ' if self.entry is None else ': '}{self.text}"


def per_entry(v: Val, domain: Domain, node: ast.Expr, elem: bool,
              what: str = "the value", owner: str = "the param", *,
              one_stays_one: bool = False) -> np.ndarray:
    """A data expression's value as one number (or element) per entry of `domain`. With
    `one_stays_one`, a single number (`>= 0`, the usual bound or check) comes back as a 0-d
    array for the caller to broadcast, instead of written out once per entry (8 MB at a
    million entries)."""
    if v.symbolic:
        raise DflError("this must be computed from data only", node.pos)
    if not elem and v.kind == "elem":
        v = _texts_as_numbers(v, node, owner)
    if one_stays_one and not v.framed and np.ndim(v.payload) == 0:
        return np.asarray(v.payload, dtype=np.int64 if elem else float)
    if v.framed:
        data = flat_data(v, True, v.shape, domain.n)
        if v.shape != ():
            raise DflError("each entry must be one number", node.pos)
        return data.astype(np.int64 if elem else float)
    data = np.asarray(v.payload)
    want = domain.shape if domain.arity else ()
    if data.shape != () and data.shape != tuple(want):
        raise DflError(
            f"{what} has shape {list(data.shape)}, {owner} is declared {list(want)}",
            node.pos,
        )
    # one pass: a fresh array of the entries (the caller's data is never shared)
    return np.array(np.broadcast_to(data, want), dtype=np.int64 if elem else float).ravel()


def _texts_as_numbers(v: Val, node: ast.Expr, owner: str) -> Val:
    """An element given to a numeric param: its number, as MathProg reads `"5"` (GLPK's cal
    computes weekdays as `time2str(t, "%w")`); a text that is no number is an error, never
    its key taken for a value."""
    keys = np.asarray(v.payload)
    numbers = np.empty(keys.shape)
    for at, key in np.ndenumerate(keys):
        element = element_of(key)
        try:
            numbers[at] = float(element)
        except ValueError:
            raise DflError(f"{owner} holds numbers, and this is the text \"{element}\"",
                           node.pos) from None
    return Val(numbers, v.framed, v.shape)


_FAILS = {">=": np.less, "<=": np.greater, ">": np.less_equal, "<": np.greater_equal,
          "!=": np.equal}


def first_breach(evaluator: Evaluator, stmt: ast.ParamDecl, entity: Entity, rows: np.ndarray,
                 given=True) -> Breach | None:
    """The first of `stmt`'s checks that `rows` (rows × entries) fail, None when all hold;
    `given` masks the entries that have a value (the others have nothing to check)."""
    if "int" in stmt.kinds:
        bad = ~np.isclose(rows, np.round(rows)) & np.isfinite(rows) & given
        if bad.any():
            return elementwise_breach(rows, bad, "isn't an integer (declared `int`)", stmt.pos)
    for word in sorted({"binary", "logical"} & set(stmt.kinds)):
        bad = (rows != 0) & (rows != 1) & given
        if bad.any():
            return elementwise_breach(rows, bad, f"isn't 0 or 1 (declared `{word}`)", stmt.pos)
    domain = entity.domain
    for check in stmt.checks:
        if check.op == "in":
            the_set = evaluator.set_of(check.operand, domain.frame)
            if not isinstance(the_set, SetValue):
                raise DflError("`in` needs a fixed set", check.operand.pos)
            bad = (the_set.position(rows.ravel()).reshape(rows.shape) < 0) & given
            if bad.any():
                where = (f"`{check.operand.id}`" if isinstance(check.operand, ast.Name)
                         else "the set")
                value = element_of(int(rows[tuple(v[0] for v in np.nonzero(bad))]))
                return elementwise_breach(rows, bad, f"is not in {where}", check.pos, elem=True,
                                    hint=text_or_number((value,), [the_set]))
            continue
        if check.op in ("psd", "symmetric"):
            breach = _matrix_breach(stmt, entity, rows, check)
            if breach is not None:
                return breach
            continue
        if entity.elem:  # `param t in NODES, <> s;`: elements compare as keys
            bound = evaluator.value(check.operand, domain.frame)
        else:
            bound = evaluator.number(check.operand, domain.frame)
        limit = per_entry(bound, domain, check.operand, entity.elem, "the check's bound",
                          one_stays_one=True)
        bad = _FAILS[check.op](rows, limit) & given
        if bad.any():
            return elementwise_breach(rows, bad, f"breaks `{check.op} {{limit}}`", check.pos,
                                limit, elem=entity.elem)
    return None


def elementwise_breach(rows, bad, what: str, pos: ast.Pos, limit=None, elem=False,
                       hint=None) -> Breach:
    """The first entry `bad` marks (rows × entries), failing `what`."""
    row, entry = (int(v[0]) for v in np.nonzero(bad))
    value = rows[row, entry]
    shown = repr(element_of(int(value))) if elem else f"{value:g}"
    if limit is not None:  # the bound this entry breaks (bounds may differ per entry)
        bound = np.broadcast_to(limit, rows.shape[1:])[entry]
        what = what.replace("{limit}", repr(element_of(int(bound))) if elem else f"{bound:g}")
    count = int(bad.sum())
    more = f" ({count - 1} more entries too)" if count > 1 else ""
    return Breach(row, entry, f"value {shown} {what}{more}", pos, hint)


def _matrix_breach(stmt, entity, rows, check: ast.ParamCheck) -> Breach | None:
    shape = entity.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise DflError(
            f"`{check.op}` needs a square matrix, `{stmt.name}` is {list(shape)}", stmt.pos
        )
    for row, matrix in enumerate(rows):
        text = _matrix_fault(matrix.reshape(shape), check.op, shape)
        if text is not None:
            return Breach(row, None, text, check.pos)
    return None


def _matrix_fault(m: np.ndarray, op: str, shape) -> str | None:
    """What makes `m` fail `psd` or `symmetric`, or None."""
    if op == "psd" and not np.isfinite(m).all():  # (no eigenvalues to speak of)
        i, j = np.unravel_index(int(np.argmin(np.isfinite(m))), shape)
        return f"is declared `psd` but [{i}, {j}] = {m[i, j]:g}"
    # the tests run on m / scale (entries within ±1): near 1e308, m + m.T and the
    # eigenvalues of m itself overflow, and LAPACK fails on the infinities
    scale = max(1.0, float(np.abs(m).max(initial=0.0)))
    asym = np.abs(m / scale - m.T / scale)
    if asym.max(initial=0.0) > 1e-8:
        i, j = np.unravel_index(int(np.argmax(asym)), shape)
        return f"is not symmetric: [{i}, {j}] = {m[i, j]:g} but [{j}, {i}] = {m[j, i]:g}"
    if op != "psd":
        return None
    sym = 0.5 * (m / scale + m.T / scale)  # round-off within 1e-8 of it is allowed
    if within_psd(sym, 1e-8):
        return None
    lowest = float(np.linalg.eigvalsh(sym)[0])
    if lowest < -1e-8:
        return f"is not positive semidefinite: its smallest eigenvalue is {lowest * scale:.4g}"
    return None


def within_psd(sym: np.ndarray, slack: float) -> bool:
    """λ_min(sym) > -slack, by a Cholesky of sym + slack·I: several times faster than the
    eigenvalues, which are computed only to explain a failure."""
    if not len(sym):
        return True
    try:
        np.linalg.cholesky(sym + slack * np.eye(len(sym)))
    except np.linalg.LinAlgError:
        return False
    return True
