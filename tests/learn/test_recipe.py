"""A model's data recipe (MODEL.gen.yaml): found beside the model, run through the generators,
split into training and test data; every mistake in it is a located DflError."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from _learn_helpers import SHORTEST_PATH

from dfl_dsl.errors import DflError
from dfl_dsl.generators import shortest_path
from dfl_dsl.learn.recipe import Recipe, find_recipe, is_recipe, read_recipe, run_generator


def test_the_shipped_shortest_path_recipe():
    recipe = find_recipe(SHORTEST_PATH)
    assert isinstance(recipe, Recipe)
    assert recipe.generator == "shortest_path" and recipe.train == 1000
    assert recipe.path.name == "shortest_path.gen.yaml"
    assert recipe.args == {"num_data": 2000, "num_features": 5, "grid": [5, 5], "deg": 4,
                           "noise_width": 0.5, "seed": 135}


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "sp.opt"
    shutil.copy(SHORTEST_PATH, path)
    return path


def test_no_recipe_beside_the_model(model):
    assert find_recipe(model) is None


def test_a_yaml_recipe_generates_and_splits(model):
    model.with_suffix(".gen.yaml").write_text(
        "generator: shortest_path\nargs:\n  num_data: 50\n  grid: [3, 4]\n  deg: 2\n"
        "  noise_width: 0.25\n  seed: 9\ntrain: 30\n")
    train, test = find_recipe(model).generate()
    direct = shortest_path(num_data=50, grid=(3, 4), deg=2, noise_width=0.25, seed=9)
    assert len(train.features) == 30 and len(test.features) == 20
    np.testing.assert_array_equal(np.vstack([train.features, test.features]), direct.features)
    np.testing.assert_array_equal(np.vstack([train.targets["cost"], test.targets["cost"]]),
                                  direct.targets["cost"])
    assert train.instance == direct.instance and len(train.instance["ARCS"]) == 17


def test_split_seed_splits_as_train_test_split_does(model):
    """PyEPO's notebooks split with scikit-learn's train_test_split(test_size, random_state):
    test = the first `rest` of RandomState(seed).permutation(n), train = the others."""
    sklearn = pytest.importorskip("sklearn.model_selection")
    model.with_suffix(".gen.yaml").write_text(
        "generator: shortest_path\nargs:\n  num_data: 50\n  grid: [3, 4]\n  seed: 9\n"
        "train: 30\nsplit_seed: 42\n")
    train, test = find_recipe(model).generate()
    direct = shortest_path(num_data=50, grid=(3, 4), seed=9)
    x_train, x_test, c_train, c_test = sklearn.train_test_split(
        direct.features, direct.targets["cost"], test_size=20, random_state=42)
    np.testing.assert_array_equal(train.features, x_train)
    np.testing.assert_array_equal(test.features, x_test)
    np.testing.assert_array_equal(train.targets["cost"], c_train)
    np.testing.assert_array_equal(test.targets["cost"], c_test)


def test_the_pyepo_notebook_recipe():
    recipe = read_recipe(SHORTEST_PATH.with_name("pyepo_notebook.gen.yaml"))
    assert (recipe.args["seed"], recipe.split_seed, recipe.train) == (42, 42, 1000)
    assert is_recipe(recipe.path) and not is_recipe(SHORTEST_PATH)


def test_a_json_recipe_is_found_too(model):
    model.with_suffix(".gen.json").write_text(json.dumps(
        {"generator": "knapsack", "args": {"num_data": 10, "num_items": 4}, "train": 6}))
    recipe = find_recipe(model)
    assert recipe.generator == "knapsack" and recipe.train == 6
    train, test = recipe.generate()
    assert train.targets["value"].shape == (6, 4) and len(test.features) == 4


@pytest.mark.parametrize(("text", "words"), [
    ("args: {num_data: 10}\n", "names a `generator`"),
    ("generator: tsp\n", "unknown generator `tsp`"),
    ("generator: shortest_path\nargs: {num_data: 10, nodes: 4}\n",
     "has no argument `nodes`"),
    ("generator: shortest_path\nargs: {num_data: 10}\ntrain: 10\n", "between 1 and num_data"),
    ("generator: shortest_path\nargs: {num_data: 10, deg: 0}\ntrain: 5\n",
     "generator `shortest_path`: deg must be a positive integer"),
    ("generator: shortest_path\nargs: {num_data: 10, grid: 5}\ntrain: 5\n",
     "generator `shortest_path`: "),
    ("generator: shortest_path\nargs: [1, 2]\n", "`args` is a mapping"),
    ("generator: shortest_path\ntrain: half\n", "`train` is a number of samples"),
    ("generator: shortest_path\nsplit_seed: 0.5\n", "`split_seed` is a whole number"),
], ids=["no-generator", "unknown-generator", "unknown-arg", "train-too-big", "bad-arg",
        "bad-grid", "args-list", "train-word", "split-seed-float"])
def test_recipe_mistakes_are_located_errors(model, text, words):
    path = model.with_suffix(".gen.yaml")
    path.write_text(text)
    with pytest.raises(DflError, match=words) as info:
        read_recipe(path).generate()
    assert info.value.filename == str(path)


def test_run_generator_hints_the_choices():
    with pytest.raises(DflError) as info:
        run_generator("tsp", {})
    assert "shortest_path" in str(info.value) and "portfolio" in str(info.value)
    with pytest.raises(DflError) as info:
        run_generator("portfolio", {"noise_width": 1.0})
    assert "noise_level" in str(info.value)
    data = run_generator("portfolio", {"num_data": 4, "num_assets": 3})
    assert data.targets["ret"].shape == (4, 3)


def test_a_bad_option_of_dfl_generate_names_no_file():
    """`dfl generate knapsack --items 0` printed `<args>: error: ...`, a file that isn't one."""
    with pytest.raises(DflError, match="num_items must be a positive integer") as info:
        run_generator("knapsack", {"num_data": 4, "num_items": 0})
    assert info.value.filename is None
    assert str(info.value).startswith("dfl: error: generator `knapsack`")
