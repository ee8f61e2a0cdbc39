"""The multinomial logistic loss of AOSO-LogitBoost and its per-sample derivatives, in NumPy.

These are the formulas of paper 000 (sections 2-4) written once, for whole arrays; the NumPy
backend applies them to a node's rows and the tests check them against finite differences.

Precision near convergence. The papers train until the training loss is 1e-16, where the
probability of the true class is 1 - 1e-20 and more. ``1 - p`` computed as a difference is then
exactly 0 and the gradient of the true class vanishes; so ``softmax`` also returns the
complement ``pc = 1 - p`` computed without cancellation (for the row's largest score it is the
sum of the other exponentials over the normaliser), and every formula that needs ``1 - p`` uses
it. The loss uses ``log1p`` for the same reason.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "adaboost_initial_weights",
    "label_targets",
    "multilabel_loss",
    "adaboost_weights",
    "hamming_tree_alpha",
    "klogit_link",
    "logistic_link",
    "predicted_class",
    "softmax",
    "softmax_probabilities",
    "softmax_with_loss",
    "multiclass_loss",
    "gradient",
    "class_pair",
    "pair_statistics",
    "node_value",
    "split_gain",
    "PAIR_RULES",
]

#: Second entry of a tree's "pair" for the K-tree family's scalar trees: the single class r
#: (MART, robust LogitBoost), original LogitBoost's centred update (see pair_statistics), and
#: K-LogitBoost's vector trees, whose nodes carry one value per class.
SINGLE, LOGITBOOST, VECTOR = -1, -2, -3

#: LogitBoost's working response is clipped to +-Z_MAX (the "crucial implementation
#: protections" the papers cite).
Z_MAX = 4.0

#: Class-pair rules of paper 000, section 4.4: eq (33) is second order, eq (32) first order.
PAIR_RULES = ("eq33", "eq32")


#: The exponentials are exp(F - c) with c a row's largest score rounded down to a multiple of
#: this (exponent_shift): none is above exp(SHIFT_STEP), so nothing overflows, and c
#: changes only where a row's largest score crosses a multiple of it. An AOSO tree changes two
#: scores of a row, so the compiled backend recomputes two exponentials a row; with the
#: largest score itself as the shift, every row whose top class was in its leaf's pair (a
#: third of pendigits' rows a tree) took all K. (softmax, for predictions, shifts by the
#: largest score itself: the probabilities of saved models stay the same, bit for bit.)
SHIFT_STEP = 8.0


def exponent_shift(m: np.ndarray) -> np.ndarray:
    """The exponentials' shift for row maxima m: m rounded down to a multiple of SHIFT_STEP
    (exact: a division and a product by a power of two, and a floor)."""
    return SHIFT_STEP * np.floor(m / SHIFT_STEP)


#: Cells (rows x classes) of the blocks of rows that the functions of predictions and eval sets
#: (softmax_probabilities, multiclass_loss, predicted_class) take at a time: their temporaries
#: stay in the CPU's cache, and their memory is the result's, not five times it (predict_proba of
#: 1000 classes held 763 MB for a 153 MB result, 2026-11-27). Rows are independent in each, and
#: a row's values are those of the whole array's computation.
BLOCK_CELLS = 1 << 15


def row_blocks(n_rows: int, n_classes: int):
    """Slices of 0 .. n_rows - 1 of about BLOCK_CELLS cells each (64 rows at least)."""
    step = max(64, BLOCK_CELLS // max(1, n_classes))
    return [slice(start, min(n_rows, start + step)) for start in range(0, n_rows, step)]


def _scaled_exponentials(F: np.ndarray, by_step: bool = True):
    """exp(F - c) (c: exponent_shift of the row maxima, or the row maxima themselves where not
    by_step), the row argmax, the sum of the non-maximal exponentials, and the maximal one.

    The sum runs in class order (a cumulative sum, not NumPy's pairwise sum), which is the
    order the compiled backends use too.
    """
    top = np.argmax(F, axis=1)
    rows = np.arange(F.shape[0])
    m = F[rows, top]
    e = np.exp(F - (exponent_shift(m) if by_step else m)[:, None])
    e_top = e[rows, top]
    e[rows, top] = 0.0
    rest = np.cumsum(e, axis=1)[:, -1]  # sum over k != argmax
    e[rows, top] = e_top
    return e, top, rest, e_top


def _softmax_parts(F: np.ndarray, by_step: bool = True):
    """p = softmax(F), pc = 1 - p (accurate at the row's largest score), the row argmax, and
    the sum of the non-maximal exponentials over the maximal one (sum_k exp(F_k - F_top) - 1:
    the loss is F_top - F_y + log1p of it). by_step: see _scaled_exponentials."""
    e, top, rest, e_top = _scaled_exponentials(F, by_step)
    rows = np.arange(F.shape[0])
    norm = e_top + rest
    p = e / norm[:, None]
    pc = 1.0 - p
    pc[rows, top] = rest / norm
    return p, pc, top, rest / e_top


def softmax_with_loss(F: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None):
    """``softmax(F)`` and ``multiclass_loss(F, y, sample_weight)`` from one set of exponentials."""
    F = np.asarray(F, dtype=np.float64)
    p, pc, top, rest = _softmax_parts(F)
    rows = np.arange(F.shape[0])
    # log(sum exp) - F_y = (max - F_y) + log1p(the other exponentials over the largest): the
    # per-sample loss keeps its digits down to 1e-300 instead of rounding to 0 below 1e-16
    per_sample = (F[rows, top] - F[rows, y]) + np.log1p(rest)
    if sample_weight is not None:
        per_sample = per_sample * sample_weight
    return p, pc, float(per_sample.sum())


def softmax(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class probabilities and their complements.

    The exponentials are shifted by each row's largest score; training's (softmax_with_loss)
    by it rounded down to a multiple of SHIFT_STEP, which gives the same values to rounding.

    Parameters
    ----------
    F : ndarray of shape (n_samples, n_classes), float64

    Returns
    -------
    p : ndarray of shape (n_samples, n_classes), float64
        ``p_ik = exp(F_ik) / sum_j exp(F_ij)``.
    pc : ndarray of shape (n_samples, n_classes), float64
        ``1 - p_ik``, accurate also where ``p_ik`` rounds to 1.
    """
    F = np.asarray(F, dtype=np.float64)
    p, pc, _, _ = _softmax_parts(F, by_step=False)
    return p, pc


def softmax_probabilities(F: np.ndarray) -> np.ndarray:
    """``softmax(F)[0]``, the same values, a block of rows at a time (``row_blocks``): no n x K
    array but the result (predict_proba's)."""
    F = np.asarray(F, dtype=np.float64)
    p = np.empty(F.shape)
    for rows in row_blocks(*F.shape):
        e, top, rest, e_top = _scaled_exponentials(F[rows], by_step=False)
        np.divide(e, (e_top + rest)[:, None], out=p[rows])
    return p


def multiclass_loss(F: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Training loss ``sum_i w_i (-log p_{i,y_i})``, computed as logsumexp(F_i) - F_{i,y_i}:
    ``softmax_with_loss(F, y, sample_weight)[2]``, the same value, a block of rows at a time
    (``row_blocks``; the eval sets' loss after every iteration)."""
    F = np.asarray(F, dtype=np.float64)
    y = np.asarray(y)
    if y.shape != F.shape[:1]:
        raise ValueError(f"y has shape {y.shape}; one label for each of F's {F.shape[0]} rows is needed.")
    per_sample = np.empty(F.shape[0])
    for rows in row_blocks(*F.shape):
        block = F[rows]
        _, top, rest, e_top = _scaled_exponentials(block)
        at = np.arange(block.shape[0])
        per_sample[rows] = (block[at, top] - block[at, y[rows]]) + np.log1p(rest / e_top)
    if sample_weight is not None:
        per_sample = per_sample * sample_weight
    return float(per_sample.sum())


def klogit_link(F: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None):
    """K-LogitBoost (paper 000, section 6): the unnormalised link and its loss.

    p_k = exp(F_k - 1); per-sample loss sum_k p_k - F_y; gradient p - r; Hessian diag(p).
    Returns p, the gradient g (with expm1 at the label, so that it keeps its digits as p_y
    approaches 1) and the weighted loss sum.
    """
    F = np.asarray(F, dtype=np.float64)
    rows = np.arange(F.shape[0])
    # scores that overflow make the loss inf or NaN, which the boosting loop reports as a
    # diverged fit (with what to change): no RuntimeWarning before that message
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.exp(F - 1.0)
        g = p.copy()
        g[rows, y] = np.expm1(F[rows, y] - 1.0)
        # exp(a) - (a + 1) with a = F_y - 1, written so that it does not cancel for small a
        a = F[rows, y] - 1.0
        per_sample = (np.expm1(a) - a) + (p.sum(axis=1) - p[rows, y])
    if sample_weight is not None:
        per_sample = per_sample * sample_weight
    return p, g, float(per_sample.sum())


def gradient(p: np.ndarray, pc: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-sample gradient ``g_ik = p_ik - r_ik`` (r one-hot of y), with ``-pc`` at the label."""
    g = p.copy()
    rows = np.arange(p.shape[0])
    g[rows, y] = -pc[rows, y]
    return g


def class_pair(G: np.ndarray, Hd: np.ndarray, C_r_fn, rule: str = "eq33") -> tuple[int, int]:
    """The class pair (r, s) of a node from its summed statistics (paper 000, section 4.4).

    Parameters
    ----------
    G : ndarray of shape (n_classes,)
        Summed gradients ``G_k = sum_i w_i g_ik``.
    Hd : ndarray of shape (n_classes,)
        Summed diagonal Hessian ``Hd_k = sum_i w_i p_ik (1 - p_ik)``.
    C_r_fn : callable
        ``C_r_fn(r)`` returns ``C_rk = sum_i w_i p_ir p_ik`` for all k; called once, for eq (33).
    rule : {"eq33", "eq32"}

    Notes
    -----
    r = argmax_k (-G_k). Eq (33): s = argmax_{k != r} (G_r - G_k)^2 / (Hd_r + Hd_k + 2 C_rk)
    (the off-diagonal Hessian entry is -C_rk, hence the plus sign); a denominator of exactly 0
    counts as 1. Eq (32): s = argmin_{k != r} (-G_k). Ties go to the lowest class index.
    """
    r = int(np.argmax(-G))
    if rule == "eq32":
        score = G.astype(np.float64, copy=True)
    else:
        denominator = Hd[r] + Hd + 2.0 * C_r_fn(r)
        denominator = np.where(denominator == 0.0, 1.0, denominator)
        score = (G[r] - G) ** 2 / denominator
    score[r] = -np.inf
    return r, int(np.argmax(score))


def pair_statistics(
    p: np.ndarray, pc: np.ndarray, y: np.ndarray, r: int, s: int, eta: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Projected per-sample gradient and Hessian for the pair (r, s), eqs (25) and (26).

    ``g_i = g_ir - g_is`` and ``h_i = p_ir (1 - p_ir) + p_is (1 - p_is) + 2 p_ir p_is``, for rows
    given as ``p``, ``pc`` of shape (n_rows, n_classes) and labels ``y`` of shape (n_rows,).
    ``s = SINGLE`` (-1) means the single class r (the K-tree family's tree for class r):
    ``g_i = g_ir`` and ``h_i = p_ir (1 - p_ir)``. ``s = LOGITBOOST`` (-2): Friedman, Hastie and
    Tibshirani's weighted least squares on the working response z = (r - p) / (p (1 - p)),
    clipped to +-Z_MAX, with weights p (1 - p): ``g_i = -h_i clip(z_i)``, ``h_i = p_ir (1 - p_ir)``
    (so that -G/H is the weighted mean of z, the least-squares fit).
    """
    if s == LOGITBOOST:
        h = p[:, r] * pc[:, r]
        with np.errstate(divide="ignore"):
            z = np.where(y == r, 1.0 / p[:, r], -1.0 / pc[:, r])  # (r - p) / (p (1 - p))
        return -h * np.clip(z, -Z_MAX, Z_MAX), h
    if s < 0:
        if eta is not None:
            return target_gradient(p[:, r], pc[:, r], eta[:, r]), p[:, r] * pc[:, r]
        return np.where(y == r, -pc[:, r], p[:, r]), p[:, r] * pc[:, r]
    p_r, p_s = p[:, r], p[:, s]
    if eta is not None:  # multi-label targets (paper 004): g = p - eta
        g = target_gradient(p[:, [r, s]], pc[:, [r, s]], eta[:, [r, s]])
        g_r, g_s = g[:, 0], g[:, 1]
    else:
        g_r = np.where(y == r, -pc[:, r], p_r)
        g_s = np.where(y == s, -pc[:, s], p_s)
    h = p_r * pc[:, r] + p_s * pc[:, s] + 2.0 * p_r * p_s
    return g_r - g_s, h


def guard_hessian(H):
    """A hessian sum of exactly 0 counts as 1 (no inf or NaN); nothing else is floored."""
    return np.where(H == 0.0, 1.0, H)


def node_value(G, H, clip: float, scale: float = 1.0):
    """Newton step ``t = -scale * G / H`` of eq (27), clipped to [-clip, clip].

    ``scale`` is (K-1)/K for MART, robust LogitBoost and LogitBoost with K > 2 classes, 1
    otherwise (AOSO; two-class MART and robust LogitBoost, whose one tree says all).
    """
    return np.clip(-scale * np.asarray(G) / guard_hessian(np.asarray(H)), -clip, clip)


#: Scores within this distance (relative to the row's largest magnitude, at least 1) of the
#: row's maximum tie for the prediction, and the first class wins: a sample exactly between two
#: classes must not be decided by the last digit of a sum.
PREDICTION_TIE = 1e-12


def predicted_class(F: np.ndarray) -> np.ndarray:
    """Index of the predicted class of each row of F (n_samples, n_classes): the largest
    score, ties (``PREDICTION_TIE``) to the lowest index (a block of rows at a time)."""
    F = np.asarray(F)
    out = np.empty(F.shape[0], dtype=np.intp)
    for rows in row_blocks(*F.shape):
        block = F[rows]
        top = block.max(axis=1, keepdims=True)
        scale = np.maximum(1.0, np.abs(block).max(axis=1, keepdims=True))
        out[rows] = np.argmax(block >= top - PREDICTION_TIE * scale, axis=1)
    return out


#: A computed gain at most this multiple of its terms' magnitude is rounding noise, not a gain.
GAIN_NOISE = 8 * np.finfo(np.float64).eps

#: Split gains within this relative distance of the best are ties, won by the first candidate
#: (lowest feature, then bin, then missing values right before left). Two splits that separate
#: the same rows have the same gain; summed in another order (weights vs repeated rows, another
#: backend) the two values differ in the last digits, and the choice must not depend on that.
SPLIT_TIE = 1e-10


def split_gain(GL, HL, GR, HR, G, H):
    """Eq (30): ``GL^2/(2 HL) + GR^2/(2 HR) - G^2/(2 H)``, element-wise.

    A gain within the rounding error of its own terms (``GAIN_NOISE`` times their sum) is
    returned as 0: a pure node, whose children's sums are proportional to the parent's, has a
    true gain of 0 and a computed one of +-1e-16, and splitting on that noise would make the
    tree depend on summation order (and waste a leaf).
    """
    left = GL * GL / (2.0 * guard_hessian(HL))
    right = GR * GR / (2.0 * guard_hessian(HR))
    parent = G * G / (2.0 * guard_hessian(H))
    gain = left + right - parent
    return np.where(gain > GAIN_NOISE * (left + right + parent), gain, 0.0)


# -- AdaBoost.MH (paper 002) -----------------------------------------------------------------
#: The largest edge a base classifier is credited with: gamma = 1 (a perfect classifier on the
#: training weights) would make alpha infinite; 1 - 1e-10 caps alpha at about 11.9.
MAX_EDGE = 1.0 - 1e-10


def adaboost_initial_weights(y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Eq (2) of paper 002, normalised to sum to 1: a row's weight is split half on its label and
    half over the K - 1 other classes (rows weighted by ``sample_weight``), shape (n, K)."""
    n = y.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    s = s / s.sum()
    W0 = np.repeat((s / (2.0 * (n_classes - 1)))[:, None], n_classes, axis=1)
    W0[np.arange(n), y] = s / 2.0
    return W0


def adaboost_weights(F: np.ndarray, Y: np.ndarray, W0: np.ndarray, log_W0: np.ndarray | None = None):
    """Weights and losses of AdaBoost.MH at scores F (paper 002).

    W_il = W0_il exp(-Y_il F_il), normalised to sum to 1 (Appendix B's update, applied to the
    sum of the base classifiers so far); the exponential loss (eq 3) sum W0 exp(-Y F); the
    weighted Hamming loss (eq 1) sum W0 [sign(F) != Y] (F = 0 counts as an error).
    Y is +1 at a row's label(s) and -1 elsewhere. Computed in the log domain, so that large
    scores do not overflow the normalised weights. ``log_W0``: np.log(W0), if the caller keeps
    it between iterations (W0 does not change).
    """
    if log_W0 is None:
        with np.errstate(divide="ignore"):
            log_W0 = np.log(W0)
    YF = Y * F
    a = log_W0 - YF
    top = a.max()
    a -= top
    e = np.exp(a, out=a)
    total = e.sum()
    W = np.divide(e, total, out=e)
    with np.errstate(over="ignore"):  # the loss itself may overflow to inf; the weights do not
        exp_loss = float(np.exp(top) * total)
    hamming = float(W0[YF <= 0].sum())
    return W, exp_loss, hamming


def hamming_tree_alpha(leaf_edges: np.ndarray) -> tuple[float, float]:
    """(gamma, alpha) of a Hamming tree: its edge gamma = sum over leaves and classes of
    |sum_i W_il Y_il| (each leaf votes v = sign of its class-wise sums, eq 12), and eq (11)'s
    alpha = 1/2 log((1 + gamma) / (1 - gamma)), gamma capped at ``MAX_EDGE``."""
    gamma = float(min(np.abs(leaf_edges).sum(), MAX_EDGE))
    return gamma, 0.5 * float(np.log((1.0 + gamma) / (1.0 - gamma)))


# -- multi-label LogitBoost (paper 004) --------------------------------------------------------
def label_targets(indicator: np.ndarray) -> np.ndarray:
    """eta_ik = 1/|S_i| for the labels k in row i's set S_i, 0 elsewhere; a row without labels
    has no target (all 0: it adds nothing to the loss; training leaves such rows out)."""
    indicator = np.asarray(indicator, dtype=np.float64)
    return indicator / np.maximum(indicator.sum(axis=1, keepdims=True), 1.0)


def multilabel_loss(F: np.ndarray, eta: np.ndarray, sample_weight: np.ndarray | None = None):
    """``softmax(F)`` and paper 004's loss sum_i w_i sum_k eta_ik (-log p_ik), computed as
    eta-weighted (logsumexp(F_i) - F_ik) so that it keeps its digits (one label per row: the
    multi-class loss)."""
    F = np.asarray(F, dtype=np.float64)
    p, pc, top, rest = _softmax_parts(F)
    rows = np.arange(F.shape[0])
    neg_log_p = (F[rows, top][:, None] - F) + np.log1p(rest)[:, None]
    per_sample = np.where(eta > 0, eta * neg_log_p, 0.0).sum(axis=1)
    if sample_weight is not None:
        per_sample = per_sample * sample_weight
    return p, pc, float(per_sample.sum())


def target_gradient(p: np.ndarray, pc: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``g = p - eta``, with ``-pc`` where eta is 1 (a single label: the accurate complement)."""
    return np.where(eta == 1.0, -pc, p - eta)


# -- multi-label K-LogitBoost: each label a binary logistic model -----------------------------
def logistic_link(F: np.ndarray, Y: np.ndarray, sample_weight: np.ndarray | None = None):
    """Multi-label K-LogitBoost: every label l an independent binary logistic model.

    Paper 000's K-LogitBoost drops the sum-to-one constraint from the maximum-entropy problem
    (41)-(44), so that the Hessian is diagonal. A multi-label row's target is its indicator
    vector Y_i (each entry a Bernoulli probability, 0 or 1); with each label's Bernoulli
    entropy -p log p - (1 - p) log(1 - p) in (41), the link (44) is the logistic function:
    p_il = 1 / (1 + exp(-F_il)), the loss sum_l -[Y_il log p_il + (1 - Y_il) log(1 - p_il)],
    the gradient p - Y and the Hessian diag(p (1 - p)), exact since the labels are independent.

    Returns p, pc = 1 - p, the gradient g (-pc where Y is 1, so that it keeps its digits as p
    approaches 1), the Hessian h = p pc and the weighted loss sum, each entry's loss written
    as log1p(exp(-|F|)) + max(-/+F, 0), which neither overflows nor cancels.
    """
    F = np.asarray(F, dtype=np.float64)
    positive = np.asarray(Y, dtype=bool)
    e = np.exp(-np.abs(F))  # in (0, 1]
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)  # sigmoid(|F|), sigmoid(-|F|)
    p = np.where(F >= 0.0, big, small)
    pc = np.where(F >= 0.0, small, big)
    g = np.where(positive, -pc, p)
    h = p * pc
    per_sample = (np.log1p(e) + np.maximum(np.where(positive, -F, F), 0.0)).sum(axis=1)
    if sample_weight is not None:
        per_sample = per_sample * sample_weight
    return p, pc, g, h, float(per_sample.sum())
