"""Run by test_algorithms.test_abcboost_numbers_on_digits, in a new process started with the
session (conftest's ``start_early``): ABCBoost's settings on scikit-learn's digits, with 1000
bins, so that its fits compile the kernels for 16-bit codes (about 85-130 s on one core) beside
the rest of the suite rather than in the suite's own process. The kernels go to numba's shared
cache (gpuboost saves its entries under a lock: see gpuboost/_numba_cache.py), where the
suite's other tests of 16-bit codes find them.

Prints one line per algorithm, ``ALGORITHM ERRORS``, then OK.
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from gpuboost import BoostClassifier

#: the algorithms of ABCBoost's digits results (their test errors: the test's)
ALGORITHMS = ("abcrobustlogit", "robustlogit", "abcmart", "mart")

if __name__ == "__main__":
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    for algorithm in ALGORITHMS:
        model = BoostClassifier(algorithm=algorithm, n_estimators=200, max_leaves=20, learning_rate=0.1,
                                min_samples_leaf=10, max_bins=1000, leaf_clip=50.0, search=2, gap=5)
        print(algorithm, int(np.sum(model.fit(X_train, y_train).predict(X_test) != y_test)), flush=True)
    print("OK")
