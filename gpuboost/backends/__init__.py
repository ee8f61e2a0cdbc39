"""Backends: the stages of a boosting iteration on the arrays of one device.

``numpy`` is the reference every other backend is tested against.
"""

from .base import Backend, SplitBatch
from .numpy import NumpyBackend

__all__ = ["Backend", "SplitBatch", "NumpyBackend"]
