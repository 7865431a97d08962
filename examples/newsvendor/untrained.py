"""The relative CVaR regret of the untrained start of each scenario loss: the model `dfl train`
begins from (same seed, its scaler fitted to the observed demands), deciding on test.npz before
any step — the baseline the trained regrets compare against. `nll` and `gen-dfl` start from
the same flow."""

from __future__ import annotations

import json

import dfl_dsl as dfl
from dfl_dsl.learn.dataset import ScenarioData
from dfl_dsl.learn.scenario_trainer import ScenarioTrainer


def main() -> None:
    inst = dfl.load("newsvendor.opt").bind("newsvendor.json")
    train = ScenarioData.from_npz(inst, "train.npz")
    test = ScenarioData.from_npz(inst, "test.npz")
    regrets = {}
    for loss in ("mse", "nll"):
        trainer = ScenarioTrainer(inst, loss, progress=False)  # dfl train's defaults: seed 135
        trainer.init_model(train)
        regrets[loss] = trainer.risk_regret(test)
    regrets["gen-dfl"] = regrets["nll"]  # the same seeded flow
    print(json.dumps({"untrained_regret": regrets, "metric": "relative CVaR regret"}))


if __name__ == "__main__":
    main()
