"""Models saved by earlier versions keep loading and predicting the same."""

import json
from pathlib import Path

import numpy as np

import gpuboost

FIXTURES = Path(__file__).parent / "fixtures"


def test_format_v1_model_still_predicts_the_same():
    expected = json.loads((FIXTURES / "model_v1_expected.json").read_text())
    X = np.array([[float(v) for v in row] for row in expected["X"]])  # "nan", "inf" as strings
    model = gpuboost.load_model(FIXTURES / "model_v1.json")
    assert model.predict(X).tolist() == expected["predict"]
    np.testing.assert_array_equal(model.predict_proba(X), np.array(expected["predict_proba"]))
    assert model.classes_.tolist() == ["ash", "birch", "cedar"]
