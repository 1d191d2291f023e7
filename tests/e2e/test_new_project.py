"""A new project that only ``pip install``s this package gets the plugin's fixtures with no
conftest, and the documentation's example tests pass there (issue 4's acceptance)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "pytest-plugin" / "examples"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_fresh_install_gets_the_fixtures_and_the_doc_examples_pass(tmp_path: Path) -> None:
    """Slow because it creates a fresh venv, pip-installs the package into it and runs the
    documentation's example suites there.
    """
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.pop("VIRTUAL_ENV", None)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(REPO)],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    project = tmp_path / "project"
    project.mkdir()
    for example in EXAMPLES.glob("test_*.py"):
        shutil.copy(example, project)
    assert not list(project.glob("conftest.py"))
    ran = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project, capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    tests = sum(path.read_text().count("\ndef test_") for path in EXAMPLES.glob("test_*.py"))
    assert f"{tests} passed" in ran.stdout, ran.stdout[-2000:]

    # the agent author's worked example (docs/pytest-plugin/agent-author.md): a project of
    # its own, with its agent in bin/ and its options in pytest.ini
    author = tmp_path / "agent-author"
    shutil.copytree(EXAMPLES / "agent-author", author)
    ran = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=author, capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    # 10 items of the integration check (one per rule) and the three fixture tests
    assert "13 passed" in ran.stdout, ran.stdout[-2000:]
