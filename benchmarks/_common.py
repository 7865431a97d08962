"""Helpers shared by the benchmark scripts: instance generators, timing, memory, tables."""

from __future__ import annotations

import gc
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec"


def spec_text(name: str) -> str:
    """The text of an acceptance model (the benchmarks use the spec's models verbatim)."""
    return (SPEC / name).read_text()


# ------------------------------------------------------------------ instances
def transport_arrays(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Supply, demand and cost of an n × n transport instance (feasible: supply > demand)."""
    rng = np.random.default_rng(seed)
    supply = rng.uniform(100.0, 200.0, n).round(2)
    demand = rng.uniform(50.0, 100.0, n).round(2)
    cost = rng.uniform(1.0, 100.0, (n, n)).round(2)
    return supply, demand, cost


def transport_names(n: int) -> tuple[list[str], list[str]]:
    return [f"o{i}" for i in range(n)], [f"d{j}" for j in range(n)]


def transport_data(n: int, seed: int = 0) -> dict:
    """The transport data as JSON would hold it: string elements, plain (nested) lists."""
    supply, demand, cost = transport_arrays(n, seed)
    orig, dest = transport_names(n)
    return {
        "ORIG": orig,
        "DEST": dest,
        "supply": supply.tolist(),
        "demand": demand.tolist(),
        "cost": cost.tolist(),
    }


def grid_arcs(k: int) -> list[list[int]]:
    """Arcs of a k × k grid, right and down, in the order of the spec's shortest_path.json:
    row by row, the row's right arcs, then its down arcs. Node (r, c) is r * k + c."""
    arcs: list[list[int]] = []
    for r in range(k):
        arcs.extend([r * k + c, r * k + c + 1] for c in range(k - 1))
        if r < k - 1:
            arcs.extend([r * k + c, (r + 1) * k + c] for c in range(k))
    return arcs


def grid_data(k: int, seed: int = 0) -> dict:
    arcs = grid_arcs(k)
    cost = np.random.default_rng(seed).uniform(0.5, 2.5, len(arcs))
    return {
        "NODES": list(range(k * k)),
        "ARCS": arcs,
        "source": 0,
        "sink": k * k - 1,
        "cost": cost.tolist(),
    }


# ------------------------------------------------------------------ measuring
def best_of(repeats: int, run: Callable[[], Stopwatch]) -> tuple[dict, dict]:
    """Run `run` (which returns its Stopwatch) `repeats` times; return the per-stage minimum
    and the first (cold) run's laps."""
    runs = [run().laps for _ in range(repeats)]
    best = {k: min(r[k] for r in runs) for k in runs[0]}
    return best, runs[0]


def installed_env() -> dict[str, str]:
    """The environment with Python's bytecode caches on, as a user's installation has them:
    `pip install` compiles every module once, and this machine sets PYTHONDONTWRITEBYTECODE=1,
    under which each command compiled the ~100 modules of an editable install anew (~0.2 s)
    while the peers' modules in site-packages kept their caches."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def best_wall(cmd: list[str], repeats: int, **run) -> float:
    """Best wall seconds of `repeats` runs of a command, each in a fresh process (stdout
    discarded unless `run` says where it goes), after one untimed run that writes the bytecode
    caches an installed package has (`installed_env`)."""
    run.setdefault("stdout", subprocess.DEVNULL)
    run.setdefault("env", installed_env())
    subprocess.run(cmd, check=True, **run)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, **run)
        times.append(time.perf_counter() - start)
    return min(times)


def traced_peaks(run: Callable[[], Stopwatch]) -> dict[str, float]:
    """One extra, untimed run under tracemalloc: each stage's peak traced memory in MiB
    (numpy reports its buffers to tracemalloc, so arrays count)."""
    gc.collect()
    tracemalloc.start()
    try:
        return run().peaks
    finally:
        tracemalloc.stop()


class Stopwatch:
    """Laps: `lap(name)` records the seconds since the previous lap and, while tracemalloc
    traces, the peak traced memory (MiB) during that lap."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self.peaks: dict[str, float] = {}
        self._t = time.perf_counter()
        if tracemalloc.is_tracing():
            tracemalloc.reset_peak()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = now - self._t
        if tracemalloc.is_tracing():
            self.peaks[name] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.reset_peak()
        self._t = time.perf_counter()


def maxrss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (prints readably and pastes into docs/benchmarks.md as it is)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
             for r in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:.1f}"
    return str(value)
