"""Substitute numbers for symbols in a Poly: the step that fixes uncertain params at a scenario
(or predicted params at a value) and leaves a polynomial in the remaining symbols."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..evaluate.nonlinear import NL, AtomNode
from ..evaluate.poly import Poly, quad_from_triplets


def substitute(poly: Poly, cols: np.ndarray, values: np.ndarray) -> Poly:
    """`poly` with z[cols] := values (cols are symbol columns, values aligned with them)."""
    width = poly.width
    fixed = np.zeros(width, dtype=bool)
    fixed[cols] = True
    value_of = np.zeros(width)
    value_of[cols] = values
    lin = poly.lin.tocoo()
    rows, c, v = lin.row.astype(np.int64), lin.col.astype(np.int64), lin.data
    hit = fixed[c]
    const = poly.const + np.bincount(rows[hit], weights=v[hit] * value_of[c[hit]],
                                     minlength=poly.rows)
    keep_r, keep_c, keep_v = [rows[~hit]], [c[~hit]], [v[~hit]]
    quad = pairs = None
    if poly.quad is not None and poly.quad.nnz:
        q = poly.quad.tocoo()
        qr = q.row.astype(np.int64)
        a, b, qv = poly.pairs[q.col, 0], poly.pairs[q.col, 1], q.data
        fa, fb = fixed[a], fixed[b]
        both = fa & fb
        const = const + np.bincount(qr[both], weights=qv[both] * value_of[a[both]] *
                                    value_of[b[both]], minlength=poly.rows)
        only_a = fa & ~fb  # z_a fixed: a linear term in z_b
        only_b = fb & ~fa
        keep_r += [qr[only_a], qr[only_b]]
        keep_c += [b[only_a], a[only_b]]
        keep_v += [qv[only_a] * value_of[a[only_a]], qv[only_b] * value_of[b[only_b]]]
        free = ~fa & ~fb
        if free.any():
            quad, pairs = quad_from_triplets(qr[free], a[free], b[free], qv[free], poly.rows,
                                              width)
    lin = sp.coo_array(
        (np.concatenate(keep_v), (np.concatenate(keep_r), np.concatenate(keep_c))),
        shape=(poly.rows, width),
    ).tocsr()
    lin.sum_duplicates()
    return Poly(const, lin, quad, pairs)


def uses(poly: Poly | NL, cols: np.ndarray) -> np.ndarray:
    """Which rows of `poly` involve any of the symbols `cols` (inside atoms too)."""
    if isinstance(poly, NL):
        hit = uses(poly.poly, cols)
        for matrix, node in poly.terms:
            node_hit = np.zeros(node.rows, dtype=bool)
            for arg in node.args:
                if not isinstance(arg, (Poly, NL)):
                    continue
                arg_hit = uses(arg, cols)
                if node.starts is None:
                    node_hit |= arg_hit
                else:  # a reduction: output row g reads rows starts[g]:starts[g+1]
                    owner = np.repeat(np.arange(node.rows), np.diff(node.starts))
                    node_hit[owner[arg_hit]] = True
            hit |= (abs(matrix) @ node_hit.astype(float)) > 0
        return hit
    mask = np.zeros(poly.width, dtype=bool)
    mask[cols] = True
    lin = poly.lin.tocoo()
    hit = np.zeros(poly.rows, dtype=bool)
    hit[lin.row[mask[lin.col]]] = True
    if poly.quad is not None and poly.quad.nnz:
        q = poly.quad.tocoo()
        touched = mask[poly.pairs[q.col, 0]] | mask[poly.pairs[q.col, 1]]
        hit[q.row[touched]] = True
    return hit


def holds(node: AtomNode, cols: np.ndarray) -> bool:
    """Whether any argument of `node` involves one of the symbols `cols`."""
    return any(isinstance(a, (Poly, NL)) and uses(a, cols).any() for a in node.args)


def fix(payload: Poly | NL, cols: np.ndarray, values: np.ndarray) -> Poly | NL:
    """`payload` with the symbols `cols` fixed at `values`, inside atoms too."""
    if isinstance(payload, Poly):
        return substitute(payload, cols, values)
    terms = [(m, fix_node(n, cols, values)) for m, n in payload.terms]
    return NL(substitute(payload.poly, cols, values), terms)


def fix_node(node: AtomNode, cols: np.ndarray, values: np.ndarray) -> AtomNode:
    args = tuple(fix(a, cols, values) if isinstance(a, (Poly, NL)) else a for a in node.args)
    return AtomNode(node.name, args, node.rows, node.starts, node.param)
