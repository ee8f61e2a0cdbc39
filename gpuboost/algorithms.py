"""The algorithms: each is a loss (the multinomial logistic loss, but K-LogitBoost's link
exp(F - 1) and AdaBoost.MH's exponential loss: the table) and the kind of trees one iteration
grows. One grower and one backend serve them all.

=================  ==========================  ================  =========================
algorithm          trees per iteration         split gain        node value
=================  ==========================  ================  =========================
aoso               1 vector tree, each node    second order,     Newton step on the
(paper 000)        picks its pair (eq 33)      eq (30)           node's pair (eq 27, 29)
mart               K scalar trees, one per     first order       (K-1)/K x Newton step
(Friedman 2001)    class
robustlogit        K scalar trees              second order      (K-1)/K x Newton step
(Li 2010)
logitboost         K scalar trees, centred     weighted least    (K-1)/K x weighted mean
(FHT 2000)         update F_k += (K-1)/K       squares on z,     of the working response
                   (f_k - mean_j f_j)          |z| <= 4          z = (r-p)/(p(1-p))
abcmart            K-1 trees on (k, base)      first order       Newton step on (k, base)
(paper 001)        pairs; base searched
abcrobustlogit     K-1 trees on (k, base)      second order      Newton step on (k, base)
(paper 003)
klogitboost        1 vector tree updating      sum over classes  per class: -G_k / H_k
(paper 000, s. 6)  all K classes; link         of the scalar     (diagonal Hessian, no
                   p_k = exp(F_k - 1)          gains             sum-to-one constraint)
adaboostmh         1 Hamming tree: factorized  growth of the     alpha x the leaf's vote
(paper 002)        stumps split, each leaf     edge, sum_l       vector sign(sum W y),
                   votes; exponential loss     |L_l|+|R_l|-|S_l| alpha by eq (11)
=================  ==========================  ================  =========================

The names of the four K-tree methods are those of ABCBoost, the authors' own CPU library. Within
an iteration of a K-tree method every tree sees the same p (recomputed once per iteration);
its scores F are updated tree by tree. ABC's tree for class k adds +t to F_k and -t to F_base,
which keeps F summing to zero as F_base = -sum_{k != base} F_k does in the papers. For two
classes the scalar methods grow one tree per iteration on the pair (0, 1) (one tree carries all
the information, as ABCBoost does with F_1 = -F_0), so that ABC-MART reduces to MART.

The base class of ABC (ABCBoost's rule): every ``gap + 1`` iterations the ``search`` classes
with the largest training loss (``search = 0``: every class, paper 003's exhaustive search)
are tried; for each, the K-1 trees are grown and the candidate whose update leaves the lowest
training loss is kept; the base is reused in between.
"""

from __future__ import annotations

from dataclasses import replace

from .grower import GrowerParams
from .losses import LOGITBOOST, SINGLE

__all__ = ["ALGORITHMS", "K_TREE", "ABC", "trees_per_iteration", "iteration_plan"]

ALGORITHMS = ("aoso", "mart", "robustlogit", "logitboost", "abcmart", "abcrobustlogit", "klogitboost", "adaboostmh")
K_TREE = ("mart", "robustlogit", "logitboost")
ABC = ("abcmart", "abcrobustlogit")
FIRST_ORDER = ("mart", "abcmart")


def trees_per_iteration(algorithm: str, n_classes: int) -> int:
    if algorithm == "logitboost":
        return n_classes
    if algorithm in K_TREE:
        return 1 if n_classes == 2 else n_classes
    if algorithm in ABC:
        return n_classes - 1
    return 1


def iteration_plan(algorithm: str, n_classes: int, params: GrowerParams, base: int | None = None) -> list[GrowerParams]:
    """The trees of one iteration, in order, as grower parameters."""
    first_order = algorithm in FIRST_ORDER
    if algorithm == "aoso":
        return [params]
    if algorithm == "klogitboost":
        return [replace(params, vector=True)]
    if algorithm == "adaboostmh":  # two leaves: Kegl's factorized stump; more: a Hamming tree
        return [replace(params, vector=True, edge=True, factorized=params.max_leaves == 2)]
    if algorithm in ABC:
        return [replace(params, fixed_pair=(k, base), first_order=first_order)
                for k in range(n_classes) if k != base]
    if algorithm == "logitboost":
        # FHT's Algorithm 6: f_k fit to the clipped working response, and
        # F_k += (K-1)/K (f_k - mean_j f_j): the tree of class k adds (K-1)/K f_k (e_k - 1/K)
        return [replace(params, fixed_pair=(k, LOGITBOOST), value_scale=(n_classes - 1) / n_classes)
                for k in range(n_classes)]
    if n_classes == 2:  # one tree on the pair (0, 1) says all (see the module docstring)
        return [replace(params, fixed_pair=(0, 1), first_order=first_order)]
    scale = (n_classes - 1) / n_classes
    return [replace(params, fixed_pair=(k, SINGLE), first_order=first_order, value_scale=scale)
            for k in range(n_classes)]
