"""The fake claude's command line against the installed real Claude Code's.

The option table of :mod:`herdr_sim.fake_agent.claude_flags` must be the one real
``claude --help`` lists (names and how each takes its value), and a command line the real
one refuses must be refused by the fake with the same words on stderr and the same status
(commander's; tests/sim/test_fake_agent_claude_cli.py holds the same cases without the
binary). Marker ``real_agent``; the agent is installed once per machine.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from herdr_sim.fake_agent.claude_flags import _OPTIONS
from herdr_sim.fake_agent.install import install_fake_agents
from pytest_herdr.real_agents import require_agent

pytestmark = pytest.mark.real_agent

REFUSED = [
    ["--bogus"],
    ["--bogus=3"],
    ["-x"],
    ["-m", "x"],
    ["--modle"],
    ["--no-verbose"],
    ["--verbose=1"],
    ["--session"],
    ["--model"],
    ["-n"],
    ["--permission-mode", "nope"],
    ["--input-format", "bad", "-p", "hi"],
    ["--session-id", "notauuid", "-p", "hi"],
    ["-p", "hi", "--bogus"],
]


def run(executable: Path, argv: list[str], home: Path) -> tuple[int, str]:
    """``executable argv`` offline in ``home`` with no terminal: (status, stderr)."""
    env = {
        "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "PATH": "/usr/bin:/bin",
        "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
    }  # fmt: skip
    done = subprocess.run(
        [str(executable), *argv], env=env, cwd=home, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, done.stderr


def test_the_fake_lists_real_claude_codes_options(tmp_path: Path) -> None:
    real = require_agent("claude").executable
    done = subprocess.run([str(real), "--help"], env={"HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    options = done.stdout.split("\nOptions:\n")[1].split("\nCommands:\n")[0]
    listed = {line.strip().split("  ")[0] for line in options.splitlines()
              if line.startswith("  -")}  # fmt: skip
    assert listed == {o.spec() for o in _OPTIONS if not o.hidden}


@pytest.mark.parametrize("argv", REFUSED)
def test_the_fake_refuses_as_real_claude_code_does(tmp_path: Path, argv: list[str]) -> None:
    real = require_agent("claude").executable
    (fake,) = (p for p in install_fake_agents(tmp_path / "bin") if p.name == "claude")
    (tmp_path / "home").mkdir()
    assert run(fake, argv, tmp_path / "home") == run(real, argv, tmp_path / "home")
