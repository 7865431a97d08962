"""The OBCD backend: the exact pair subproblem against brute force, working sets, the solver on
sparse PCA (CLI, acceptance), L0, nonnegativity, autograd f, k > 2 blocks, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _helpers import bind, expected, spec_dir
from typer.testing import CliRunner

from dfl_dsl.backends.obcd import blockk, obcd, solver
from dfl_dsl.backends.obcd.model import pair_coefficients, sinusoid_coefficients
from dfl_dsl.backends.obcd.pair import breakpoints, h_rows, rotate, solve_pairs, trig
from dfl_dsl.backends.obcd.select import cyclic_pairs, disjoint, sample_pairs
from dfl_dsl.backends.obcd.solver import default_k
from dfl_dsl.cli import app
from dfl_dsl.compile.stiefel import build_stiefel
from dfl_dsl.errors import DflError

T = torch.float64



def _random_pairs(P: int, r: int, nonneg: bool, seed: int):
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(P, r, dtype=T, generator=g), torch.randn(P, r, dtype=T, generator=g)
    if nonneg:  # a feasible start: nonnegative rows, some zeros
        x, y = x.abs(), y.abs() * (torch.rand(P, r, dtype=T, generator=g) < 0.5)
    coef = torch.randn(2, P, 5, dtype=T, generator=g)
    coef[0, :, 0] = -(coef[0, :, 1] + coef[0, :, 3])  # φ = 0 at V = I, as a real model has
    return x, y, coef


def _brute_force(x, y, coef, l1, l0, nonneg, points: int = 20001):
    """min over a fine θ grid of both families (plus the exact zero crossings, the only
    places an L0 or X >= 0 term can drop), and V = I."""
    P = x.shape[0]
    grid = torch.linspace(0, 2 * np.pi, points, dtype=T).expand(P, -1)
    grid = torch.cat([grid, breakpoints(x, y)], dim=-1)
    h_now = h_rows(torch.cat([x, y], -1), l1, l0, nonneg)
    best = torch.zeros(P, dtype=T)
    for family in (0, 1):
        for part in torch.split(grid, 8000, dim=1):
            nx, ny = rotate(x[:, None], y[:, None], part, torch.full(part.shape, bool(family)))
            value = (trig(coef[family], part) + h_rows(torch.cat([nx, ny], -1), l1, l0, nonneg)
                     - h_now[:, None])
            best = torch.minimum(best, value.min(-1).values)
    return best


@pytest.mark.parametrize(("l1", "l0", "nonneg", "sinusoid"), [
    (0.7, 0.0, False, False), (0.0, 0.5, False, False), (0.0, 0.0, True, False),
    (0.3, 0.0, True, False), (0.0, 0.0, False, False), (0.7, 0.0, False, True),
    (0.0, 0.5, False, True),
], ids=["L1", "L0", "nonneg", "L1+nonneg", "h=0", "L1 majorized", "L0 majorized"])
def test_breakpoint_search_finds_the_global_minimum(l1, l0, nonneg, sinusoid):
    """`sinusoid`: a2 = b2 = 0, the majorized model, which L1 solves in closed form per arc."""
    x, y, coef = _random_pairs(30, 4, nonneg, seed=int(10 * l1 + 100 * l0 + nonneg))
    if sinusoid:
        coef[..., 3:] = 0.0
        coef[..., 0] = -coef[..., 1]
    step = solve_pairs(x, y, coef, l1, l0, nonneg)
    grid = _brute_force(x, y, coef, l1, l0, nonneg)
    # never worse than the grid's best (global, not local), and better by at most the grid's
    # resolution
    assert torch.all(step.delta <= grid + 1e-12)
    assert torch.all(step.delta >= grid - 1e-6)
    # the value is attained by the rows it returns
    family = step.reflect.long()
    nx, ny = rotate(x, y, step.theta, step.reflect)
    assert torch.equal(nx, step.x) and torch.equal(ny, step.y)
    attained = (trig(coef[family, torch.arange(len(x))], step.theta[:, None])[:, 0]
                + h_rows(torch.cat([nx, ny], -1), l1, l0, nonneg)
                - h_rows(torch.cat([x, y], -1), l1, l0, nonneg))
    assert torch.allclose(attained, step.delta, atol=1e-12)
    if nonneg:
        assert torch.all(step.x >= 0) and torch.all(step.y >= 0)
    if l0:  # the L0 optimum often sits exactly on a breakpoint: entries become exact zeros
        assert int((step.x == 0).sum() + (step.y == 0).sum()) > 0


def test_h_zero_majorized_pair_is_the_polar_factor():
    """With Q = ςI and h = 0 the subproblem is min_V <V, P> over O(2), P = (∇f_B − ςZ)Zᵀ,
    whose answer is −polar(P)."""
    g = torch.Generator().manual_seed(3)
    P_, r, sigma = 40, 5, 2.5
    x, y, gx, gy = (torch.randn(P_, r, dtype=T, generator=g) for _ in range(4))
    M = sigma * torch.eye(2, dtype=T).expand(P_, 2, 2)
    step = solve_pairs(x, y, pair_coefficients(x, y, gx, gy, M, None))
    Z, Gf = torch.stack([x, y], 1), torch.stack([gx, gy], 1)
    u, _, vh = torch.linalg.svd((Gf - sigma * Z) @ Z.transpose(1, 2))
    V_polar = -(u @ vh)
    c, s = torch.cos(step.theta), torch.sin(step.theta)
    sign = torch.where(step.reflect, -1.0, 1.0).to(T)
    V = torch.stack([torch.stack([c, s], -1), torch.stack([-s * sign, c * sign], -1)], 1)
    assert torch.allclose(V, V_polar, atol=1e-8)


def test_sinusoid_coefficients_are_the_isotropic_pair_coefficients():
    g = torch.Generator().manual_seed(4)
    x, y, gx, gy = (torch.randn(25, 6, dtype=T, generator=g) for _ in range(4))
    sigma = torch.randn(25, dtype=T, generator=g)
    general = pair_coefficients(x, y, gx, gy, sigma[:, None, None] * torch.eye(2, dtype=T), None)
    assert torch.allclose(sinusoid_coefficients(x, y, gx, gy, sigma), general, atol=1e-12)


def test_pair_coefficients_are_the_exact_change_of_a_kronecker_quadratic():
    rng = np.random.default_rng(0)
    n, r = 7, 3
    C = rng.standard_normal((n, n))
    C = C + C.T
    R = rng.standard_normal((r, r))
    R = R + R.T
    G = rng.standard_normal((n, r))
    f = lambda X: 0.5 * np.trace(X.T @ C @ X @ R) + np.sum(G * X)  # noqa: E731
    X = np.linalg.qr(rng.standard_normal((n, r)))[0]
    p, q, theta = 2, 5, 0.83
    grad = C @ X @ R + G
    M = torch.tensor(C[np.ix_([p, q], [p, q])])[None]
    t = lambda a: torch.tensor(a)[None]  # noqa: E731
    coef = pair_coefficients(t(X[p]), t(X[q]), t(grad[p]), t(grad[q]), M, torch.tensor(R))
    for family in (0, 1):
        V = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
        if family:
            V[1] = -V[1]
        Y = X.copy()
        Y[[p, q]] = V @ X[[p, q]]
        model = float(trig(coef[family], torch.tensor([[theta]], dtype=T))[0, 0])
        assert model == pytest.approx(f(Y) - f(X), abs=1e-10)


def test_cyclic_schedule_visits_every_pair_once_per_sweep():
    for n in (6, 7):
        seen = set()
        for t in range(n - 1 + n % 2):
            p, q = cyclic_pairs(n, t, n, "cpu")
            rows = torch.cat([p, q]).tolist()
            assert len(rows) == len(set(rows))  # a matching
            seen |= {tuple(sorted(pair)) for pair in zip(p.tolist(), q.tolist(), strict=True)}
        assert len(seen) == n * (n - 1) // 2


def test_greedy_selection_is_disjoint_and_keeps_the_best_pair():
    g = torch.Generator().manual_seed(0)
    p, q = sample_pairs(50, 200, g, "cpu")
    score = torch.rand(200, generator=g, dtype=T)
    keep = disjoint(p, q, score, 50, 25)
    rows = torch.cat([p[keep], q[keep]]).tolist()
    assert len(rows) == len(set(rows)) and len(keep) >= 10
    assert int(keep[0]) == int(torch.argmax(score))


@pytest.fixture(scope="module")
def sparse_pca():
    spec = spec_dir()
    data = json.loads((spec / "sparse_pca.json").read_text())
    return spec, np.asarray(data["A"]), float(data["lam"])


def _pca_objective(X, A, lam):
    return -0.5 * np.trace(X.T @ (A.T @ A) @ X) + lam * np.abs(X).sum()


def test_cli_sparse_pca_beats_pca_and_stays_orthogonal(sparse_pca):
    spec, A, lam = sparse_pca
    result = CliRunner().invoke(app, [
        "solve", str(spec / "sparse_pca.opt"), "--data", str(spec / "sparse_pca.json"),
        "--backend", "obcd", "--json", "--time-limit", "2", "--seed", "0"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    X = np.asarray(out["variables"]["X"])
    assert out["backend"] == "obcd" and out["status"] == "feasible"
    assert np.abs(X.T @ X - np.eye(X.shape[1])).max() <= 1e-10
    assert out["orthogonality"] <= 1e-10
    assert out["objective"] == pytest.approx(_pca_objective(X, A, lam), rel=1e-12)
    assert out["objective"] < expected()["sparse_pca"]["pca_objective"] - 0.1


@pytest.mark.parametrize(("strategy", "score", "majorize"), [
    ("random", "or", True), ("cyclic", "or", True), ("greedy", "or", True),
    ("greedy", "sv", True), ("random", "or", False)])
def test_every_working_set_strategy_and_model_descends(sparse_pca, strategy, score, majorize):
    spec, A, lam = sparse_pca
    form = build_stiefel(_spec_instance(spec))
    res = obcd(form, k=2, strategy=strategy, score=score, majorize=majorize, seed=1,
               max_rounds=40, record=True)
    values = [v for _, v in res.history]
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:], strict=False))
    assert res.objective < values[0] - 0.05
    assert res.objective == pytest.approx(_pca_objective(res.X, A, lam), rel=1e-12)
    assert res.orthogonality <= 1e-10


def _spec_instance(spec):
    import dfl_dsl as dfl

    return dfl.load(spec / "sparse_pca.opt").bind(spec / "sparse_pca.json")


_MODEL = """
param n : int;
param r : int;
param A[n, n];
param C[n, n] = A.T @ A;
param lam >= 0;
var X[n, r] {bound} in stiefel;
minimize loss: {objective};
"""


def _small(objective: str, bound: str = "", n: int = 12, r: int = 3, lam: float = 0.5):
    A = np.random.default_rng(5).standard_normal((n, n))
    text = _MODEL.replace("{bound}", bound).replace("{objective}", objective)
    return bind(text, {"n": n, "r": r, "A": A.tolist(), "lam": lam}), A.T @ A


def test_l0_sparse_pca_has_exact_zeros_and_an_honest_objective():
    inst, C = _small("-0.5 * trace(X.T @ C @ X) + lam * nnz(X)", lam=2.0)
    sol = inst.solve("obcd", seed=0, max_rounds=300)
    X = sol.value("X")
    assert sol.extra["orthogonality"] <= 1e-10
    assert np.count_nonzero(X == 0) > 0
    assert sol.objective == pytest.approx(-0.5 * np.trace(X.T @ C @ X)
                                          + 2.0 * np.count_nonzero(X), rel=1e-12)


def test_a_maximized_model_is_solved_and_reported_in_its_sense():
    """PCA as it is usually written: the answer is the minimized model's, the objective the
    model's own (the variance minus the penalty), recomputed from X."""
    objective = "0.5 * trace(X.T @ C @ X) - lam * norm1(X)"
    minimized, C = _small(f"-({objective})", lam=1.0)
    maxed = bind(_MODEL.replace("{bound}", "").replace("{objective}", objective).replace(
        "minimize loss", "maximize loss"), {"n": 12, "r": 3, "A": np.random.default_rng(5)
                                            .standard_normal((12, 12)).tolist(), "lam": 1.0})
    got = maxed.solve("obcd", seed=0, max_rounds=200)
    ref = minimized.solve("obcd", seed=0, max_rounds=200)
    X = got.value("X")
    np.testing.assert_allclose(X, ref.value("X"), atol=1e-12)
    assert got.objective == pytest.approx(-ref.objective, rel=1e-12)
    assert got.objective == pytest.approx(0.5 * np.trace(X.T @ C @ X) - np.abs(X).sum(),
                                          rel=1e-12)


def test_a_random_start_without_a_seed_gives_the_same_answer_every_run():
    inst, _ = _small("sum(exp(C @ X / 100))")  # not a Kronecker quadratic: a random start
    runs = [inst.solve("obcd", k=2, max_rounds=30).value("X") for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_nonnegative_pca_stays_nonnegative_and_descends():
    inst, C = _small("-0.5 * trace(X.T @ C @ X)", bound=">= 0")
    form = build_stiefel(inst)
    res = obcd(form, seed=0, max_rounds=200, record=True)
    assert np.all(res.X >= 0) and res.orthogonality <= 1e-10
    assert res.objective < res.history[0][1]
    assert res.objective == pytest.approx(-0.5 * np.trace(res.X.T @ C @ res.X), rel=1e-12)


def test_autograd_objective_majorized_by_curvature():
    """f with exp is not quadratic: gradients by autograd, pairs majorized with ς."""
    inst, _ = _small("sum(exp(X)) + lam * norm1(X)")
    form = build_stiefel(inst)
    res = obcd(form, seed=0, max_rounds=60, record=True)
    values = [v for _, v in res.history]
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:], strict=False))
    assert res.objective < values[0] - 1e-3 and res.orthogonality <= 1e-10
    assert res.objective == pytest.approx(np.exp(res.X).sum() + 0.5 * np.abs(res.X).sum(),
                                          rel=1e-12)


@pytest.mark.parametrize(("n", "r", "k"), [(12, 3, 4), (12, 5, 4), (40, 4, 10)])
def test_blocks_by_a_proximal_step_descend_and_stay_orthogonal(n, r, k):
    """k >= r (Lyapunov projection, low-rank Cayley) and k < r (least squares in Ω)."""
    inst, _ = _small("-0.5 * trace(X.T @ C @ X) + lam * norm1(X)", n=n, r=r)
    form = build_stiefel(inst)
    res = obcd(form, k=k, seed=0, max_rounds=30, record=True)
    values = [v for _, v in res.history]
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:], strict=False))
    assert res.objective < values[0] - 1e-3 and res.orthogonality <= 1e-10


@pytest.mark.parametrize("l1", [0.0, 0.3])
def test_block_step_is_tangent_and_its_curve_stays_on_the_orbit(l1):
    g = torch.Generator().manual_seed(3)
    Z = torch.randn(4, 12, 5, dtype=T, generator=g)
    grad = torch.randn(4, 12, 5, dtype=T, generator=g)
    L = torch.full((4,), 3.0, dtype=T)
    U, curve = blockk._stiefel_step(Z, grad, L, l1)  # α (S,) -> w, Y(α_s) = Z + U·w[:, :, s]

    def move(alpha):
        return U @ curve(torch.tensor([alpha], dtype=T))[:, :, 0]

    for alpha in (0.1, 1.0, 2.0):
        Y = Z + move(alpha)
        assert torch.allclose(Y.transpose(1, 2) @ Y, Z.transpose(1, 2) @ Z, atol=1e-12)
    E = move(1e-6) / 1e-6  # the curve's tangent: ZᵀE skew
    assert (Z.transpose(1, 2) @ E + E.transpose(1, 2) @ Z).abs().max() < 1e-4
    i, j, Tm = blockk._gram_map(6)  # the normal matrix of ω ↦ ΩY, read off YYᵀ
    Y = torch.randn(2, 6, 5, dtype=T, generator=g)
    basis = Y.new_zeros(2, len(i), 6, 5)
    basis[:, torch.arange(len(i)), i] = Y[:, j]
    basis[:, torch.arange(len(i)), j] = -Y[:, i]
    flat = basis.flatten(2)
    G = ((Y @ Y.transpose(1, 2)).reshape(2, -1) @ Tm).view(2, len(i), len(i))
    assert torch.allclose(G, flat @ flat.transpose(1, 2), atol=1e-12)


def test_default_block_size():
    l1_form = build_stiefel(_small("-0.5 * trace(X.T @ C @ X) + lam * norm1(X)", n=100)[0])
    l0_form = build_stiefel(_small("-0.5 * trace(X.T @ C @ X) + lam * nnz(X)")[0])
    assert default_k(l1_form) == 50 and default_k(l0_form) == 2


@pytest.mark.parametrize(("objective", "bound"), [
    ("-0.5 * trace(X.T @ C @ X) + lam * norm1(X)", ""),
    ("-0.5 * trace(X.T @ C @ X)", ">= 0"),
])
def test_restarts_keep_the_best_point(objective, bound):
    """Each restart perturbs the best stalled point and descends again; the answer is never
    above the first stall (the same trajectory up to there), stays feasible, and the run ends
    converged once the restarts are spent."""
    inst, _ = _small(objective, n=40, r=4, bound=bound)
    form = build_stiefel(inst)
    first = obcd(form, seed=0, max_rounds=20_000, tol=solver.RESTART_TOL)
    res = obcd(form, seed=0, max_rounds=20_000, restarts=3)
    assert first.converged and res.converged
    assert res.objective <= first.objective + 1e-9
    assert res.orthogonality <= 1e-10 and (not bound or np.all(res.X >= 0))
    assert res.objective == pytest.approx(form.value(res.X), rel=1e-12)


def test_user_errors():
    inst, _ = _small("-0.5 * trace(X.T @ C @ X) + lam * nnz(X)")
    form = build_stiefel(inst)
    with pytest.raises(DflError, match="k > 2"):
        obcd(form, k=3, max_rounds=1)
    with pytest.raises(DflError, match="working-set strategy"):
        obcd(form, strategy="best", max_rounds=1)
    with pytest.raises(DflError, match="starting point"):
        obcd(form, X0=np.eye(3), max_rounds=1)
    with pytest.raises(DflError, match="restarts=None"):
        obcd(form, restarts=None)


def test_an_objective_outside_its_atoms_domain_is_a_located_error(tmp_path):
    """`log(X)` is nan wherever an entry of X is negative: OBCD's safeguard rejects every
    step and its stall test never passes on nan, so `dfl solve` ran forever. The start is
    checked instead, and the error points at the objective (exit 2)."""
    model = tmp_path / "m.opt"
    model.write_text("var X[3, 2] in stiefel;\nminimize spread: sum(log(X));\n")
    data = tmp_path / "m.json"
    data.write_text("{}")
    result = CliRunner().invoke(app, ["solve", str(model), "--data", str(data)])
    assert result.exit_code == 2, result.output
    assert f"{model}:2:10: error: the objective is nan at the starting point" in result.output


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu(sparse_pca):
    spec, _, _ = sparse_pca
    form = build_stiefel(_spec_instance(spec))
    cpu = obcd(form, seed=0, max_rounds=30, strategy="cyclic")
    gpu = obcd(form, seed=0, max_rounds=30, strategy="cyclic", device="cuda")
    assert gpu.objective == pytest.approx(cpu.objective, rel=1e-9)
