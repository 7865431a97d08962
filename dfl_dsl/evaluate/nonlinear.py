"""Nonlinear values: a polynomial part plus sparse combinations of atom nodes.

An atom applied to many rows at once (`sqrt` of 500 affine rows) is one `AtomNode`; linear
operations (sums, scalings, gathers) act on the sparse matrices that combine atom rows, so the
structure a backend needs (SCM's Σ w_j φ(a_jᵀx), an epigraph for `max`) stays visible.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .poly import Poly, scale_rows


@dataclass(eq=False)
class AtomNode:
    """`name` applied to `args` (full-row payloads): elementwise when `starts` is None, else a
    reduction of each row group starts[g]:starts[g+1] of the argument to one output row."""

    name: str
    args: tuple
    rows: int
    starts: np.ndarray | None = None
    param: object = None  # exponent of `^`, alpha of `cvar`, the matrix of `quad_form`

    def take(self, keep: np.ndarray | None) -> AtomNode:
        """The node's output rows `keep` (all when None), its arguments restricted in turn."""
        if keep is None:
            if not any(isinstance(a, NL) for a in self.args):
                return self
            return AtomNode(self.name, tuple(_restricted(a) for a in self.args), self.rows,
                            self.starts, self.param)
        if self.starts is None:
            idx, starts = keep, None
        else:
            lengths = np.diff(self.starts)[keep]
            ends = np.cumsum(lengths)
            idx = (np.repeat(self.starts[:-1][keep] - (ends - lengths), lengths)
                   + np.arange(int(ends[-1]) if len(ends) else 0))
            starts = np.concatenate([[0], ends]).astype(np.int64)
        args = []
        for a in self.args:
            if isinstance(a, (Poly, NL)):
                args.append(_restricted(a.take(idx)))
            elif np.ndim(a):
                args.append(np.asarray(a)[idx])
            else:
                args.append(a)
        return AtomNode(self.name, tuple(args), len(keep), starts, self.param)


@dataclass
class NL:
    poly: Poly
    terms: list[tuple[sp.csr_array, AtomNode]] = field(default_factory=list)

    @staticmethod
    def of(node: AtomNode, width: int) -> NL:
        eye = sp.identity(node.rows, format="csr", dtype=float)
        return NL(Poly.zeros(node.rows, width), [(sp.csr_array(eye), node)])

    @property
    def rows(self) -> int:
        return self.poly.rows

    def take(self, idx: np.ndarray) -> NL:
        return NL(self.poly.take(idx), [(m[idx], n) for m, n in self.terms])

    def scale(self, factor: np.ndarray) -> NL:
        factor = np.broadcast_to(np.asarray(factor, dtype=float), (self.rows,))
        return NL(self.poly.scale(factor), [(scale_rows(m, factor), n) for m, n in self.terms])

    def rowmap(self, m: sp.csr_array) -> NL:
        m = sp.csr_array(m)
        return NL(self.poly.rowmap(m), [((m @ t).tocsr(), n) for t, n in self.terms])

    def segment_sum(self, starts: np.ndarray) -> NL:
        return self.rowmap(segment_matrix(starts, self.rows))

    def restricted(self) -> NL:
        """The same rows with each atom node cut down to the rows its matrix uses (`take`
        keeps the nodes whole), the atoms nested in them too; an atom no row uses is dropped:
        a row block taken from an `expr`'s, or a scenario's share of a block, then lowers
        only the atom rows it holds."""
        terms = []
        for matrix, node in self.terms:
            m = sp.csr_array(matrix)
            used = np.zeros(node.rows, dtype=bool)
            used[m.indices] = True
            if not used.any():
                continue
            if used.all():
                node = node.take(None)
            else:
                keep = np.flatnonzero(used)
                remap = np.cumsum(used) - 1
                m = sp.csr_array((m.data, remap[m.indices], m.indptr),
                                 shape=(m.shape[0], len(keep)))
                node = node.take(keep)
            terms.append((m, node))
        return NL(self.poly, terms)

    def __add__(self, other: NL | Poly) -> NL:
        if isinstance(other, Poly):
            return NL(self.poly + other, self.terms)
        return NL(self.poly + other.poly, self.terms + other.terms)

    def __radd__(self, other: Poly) -> NL:
        return self + other


def _restricted(payload):
    return payload.restricted() if isinstance(payload, NL) else payload


def segment_matrix(starts: np.ndarray, rows: int) -> sp.csr_array:
    """The (groups × rows) 0/1 matrix that sums contiguous row groups."""
    groups = len(starts) - 1
    return sp.csr_array(
        (np.ones(rows), np.arange(rows, dtype=np.int64), starts.astype(np.int64)),
        shape=(groups, rows),
    )
