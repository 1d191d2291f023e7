"""Installing the other real agents (Claude Code, Codex, opencode): the pinned npm packages,
the ``bin/`` link to each native binary, and the errors, without touching the registry
(a stand-in ``npm`` lays out what the real one does)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from herdr_sim.real_agents import AgentInstallError, find_agent, install_agent
from herdr_sim.real_agents.install import AGENT_PACKAGES

#: a stand-in npm: records its arguments, then lays out each platform package's binary
FAKE_NPM = """#!/bin/sh
echo "$@" > "$NPM_LOG"
prefix="$3"
for binary in $NPM_BINARIES; do
  mkdir -p "$prefix/$(dirname "$binary")" && echo bin > "$prefix/$binary"
done
"""


def stand_in_npm(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    npm = tmp_path / "npm-bin" / "npm"
    npm.parent.mkdir()
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    binaries = " ".join(str(target) for _, target in AGENT_PACKAGES[kind].links)
    monkeypatch.setenv("NPM_BINARIES", binaries)
    monkeypatch.setenv("NPM_LOG", str(tmp_path / "npm.log"))
    monkeypatch.setenv("PATH", f"{npm.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return tmp_path / "npm.log"


@pytest.mark.parametrize(
    ("kind", "package", "binary"),
    [
        ("claude", "@anthropic-ai/claude-code@2.1.332", "claude-code-linux-x64/claude"),
        ("codex", "@openai/codex@0.171.0", "x86_64-unknown-linux-musl/bin/codex"),
        ("opencode", "opencode-ai@1.18.33", "opencode-linux-x64/bin/opencode"),
    ],
)
def test_an_agent_installs_pinned_with_scripts_off_and_links_its_native_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, package: str, binary: str
) -> None:
    log = stand_in_npm(tmp_path, kind, monkeypatch)
    cache = tmp_path / "agents"
    assert find_agent(kind, cache) is None
    installed = install_agent(kind, cache)
    argv = log.read_text().split()
    assert package in argv and "--ignore-scripts" in argv  # no postinstall runs
    assert installed.executable == cache / installed.directory.name / "bin" / kind
    assert str(installed.executable.resolve()).endswith(binary)  # the binary, no launcher
    assert installed.directory.name == f"{kind}-{AGENT_PACKAGES[kind].version}"
    log.unlink()
    assert install_agent(kind, cache) == installed and not log.exists()  # cached: no npm


def test_an_unknown_agent_and_a_missing_binary_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AgentInstallError, match="no installable agent 'gemini'"):
        install_agent("gemini", tmp_path)
    stand_in_npm(tmp_path, "claude", monkeypatch)
    monkeypatch.setenv("NPM_BINARIES", "")  # the optional dependency was not installed
    with pytest.raises(AgentInstallError, match=r"npm install of claude left no .*claude"):
        install_agent("claude", tmp_path / "agents")
    assert find_agent("claude", tmp_path / "agents") is None
