"""The command line's demo runs end to end."""

import subprocess
import sys


def test_demo_trains_and_evaluates():
    result = subprocess.run(
        [sys.executable, "-m", "gpuboost", "demo", "--n-train", "3000", "--n-test", "2000",
         "--n-estimators", "20", "--verbose", "10"],
        capture_output=True, text=True, check=True,
    )
    assert "test accuracy" in result.stdout and "trained 20 AOSO trees" in result.stdout


def test_demo_reports_bad_arguments_without_a_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "gpuboost", "demo", "--n-estimators", "0"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "n_estimators" in result.stderr and "Traceback" not in result.stderr
