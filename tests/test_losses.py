"""The formulas of gpuboost.losses against finite differences and brute force."""

import numpy as np
import pytest

from gpuboost import losses


def per_sample_loss(F, y):
    return np.log(np.exp(F).sum(axis=1)) - F[np.arange(len(y)), y]


@pytest.fixture
def scores():
    rng = np.random.default_rng(1)
    F = rng.normal(scale=2.0, size=(40, 5))
    F -= F.mean(axis=1, keepdims=True)
    y = rng.integers(0, 5, size=40)
    return F, y


def test_softmax_and_complement(scores):
    F, _ = scores
    p, pc = losses.softmax(F)
    expected = np.exp(F) / np.exp(F).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(p, expected, rtol=1e-13)
    np.testing.assert_allclose(pc, 1 - expected, rtol=1e-12)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-14)


def test_complement_keeps_digits_near_convergence():
    # p_y = 1 - 2e-30: "1 - p" would be exactly 0
    F = np.array([[0.0, -70.0, -70.0]])
    p, pc = losses.softmax(F)
    assert p[0, 0] == 1.0
    np.testing.assert_allclose(pc[0, 0], 2 * np.exp(-70.0), rtol=1e-14)
    loss = losses.multiclass_loss(F, np.array([0]))
    np.testing.assert_allclose(loss, 2 * np.exp(-70.0), rtol=1e-14)
    g = losses.gradient(p, pc, np.array([0]))
    assert g[0, 0] < 0 and g.sum() == pytest.approx(0.0, abs=1e-40)


def test_exponent_shift_rounds_the_maximum_down():
    step = losses.SHIFT_STEP
    m = np.array([0.0, step - 1e-12, step, -1e-300, -step, 3 * step + 0.5, -2.5 * step, 1e6 + 0.25])
    shift = losses.exponent_shift(m)
    assert shift.tolist() == [0.0, 0.0, step, -step, -step, 3 * step, -3 * step, 1e6]
    assert np.all((m - shift >= 0.0) & (m - shift <= step))  # (-1e-300 + step rounds to step)


def test_complement_and_loss_keep_digits_with_a_shifted_top():
    # the top's exponential is exp(F_top - c), up to exp(SHIFT_STEP), not 1: pc at the top and
    # the loss (log1p of the others over the top's) keep their digits all the same
    top = losses.SHIFT_STEP - 0.01
    F = np.array([[top, top - 70.0, top - 70.0]])
    p, pc = losses.softmax(F)
    assert losses.exponent_shift(np.array([top]))[0] == 0.0 and p[0, 0] == 1.0
    np.testing.assert_allclose(pc[0, 0], 2 * np.exp(-70.0), rtol=1e-14)
    np.testing.assert_allclose(pc[0, 1:], 1.0, rtol=0)
    np.testing.assert_allclose(p[0, 1:], np.exp(-70.0), rtol=1e-14)
    np.testing.assert_allclose(losses.multiclass_loss(F, np.array([0])), 2 * np.exp(-70.0), rtol=1e-14)
    np.testing.assert_allclose(losses.multiclass_loss(F, np.array([1])), 70.0 + 2 * np.exp(-70.0), rtol=1e-15)


def test_training_and_prediction_softmax_agree_to_rounding():
    # training shifts the exponentials by exponent_shift, predictions by the row maximum
    rng = np.random.default_rng(5)
    F = rng.normal(scale=6.0, size=(200, 6)) + rng.normal(scale=20.0, size=(200, 1))
    p, pc = losses.softmax(F)
    p_train, pc_train, _ = losses.softmax_with_loss(F, np.zeros(200, dtype=np.intp))
    assert not np.array_equal(p, p_train)  # (two computations, not one)
    np.testing.assert_allclose(p_train, p, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(pc_train, pc, rtol=1e-14, atol=1e-300)


def test_loss_matches_naive(scores):
    F, y = scores
    w = np.linspace(0.5, 2.0, len(y))
    np.testing.assert_allclose(losses.multiclass_loss(F, y), per_sample_loss(F, y).sum(), rtol=1e-13)
    np.testing.assert_allclose(losses.multiclass_loss(F, y, w), (w * per_sample_loss(F, y)).sum(), rtol=1e-13)


def test_gradient_and_hessian_by_finite_differences(scores):
    F, y = scores
    p, pc = losses.softmax(F)
    g = losses.gradient(p, pc, y)
    eps = 1e-6
    for k in range(F.shape[1]):
        step = np.zeros_like(F)
        step[:, k] = eps
        fd = (per_sample_loss(F + step, y) - per_sample_loss(F - step, y)) / (2 * eps)
        np.testing.assert_allclose(g[:, k], fd, atol=1e-8)
    # H_i = diag(p_i) - p_i p_i^T, checked through the gradient's finite differences
    for k in range(F.shape[1]):
        step = np.zeros_like(F)
        step[:, k] = eps
        gp = losses.gradient(*losses.softmax(F + step), y)
        gm = losses.gradient(*losses.softmax(F - step), y)
        fd = (gp - gm) / (2 * eps)
        analytic = (k == np.arange(F.shape[1]))[None, :] * p[:, [k]] - p * p[:, [k]]
        np.testing.assert_allclose(fd, analytic, atol=1e-8)


def test_pair_statistics_are_derivatives_along_the_pair(scores):
    # F_r += t, F_s -= t: d loss / dt = g_r - g_s (eq 25), d2 loss / dt2 = eq (26)
    F, y = scores
    p, pc = losses.softmax(F)
    r, s, eps = 3, 1, 1e-4
    direction = np.zeros(F.shape[1])
    direction[r], direction[s] = 1.0, -1.0
    g, h = losses.pair_statistics(p, pc, y, r, s)
    plus, zero, minus = (per_sample_loss(F + t * direction, y) for t in (eps, 0.0, -eps))
    np.testing.assert_allclose(g, (plus - minus) / (2 * eps), atol=1e-8)
    np.testing.assert_allclose(h, (plus - 2 * zero + minus) / eps**2, atol=1e-5)


def brute_force_pair(p, y, rule):
    """Eq (33) / (32) with every sum written out as a loop over samples and classes."""
    n, K = p.shape
    G = [sum(p[i, k] - (y[i] == k) for i in range(n)) for k in range(K)]
    r = max(range(K), key=lambda k: (-G[k], -k))
    best, best_s = -np.inf, None
    for k in range(K):
        if k == r:
            continue
        if rule == "eq32":
            score = G[k]
        else:
            h_rr = sum(p[i, r] * (1 - p[i, r]) for i in range(n))
            h_kk = sum(p[i, k] * (1 - p[i, k]) for i in range(n))
            h_rk = sum(-p[i, r] * p[i, k] for i in range(n))
            score = (G[r] - G[k]) ** 2 / (h_rr + h_kk - 2 * h_rk)
        if score > best:
            best, best_s = score, k
    return r, best_s


@pytest.mark.parametrize("rule", losses.PAIR_RULES)
@pytest.mark.parametrize("seed", range(8))
def test_class_pair_against_enumeration(rule, seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 7))
    F = rng.normal(scale=1.5, size=(25, K))
    y = rng.integers(0, K, size=25)
    p, pc = losses.softmax(F)
    g = losses.gradient(p, pc, y)
    pair = losses.class_pair(g.sum(0), (p * pc).sum(0), lambda r: p[:, r] @ p, rule)
    assert pair == brute_force_pair(p, y, rule)


def test_class_pair_for_two_classes_is_both_classes():
    p, pc = losses.softmax(np.array([[0.3, -0.3], [1.0, -1.0]]))
    y = np.array([1, 0])
    g = losses.gradient(p, pc, y)
    r, s = losses.class_pair(g.sum(0), (p * pc).sum(0), lambda r: p[:, r] @ p)
    assert {r, s} == {0, 1}


def test_node_value_minimises_the_quadratic_of_eq24(scores):
    F, y = scores
    p, pc = losses.softmax(F)
    g, h = losses.pair_statistics(p, pc, y, 0, 2)
    G, H = g.sum(), h.sum()
    t = float(losses.node_value(G, H, clip=np.inf))
    grid = t + np.linspace(-1, 1, 2001)
    quadratic = G * grid + 0.5 * H * grid**2
    assert abs(grid[np.argmin(quadratic)] - t) <= 1e-3
    # and the minimum of eq (28)
    np.testing.assert_allclose(G * t + 0.5 * H * t**2, -G**2 / (2 * H), rtol=1e-12)


def test_node_value_guards_and_clips():
    assert float(losses.node_value(0.0, 0.0, 5.0)) == 0.0  # H = 0 counts as 1: no NaN
    assert float(losses.node_value(-3.0, 0.0, 5.0)) == 3.0
    assert float(losses.node_value(-1.0, 1e-6, 5.0)) == 5.0
    assert float(losses.node_value(1e-22, 1e-20, 5.0)) == pytest.approx(-0.01)  # nothing floored


def test_split_gain_is_the_loss_decrease():
    # eq (30) equals the drop of the minimised quadratic (eq 28) from parent to children
    GL, HL, GR, HR = -2.0, 1.5, 0.7, 0.9
    gain = losses.split_gain(GL, HL, GR, HR, GL + GR, HL + HR)
    parent = -(GL + GR) ** 2 / (2 * (HL + HR))
    children = -GL**2 / (2 * HL) - GR**2 / (2 * HR)
    np.testing.assert_allclose(gain, parent - children, rtol=1e-14)
    assert gain > 0


@pytest.mark.parametrize("n, K", [(0, 3), (5, 2), (10000, 7), (700, 130), (130, 1000)])
def test_prediction_functions_by_row_blocks_are_the_whole_arrays(n, K):
    """softmax_probabilities, multiclass_loss and predicted_class take the rows a block at a
    time (row_blocks): the values of the whole array's computation, bit for bit, across the
    blocks' edges (with ties, scores far apart and weights)."""
    from gpuboost.losses import (PREDICTION_TIE, _softmax_parts, multiclass_loss, predicted_class, row_blocks,
                                 softmax_probabilities, softmax_with_loss)

    rng = np.random.default_rng(n + K)
    F = rng.normal(scale=30.0, size=(n, K))
    F[::5] = np.round(F[::5])  # (ties)
    y = rng.integers(0, K, n)
    w = rng.uniform(0.0, 2.0, n)
    assert len(row_blocks(n, K)) == (3 if n > 100 else 1 if n else 0)  # (the large cases cross two edges)
    np.testing.assert_array_equal(softmax_probabilities(F), _softmax_parts(F, by_step=False)[0])
    for weight in (None, w):
        assert multiclass_loss(F, y, weight) == softmax_with_loss(F, y, weight)[2]
    top = F.max(axis=1, keepdims=True)
    scale = np.maximum(1.0, np.abs(F).max(axis=1, keepdims=True))
    np.testing.assert_array_equal(predicted_class(F), np.argmax(F >= top - PREDICTION_TIE * scale, axis=1))


def test_the_loss_needs_one_label_a_row():
    from gpuboost.losses import multiclass_loss

    with pytest.raises(ValueError, match="one label for each of F's 100 rows"):
        multiclass_loss(np.zeros((100, 3)), np.zeros(150, dtype=int))
