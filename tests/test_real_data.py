"""End to end on the papers' datasets (../shared/data), with few trees to keep CI fast.

The bounds are about 10% above what this implementation measured at these tree counts
(2-core machine, 2026-11-22: pendigits 105 errors at 200 trees, optdigits 54 at 200,
letter 483 at 150); the full runs against the papers' numbers are in benchmarks/.
"""

import numpy as np
import pytest

from conftest import load_dataset
from gpuboost import BoostClassifier


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, n_trees, max_errors, n_test",
    [("pendigits", 200, 115, 3498), ("optdigits", 200, 60, 1797), ("letter", 150, 530, 4000)],
)
def test_aoso_accuracy_on_real_data(name, n_trees, max_errors, n_test):
    X_train, y_train, X_test, y_test = load_dataset(name)
    model = BoostClassifier(n_estimators=n_trees).fit(X_train, y_train, eval_set=[(X_test, y_test)])
    errors = int(np.sum(model.predict(X_test) != y_test))
    assert len(y_test) == n_test
    assert errors == model.eval_error_[0][-1]
    assert errors <= max_errors, f"{name}: {errors} test errors after {n_trees} trees"
    # the training loss falls at every iteration on these data
    assert np.all(np.diff(model.train_loss_) < 0)
