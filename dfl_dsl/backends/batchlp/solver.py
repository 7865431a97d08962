"""A batch of LPs to certified optima: restarted PDHG (`iterate`) with periodic polishing
(`polish`), warm-started where the caller has a previous pair.

Samples leave the batch as soon as their polished pair is certified; on a CPU the rest are
compacted (cost ∝ the samples left), on CUDA they stay in the captured graph's fixed shapes
until at least half are done. Samples not certified within `max_iterations` (or the time
limit) are returned uncertified, for the caller's fallback solver: the batch never reports a
point it could not prove optimal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from .ipm import InteriorPoint
from .pdhg import Iterations, start
from .polish import certify, identify, polish
from .problem import BatchLP, operator_norm, precondition

POLISH_GATE = 1e-2  # try polishing PDHG samples whose relative KKT error is below this
IPM_GATE = 1e-3  # and interior-point samples below this
IPM_MAX_ROWS = 256  # the interior-point method factors (B, m, m) systems: small m only
INTEGRAL = 1e-9  # an integer column's largest distance to an integer in an answer
POLISH_ENTRIES = 2**27  # entries of the (B, m, m) factors polished at once (1 GiB in float64)
IDENTIFY_MIN, IDENTIFY_MAX = 1e-9, 1e-3  # bounds of the identification threshold


@dataclass
class Settings:
    tol: float = 1e-9  # the certificate's relative tolerance
    max_iterations: int = 20_000
    check_every: int = 32
    method: str = "auto"  # auto | ipm | pdhg: auto takes the IPM for m <= IPM_MAX_ROWS
    ipm_iterations: int = 80
    iterate_dtype: torch.dtype | None = None  # None: float32 on CUDA, float64 on a CPU
    graphs: bool = True
    time_limit: float | None = None


@dataclass
class BatchResult:
    x: torch.Tensor  # (B, n), original space, float64
    y: torch.Tensor  # (B, m)
    certified: torch.Tensor  # (B,) bool
    iterations: torch.Tensor  # (B,) PDHG iterations each sample ran
    objective: torch.Tensor  # (B,) cᵀx
    tight: torch.Tensor  # (B, n) bool: the columns held at zero reduced cost (a warm start's)
    graph_captured: bool = False


def solve_batch(lp: BatchLP, settings: Settings | None = None, *,
                x0: torch.Tensor | None = None, y0: torch.Tensor | None = None,
                warm: torch.Tensor | None = None, tight0: torch.Tensor | None = None,
                integer: torch.Tensor | None = None) -> BatchResult:
    """Certified optima of the batch `lp` (float64, original data). `x0`, `y0` warm-start
    the first-order method (a previous solution and its duals; `warm` (B,) says which rows
    hold one, default all; `tight0` (B, n) the columns its certificate held at zero reduced
    cost): they are polished first, and the samples whose pair still certifies need no
    iteration. `integer` (n,) marks integer columns (rounded before certifying)."""
    run = _Run(lp, settings or Settings(), integer)
    b, n, m = lp.batch, lp.K.n, lp.K.m
    device = lp.c.device
    if warm is None:
        warm = torch.full((b,), x0 is not None, dtype=torch.bool, device=device)
    x0 = torch.zeros((b, n), dtype=torch.float64, device=device) if x0 is None else x0
    y0 = torch.zeros((b, m), dtype=torch.float64, device=device) if y0 is None else y0
    xs0, ys0 = run.scaling.to_scaled(x0.to(torch.float64), y0.to(torch.float64))
    cfg = run.cfg
    if cfg.method == "ipm" or (cfg.method == "auto" and m <= IPM_MAX_ROWS):
        # the interior-point method takes a fixed few steps whatever its start: polishing a
        # previous pair first pays only where iterations are many
        run.interior_point(torch.arange(b, device=device))
    else:
        if bool(warm.any()):  # the previous pairs as they are, with a tight threshold
            rows = warm.nonzero().flatten()
            run.polish(xs0[rows], ys0[rows], torch.full((len(rows),), 1e-7, dtype=torch.float64,
                                                        device=device),
                       rows, None if tight0 is None else tight0[rows])
        run.first_order(xs0, ys0)
    x = run.out[0]
    return BatchResult(x, run.out[1], run.done, run.iterations, (lp.c * x).sum(1), run.out[2],
                       run.captured)


class _Run:
    """One call's data, outputs and the two ways to reach them."""

    def __init__(self, lp: BatchLP, cfg: Settings, integer: torch.Tensor | None) -> None:
        self.lp, self.cfg = lp, cfg
        # None when no column is integer: polishing then skips rounding (decided here, once —
        # a captured graph can't ask the GPU)
        self.integer = integer if integer is not None and bool(integer.any()) else None
        self.deadline = None if cfg.time_limit is None else time.perf_counter() + cfg.time_limit
        b, n, m, device = lp.batch, lp.K.n, lp.K.m, lp.c.device
        self.out = (torch.zeros((b, n), dtype=torch.float64, device=device),
                    torch.zeros((b, m), dtype=torch.float64, device=device),
                    torch.zeros((b, n), dtype=torch.bool, device=device))
        self.done = torch.zeros(b, dtype=torch.bool, device=device)
        self.iterations = torch.zeros(b, dtype=torch.int64, device=device)
        self.scaling = precondition(lp.K)
        self.scaled = self.scaling.apply(lp)
        self.captured = False

    def late(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def interior_point(self, active: torch.Tensor) -> None:
        """The samples `active` by the interior-point method (`ipm`); the whole batch is
        polished once it is close, then again for the rest as it comes close (finished
        samples ride along: the steps keep their shapes). Its steps factor matrices, which
        are not captured in CUDA graphs (see `graphs`)."""
        ipm = InteriorPoint(self.scaled.select(active))
        passes = _PolishPasses(self, active)
        finished = torch.zeros(len(active), dtype=torch.bool, device=active.device)
        for it in range(1, self.cfg.ipm_iterations + 1):
            relative = ipm.step()
            ready = (relative <= IPM_GATE) | finished
            if bool(ready.all()) or (it % 4 == 0 and bool((ready & ~finished).any())):
                x, y = ipm.pair()
                tol = (10 * relative).clamp(IDENTIFY_MIN, IDENTIFY_MAX)
                finished |= passes.run(x, y, tol, ~finished)
                if bool(finished.all()):
                    break
            if self.late():
                break
        self.iterations[active] = ipm.steps

    def first_order(self, xs0: torch.Tensor, ys0: torch.Tensor) -> None:
        """Restarted PDHG (`pdhg`) on the samples not done, polished every block."""
        cfg = self.cfg
        dtype = cfg.iterate_dtype or (torch.float32 if self.lp.c.is_cuda else torch.float64)
        scaled = self.scaled.to(dtype)
        eta = 0.95 / operator_norm(scaled.K)
        active = torch.nonzero(~self.done).flatten()
        if len(active) == 0:
            return
        sub = scaled.select(active)
        state = start(sub, xs0[active].to(dtype), ys0[active].to(dtype))
        block = Iterations(sub, state, eta, cfg.check_every, cfg.graphs)
        # a sample is polished when its error first falls below POLISH_GATE, then again only
        # once it has fallen tenfold since its last failed try (polishing factors m × m
        # matrices: on large rows it costs more than many iterations)
        gate_at = torch.full((len(active),), POLISH_GATE, dtype=torch.float64,
                             device=active.device)
        while int(state.total.item()) < cfg.max_iterations and not self.late():
            relative = block.run().double()
            self.captured = self.captured or block.captured
            self.iterations[active] = int(state.total.item())
            gate = ((relative <= gate_at) & ~self.done[active]).nonzero().flatten()
            if len(gate):
                tol = (10 * relative[gate]).clamp(IDENTIFY_MIN, IDENTIFY_MAX)
                self.polish(state.x[gate].double(), state.y[gate].double(), tol, active[gate])
                gate_at[gate] = relative[gate] / 10
            keep = ~self.done[active]
            if not bool(keep.any()):
                return
            # a CPU's cost follows the samples left; a captured graph keeps its shapes until
            # most of its samples are done
            if not bool(keep.all()) and (not state.x.is_cuda or float(keep.float().mean()) < 0.5):
                rows = keep.nonzero().flatten()
                active, sub, state = active[rows], sub.select(rows), state.select(rows)
                gate_at = gate_at[rows]
                block = Iterations(sub, state, eta, cfg.check_every, cfg.graphs)

    def certified_pair(self, scaled: BatchLP, original: BatchLP, xs: torch.Tensor,
                       ys: torch.Tensor, tol: torch.Tensor, tight: torch.Tensor | None = None):
        """(x, y, ok, tight set) for scaled pairs: identification, polishing, certificate."""
        part = identify(scaled, xs, ys, tol, tight)
        x, y, factored = polish(original, self.scaling.primal(xs), self.scaling.dual(ys), part,
                                self.integer)
        ok = certify(original, x, y, self.cfg.tol).optimal & factored
        if self.integer is not None:
            # an optimal face with several vertices (tied costs) is left at an interior point
            # by the interior-point method: optimal, but not integral — HiGHS gets those
            ok &= ~((x - torch.round(x)).abs() > INTEGRAL)[:, self.integer].any(1)
        return x, y, ok, part.tight

    def accept(self, idx: torch.Tensor, x, y, ok, tight) -> None:
        """Write the certified samples among `idx` into the outputs."""
        good = idx[ok]
        self.out[0][good], self.out[1][good], self.out[2][good] = x[ok], y[ok], tight[ok]
        self.done[good] = True

    def polish(self, xs: torch.Tensor, ys: torch.Tensor, tol: torch.Tensor,
               index: torch.Tensor, tight: torch.Tensor | None = None) -> None:
        """Polish the samples `index` (their scaled pairs xs, ys) that are not done yet, and
        write the certified ones' (x, y, tight set) into the outputs — in chunks whose
        (m × m) factors fit in POLISH_ENTRIES."""
        pick = (~self.done[index]).nonzero().flatten()
        chunk = max(1, POLISH_ENTRIES // max(1, self.lp.K.m ** 2))
        for at in range(0, len(pick), chunk):
            part = pick[at : at + chunk]
            self._polish(xs[part], ys[part], tol[part], index[part],
                         None if tight is None else tight[part])

    def _polish(self, xs: torch.Tensor, ys: torch.Tensor, tol: torch.Tensor,
                idx: torch.Tensor, tight: torch.Tensor | None) -> None:
        x, y, ok, tight = self.certified_pair(self.scaled.select(idx), self.lp.select(idx), xs,
                                              ys, tol, tight)
        self.accept(idx, x, y, ok, tight)


class _PolishPasses:
    """Polishing of a fixed batch (`active`), in chunks whose (m × m) factors fit in
    POLISH_ENTRIES; each chunk's sub-problems are selected once."""

    def __init__(self, run: _Run, active: torch.Tensor) -> None:
        self.run_ = run
        chunk = max(1, POLISH_ENTRIES // max(1, run.lp.K.m ** 2))
        self.chunks = [(slice(at, at + chunk), active[at : at + chunk],
                        run.scaled.select(active[at : at + chunk]),
                        run.lp.select(active[at : at + chunk]))
                       for at in range(0, len(active), chunk)]

    def run(self, xs: torch.Tensor, ys: torch.Tensor, tol: torch.Tensor,
            wanted: torch.Tensor) -> torch.Tensor:
        """Polish every chunk holding a `wanted` sample; returns which samples are now
        certified (among the wanted)."""
        newly = torch.zeros_like(wanted)
        for part, idx, scaled, original in self.chunks:
            if not bool(wanted[part].any()):
                continue
            x, y, ok, tight = self.run_.certified_pair(scaled, original, xs[part], ys[part],
                                                       tol[part])
            ok = ok & wanted[part]
            self.run_.accept(idx, x, y, ok, tight)
            newly[part] = ok
        return newly
