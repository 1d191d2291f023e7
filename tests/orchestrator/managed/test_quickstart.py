"""docs/orchestrator/managed-agents-quickstart.md runs as written, on a fresh setup.

Its shell blocks run in order in one ``bash`` (a later block uses what an earlier one
defined) with a fresh ``HOME``, no ``PI_CODING_AGENT_DIR`` and no agent definitions of the
user's own, against the simulator (whose panes run the fake pi): the roster is the shipped
one, the delegation's result arrives, and a definition written where the guide says joins the
roster. The ``text`` block after each shell block is what it prints (``…`` stands for
whatever varies, such as a session id). The guide is linked from the README.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import FAST_AGENTS

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "orchestrator" / "managed-agents-quickstart.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARK = "@@quickstart-block"

pytestmark = [FAST_AGENTS, pytest.mark.slow]


def shell_blocks() -> list[tuple[str, str]]:
    """Each ``sh`` block with the ``text`` block that follows it (its expected output)."""
    fences = FENCE.findall(GUIDE.read_text())
    pairs = []
    for (language, code), (after, expected) in zip(fences, [*fences[1:], ("", "")], strict=True):
        if language == "sh":
            pairs.append((code, expected if after == "text" else ""))
    return pairs


def shows(output: str, expected: str) -> list[str]:
    """The expected lines that no output line matches (``…`` matches anything)."""
    lines = output.splitlines()
    missing = []
    for line in filter(None, expected.splitlines()):
        pattern = ".*".join(re.escape(part) for part in line.split("…"))
        if not any(re.fullmatch(pattern, got) for got in lines):
            missing.append(line)
    return missing


def test_the_quickstart_runs_on_a_fresh_setup(herdr_server: HerdrServer, tmp_path: Path) -> None:
    blocks = shell_blocks()
    assert len(blocks) == 3 and all(expected for _, expected in blocks)
    script = "set -e\n" + "".join(f"echo {MARK}\n{code}" for code, _ in blocks)
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "HERDR_SOCKET_PATH": str(herdr_server.socket_path),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=home / "project",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = done.stdout.split(MARK + "\n")[1:]
    assert len(outputs) == len(blocks), done.stdout
    for (code, expected), output in zip(blocks, outputs, strict=True):
        assert not shows(output, expected), f"{code}\nprinted:\n{output}\n{done.stderr}"
    assert (home / ".pi" / "agent" / "agents" / "scout.md").is_file()


def test_the_quickstart_is_linked_from_the_readme_and_the_reference() -> None:
    link = "docs/orchestrator/managed-agents-quickstart.md"
    assert f"]({link})" in (ROOT / "README.md").read_text()
    reference = (ROOT / "docs" / "orchestrator" / "managed-agents.md").read_text()
    assert "](managed-agents-quickstart.md)" in reference
