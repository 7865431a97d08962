"""Data for portfolio_qp.opt: 10 assets, 5 features, returns a degree-4 polynomial of the
features (so a linear predictor is misspecified, as in PyEPO's benchmarks) plus noise, and a
factor-model covariance. Writes portfolio.json (the instance), train.npz (400 samples) and
test.npz (200)."""

import json

import numpy as np

ASSETS, FEATURES, FACTORS, DEG, NOISE = 10, 5, 3, 4, 0.5
rng = np.random.default_rng(7)
names = [f"asset{i}" for i in range(ASSETS)]
loadings = 0.0025 * rng.uniform(-1, 1, (ASSETS, FACTORS))
cov = loadings @ loadings.T + (0.01 * NOISE) ** 2 * np.eye(ASSETS)
instance = {"ASSETS": names, "gamma": 2.0,
            "cov": {a: {b: float(cov[i, j]) for j, b in enumerate(names)}
                    for i, a in enumerate(names)}}
with open("portfolio.json", "w") as f:
    json.dump(instance, f, indent=1)

B = rng.binomial(1, 0.5, (ASSETS, FEATURES))
x = rng.normal(size=(600, FEATURES))
mean = (0.05 / np.sqrt(FEATURES) * x @ B.T + 0.1 ** (1 / DEG)) ** DEG
returns = mean + 0.01 * NOISE * rng.normal(size=mean.shape)
np.savez("train.npz", features=x[:400], ret=returns[:400])
np.savez("test.npz", features=x[400:], ret=returns[400:])
print("wrote portfolio.json, train.npz (400 samples), test.npz (200)")
