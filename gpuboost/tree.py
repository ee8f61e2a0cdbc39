"""A fitted tree as flat arrays, and prediction with an ensemble of them.

Node ``j`` of a tree is described by the j-th entry of each array; node 0 is the root::

    feature[j]       split feature, -1 for a leaf
    bin[j]           codes 0..bin[j] go left (missing values: see missing_left)
    threshold[j]     the same split on raw values: x <= threshold goes left
    missing_left[j]  where missing values (NaN) go
    left[j], right[j]   child node ids, -1 for a leaf
    pair[j]          the node's class pair (r, s): AOSO chooses it from the node's own rows,
                     ABC fixes it to (k, base) for the whole tree; s = -1 marks a scalar
                     tree of class r (MART, robust LogitBoost), s = -2 original LogitBoost's
    value[j]         the node's Newton step t of eq (27), clipped; the node vector is
                     +t at r, -t at s, 0 elsewhere (eq 29), so a pair's vector sums to 0
    n_samples[j]     training rows in the node (of its iteration's rows, with subsample < 1)
    gain[j]          the gain of eq (30) of the node's split (0 for a leaf)
    vector[j]        K-LogitBoost and AdaBoost.MH only (pair (0, -3)): the node's K values, one
                     per class

The same arrays serve prediction, the model file and (later) the GPU. They are read-only (a
tree keeps read-only views of the arrays it is given): an estimator keeps its trees packed for
prediction between calls, so a tree is changed by replacing it in ``trees_``, never in place.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["Tree"]


@dataclass
class Tree:
    feature: np.ndarray
    bin: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    pair: np.ndarray
    value: np.ndarray
    n_samples: np.ndarray
    gain: np.ndarray
    vector: np.ndarray | None = None  # (n_nodes, K): K-LogitBoost's and AdaBoost.MH's per-class node values

    def __setattr__(self, name, value):
        if isinstance(value, np.ndarray) and value.flags.writeable:
            value = value.view()  # the caller's array stays as it was
            value.flags.writeable = False
        object.__setattr__(self, name, value)

    @classmethod
    def adopt(cls, feature, bin, threshold, missing_left, left, right, pair, value, n_samples, gain) -> "Tree":
        """A tree that takes over arrays made for it (a kernel's outputs, in the fields' dtypes,
        held by no one else): they are made read-only themselves instead of through views, which
        saves the per-field work of __setattr__ on a path that builds a tree per iteration."""
        tree = object.__new__(cls)
        fields_ = tree.__dict__
        for name, array in (("feature", feature), ("bin", bin), ("threshold", threshold),
                            ("missing_left", missing_left), ("left", left), ("right", right), ("pair", pair),
                            ("value", value), ("n_samples", n_samples), ("gain", gain)):
            array.flags.writeable = False
            fields_[name] = array
        fields_["vector"] = None
        return tree

    def __setstate__(self, state):  # unpickled and copied trees: read-only too
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.feature < 0

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    def node_vectors(self, n_classes: int, nodes: np.ndarray | None = None) -> np.ndarray:
        """Eq (29): the K-vector of every node (or of ``nodes``, ids), shape (n_nodes, n_classes),
        float64.

        +t at r and -t at s; a scalar tree of the K-tree family (s = -1) adds +t at r only;
        original LogitBoost's tree (s = -2) adds t (e_r - 1/K), its centred update.
        """
        if self.vector is not None:  # K-LogitBoost: every class has its own value
            return self.vector.copy() if nodes is None else self.vector[nodes]
        pair, value = (self.pair, self.value) if nodes is None else (self.pair[nodes], self.value[nodes])
        vectors = np.zeros((value.shape[0], n_classes))
        if value.shape[0] and pair[:, 1].min() >= 0:
            # every node paired (AOSO, ABC: a tree a boosting iteration, 9.5 -> 5.5 us on
            # pendigits): the general path's sums, 0 + t at r and 0 - t at s, in flat places
            flat = vectors.reshape(-1)
            at = np.arange(0, value.shape[0] * n_classes, n_classes)
            flat[at + pair[:, 0]] = value + 0.0
            flat[at + pair[:, 1]] = 0.0 - value
            return vectors
        rows = np.arange(value.shape[0])
        centred = pair[:, 1] == -2
        vectors[centred] -= (value[centred] / n_classes)[:, None]
        vectors[rows, pair[:, 0]] += value
        paired = pair[:, 1] >= 0
        vectors[rows[paired], pair[paired, 1]] -= value[paired]
        return vectors

    def apply(self, codes: np.ndarray, missing_code: int) -> np.ndarray:
        """Leaf id of every row of ``codes`` (n_rows, n_features), ndarray of shape (n_rows,)."""
        node = np.zeros(codes.shape[0], dtype=np.intp)
        active = np.flatnonzero(~self.is_leaf[node])
        while active.size:
            at = node[active]
            code = codes[active, self.feature[at]]
            go_left = np.where(code == missing_code, self.missing_left[at], code <= self.bin[at])
            node[active] = np.where(go_left, self.left[at], self.right[at])
            active = active[~self.is_leaf[node[active]]]
        return node

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name).tolist() for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, data: dict) -> "Tree":
        dtypes = {"feature": np.int32, "bin": np.int32, "threshold": np.float64, "missing_left": bool,
                  "left": np.int32, "right": np.int32, "pair": np.int32, "value": np.float64,
                  "n_samples": np.int64, "gain": np.float64}
        tree = cls(**{name: np.asarray(data[name], dtype=dt) for name, dt in dtypes.items()})
        if "vector" in data:
            tree.vector = np.asarray(data["vector"], dtype=np.float64)
        return tree
