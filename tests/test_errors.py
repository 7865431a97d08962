"""did_you_mean: the hint naming the closest known name."""

from __future__ import annotations

from dfl_dsl.errors import did_you_mean


def test_a_case_slip_is_the_closest_name_even_for_one_letter():
    # difflib alone scores `m` against `M` as unlike as any two letters
    assert did_you_mean("m", ["M", "n"]) == "did you mean `M`?"
    assert did_you_mean("Demand", ["supply", "demand"]) == "did you mean `demand`?"


def test_close_spellings_are_hinted_and_far_ones_are_not():
    assert did_you_mean("weight", ["wieght", "cost"]) == "did you mean `wieght`?"
    assert did_you_mean("x", ["supply", "demand"]) is None
