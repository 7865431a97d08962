"""`dfl data`: convert a data file (AMPL .dat) to JSON or YAML (see `data_convert`). cli.py
registers it (this module imports nothing of cli's: `python -m dfl_dsl.cli` runs cli as
`__main__`, and an import of `.cli` here would register it on a second copy)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def data_command(
    data_file: Annotated[Path, typer.Argument(help="An AMPL .dat file, or a model file with a "
                                              "`data;` part.", show_default=False)],
    to: Annotated[str, typer.Option("--to", help="json or yaml.")] = "json",
    model: Annotated[Path | None, typer.Option("--model", "-m", help="The model the data is "
                                               "for: its widths and indices.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Write here (else print)."
                                                  )] = None,
) -> None:
    """Convert DATA_FILE to JSON or YAML: the mapping `--data` binds, for any model."""
    from .data_convert import convert
    from .outputs import checked_output, refuse_overwriting, write_atomic

    checked_output(out_file, "--out")
    refuse_overwriting({"--out": out_file}, {"the data file": data_file, "--model": model})
    text = convert(data_file, to, model)
    if out_file is None:
        sys.stdout.write(text)
    else:
        write_atomic(out_file, lambda handle: handle.write(text.encode()))
