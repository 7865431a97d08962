"""The exact k = 2 subproblem of OBCD, batched over disjoint row pairs.

For rows x, y of X and V ∈ O(2) — a rotation [[c, s], [−s, c]] or a reflection
[[c, s], [s, −c]] by θ — the new rows are x' = c·x + s·y and y' = ±(c·y − s·x). The smooth part
of each pair's subproblem (exact for a C ⊗ R quadratic, majorized otherwise) is a trigonometric
polynomial of degree 2 in θ,

    φ(θ) = a0 + a1 cos θ + b1 sin θ + a2 cos 2θ + b2 sin 2θ,

and h = λ₁‖·‖₁ + λ₀‖·‖₀ + ι(· >= 0) of the new rows changes only where an entry of x' or y'
crosses zero: the 4r breakpoints θ with c·x_j + s·y_j = 0 or c·y_j − s·x_j = 0 split the circle
into arcs, on each of which h is linear in (cos θ, sin θ) (L1), constant (L0), or 0 / +∞
(nonnegativity). So the global minimizer is a breakpoint or a stationary point of its arc's
degree-2 trigonometric polynomial — a root of a quartic in z = e^{iθ} (the breakpoint search of
arXiv 2304.03641, written in θ rather than t = tan θ). Every candidate is evaluated with the
true subproblem objective, so spurious candidates are harmless and the answer is the global
minimum over O(2): for L1 (or h = 0) from each arc's own expression, exact on the arc, at its
start and at its stationary points clamped into it; with L0 or X >= 0 (h jumps at
breakpoints) on the candidate's rotated rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

SNAP = 1e-13  # |entry| below this after a rotation is a zero (rounding at a breakpoint)
_CHUNK = 4_000_000  # candidate entries evaluated at once


@dataclass
class PairStep:
    theta: torch.Tensor  # (P,)
    reflect: torch.Tensor  # (P,) bool
    delta: torch.Tensor  # (P,) change of the subproblem objective (<= 0)
    x: torch.Tensor  # (P, r) new rows
    y: torch.Tensor


def h_rows(v: torch.Tensor, l1: float, l0: float, nonneg: bool) -> torch.Tensor:
    """h summed over the last axis."""
    out = torch.zeros(v.shape[:-1], dtype=v.dtype, device=v.device)
    if l1:
        out = out + l1 * v.abs().sum(-1)
    if l0:
        out = out + l0 * (v != 0).sum(-1).to(v.dtype)
    if nonneg:
        out = torch.where((v < 0).any(-1), torch.full_like(out, float("inf")), out)
    return out


def rotate(x: torch.Tensor, y: torch.Tensor, theta: torch.Tensor, reflect: torch.Tensor):
    """New rows for angles theta (broadcast against x[..., None, :]), zeros snapped."""
    c, s = torch.cos(theta)[..., None], torch.sin(theta)[..., None]
    nx = c * x + s * y
    ny = c * y - s * x
    ny = torch.where(reflect[..., None], -ny, ny)
    snap = lambda v: torch.where(v.abs() <= SNAP, torch.zeros_like(v), v)  # noqa: E731
    return snap(nx), snap(ny)


def trig(coef: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """φ(θ) for coef (..., 5) = [a0, a1, b1, a2, b2] and theta (..., K)."""
    a0, a1, b1, a2, b2 = (coef[..., i, None] for i in range(5))
    return (a0 + a1 * torch.cos(theta) + b1 * torch.sin(theta) + a2 * torch.cos(2 * theta)
            + b2 * torch.sin(2 * theta))


def breakpoints(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The 4r angles in [0, 2π) where an entry of x' or y' vanishes."""
    first = torch.atan2(x, -y)  # (c, s) ∝ (−y, x): c·x + s·y = 0
    second = torch.atan2(y, x)  # (c, s) ∝ (x, y): c·y − s·x = 0
    both = torch.cat([first, first + torch.pi, second, second + torch.pi], dim=-1)
    return torch.remainder(both, 2 * torch.pi)


def _cbrt(v: torch.Tensor) -> torch.Tensor:
    return torch.where(v == 0, v, torch.exp(torch.log(v) / 3))


def _quartic_roots(a, c, d) -> torch.Tensor:
    """Roots of z⁴ + a z³ + c z + d (complex, batched) by Ferrari's method with a Cardano
    resolvent: a few dozen elementwise kernels instead of one 4 × 4 eigenproblem per arc."""
    p = -3 * a * a / 8
    q = c + a**3 / 8
    r = d - a * c / 4 - 3 * a**4 / 256
    # resolvent y³ + e y² + f y + g = 0 (Ferrari: (w² + y)² is then a perfect square)
    e, f, g = -p / 2, -r, (4 * p * r - q * q) / 8
    P = f - e * e / 3
    Q = 2 * e**3 / 27 - e * f / 3 + g
    root = torch.sqrt(Q * Q / 4 + P**3 / 27)
    C1, C2 = _cbrt(-Q / 2 + root), _cbrt(-Q / 2 - root)
    C = torch.where(C1.abs() >= C2.abs(), C1, C2)
    safe = torch.where(C == 0, torch.ones_like(C), C)
    omega = torch.tensor([1, complex(-0.5, 3**0.5 / 2), complex(-0.5, -(3**0.5) / 2)],
                         dtype=a.dtype, device=a.device)
    Ck = safe[..., None] * omega
    u = torch.where((C == 0)[..., None], torch.zeros_like(Ck), Ck - P[..., None] / (3 * Ck))
    y = u - e[..., None] / 3
    s2 = 2 * y - p[..., None]
    best = torch.argmax(s2.abs(), dim=-1, keepdim=True)
    y, s2 = y.gather(-1, best)[..., 0], s2.gather(-1, best)[..., 0]
    s = torch.sqrt(s2)
    flat = s.abs() <= 1e-12 * (1 + p.abs() + r.abs().sqrt())
    s_safe = torch.where(flat, torch.ones_like(s), s)
    k1, k2 = y + q / (2 * s_safe), y - q / (2 * s_safe)
    d1, d2 = torch.sqrt(s * s - 4 * k1), torch.sqrt(s * s - 4 * k2)
    general = torch.stack([(s + d1) / 2, (s - d1) / 2, (-s + d2) / 2, (-s - d2) / 2], -1)
    disc = torch.sqrt(p * p - 4 * r)  # biquadratic: w² = (−p ± √(p² − 4r)) / 2
    w1, w2 = torch.sqrt((-p + disc) / 2), torch.sqrt((-p - disc) / 2)
    bi = torch.stack([w1, -w1, w2, -w2], -1)
    return torch.where(flat[..., None], bi, general) - a[..., None] / 4


def _polish(coef: torch.Tensor, theta: torch.Tensor, steps: int = 3) -> torch.Tensor:
    """Newton steps on φ'(θ) = 0 to recover the accuracy closed forms lose."""
    a1, b1, a2, b2 = (coef[..., i, None] for i in range(1, 5))
    for _ in range(steps):
        c, s = torch.cos(theta), torch.sin(theta)
        c2, s2 = torch.cos(2 * theta), torch.sin(2 * theta)
        d1 = -a1 * s + b1 * c - 2 * a2 * s2 + 2 * b2 * c2
        d2 = -a1 * c - b1 * s - 4 * a2 * c2 - 4 * b2 * s2
        ok = d2.abs() > 1e-12 * (d1.abs() + 1e-300)
        theta = torch.where(ok, theta - d1 / torch.where(ok, d2, torch.ones_like(d2)), theta)
    return theta


def stationary(coef: torch.Tensor) -> torch.Tensor:
    """Angles where φ'(θ) = 0: the roots' arguments of the quartic
    (b2 + i·a2) z⁴ + ((b1 + i·a1)/2) z³ + ((b1 − i·a1)/2) z + (b2 − i·a2) in z = e^{iθ}, plus the
    sinusoid's minimizer atan2(−b1, −a1) (exact when a2 = b2 = 0, where the quartic
    degenerates); Newton-polished."""
    a1, b1, a2, b2 = coef[..., 1], coef[..., 2], coef[..., 3], coef[..., 4]
    sinusoid = torch.atan2(-b1, -a1)[..., None]
    if not (a2.any() or b2.any()):  # a majorized (isotropic) model: sinusoids only
        return sinusoid
    lead = torch.complex(b2, a2)
    cubic, linear, const = (torch.complex(b1, a1) / 2, torch.complex(b1, -a1) / 2,
                            torch.complex(b2, -a2))
    scale = torch.stack([lead.abs(), cubic.abs(), const.abs()], -1).amax(-1)
    degenerate = lead.abs() <= 1e-12 * scale
    safe = torch.where(degenerate, torch.ones_like(lead), lead)
    roots = _quartic_roots(cubic / safe, linear / safe, const / safe)
    angles = torch.where(degenerate[..., None], torch.zeros_like(roots.real), torch.angle(roots))
    return _polish(coef, torch.cat([angles, sinusoid], dim=-1))


def _arcs(x, y, cuts, l1: float):
    """Sorted breakpoints (P, A), each arc's width, L1's (cos θ, sin θ) coefficients on
    each arc [ordered_k, ordered_k + width_k], and (cos, sin) of the sorted breakpoints.
    Signs are read once, on the arc that wraps past 2π; each breakpoint then flips one entry's
    sign, so the other arcs follow by a cumulative sum of those jumps: O(r) per breakpoint
    rather than O(r) per arc and entry."""
    r = x.shape[-1]
    ordered, order = torch.sort(cuts, dim=-1)
    width = torch.roll(ordered, -1, dims=-1) - ordered
    width[..., -1] += 2 * torch.pi
    mid = (ordered[..., -1] + 0.5 * width[..., -1])[..., None]
    c, s = torch.cos(mid), torch.sin(mid)
    sig = torch.sign(c * x + s * y)  # signs of x' and (rotation) y' on the wrapping arc
    tau = torch.sign(c * y - s * x)
    ca0 = (sig * x + tau * y).sum(-1, keepdim=True)
    sa0 = (sig * y - tau * x).sum(-1, keepdim=True)
    # entry j's zero at breakpoint b: x' (b < 2r) or y' (b >= 2r); its sign just after it is
    # the sign of its derivative there, and the jump of the coefficients is twice that
    j = order % r
    xj, yj = x.gather(-1, j), y.gather(-1, j)
    cb, sb = torch.cos(ordered), torch.sin(ordered)
    is_x = order < 2 * r
    after = torch.where(is_x, torch.sign(cb * yj - sb * xj), torch.sign(-(cb * xj + sb * yj)))
    jump_c = 2 * after * torch.where(is_x, xj, yj)
    jump_s = 2 * after * torch.where(is_x, yj, -xj)
    ca = l1 * (ca0 + torch.cumsum(jump_c, -1))
    sa = l1 * (sa0 + torch.cumsum(jump_s, -1))
    # the wrapping arc is the last one: the cumulative sum has come back to its start
    return ordered, width, ca, sa, cb, sb


def _best_l1(x, y, coef, l1: float):
    """h = λ₁‖·‖₁ (or 0): on arc k, φ + h is the trig polynomial with (a1, b1) shifted by
    (ca_k, sa_k), exact there (and a lower bound elsewhere, since σ·v <= |v|). So each arc's
    stationary points, clamped into the arc, and its start point are evaluated in O(1) each
    without forming the rotated rows. Returns (theta, value) per family: (2, P) each."""
    P = x.shape[0]
    if not l1:
        thetas, values = [], []
        for family in (0, 1):
            cand = stationary(coef[family])
            value = trig(coef[family], cand)
            k = torch.argmin(value, dim=-1, keepdim=True)
            thetas.append(cand.gather(1, k)[:, 0])
            values.append(value.gather(1, k)[:, 0])
        return torch.stack(thetas), torch.stack(values)
    ordered, width, ca, sa, cb, sb = _arcs(x, y, breakpoints(x, y), l1)
    if not (coef[..., 3].any() or coef[..., 4].any()):
        return _best_sinusoid(coef, ordered, width, ca, sa, cb, sb)
    arcs = coef[:, :, None, :].expand(2, P, ordered.shape[1], 5).clone()
    arcs[..., 1] += ca
    arcs[..., 2] += sa
    inside = torch.remainder(stationary(arcs) - ordered[..., None], 2 * torch.pi)
    inside = torch.minimum(inside, width[..., None].expand_as(inside))
    cand = torch.cat([ordered.expand(2, *ordered.shape)[..., None],
                      ordered[..., None] + inside], dim=-1)  # (2, P, A, m)
    value = trig(arcs, cand)
    flat_v, flat_c = value.flatten(-2), cand.flatten(-2)
    k = torch.argmin(flat_v, dim=-1, keepdim=True)
    return flat_c.gather(-1, k)[..., 0], flat_v.gather(-1, k)[..., 0]


def _best_sinusoid(coef, ordered, width, ca, sa, cb, sb):
    """L1 with a majorized (isotropic) model: on arc k, φ + h = a0 + A_k cos θ + B_k sin θ,
    minimized at θ = atan2(−B_k, −A_k) with value a0 − ‖(A_k, B_k)‖ when that angle lies on
    the arc, else at an end; ends are breakpoints, where h is continuous, so each is
    evaluated once from its arc's expression. No quartics and no trig of candidates: a
    handful of elementwise kernels over (2, P, 4r), which is what makes big rounds cheap."""
    a0 = coef[..., 0, None]
    A, B = coef[..., 1, None] + ca, coef[..., 2, None] + sa  # (2, P, 4r)
    at_ends = a0 + A * cb + B * sb
    offset = torch.remainder(torch.atan2(-B, -A) - ordered, 2 * torch.pi)
    inner = torch.where(offset < width, a0 - torch.hypot(A, B),
                        torch.full_like(at_ends, float("inf")))
    value = torch.cat([at_ends, inner], -1)
    cand = torch.cat([ordered.expand_as(A), ordered + offset], -1)
    k = torch.argmin(value, dim=-1, keepdim=True)
    return cand.gather(-1, k)[..., 0], value.gather(-1, k)[..., 0]


def solve_pairs(x: torch.Tensor, y: torch.Tensor, coef: torch.Tensor, l1: float = 0.0,
                l0: float = 0.0, nonneg: bool = False,
                exact: torch.Tensor | None = None) -> PairStep:
    """Globally minimize φ_family(θ) + h(x', y') − h(x, y) over O(2), for P pairs at once.

    x, y: (P, r); coef: (2, P, 5), the trigonometric coefficients for rotations (0) and
    reflections (1). V = I (rotation by 0, change 0) is always a candidate.

    `exact` (2, P, 5), when coef is a majorizer of f's change (ς‖D‖²), f's exact change is
    known (a Kronecker quadratic) and h has L0 or X >= 0: a pair whose majorized pick is to
    stay takes the best of the same candidates (breakpoints, each arc's minimizer) scored by
    the exact change, with that exact change; pairs the majorized pick moves keep it. There a
    pair's moves are nearly discrete (X >= 0: two rows of disjoint support can only stay or
    swap; L0: a move that zeroes an entry), and ς‖D‖² over-charges the long ones (the swap has
    ‖D‖² = 4): the majorized search alone stops at points where a swap lowers F. Exact <=
    majorizer everywhere, so a pair's true change is never above the majorized pick's. Scoring
    every pair's candidates exactly instead measured worse on L1 + X >= 0 problems (bigger
    greedy moves early; docs/obcd.md); with L1 alone or h = 0 (continuous arcs) `exact` is
    ignored."""
    P, r = x.shape
    per_pair = 4 * r * (6 if l1 else 1) + 12
    step = max(1, _CHUNK // max(1, per_pair * 2 * r))
    if P > step:
        parts = [solve_pairs(x[i:i + step], y[i:i + step], coef[:, i:i + step], l1, l0, nonneg,
                             None if exact is None else exact[:, i:i + step])
                 for i in range(0, P, step)]
        return PairStep(*(torch.cat([getattr(p, f) for p in parts]) for f in
                          ("theta", "reflect", "delta", "x", "y")))
    h_now = h_rows(torch.cat([x, y], -1), l1, l0, nonneg)
    if not (l0 or nonneg):
        theta, value = _best_l1(x, y, coef, l1)
        family = torch.argmin(value, dim=0)
        at = (family, torch.arange(P, device=x.device))
        theta, delta = theta[at], value[at] - h_now
        move = delta < 0
        reflect = family.bool() & move
        theta = torch.where(move, theta, torch.zeros_like(theta))
        nx, ny = rotate(x, y, theta, reflect)
        return PairStep(theta, reflect, torch.where(move, delta, torch.zeros_like(delta)),
                        nx, ny)
    return _best_by_rows(x, y, coef, l1, l0, nonneg, h_now, exact)


def _best_by_rows(x, y, coef, l1, l0, nonneg, h_now, exact=None) -> PairStep:
    """h with L0 or X >= 0: h jumps at breakpoints, so every candidate (breakpoints and the
    stationary points of each arc's model) is evaluated on its rotated rows. With `exact`, a
    pair whose majorized pick is to stay has the same candidates scored by the exact model and
    takes the best (`solve_pairs`); only those pairs pay for it."""
    P = x.shape[0]
    cuts = breakpoints(x, y)

    stay = PairStep(torch.zeros(P, dtype=x.dtype, device=x.device),
                    torch.zeros(P, dtype=torch.bool, device=x.device),
                    torch.zeros(P, dtype=x.dtype, device=x.device), x, y)
    best, tried = stay, []
    if l1:
        _, _, ca, sa, _, _ = _arcs(x, y, cuts, l1)
    for family in (0, 1):
        c = coef[family]
        if l1:
            arcs = c[:, None, :].expand(P, ca.shape[1], 5).clone()
            arcs[..., 1] += ca
            arcs[..., 2] += sa
            candidates = torch.cat([cuts, stationary(arcs).reshape(P, -1),
                                    stationary(c)], dim=-1)
        else:
            candidates = torch.cat([cuts, stationary(c)], dim=-1)
        reflect = torch.full(candidates.shape, bool(family), device=x.device)
        nx, ny = rotate(x[:, None, :], y[:, None, :], candidates, reflect)
        dh = h_rows(torch.cat([nx, ny], -1), l1, l0, nonneg) - h_now[:, None]
        best = _keep(best, candidates, family, trig(c, candidates) + dh, nx, ny)
        tried.append((candidates, nx, ny, dh))
    if exact is None:
        return best
    stalled = torch.nonzero(best.delta >= 0).flatten()  # the majorized pick is to stay
    if not len(stalled):
        return best
    scored = PairStep(*(getattr(stay, f)[stalled] for f in PairStep.__dataclass_fields__))
    for family, (candidates, nx, ny, dh) in enumerate(tried):
        candidates = candidates[stalled]
        value = trig(exact[family][stalled], candidates) + dh[stalled]
        scored = _keep(scored, candidates, family, value, nx[stalled], ny[stalled])
    return PairStep(*(getattr(best, f).index_copy(0, stalled, getattr(scored, f))
                      for f in PairStep.__dataclass_fields__))


def _keep(best: PairStep, candidates, family: int, value, nx, ny) -> PairStep:
    """best, updated where the lowest of value (P, K) over candidates beats it."""
    k = torch.argmin(value, dim=-1)
    v = value.gather(1, k[:, None])[:, 0]
    better = v < best.delta
    at = (torch.arange(len(k), device=k.device), k)
    return PairStep(
        torch.where(better, candidates[at], best.theta),
        torch.where(better, torch.tensor(bool(family), device=k.device), best.reflect),
        torch.where(better, v, best.delta),
        torch.where(better[:, None], nx[at], best.x),
        torch.where(better[:, None], ny[at], best.y),
    )
