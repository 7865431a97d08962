"""A synthetic corpus: 2,000 documents over 300 words, each document drawing a few topics,
each topic a handful of words (sparse, nonnegative tf-idf-like weights). Writes data.json;
also prints the lazy-greedy value, the baseline a summary should reach."""

from __future__ import annotations

import argparse
import json

import numpy as np


def corpus(docs: int, words: int, topics: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic_words = [rng.choice(words, size=12, replace=False) for _ in range(topics)]
    weights = np.zeros((docs, words))
    for d in range(docs):
        for t in rng.choice(topics, size=rng.integers(1, 4), replace=False):
            w = topic_words[t]
            weights[d, w] += rng.exponential(1.0, size=len(w)) * (rng.random(len(w)) < 0.6)
    return np.round(weights, 4)


def greedy(weights: np.ndarray, k: int) -> float:
    """The classic greedy (Nemhauser, Wolsey & Fisher 1978): a (1 - 1/e) baseline."""
    covered = np.zeros(weights.shape[1])
    for _ in range(k):
        gains = np.sqrt(covered + weights).sum(axis=1) - np.sqrt(covered).sum()
        covered += weights[int(np.argmax(gains))]
    return float(np.sqrt(covered).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--words", type=int, default=300)
    ap.add_argument("--topics", type=int, default=40)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="data.json")
    args = ap.parse_args()
    weights = corpus(args.docs, args.words, args.topics, args.seed)
    data = {"DOCS": list(range(args.docs)), "WORDS": list(range(args.words)),
            "tfidf": weights.tolist(), "k": args.k}
    with open(args.out, "w") as f:
        json.dump(data, f)
    print(f"wrote {args.out}: {args.docs} documents, {args.words} words, "
          f"{np.count_nonzero(weights)} nonzeros; greedy value {greedy(weights, args.k):.6f}")


if __name__ == "__main__":
    main()
