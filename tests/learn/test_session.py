"""The CLI's training sessions: `dfl generate`'s outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from rich.console import Console

from dfl_dsl.errors import DflError
from dfl_dsl.learn.session import generate_command

ARGS = dict(num_data=5, features=3, deg=1, noise=0.0, seed=1, items=4, dims=1)


def test_the_instance_is_refused_a_name_it_would_not_be_read_by(tmp_path):
    """`--instance knap.opt` wrote JSON over the model; `--instance i.npz` wrote JSON that
    the npz reader can't open. Refused before anything is written."""
    model = tmp_path / "knap.opt"
    model.write_text("set ITEMS;")
    for name in ("knap.opt", "i.npz"):
        with pytest.raises(DflError, match="--instance writes the instance as JSON or YAML"):
            generate_command("knapsack", tmp_path / "k.npz", tmp_path / name,
                             console=Console(quiet=True), **ARGS)
    assert model.read_text() == "set ITEMS;"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["knap.opt"]


def test_a_size_option_of_another_kind_is_refused_naming_the_kinds_that_take_it(tmp_path):
    """`--grid 3x3` on a knapsack (`--items` on a portfolio, ...) was dropped silently: the user
    thought they had set it. Refused, naming the kinds that take it; nothing written."""
    cases = [("knapsack", {"grid": "3x3"}, "--grid is for shortest_path and shortest_path_cvar"),
             ("portfolio", {"items": 4}, "--items is for knapsack, not portfolio"),
             ("energy", {"assets": 5}, "--assets is for portfolio and portfolio_cvar"),
             ("shortest_path", {"dims": 3}, "--dims is for knapsack, not shortest_path")]
    base = {k: v for k, v in ARGS.items() if k not in ("items", "dims")}
    for problem, given, words in cases:
        with pytest.raises(DflError, match=words):
            generate_command(problem, tmp_path / "k.npz", None, console=Console(quiet=True),
                             **base, **given)
    assert list(tmp_path.iterdir()) == []
    generate_command("shortest_path", tmp_path / "s.npz", None, console=Console(quiet=True),
                     **base, grid="2x3")  # its own option still shapes the data
    assert np.load(tmp_path / "s.npz")["cost"].shape == (5, 2 * 2 + 3 * 1)


def test_the_instance_is_written_in_the_format_its_name_says(tmp_path):
    for name in ("i.json", "i.yaml"):
        generate_command("knapsack", tmp_path / "k.npz", tmp_path / name,
                         console=Console(quiet=True), **ARGS)
    text = (tmp_path / "i.yaml").read_text()
    assert not text.startswith("{")  # block YAML, not JSON under a .yaml name
    assert yaml.safe_load(text) == json.loads((tmp_path / "i.json").read_text())


def test_a_recipe_whose_instance_lacks_a_set_is_named_in_the_error(tmp_path):
    """A shortest-path recipe given to a knapsack model: the error said `<data> has no
    "ITEMS"`, naming no file."""
    from dfl_dsl.learn.session import _instance_and_data

    model = tmp_path / "kn.opt"
    model.write_text("set ITEMS; param v{ITEMS} : predicted; var x{ITEMS} binary;\n"
                     "maximize o: sum{i in ITEMS} v[i] * x[i];\n")
    recipe = tmp_path / "sp.gen.yaml"
    recipe.write_text("generator: shortest_path\nargs: {num_data: 6, grid: [2, 2]}\ntrain: 3\n")
    with pytest.raises(DflError, match=r'sp\.gen\.yaml\'s instance has no "ITEMS"'):
        _instance_and_data(model, None, recipe, None)
