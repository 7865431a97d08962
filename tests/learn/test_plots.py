"""The training curve: loss and the monitored metric per epoch, a PNG written atomically."""

from __future__ import annotations

import matplotlib.figure
import pytest

from dfl_dsl.errors import DflError
from dfl_dsl.learn.plots import training_curve

HISTORY = [{"epoch": e, "loss": 3.0 - e, "train_time_s": 0.1, "test_regret": 0.5 / e}
           for e in (1, 2, 3)]


@pytest.fixture
def figures(monkeypatch):
    """The figures training_curve saves, kept for a look at their axes."""
    saved, original = [], matplotlib.figure.Figure.savefig

    def keep(self, *args, **kwargs):
        saved.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    return saved


def test_a_png_with_whole_epochs_and_the_metric_named(tmp_path, figures):
    path = tmp_path / "curve.png"
    training_curve(HISTORY, path, title="m: nll", metric="relative CVaR regret")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    loss_axis, regret_axis = figures[0].axes
    assert regret_axis.get_ylabel() == "relative CVaR regret (test)"  # not 'normalized regret'
    ticks = [t for t in loss_axis.get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)  # no epoch 1.5
    assert list(tmp_path.iterdir()) == [path]


def test_a_failed_write_leaves_no_file(tmp_path, monkeypatch):
    """savefig wrote straight to the path: a failure halfway left half a PNG."""
    def broken(self, handle, **kwargs):
        handle.write(b"\x89PNG half")
        raise OSError("disk full")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    with pytest.raises(DflError, match="can't write .*curve.png`: disk full"):  # exit 2
        training_curve(HISTORY, tmp_path / "curve.png")
    assert list(tmp_path.iterdir()) == []
