"""Pictures of training: loss and regret per epoch."""

from __future__ import annotations

from pathlib import Path


def training_curve(history: list[dict], path: str | Path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [e["epoch"] for e in history]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.plot(epochs, [e["loss"] for e in history], "o-", color="tab:blue", label="training loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss", color="tab:blue")
    key = next((k for k in (history[0] if history else {}) if k.endswith("_regret")), None)
    if key is not None:
        twin = ax.twinx()
        twin.plot(epochs, [e[key] for e in history], "s-", color="tab:red",
                  label=key.replace("_", " "))
        twin.set_ylabel(f"normalized regret ({key.split('_')[0]})", color="tab:red")
    ax.set_title(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
