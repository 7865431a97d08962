"""The binder's sets (bind_sets.py): indexed sets from data, their `within` checks, and
`check` statements, whose failures are data errors naming the check and the index."""

from __future__ import annotations

import pytest
from _helpers import bind, write_json

import dfl_dsl as dfl
from dfl_dsl.errors import DataError
from dfl_dsl.evaluate.elements import element_of

FAMILY = "set I; set T; set S{I} within T;\n"


def members(inst, name: str) -> list[list]:
    family = inst.ctx.families[name]
    return [[element_of(k) for k in family.keys[family.starts[p]:family.starts[p + 1], 0]]
            for p in range(family.domain.n)]


ORDERED_BY = """set CITIES; set WEEKS = 1..6;
set VISIT ordered by CITIES; set LATE ordered by WEEKS; set PAIRS ordered by CITIES * WEEKS;
param cost{VISIT};
"""


def test_a_set_ordered_by_another_takes_its_order() -> None:
    """AMPL's `set B ordered by A`: B's elements in A's order, whatever order the data gives;
    arrays over B (and `first`, `ord`, ...) follow it."""
    inst = bind(ORDERED_BY + "param f symbolic = first(VISIT); param o = ord(6, LATE);",
                {"CITIES": ["A", "B", "C", "D"], "VISIT": ["D", "A", "C"], "LATE": [6, 2, 4],
                 "PAIRS": [["C", 1], ["A", 5], ["A", 2]], "cost": {"D": 4, "A": 1, "C": 3}})
    assert inst.sets["VISIT"].elements() == ["A", "C", "D"]
    assert inst.sets["LATE"].elements() == [2, 4, 6]
    assert inst.sets["PAIRS"].elements() == [("A", 2), ("A", 5), ("C", 1)]
    assert inst.entity("cost").data.tolist() == [1, 3, 4]
    assert element_of(int(inst.entity("f").data[0])) == "A"
    assert float(inst.entity("o").data[0]) == 3


def test_an_element_outside_the_ordering_set_is_a_data_error(tmp_path) -> None:
    path = write_json(tmp_path / "d.json", {"CITIES": ["A"], "VISIT": ["A", "Z"], "LATE": [],
                                            "PAIRS": [], "cost": {"A": 1, "Z": 2}})
    with pytest.raises(DataError, match="set `VISIT`: element 'Z' is not in the set it is "
                                        "ordered by") as info:
        dfl.parse(ORDERED_BY).bind(str(path))
    lines = path.read_text().splitlines()
    line = lines[info.value.pos.line - 1]
    assert line.strip().startswith('"Z"')  # at the element, inside the set in the data
    assert '"VISIT"' in lines[info.value.pos.line - 3]


def test_ordered_by_on_an_indexed_set_is_located() -> None:
    with pytest.raises(dfl.DflError, match="`ordered by` on an indexed set") as info:
        dfl.parse("set I;\nset J{I} ordered by I;")
    assert (info.value.pos.line, info.value.pos.column) == (2, 21)


def test_an_indexed_set_from_data_left_out_entries_are_empty() -> None:
    inst = bind(FAMILY, {"I": ["a", "b", "c"], "T": [1, 2, 3], "S": {"a": [1, 2], "c": [3]}})
    assert members(inst, "S") == [[1, 2], [], [3]]


def test_keys_over_integers_and_two_index_positions() -> None:
    inst = bind("set I; set J; set S{I, J};",
                {"I": [1, 2], "J": ["x"], "S": {"2": {"x": ["p", "q"]}}})
    assert members(inst, "S") == [[], ["p", "q"]]


def test_a_family_in_a_model() -> None:
    """Each worker takes one of the shifts it can work; cover the demand at least cost."""
    inst = bind("set W; set SHIFTS; set CAN{W} within SHIFTS; param cost{W};\n"
                "var x{w in W, s in CAN[w]} binary;\n"
                "minimize pay: sum{w in W, s in CAN[w]} cost[w] * x[w, s];\n"
                "s.t. one{w in W}: sum{s in CAN[w]} x[w, s] <= 1;\n"
                "s.t. cover{s in SHIFTS}: sum{w in W : s in CAN[w]} x[w, s] >= 1;",
                {"W": ["ann", "bob", "cy"], "SHIFTS": ["am", "pm"], "cost": [3, 1, 2],
                 "CAN": {"ann": ["am", "pm"], "bob": ["pm"], "cy": ["am"]}})
    assert inst.solve(backend="highs").objective == pytest.approx(3)


@pytest.mark.parametrize(("data", "message"), [
    ({"S": [1, 2]}, "indexed set `S` takes an object keyed by the elements of its index"),
    ({"S": {"z": [1]}}, "indexed set `S`: [z] is not in its index set"),
    ({"S": {"a": [1, 9]}}, "set `S[a]`: element 9 is not within the declared superset"),
    ({"S": {"a": [1, 1]}}, "set `S[a]` lists 1 twice"),
    ({"S": {"a": 1}}, "set `S[a]` must be a list of elements"),
])
def test_bad_family_data_is_located_in_the_data(tmp_path, data, message) -> None:
    path = write_json(tmp_path / "d.json", {"I": ["a"], "T": [1, 2], **data})
    model = dfl.parse(FAMILY, "m.opt")
    with pytest.raises(DataError) as info:
        model.bind(str(path))
    assert message in info.value.message and info.value.pos is not None
    assert info.value.filename.endswith("d.json")


def test_a_computed_family_must_not_come_from_the_data() -> None:
    with pytest.raises(DataError, match="set `S` is computed in the model"):
        bind("set I; set S{i in I} = 1..i;", {"I": [1], "S": {"1": [1]}})
    inst = bind("set I; set S{i in I} = 1..i;", {"I": [1, 3]})
    assert members(inst, "S") == [[1], [1, 2, 3]]


def test_a_missing_family_is_reported_at_its_declaration() -> None:
    with pytest.raises(DataError, match="set `S` has no value"):
        bind(FAMILY, {"I": ["a"], "T": [1]})


def test_ordered_and_circular_sets() -> None:
    inst = bind("set A ordered; set B circular = 1..3; set C{i in 1..2} circular = 1..i;",
                {"A": [2, 1]})
    assert inst.sets["A"].elements() == [2, 1] and not inst.sets["A"].circular
    assert inst.sets["B"].circular and inst.ctx.families["C"].circular


# ---------------------------------------------------------------------- check statements
def test_a_passing_check_binds() -> None:
    inst = bind("set I; param a{I}; check{i in I}: a[i] >= 0;\ncheck: card(I) = 2;",
                {"I": [1, 2], "a": [0, 3]})
    assert inst.entity("a").array().tolist() == [0, 3]


def test_a_failed_check_names_the_check_the_index_and_the_condition() -> None:
    model = dfl.parse("set I; param a{I};\ncheck nonneg{i in I, j in I : j > i}: a[j] >= a[i];",
                      "m.opt")
    with pytest.raises(DataError) as info:
        model.bind({"I": [1, 2, 3], "a": [5, 1, 0]})
    err = info.value
    assert err.message == ("check `nonneg` fails for [1, 2] (2 more too): `a[j] >= a[i]`")
    assert (err.filename, err.pos.line, err.pos.column) == ("m.opt", 2, 7)
    assert err.hint == "the data breaks this condition"


def test_an_unnamed_check_is_called_by_its_line() -> None:
    model = dfl.parse("param n;\n\ncheck: n > 0;", "m.opt")
    with pytest.raises(DataError) as info:
        model.bind({"n": 0})
    assert info.value.message == "the check on line 3 fails: `n > 0`"


def test_a_failed_check_exits_2_from_the_cli(tmp_path, capsys) -> None:
    from dfl_dsl.cli import main
    model = tmp_path / "m.opt"
    model.write_text("param n; check: n > 0; var x >= 0; minimize z: x;\n")
    data = write_json(tmp_path / "d.json", {"n": -1})
    assert main(["solve", str(model), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert "m.opt:1:10: error: the check on line 1 fails" in err and "Traceback" not in err


def test_within_a_cross_product_is_checked_factor_by_factor(monkeypatch) -> None:
    """`within NODES cross NODES` never builds the product (as `*` doesn't): with a cap of
    100 entries, 40 x 40 = 1600 pairs would be refused."""
    monkeypatch.setenv("DFL_MAX_ENTRIES", "100")
    nodes = list(range(40))
    inst = bind("set NODES; set ARCS within NODES cross NODES;",
                {"NODES": nodes, "ARCS": [[0, 39], [5, 6]]})
    assert inst.sets["ARCS"].n == 2
    with pytest.raises(DataError, match=r"element \(5, 40\) is not within"):
        bind("set NODES; set ARCS within NODES cross NODES;",
             {"NODES": nodes, "ARCS": [[0, 39], [5, 40]]})
    inst = bind("set NODES; set ARCS within {NODES, NODES};",  # AMPL's `{A, B}`, the same
                {"NODES": nodes, "ARCS": [[0, 39], [5, 6]]})
    assert inst.sets["ARCS"].n == 2


def test_a_literal_of_sets_is_their_product() -> None:
    inst = bind("set ORIG; set DEST; set ALL = {ORIG, DEST};\n"
                "param n = card({ORIG, DEST, {1, 2}});", {"ORIG": ["a", "b"], "DEST": [7]})
    assert inst.sets["ALL"].elements() == [("a", 7), ("b", 7)]
    assert inst.entity("n").array() == 4


def test_a_set_default_fills_what_the_data_leaves_out() -> None:
    inst = bind("set I; set D default {1, 2}; set S{I} default {7};\n"
                "set R{i in I} default 1..i;",
                {"I": [1, 2, 3], "S": {"2": [4, 5]}, "R": {"3": []}})
    assert inst.sets["D"].elements() == [1, 2]
    assert members(inst, "S") == [[7], [4, 5], [7]]
    assert members(inst, "R") == [[1], [1, 2], []]  # an entry given empty stays empty
    assert members(bind("set I; set S{I} default {};", {"I": [1]}), "S") == [[]]


def test_symdiff_is_in_one_but_not_both() -> None:
    inst = bind("set A; set B; set C = A symdiff B;", {"A": [1, 2, 3], "B": [4, 2]})
    assert inst.sets["C"].elements() == [1, 3, 4]


def test_bad_family_data_exits_2_from_the_cli_at_its_line(tmp_path, capsys) -> None:
    from dfl_dsl.cli import main
    model = tmp_path / "m.opt"
    model.write_text(FAMILY + "var x{T} >= 0; minimize z: sum{i in I, j in S[i]} x[j];\n")
    data = tmp_path / "d.json"
    data.write_text('{"I": ["a"], "T": [1, 2],\n "S": {"a": [1, 9]}}\n')
    assert main(["solve", str(model), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert "d.json:2:17: error: set `S[a]`: element 9 is not within" in err  # at the 9
    assert "Traceback" not in err


def test_colon_equals_is_a_default_the_data_may_replace() -> None:
    model = "set I; param c{I} := 3; param t := card(I); set J := {1, 2};"
    inst = bind(model, {"I": [1, 2], "c": {"2": 7}})
    assert inst.entity("c").array().tolist() == [3, 7] and inst.entity("t").array() == 2
    assert inst.sets["J"].elements() == [1, 2]
    inst = bind(model, {"I": [1], "t": 9, "J": [5]})
    assert inst.entity("t").array() == 9 and inst.sets["J"].elements() == [5]
