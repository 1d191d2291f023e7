"""Secrets are scrubbed from every child process we start (issue 18 §6): the ``herdr`` CLI,
git and an agent's own check get our environment minus the variables named like secrets,
except those the configuration's ``passEnv`` lets through."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agent_tools import worktree
from orchestrator.agent_tools.agent_check import agent_checks
from orchestrator.client.child_env import child_env, is_secret_name
from orchestrator.client.sync import HerdrClient
from orchestrator.core.config import Config
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.backends import HerdrServer

SECRET = "sk-planted-0123456789abcdef0123456789"


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASSWORD",
        "NPM_CONFIG__AUTH",
        "GITLAB_PAT",
        "SSH_PRIVATE_KEY",
        "my_apikey",
    ],
)
def test_secret_names_are_scrubbed(name: str) -> None:
    assert is_secret_name(name)
    assert child_env({name: SECRET, "PATH": "/bin"}) == {"PATH": "/bin"}


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "SSH_AUTH_SOCK", "HERDR_SOCKET_PATH", "KEYBOARD", "LANG"]
)
def test_ordinary_names_pass(name: str) -> None:
    assert not is_secret_name(name)


def test_pass_env_names_what_goes_through() -> None:
    env = {"OPENAI_API_KEY": "a", "ANTHROPIC_API_KEY": "b"}
    assert child_env(env, ("OPENAI_*",)) == {"OPENAI_API_KEY": "a"}


def test_the_herdr_cli_never_sees_our_secrets(herdr_server: HerdrServer, tmp_path: Path) -> None:
    dump = tmp_path / "herdr.env"
    wrapper = tmp_path / "herdr"
    wrapper.write_text(f'#!/bin/sh\nenv > "$ENV_DUMP_FILE"\nexec "{herdr_server.cli_path}" "$@"\n')
    wrapper.chmod(0o700)
    env = {**herdr_server.env, "ENV_DUMP_FILE": str(dump), "ANTHROPIC_API_KEY": SECRET}
    client = HerdrClient.build("cli", socket_path=herdr_server.socket_path, herdr=wrapper, env=env)
    result = run_tool("_dsh_herdr_workspace_list", {}, ToolContext.with_client(client, env))
    assert result["ok"] is True
    seen = dump.read_text()
    assert "ENV_DUMP_FILE=" in seen  # the dump is of the real child
    assert SECRET not in seen and "ANTHROPIC_API_KEY" not in seen


def test_git_gets_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    env = worktree._git_env({"GIT_INDEX_FILE": "x"})
    assert "GITHUB_TOKEN" not in env and env["GIT_INDEX_FILE"] == "x"


def test_an_agents_check_gets_only_the_secrets_pass_env_names(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pi = bin_dir / "pi"
    pi.write_text("#!/bin/sh\nexit 0\n")
    pi.chmod(0o700)
    seen: list[dict[str, str]] = []

    def run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        seen.append(dict(kw["env"]))
        return subprocess.CompletedProcess(argv, 0, "provider model\n", "")

    env = {"PATH": str(bin_dir), "ANTHROPIC_API_KEY": SECRET, "OPENAI_API_KEY": SECRET}
    config = Config(pass_env=("OPENAI_*",), aliases={"pi": {"default": "openai/gpt-x"}})
    agent_checks(config, env, run=run)
    assert seen, "pi --list-models was not run"
    assert "ANTHROPIC_API_KEY" not in seen[0] and seen[0]["OPENAI_API_KEY"] == SECRET
    assert seen[0]["PATH"] == os.fspath(bin_dir)
