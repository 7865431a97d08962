"""Every decision-focused loss by its `--loss` name: the one table the trainer, the CLI and the
settings checks read (each loss lives in the module of its family)."""

from __future__ import annotations

from .losses import DBB, DPO, MSE, NCE, PFYL, SPOPlus
from .losses_cave import CaVE
from .losses_mle import AIMLE, IMLE
from .losses_ranking import ListwiseLTR, PairwiseLTR, PointwiseLTR

LOSSES = {
    "spo+": SPOPlus, "pfyl": PFYL, "dpo": DPO, "dbb": DBB, "nce": NCE, "mse": MSE,
    "imle": IMLE, "aimle": AIMLE,
    "listwise": ListwiseLTR, "pairwise": PairwiseLTR, "pointwise": PointwiseLTR,
    "cave": CaVE,
}
