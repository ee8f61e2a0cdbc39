"""scikit-learn's own estimator checks, for every algorithm this version implements."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from gpuboost import ALGORITHMS, BoostClassifier


@parametrize_with_checks([BoostClassifier(algorithm=a, n_estimators=10, max_leaves=8) for a in ALGORITHMS])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
