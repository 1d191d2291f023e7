"""docs/orchestrator/setup.md: every recipe's snippet is one that works as written.

The JSON and TOML configurations parse; each server entry that starts ``herdr-orchestrator``
names it (absolute in the Claude Desktop recipe, since GUI apps do not inherit ``PATH``) with
arguments the command's own parser accepts; every ``herdr-orchestrator`` command line of a
shell block (and the command after a host's ``--``) parses too; every ``HERDR_*`` variable a
snippet sets is one the code reads; the curl body is JSON; the Python client parses. The guide
is linked from the README and from mcp.md.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import _parsers

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "docs" / "orchestrator" / "setup.md"
COMMAND = "herdr-orchestrator"


def blocks(language: str) -> list[str]:
    text = SETUP.read_text()
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def accepts(argv: list[str]) -> None:
    """``herdr-orchestrator argv`` parses (argparse exits 2 on anything it does not know)."""
    try:
        _parsers()[0].parse_args(argv)
    except SystemExit as exc:
        raise AssertionError(f"herdr-orchestrator {shlex.join(argv)} is refused") from exc


def servers(config: Any) -> list[tuple[list[str], dict[str, str]]]:
    """Every local server in a host configuration: its command line and its environment."""
    found: list[tuple[list[str], dict[str, str]]] = []
    for table in ("mcpServers", "mcp", "mcp_servers"):
        for entry in (config.get(table) or {}).values():
            command = entry.get("command")
            if isinstance(command, list):  # opencode: the command line as one list
                found.append((command, entry.get("environment", {})))
            elif isinstance(command, str):
                found.append(([command, *entry.get("args", [])], entry.get("env", {})))
    return found


def code_reads(name: str) -> bool:
    return any(name in path.read_text() for path in (ROOT / "orchestrator").rglob("*.py"))


def check_server(argv: list[str], env: dict[str, str]) -> None:
    assert Path(argv[0]).name == COMMAND, argv
    accepts(argv[1:])
    for name in env:
        assert name == "PATH" or code_reads(name), f"{name} is read by nothing"


def test_the_json_configurations() -> None:
    configs = [json.loads(block) for block in blocks("json")]
    assert len(configs) == 2  # Claude Desktop and opencode
    desktop, opencode = configs
    [(argv, env)] = servers(desktop)
    assert Path(argv[0]).is_absolute(), "Claude Desktop needs an absolute command"
    assert {"HERDR_SOCKET_PATH", "HERDR_BIN_PATH", "PATH"} <= set(env)
    assert all(Path(value).is_absolute() for key, value in env.items() if key != "PATH")
    check_server(argv, env)
    local = servers(opencode)
    assert len(local) == 1
    check_server(*local[0])
    remote = opencode["mcp"]["herdr-remote"]
    assert remote["url"].endswith("/mcp") and "{env:HERDR_ORCHESTRATOR_HTTP_TOKEN}" in str(remote)


def test_the_toml_configuration() -> None:
    [block] = blocks("toml")
    config = tomllib.loads(block)
    [(argv, env)] = servers(config)
    check_server(argv, env)
    remote = config["mcp_servers"]["herdr-remote"]
    assert remote["bearer_token_env_var"] == "HERDR_ORCHESTRATOR_HTTP_TOKEN"
    assert code_reads(remote["bearer_token_env_var"])


def command_lines() -> list[list[str]]:
    """Every ``herdr-orchestrator`` command line of the shell blocks: after a host's ``--``,
    and after the ``NAME=value`` assignments that may precede it."""
    lines: list[list[str]] = []
    for block in blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if "--" in words:
                words = words[words.index("--") + 1 :]
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]
            if words and Path(words[0]).name == COMMAND:
                lines.append(words)
    return lines


def test_every_command_line_parses() -> None:
    lines = command_lines()
    subcommands = {line[1] for line in lines}
    assert {"mcp", "check"} <= subcommands, lines
    assert any("--http" in line and "--tls-cert" in line for line in lines)
    for line in lines:
        accepts(line[1:])


@pytest.mark.parametrize("name", sorted(set(re.findall(r"\bHERDR_[A-Z_]+", SETUP.read_text()))))
def test_every_variable_named_is_read_by_the_code(name: str) -> None:
    assert code_reads(name), name


def test_the_generic_clients() -> None:
    [python] = blocks("python")
    ast.parse(python)
    assert "streamable_http_client" in python and "Authorization" in python
    curl = next(block for block in blocks("sh") if block.startswith("curl"))
    body = re.search(r"-d '(.*)'", curl)
    assert body is not None
    assert json.loads(body.group(1))["method"] == "initialize"


def test_the_guide_is_linked() -> None:
    assert "docs/orchestrator/setup.md" in (ROOT / "README.md").read_text()
    assert "(setup.md)" in (ROOT / "docs" / "orchestrator" / "mcp.md").read_text()
