"""Every Python example in the README and docs/ runs."""

import re

import pytest

from conftest import REPO

FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
EXAMPLES = [(path, block) for path in FILES for block in re.findall(r"```python\n(.*?)```", path.read_text(), re.S)]


@pytest.mark.parametrize("path, code", EXAMPLES, ids=[f"{p.name}-{i}" for i, (p, _) in enumerate(EXAMPLES)])
def test_example_runs(path, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files
    exec(compile(code, str(path), "exec"), {"__name__": "__example__"})


def test_there_are_examples():
    assert any(path.name == "README.md" for path, _ in EXAMPLES)


def test_bench_command_runs_the_reproduction_script(tmp_path):
    from gpuboost.__main__ import main

    assert main(["bench", "reproduce", "digits", "--trees", "20", "--algorithms", "aoso", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "reproduce-digits-20.json").exists()
    assert (tmp_path / "reproduce-digits-20.png").stat().st_size > 1000  # matplotlib is a test dependency
