"""Pictures of training: loss and regret per epoch."""

from __future__ import annotations

from pathlib import Path

from ..outputs import write_atomic


def training_curve(history: list[dict], path: str | Path, title: str = "",
                   metric: str = "normalized regret") -> None:
    """Loss (left axis) and the monitored `metric` (right axis) per epoch, as a PNG written
    atomically (a failure leaves no half-written picture)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = [e["epoch"] for e in history]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.plot(epochs, [e["loss"] for e in history], "o-", color="tab:blue", label="training loss")
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no epoch 1.5
    ax.set_ylabel("loss", color="tab:blue")
    key = next((k for k in (history[0] if history else {}) if k.endswith("_regret")), None)
    if key is not None:
        twin = ax.twinx()
        twin.plot(epochs, [e[key] for e in history], "s-", color="tab:red",
                  label=key.replace("_", " "))
        twin.set_ylabel(f"{metric} ({key.split('_')[0]})", color="tab:red")
    ax.set_title(title)
    fig.tight_layout()
    try:
        write_atomic(Path(path), lambda handle: fig.savefig(handle, format="png"))
    finally:
        plt.close(fig)
