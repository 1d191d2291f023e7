"""A new project that only ``pip install``s this package gets the plugin's fixtures with no
conftest, and the documentation's example tests pass there (issue 4's acceptance).

The install is a user's plain ``pip install`` of the package, with the versions of the locked
runtime set as constraints (so an upstream release cannot turn this test red): it brings no
MCP stack (that is the ``mcp`` extra) and few packages, and ``herdr-orchestrator mcp`` then
says which extra to install while ``call`` still works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.locks import constraints_file

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
    # PIP_CONSTRAINT, not -c: it binds the isolated build environment (hatchling) too
    env["PIP_CONSTRAINT"] = str(constraints_file("runtime.txt", tmp_path / "constraints.txt"))
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(REPO)],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    ).stdout.split()  # fmt: skip
    resolved = [line.split("==")[0].lower() for line in listed]
    brought = [name for name in resolved if name not in ("pip", "setuptools")]
    assert len(brought) <= 20, brought  # the package itself and what it pulls in
    assert "mcp" not in brought and "pydantic" not in brought, brought
    without_extra = subprocess.run(
        [str(venv / "bin" / "herdr-orchestrator"), "mcp"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert without_extra.returncode == 2, without_extra
    assert "pip install 'pytest-herdr[mcp]'" in without_extra.stderr
    # the tools themselves need no MCP: a call with no Herdr to reach answers Herdr's error
    called = subprocess.run(
        [str(venv / "bin" / "herdr-orchestrator"), "call", "_dsh_herdr_workspace_list", "{}"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**env, "HERDR_SOCKET_PATH": str(tmp_path / "none.sock"), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert called.returncode == 1, called
    assert '"server_not_running"' in called.stdout, called.stdout
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
