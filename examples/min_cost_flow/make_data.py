"""A larger network for flow.mod, written as an AMPL .dat file: N nodes on a ring (arcs both
ways, so every node reaches every other), plus random arcs up to A in all; a few sources and
sinks whose supplies balance. Seeded: the same arguments give the same file.

    python make_data.py --nodes 2000 --arcs 16000 --out big.dat
"""

from __future__ import annotations

import argparse

import numpy as np


def network(nodes: int, arcs: int, seed: int) -> tuple[list[tuple[int, int]], np.random.Generator]:
    """The ring both ways, then random distinct arcs (no self-loops) until there are `arcs`."""
    rng = np.random.default_rng(seed)
    pairs = {(i, (i + 1) % nodes) for i in range(nodes)} | {((i + 1) % nodes, i)
                                                           for i in range(nodes)}
    while len(pairs) < arcs:
        i, j = (int(v) for v in rng.integers(0, nodes, 2))
        if i != j:
            pairs.add((i, j))
    return sorted(pairs), rng


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--arcs", type=int, default=16000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="big.dat")
    args = parser.parse_args()
    if args.nodes < 3 or args.arcs < 2 * args.nodes:
        parser.error("need at least 3 nodes and 2 arcs per node (the ring both ways)")
    pairs, rng = network(args.nodes, args.arcs, args.seed)
    ends = rng.choice(args.nodes, size=10, replace=False)
    supply = np.zeros(args.nodes, dtype=int)
    supply[ends[:5]] = 100   # five sources of 100 units
    supply[ends[5:]] = -100  # five sinks of 100 units
    cost = rng.integers(1, 20, len(pairs))
    cap = rng.integers(50, 300, len(pairs))
    name = [f"N{k}" for k in range(args.nodes)]
    given = " ".join(f"{name[k]} {supply[k]}" for k in np.flatnonzero(supply))
    lines = [f"set NODES := {' '.join(name)} ;", "", f"param supply := {given} ;", "",
             "param: ARCS: cost cap :="]
    lines += [f"  {name[i]} {name[j]} {c} {u}"
              for (i, j), c, u in zip(pairs, cost, cap, strict=True)]
    lines[-1] += " ;"
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {args.nodes} nodes, {len(pairs)} arcs")


if __name__ == "__main__":
    main()
