"""Broken AMPL data: every mistake is an error at its file, line and column, exit 2, no
traceback — the .dat reader's own errors (missing value, unknown element, wrong table width,
unclosed table, ...) and the model's checks on the data (check statements, `in`, `<>`,
`within`, a covariance that is not PSD)."""

from __future__ import annotations

import re

import pytest
from _ampl import BROKEN, mod
from typer.testing import CliRunner

from dfl_dsl.cli import app

# (broken file, the model it is data for, where the error is: "dat", "mod" or "either", line
# and column (None: any), the words the message must hold)
CASES = [
    ("missing_value", "transport", "dat", 3, 39, "`supply`[PITT] has no value"),
    ("unknown_element", "transport", "dat", 4, 59, 'unknown element "NYC"'),
    ("table_width", "transport", "dat", 7, 4, "row CLEV has 6 values"),
    ("unclosed_table", "transport", "dat", 5, 1, "not closed"),
    ("not_a_number", "transport", "dat", 3, 33, "expected a number, got `27OO`"),
    ("given_twice", "transport", "dat", 3, 50, "`supply`[CLEV] is given twice"),
    ("slice_width", "multicommodity", "dat", 27, 3, "`vcost`"),
    ("unclosed_tuple", "maxflow", "dat", 4, 48, "`ARCS`"),
    ("arc_outside", "maxflow", "dat", 4, None, "not within"),
    ("symbol_outside", "maxflow", "dat", 2, 7, "not in `NODES`"),
    ("sink_is_source", "maxflow", "dat", 3, 7, "param `t`"),
    ("unknown_param", "transport", "dat", 3, 7, "`suply` is not declared"),
    ("failed_check", "transport", "mod", 9, 1, "check on line 9 fails"),
    ("pattern_too_wide", "cutstock", "mod", 11, 1, "fails for [1]"),
    ("not_psd", "markowitz", "mod", 11, None, "Variance|eigenvalue"),
]


@pytest.mark.parametrize(("broken", "model", "where", "line", "col", "words"), CASES,
                         ids=[case[0] for case in CASES])
def test_broken_data_is_a_located_error(broken, model, where, line, col, words):
    data = BROKEN / f"{broken}.dat"
    result = CliRunner().invoke(app, ["solve", str(mod(model)), "--data", str(data), "--json"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.exception is None or \
        isinstance(result.exception, SystemExit)
    paths = {"dat": [data], "mod": [mod(model)], "either": [data, mod(model)]}[where]
    files = "|".join(re.escape(str(path)) for path in paths)
    line, col = (r"\d+" if n is None else str(n) for n in (line, col))
    located = re.compile(rf"^(?:{files}):{line}:{col}: error: (.*)", re.MULTILINE)
    found = located.search(result.output)
    assert found, result.output
    for word in words.split("|"):
        assert word in found.group(1), result.output
