"""The AMPL models together use every construct issue 20 lists: each construct's spelling must
occur in some model (or data) file, so dropping a model can't silently drop a construct."""

from __future__ import annotations

import re

import pytest
from _ampl import MODELS, names

# construct -> (a pattern of its spelling, "mod" or "dat": which files to search)
CONSTRUCTS = {
    "comma-separated attributes": (r"(>=|<=|>|<) *[\w\[\]\.\-]+ *, *(<=|integer|default)",
                                   "mod"),
    "var ... >= 0, <= u, integer": (r"var \w+ \{[^}]*\} >= 0, <= [\w\[\]]+, integer;", "mod"),
    "param ... > 0, default": (r"param \w+ \{[^}]*\} > 0, default", "mod"),
    "integer param": (r"param [^;]*\binteger\b", "mod"),
    "binary param": (r"param [^;]*\bbinary\b", "mod"),
    "symbolic param in a set": (r"param \w+ symbolic in \w+;", "mod"),
    "indexed symbolic param": (r"param \w+ \{\w+\} symbolic in", "mod"),
    "<> check on a param": (r"param \w+ symbolic in \w+, <> \w+;", "mod"),
    "default on params": (r"param [^;]*\bdefault\b", "mod"),
    "indexed set within": (r"set \w+ \{\w+\} within \w+;", "mod"),
    "iterating an indexed set": (r"\w+ in [A-Z]+\[\w+\]", "mod"),
    "ordered set": (r"set \w+ ordered;", "mod"),
    "first": (r"\bfirst\(", "mod"), "last": (r"\blast\(", "mod"),
    "next": (r"\bnext\(\w+\)", "mod"), "prev": (r"\bprev\(\w+\)", "mod"),
    "next(t, S, k)": (r"\bnext\(\w+, \w+, \d+\)", "mod"),
    "prev(t, S, k)": (r"\bprev\(\w+, \w+, \d+\)", "mod"),
    "ord": (r"\bord\(", "mod"), "card": (r"\bcard\(", "mod"), "member": (r"\bmember\(", "mod"),
    "setof": (r"setof \{[^}]*\} \(\w+, ?\w+\)", "mod"),
    "cross": (r"\bcross\b", "mod"),
    "<> not-equal": (r"\w <> \w", "mod"),
    "= in constraints": (r"(subject to|s\.t\.|subj to)[^;]*[^<>=!]=[^=][^;]*;", "mod"),
    "= in conditions": (r"(if|:) [^;{}]*\w+ = \w+", "mod"),
    "subj to": (r"\bsubj to\b", "mod"), "s.t.": (r"\bs\.t\.", "mod"),
    "check statement": (r"^check: ", "mod"), "indexed check": (r"^check \{", "mod"),
    "tuple membership in a condition": (r"\{\w+ in \w+: \(\w+, ?\w+\) in \w+\}", "mod"),
    "set expression {i in I, j in J: cond}": (r"set \w+ = \{\w+ in \w+, \w+ in \w+: [^}]+\};",
                                              "mod"),
    "element param as a tuple component": (r"sum \{\(s, ?\w+\) in", "mod"),
    "outer dummy as a tuple component": (r"\{\w+ in \w+\}:\s*sum \{\((\w+), ?\w+\) in", "mod"),
    "literal as a tuple component": (r"\{\(1, ?\w+\) in", "mod"),
    "expression as a tuple component": (r"\(\w+, \w+ \+ 1\) in", "mod"),
    "literal set of params": (r"diff \{\w+, \w+\}", "mod"),
    "several objectives": (r"(minimize|maximize)[^;]*;\s*(minimize|maximize)", "mod"),
    "QP as sums of products": (r"\w+\[i, ?j\] \* \w+\[i\] \* \w+\[j\]", "mod"),
    "QP plus an LP atom": (r"\^2 \+ \w+ \* sum \{[^}]*\} abs\(", "mod"),
    "data; inside the model": (r"^data;$", "mod"),
    "dat: set": (r"^set \w+ := ", "dat"), "dat: tuple set": (r"^set \w+ :=\s*\(", "dat"),
    "dat: param list": (r"^param \w+ := \w+ [\d.]+", "dat"),
    "dat: 2-D table": (r"^param \w+:\s+\w+\s+\w+", "dat"),
    "dat: (tr)": (r"^param \w+ \(tr\):", "dat"),
    "dat: several params in one table": (r"^param:\s+\w+\s+\w+", "dat"),
    "dat: set and params in one table": (r"^param:\s*\w+:", "dat"),
    "dat: . for missing": (r"\s\.\s", "dat"),
    "dat: table slices": (r"^\s*\[\*,\*,\w+\]:", "dat"),
    "dat: list templates": (r"\[\w+,\*\] \w+ [\d.]+", "dat"),
    "dat: indexed set members": (r"^set \w+\[\w+\] :=", "dat"),
    "Infinity in a model": (r"default -?Infinity", "mod"),
    "dat: Infinity": (r"\bInfinity\b", "dat"),
    "dat: symbolic value": (r"^param \w+ := [a-z]+ ;", "dat"),
}


def _text(kind: str) -> str:
    """Every model file ("mod") or every data file and model file's `data;` part ("dat")."""
    parts = []
    for name in names():
        model = (MODELS / name / f"{name}.mod").read_text()
        head, _, data = model.partition("\ndata;\n")
        if kind == "mod":
            parts.append(model)
        else:
            parts.append(data)
            path = MODELS / name / f"{name}.dat"
            parts.append(path.read_text() if path.is_file() else "")
    return "\n".join(parts)


@pytest.mark.parametrize("construct", list(CONSTRUCTS))
def test_some_model_uses_the_construct(construct):
    pattern, kind = CONSTRUCTS[construct]
    assert re.search(pattern, _text(kind), re.MULTILINE), f"no AMPL model uses {construct}"
