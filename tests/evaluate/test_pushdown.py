"""A filter's `dummy == e` and `(.., dummy, ..) in S` pushed into the join: the same rows, in
the same order, as the filter over the cross join (checked against the pattern form and brute
force), without building the cross join."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind

from dfl_dsl import ast
from dfl_dsl.compile.bridges import build_linear
from dfl_dsl.evaluate.pushdown import conjuncts, equalities

HEAD = """
set NODES; set ARCS within NODES * NODES;
param w{ARCS};
param hub in NODES;
var flow{ARCS} >= 0;
minimize f: sum{(i, j) in ARCS} w[i, j] * flow[i, j];
"""
PATTERN = HEAD + """subject to balance{k in NODES}:
    sum{(i, k) in ARCS} w[i, k] * flow[i, k] - sum{(k, j) in ARCS} flow[k, j] == 0;
"""
FILTERED = HEAD + """subject to balance{k in NODES}:
    sum{(i, j) in ARCS: j == k} w[i, j] * flow[i, j] - sum{(i, j) in ARCS: k = i} flow[i, j] == 0;
"""

MEMBER = HEAD + """subject to balance{k in NODES}:
    sum{i in NODES: (i, k) in ARCS} w[i, k] * flow[i, k]
    - sum{j in NODES: (k, j) in ARCS} flow[k, j] == 0;
"""


def _graph(seed: int, n: int):
    rng = np.random.default_rng(seed)
    nodes = [f"n{k}" for k in range(n)] if seed % 2 else list(range(10, 10 + n))
    arcs = [(a, b) for a in nodes for b in nodes if a != b and rng.random() < 0.4]
    arcs = [arcs[k] for k in rng.permutation(len(arcs))]
    return {"NODES": nodes, "ARCS": [list(a) for a in arcs],
            "w": rng.normal(size=len(arcs)).tolist(), "hub": nodes[0]}


@pytest.mark.parametrize("model", [FILTERED, MEMBER], ids=["equality", "membership"])
@pytest.mark.parametrize("seed", range(6))
def test_filters_build_the_pattern_forms_rows(seed, model):
    data = _graph(seed, 2 + seed)
    want = build_linear(bind(PATTERN, data), reduce=False).A.toarray()
    got = build_linear(bind(model, data), reduce=False).A.toarray()
    assert np.array_equal(got, want)


@pytest.mark.parametrize("model", [FILTERED, MEMBER], ids=["equality", "membership"])
def test_no_cross_join_is_built(monkeypatch, model):
    """The cross joins (60 × 1,000 arcs; 60 × 60 nodes) are over a cap of 2,000 rows: refused
    without the push-down, built as joins of 1,000 rows with it."""
    rng = np.random.default_rng(0)
    nodes = list(range(60))
    arcs = sorted({(int(a), int(b)) for a, b in rng.integers(0, 60, (1400, 2)) if a != b})[:1000]
    data = {"NODES": nodes, "ARCS": [list(a) for a in arcs], "w": [1.0] * len(arcs), "hub": 0}
    monkeypatch.setenv("DFL_MAX_ENTRIES", "2000")
    A = build_linear(bind(model, data), reduce=False).A
    assert A.shape == (60, 1000) and A.nnz == 2000


@pytest.mark.parametrize("filter_, keep", [
    ('i == hub', lambda i, j, hub: i == hub),                 # a scalar element param
    ('"n1" == j', lambda i, j, hub: j == "n1"),               # a literal, on the left
    ('i == hub and j != "n2"', lambda i, j, hub: i == hub and j != "n2"),
    ('i == hub or j == hub', lambda i, j, hub: i == hub or j == hub),  # `or`: not pushed
    ('j == 2.5', lambda i, j, hub: False),                    # no element is 2.5
    ('i == j', lambda i, j, hub: False),                      # (no self-loops in the data)
])
def test_filtered_sum_against_brute_force(filter_, keep):
    data = _graph(1, 6)
    model = HEAD + f"subject to c: sum{{(i, j) in ARCS: {filter_}}} flow[i, j] <= 1;\n"
    row = build_linear(bind(model, data), reduce=False).A.toarray()[0]
    want = [1.0 if keep(a, b, data["hub"]) else 0.0 for a, b in data["ARCS"]]
    assert row.tolist() == want


def test_a_later_dummy_matches_an_earlier_one():
    data = {"NODES": [1, 2, 3], "ARCS": [[1, 2]], "w": [1.0], "hub": 1}
    model = HEAD + ("var y{NODES, NODES};\n"
                    "subject to diag: sum{a in NODES, b in NODES: b == a} y[a, b] == 1;\n")
    form = build_linear(bind(model, data), reduce=False)
    y = form.A.toarray()[0, 1:]  # flow's one column first
    assert y.reshape(3, 3).tolist() == np.eye(3).tolist()


def test_only_top_level_conjuncts_of_names_and_literals_count():
    index = ast.SetIndex(
        (ast.IndexItem(("i", "j"), ast.Name("ARCS")),),
        ast.BoolOp("and", ast.Compare(("==",), (ast.Name("j"), ast.Name("k"))),
                   ast.BoolOp("or", ast.Compare(("==",), (ast.Name("i"), ast.Name("k"))),
                              ast.Compare(("==",), (ast.Name("i"), ast.Number(1))))))
    assert len(conjuncts(index.filter)) == 2
    found = equalities(index)
    assert list(found) == ["j"] and found["j"][0].id == "k"


@pytest.mark.parametrize("filter_, keep", [
    ("(i, hub) in ARCS", lambda i, hub, arcs: (i, hub) in arcs),
    ("(hub, i) in ARCS and i != \"n3\"", lambda i, hub, arcs: (hub, i) in arcs and i != "n3"),
    ("(i, i) in ARCS", lambda i, hub, arcs: (i, i) in arcs),  # self-loops: both parts `i`
    ("i in NODES", lambda i, hub, arcs: True),
])
def test_a_domain_filtered_by_membership_keeps_its_sets_order(filter_, keep):
    data = _graph(3, 7)
    data["ARCS"] += [["n2", "n2"], ["n5", "n5"]]
    data["w"] += [0.5, 0.5]
    data["NODES"] = data["NODES"][::-1]  # an order unlike the arcs'
    model = HEAD + f"var y{{NODES}};\nsubject to c{{i in NODES: {filter_}}}: y[i] >= 0;\n"
    labels = build_linear(bind(model, data), reduce=False, label_rows=True).row_labels
    arcs = {tuple(a) for a in data["ARCS"]}
    want = [f"c[{i}]" for i in data["NODES"] if keep(i, data["hub"], arcs)]
    assert labels == want and want


def _random_filter(rng, dummies: list[str]) -> str:
    """A random `and`-chain over the index's dummies: equalities with dummies, outer names,
    params and literals; memberships; and conditions the push-down leaves alone."""
    atoms = []
    for _ in range(int(rng.integers(1, 4))):
        a = dummies[int(rng.integers(len(dummies)))]
        b = str(rng.choice(dummies + ["k", "hub", '"n1"', "3", "2.5"]))
        kind = int(rng.integers(5))
        if kind == 0:
            atoms.append(f"{a} == {b}" if rng.random() < 0.5 else f"{b} = {a}")
        elif kind == 1:
            atoms.append(f"({a}, {b}) in ARCS")
        elif kind == 2:
            atoms.append(f"{a} in HUBS")
        elif kind == 3:
            atoms.append(f"({a} == {b} or {a} != k)")
        else:
            atoms.append(f"{a} != {b}")
    return " and ".join(atoms)


@pytest.mark.parametrize("seed", range(40))
def test_random_filters_select_what_they_select_without_the_push_down(seed, monkeypatch):
    """The same rows, in the same order, as the filter over the cross join (the push-down
    switched off): random indexes, filters and data."""
    from dfl_dsl.evaluate.evaluator import Evaluator

    rng = np.random.default_rng(seed)
    data = _graph(seed, int(rng.integers(2, 7)))
    data["HUBS"] = data["NODES"][: int(rng.integers(0, len(data["NODES"]) + 1))]
    pattern = [("i in NODES", ["i"]), ("(i, j) in ARCS", ["i", "j"]),
               ("i in NODES, j in NODES", ["i", "j"]),
               ("i in HUBS, (j, l) in ARCS", ["i", "j", "l"])]
    items, dummies = pattern[int(rng.integers(len(pattern)))]
    body = " + ".join(f"y[{d}]" for d in dummies)
    model = (HEAD + "set HUBS within NODES;\nvar y{NODES};\n"
             f"subject to c{{k in NODES}}: sum{{{items} : {_random_filter(rng, dummies)}}} "
             f"({body}) <= 1;\n")

    def rows():
        try:
            form = build_linear(bind(model, data), reduce=False, label_rows=True)
        except Exception as exc:  # noqa: BLE001 (the same error both ways is fine)
            return type(exc).__name__
        return form.A.toarray().tolist(), form.row_labels

    with_push = rows()
    monkeypatch.setattr(Evaluator, "_pushdown", lambda self, index: None)
    assert with_push == rows(), model
