"""Printing and writing solutions: a rich table on the terminal, JSON files written atomically."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

MAX_ROWS = 40


def print_solution(sol, console: Console) -> None:
    color = "green" if sol.status == "optimal" else "yellow" if sol.ok else "red"
    head = f"status: [bold {color}]{sol.status}[/bold {color}]"
    if sol.objective is not None:
        head += f"   objective: [bold]{sol.objective:.10g}[/bold]"
    head += f"   backend: {sol.backend}   time: {sol.time_s:.4f} s"
    if sol.gap is not None:
        head += f"   gap: {sol.gap:.3g}"
    console.print(head)
    if sol.x is None:
        return
    table = Table(title="variables (nonzero entries)", title_justify="left")
    table.add_column("variable")
    table.add_column("value", justify="right")
    shown = hidden = 0
    for entity in sol.instance.variables:
        flat = sol.x[entity.offset : entity.offset + entity.size]
        nonzero = np.nonzero(np.abs(flat) > 1e-9)[0]
        for entry in nonzero:
            if shown >= MAX_ROWS:
                hidden += 1
                continue
            label = escape(entity.name + entity.entry_label(int(entry)))  # `[b]` isn't markup
            table.add_row(label, f"{flat[entry]:.6g}")
            shown += 1
    console.print(table)
    if hidden:
        console.print(f"... and {hidden} more nonzero entries (use --json or --output for all)")
    for key, value in sol.extra.items():
        if key not in ("iis", "warning"):  # (the CLI prints a warning on stderr)
            console.print(f"{key}: {value}", markup=False)
