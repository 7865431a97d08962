"""The backend registry (dfl_dsl/backends/__init__.py): an option a backend does not take is a
clear error, not ignored."""

from __future__ import annotations

import pytest
from _helpers import bind

from dfl_dsl.errors import DflError

LP = "var x >= 0; var y >= 0; minimize c: x + 2*y; subject to a: x + y >= 1;"
PCA = "param C[3, 3]; var X[3, 2] in stiefel; minimize f: -trace(X.T @ C @ X);"


@pytest.mark.parametrize(("backend", "option", "listed"), [
    ("highs", "write", "it takes only a time limit and a seed"),  # pyomo's option
    ("cvxpy", "variant", "it takes only a time limit and a seed"),  # Frank–Wolfe's
    ("flexqp", "max_iters", "its options: device, dtype, eps, max_iter, policy"),  # a typo
])
def test_an_option_the_backend_does_not_take(backend, option, listed):
    with pytest.raises(DflError, match=f"backend `{backend}` takes no option `{option}`") as exc:
        bind(LP).solve(backend, **{option: 1})
    assert exc.value.hint == listed


def test_options_a_backend_forwards_are_checked_where_they_go():
    inst = bind(PCA, {"C": [[2, 0, 0], [0, 1, 0], [0, 0, 0.5]]})
    with pytest.raises(DflError, match="backend `obcd` takes no option `strateg`") as exc:
        inst.solve("obcd", strateg="greedy", max_rounds=5)
    assert "strategy" in exc.value.hint
    assert inst.solve("obcd", k=2, strategy="cyclic", max_rounds=5).status == "feasible"


def test_options_it_takes_still_reach_it(tmp_path):
    sol = bind(LP).solve("pyomo", write=tmp_path / "m.lp")
    assert sol.objective == pytest.approx(1.0)
    assert (tmp_path / "m.lp").read_text().strip()


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
@pytest.mark.parametrize("limit", [-1.0, 0.0, float("nan")])
def test_a_time_limit_must_be_positive_whatever_the_backend(backend, limit):
    """HiGHS took -1 as no limit and solved; Pyomo's config raised a ValueError."""
    with pytest.raises(DflError, match="the time limit must be positive"):
        bind(LP).solve(backend, time_limit=limit)
