"""gpuboost: multi-class boosting from the research literature (AOSO-LogitBoost first).

Importing gpuboost imports NumPy and scikit-learn only: never CuPy, numba.cuda or CUDA.
"""

from ._version import __version__
from .io import load_model
from .algorithms import ALGORITHMS
from .functional import load, predict, save, test, train
from .sklearn import BoostClassifier

__all__ = ["BoostClassifier", "ALGORITHMS", "load_model", "__version__",
           "train", "test", "predict", "save", "load"]
