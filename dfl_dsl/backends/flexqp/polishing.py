"""Polishing during a FlexQP solve: which problems are worth an attempt (`settling`), and the
attempt itself (`polish`), an equality-constrained QP on the rows the iterates show active, with
active-set corrections (kkt.py holds the linear algebra)."""

from __future__ import annotations

import torch

from .iterates import Residuals, Running, Settings, State
from .kkt import (
    Factors,
    Schur,
    SchurFactor,
    SchurFactors,
    SchurPolish,
    corrected,
    guess_active,
    polish_on,
)


def settling(run: Running, conv: torch.Tensor, pinned: torch.Tensor | None,
              s: Settings, Ax: torch.Tensor, eager: bool = False) -> torch.Tensor:
    """The problems worth polishing: not converged, no row pinned at its μ (the relaxation at
    work: polishing finds feasible points only), and a guess of the active rows that changed in
    at most `polish_changes` rows since the last check (a guess still moving is rarely right,
    and every attempt costs a factorization) — or, when `eager` (cheap rounds), any problem
    not tried yet, from the second check on (from the first when warm-started)."""
    upper, lower = guess_active(run.qp, Ax, run.state.y, s.guess_weight)
    guess = upper.to(torch.int8) - lower.to(torch.int8)
    if run.guess is None:
        run.guess = guess
        if not (eager and run.warm):
            return torch.zeros_like(conv)
        settling = torch.ones_like(conv)  # warm-started: its first guess is a good one
    else:
        settling = (guess != run.guess).sum(-1) <= s.polish_changes
        run.guess = guess
    if eager:
        settling = settling | (~run.tried if run.tried is not None else True)
    settling = settling & ~conv
    return settling if pinned is None else settling & ~pinned.squeeze(-1)


def polish(run: Running, candidates: torch.Tensor, s: Settings, work: dict,
            factors: Factors | SchurFactors, schur: Schur | None, Ax: torch.Tensor,
            mark: bool = True) -> torch.Tensor | None:
    """Polish the `candidates` from the active rows their iterates show, with up to
    `polish_rounds` − 1 (`schur_rounds` − 1 on the Schur path) active-set corrections (a
    primal-dual active-set method on the guess); a problem whose polished point passes OSQP's
    test takes it as its state (and its factorization goes to `factors`). Returns which
    problems did (None: none).

    A problem that passes keeps its rows (its next round repeats its solve) while the others
    are corrected; the passed ones are written back and leave the sub-batch only once they are
    at least half of it, or at the end: at these sizes an indexing op costs about as much as
    solving a passed problem again."""
    if not bool(candidates.any()):
        return None
    at = candidates.nonzero().squeeze(1)
    sub, mu = run.qp.select(at), run.params.mu[at]
    upper, lower = guess_active(sub, Ax[at], run.state.y[at], s.guess_weight)
    polished = torch.zeros_like(candidates)
    # the lean Schur rounds in float64; in float32 the general ones (which refine)
    fast = (SchurPolish(schur, sub, mu, s.eps_abs, s.eps_rel)
            if schur is not None and schur.exact else None)
    rounds = s.schur_rounds if schur is not None else s.polish_rounds
    if mark:  # tried (those that pass leave the batch anyway)
        tried = run.tried if run.tried is not None else torch.zeros_like(candidates)
        run.tried = tried.index_fill_(0, at, True)
    for r in range(rounds):
        got = fast.round(upper, lower) if fast is not None else None
        if got is not None:
            p, ok, e_p = got
        else:
            if fast is not None:  # a Gram submatrix didn't factor: the reduced KKT's path
                fast = schur = None
            p = polish_on(sub, upper, lower, mu, work=work.setdefault("polish", {}),
                          schur=schur)
            res = Residuals.of(sub, State(p.x, p.z, p.y), p.Ax)
            e_p, e_d = res.tolerances(s.eps_abs, s.eps_rel)
            ok = (res.r_prim <= e_p) & (res.r_dual <= e_d)
        work["polish_factorizations"] = work.get("polish_factorizations", 0) + len(at)
        passed = int(ok.sum())
        last = r + 1 == rounds or passed == len(ok)
        if passed and (last or 2 * passed >= len(ok)):  # write back, and compact
            _write_back(run, at[ok], p, ok, factors)
            polished[at[ok]] = True
            if last:
                break
            new_upper, new_lower = corrected(sub, upper, lower, p, e_p)
            left = ~ok
            at, sub, mu = at[left], sub.select(left), mu[left]
            upper, lower = new_upper[left], new_lower[left]
            fast = fast.select(left) if fast is not None else None
        elif last:
            break
        else:  # the passed ones keep their rows
            new_upper, new_lower = corrected(sub, upper, lower, p, e_p)
            hold = ok.unsqueeze(-1)
            upper = torch.where(hold, upper, new_upper)
            lower = torch.where(hold, lower, new_lower)
    return polished if bool(polished.any()) else None


def _write_back(run: Running, good: torch.Tensor, p, ok: torch.Tensor,
                factors: Factors | SchurFactors) -> None:
    """The polished points that passed become their problems' states; their factorizations
    go to `factors` (for the backward pass)."""
    run.state.x[good], run.state.z[good], run.state.y[good] = p.x[ok], p.z[ok], p.y[ok]
    if isinstance(p.lin, SchurFactor):
        if isinstance(factors, SchurFactors):
            factors.put(run.index[good], p.lin.select(ok), p.active[ok])
    elif isinstance(factors, Factors):  # (not after a fall back from the Schur path)
        factors.put(run.index[good], p.lin.factor_rows(len(ok))[ok], p.active[ok])
