"""Articles in messages follow the sound of the word."""

import pytest

from dfl_dsl.words import article


@pytest.mark.parametrize("word, expected", [
    ("LP", "an"), ("SCM", "an"), ("SOCP", "an"), ("MILP", "an"), ("QP", "a"), ("MIQP", "an"),
    ("STIEFEL", "a"), ("SMOOTH-POLYTOPE", "a"), ("affine", "an"), ("convex", "a"),
    ("unknown", "an"),
])
def test_article(word, expected):
    assert article(word) == expected
