"""What every backend shares: a solution's IIS rows named by the model's constraint rows."""

from __future__ import annotations

from _helpers import bind


def test_iis_labels_of_a_partly_split_constraint_name_the_rows_they_are():
    """`c`'s row b holds no uncertain param (kept once), rows a and c are copied per
    scenario: the IIS named the kept row `c[a]` (the constraint's first row, not the kept
    one) and the copy `c@0` (no row at all)."""
    text = """
    set I; param d{I} : uncertain; param u{I}; param need;
    var x{I} >= 0;
    maximize o: sum{i in I} x[i];
    s.t. c{i in I}: x[i] + 0.5 * x["a"] <= (if i == "b" then u[i] else d[i]);
    s.t. m: sum{i in I} x[i] >= need;
    """
    data = {"I": ["a", "b", "c"], "u": [1, 2, 3], "d": [[4, 5, 6], [7, 8, 9]], "need": 100}
    sol = bind(text, data).solve("highs")
    assert sol.status == "infeasible"
    assert sorted(sol.extra["iis"]) == ["c[b]", "c[c]@0", "m"]
