"""Reference spectra as smooth bumps over 200 bands, a mixture of 4 of the 60 with noise.
Writes data.json and prints the true mixture."""

from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bands", type=int, default=200)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--mixed", type=int, default=4)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="data.json")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    grid = np.linspace(0, 1, args.bands)[:, None]
    centers, widths = rng.random(args.n), 0.03 + 0.1 * rng.random(args.n)
    spectra = np.exp(-0.5 * ((grid - centers) / widths) ** 2)
    true = np.zeros(args.n)
    chosen = rng.choice(args.n, size=args.mixed, replace=False)
    true[chosen] = rng.dirichlet(np.ones(args.mixed))
    measured = spectra @ true + args.noise * rng.standard_normal(args.bands)
    data = {"bands": args.bands, "n": args.n, "S": np.round(spectra, 6).tolist(),
            "measured": np.round(measured, 6).tolist()}
    with open(args.out, "w") as f:
        json.dump(data, f)
    mix = ", ".join(f"share[{i}] = {true[i]:.3f}" for i in sorted(chosen))
    print(f"wrote {args.out}; true mixture: {mix}")


if __name__ == "__main__":
    main()
