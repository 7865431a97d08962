"""`dfl check`'s summary (check_report.py): indexed and ordered sets in the sets table."""

from __future__ import annotations

from _helpers import bind
from rich.console import Console

from dfl_dsl.check_report import report


def test_an_indexed_set_shows_its_index_and_its_members_in_all() -> None:
    inst = bind("set W; set SHIFTS ordered; set CAN{W} within SHIFTS;",
                {"W": ["ann", "bob"], "SHIFTS": ["am", "pm"], "CAN": {"ann": ["am", "pm"]}})
    console = Console(record=True, width=120)
    report(inst.model, inst, console)
    rows = {line.split("│")[1].strip(): line for line in console.export_text().splitlines()
            if line.count("│") > 3}
    assert "within SHIFTS" in rows["CAN{W}"] and "2 in 2 sets" in rows["CAN{W}"]
    assert "ordered" in rows["SHIFTS"]
