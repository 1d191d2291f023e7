"""docs/orchestrator/setup.md: every recipe's snippet is one that works as written.

The JSON and TOML configurations parse; each server entry that starts ``herdr-orchestrator``
names it (absolute in the Claude Desktop recipe, since GUI apps do not inherit ``PATH``) with
arguments the command's own parser accepts; every ``herdr-orchestrator`` command line of a
shell block (and the command after a host's ``--``) parses too; every ``HERDR_*`` variable a
snippet sets is one the code reads; the curl body is JSON; the Python client parses. The
Streamable HTTP commands, curl and the Python client run against a simulator, the client
making a call that waits longer than 10 s. The guide is linked from the README and from
mcp.md.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest

from herdr_sim.client import call as wire_call
from orchestrator.cli import _parsers
from tests.orchestrator.http_support import (
    BIN,
    launch_http_server,
    make_certs,
    simulator,
    tool_env,
)

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


#: the example server's URL in the guide, and the address its TLS command binds
DOC_URL = "https://myhost.example:8765/mcp"
DOC_BIND = "0.0.0.0:8765"
#: how long the client's call waits (longer than 10 s, twice the default read timeout)
LONG_WAIT_S = 12


def shell_block(first_words: str) -> str:
    return next(block for block in blocks("sh") if block.startswith(first_words))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_streamable_http_snippets_run_and_the_client_survives_a_long_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide as a user runs it, on a simulator: finding the paths and the stdio check
    (whose output is the one shown), the token commands (in a fresh HOME), the TLS server
    command (bound to loopback port 0 instead of 0.0.0.0:8765), ``check`` and curl against
    it, then the generic Python client: its ``main`` and a call that waits
    :data:`LONG_WAIT_S` s for a pane's output (the client with a default read timeout ended
    such a call with ``ReadTimeout``). Only the host name, port and the certificate files
    (made for ``localhost``) differ from the guide. Slow because the call must outlast twice
    the client's default read timeout (12 s), and the guide's commands each start a process."""
    home = tmp_path / "home"
    home.mkdir()
    certs = make_certs(tmp_path / "certs", "localhost")
    cert_dir = certs.ca.parent  # the guide names ca.pem, cert.pem and key.pem in the cwd
    serving = shell_block("mkdir -p -m 700 ~/.config/herdr-orchestrator").splitlines()
    with simulator() as sim:
        env = {
            **tool_env(sim, tmp_path / "state"),
            "HOME": str(home),
            "PATH": os.pathsep.join([str(BIN), "/usr/bin", "/bin"]),
        }

        def sh(script: str) -> str:
            """Run a snippet as the guide's reader would (in the certificates' directory);
            what it printed."""
            done = subprocess.run(
                ["bash", "-ec", script],
                env=env,
                cwd=cert_dir,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, f"{script}\n{done.stdout}{done.stderr}"
            return done.stdout

        sh("\n".join(line for line in serving if not line.startswith(COMMAND)))
        # 1 and 2: find the paths, check the server on its own (Herdr's default socket here
        # is the simulator's), and the check prints what the guide shows
        (home / ".config" / "herdr").mkdir(parents=True)
        (home / ".config" / "herdr" / "herdr.sock").symlink_to(sim.socket_path)
        env["PATH"] = os.pathsep.join([str(sim.cli_path.parent), env["PATH"]])
        sh(shell_block("command -v herdr-orchestrator"))
        alone = sh(shell_block("HERDR_SOCKET_PATH=$HOME/.config/herdr/herdr.sock"))
        [printed] = [b for b in blocks("text") if b.startswith("ok    reachable")]
        assert alone == printed
        token_file = home / ".config" / "herdr-orchestrator" / "token"
        assert oct(token_file.stat().st_mode & 0o777) == "0o600"
        assert oct(token_file.parent.stat().st_mode & 0o777) == "0o700"
        token = token_file.read_text().strip()
        [tls] = [line for line in serving if "--tls-cert" in line]
        argv = shlex.split(tls.replace(DOC_BIND, "127.0.0.1:0").replace("~", str(home)))
        server = launch_http_server(
            [str(BIN / argv[0]), *argv[1:]], env, tmp_path, certs, token, cwd=cert_dir
        )
        try:
            url = server.url

            def in_the_guide(text: str) -> str:
                return text.replace(DOC_URL, url)

            checked = sh(in_the_guide(shell_block("herdr-orchestrator check --http")))
            assert "ok    read-only call: _dsh_herdr_workspace_list: ok" in checked
            curl = sh(in_the_guide(shell_block("curl")))
            assert '"serverInfo"' in curl and '"herdr-orchestrator"' in curl

            [python] = blocks("python")
            client: dict[str, Any] = {}
            exec(compile(in_the_guide(python), str(SETUP), "exec"), client)  # noqa: S102
            monkeypatch.chdir(cert_dir)
            anyio.run(client["main"], token)
            pane = wire_call(sim.socket_path, "workspace.create", {})["root_pane"]["pane_id"]
            command = f"sleep {LONG_WAIT_S}; echo waited-$((6*7))"
            wire_call(
                sim.socket_path,
                "pane.send_input",
                {"pane_id": pane, "text": command, "keys": ["Enter"]},
            )
            arguments = {"pane": pane, "pattern": "waited-42", "timeout": 60_000}
            began = time.monotonic()
            result = anyio.run(client["call"], token, "_dsh_herdr_pane_wait_output", arguments)
            waited = time.monotonic() - began
            assert result.is_error is False, result
            assert (result.structured_content or {}).get("ok") is True, result
            assert waited > 10, waited
        finally:
            server.stop()


def test_the_guide_is_linked() -> None:
    assert "docs/orchestrator/setup.md" in (ROOT / "README.md").read_text()
    assert "(setup.md)" in (ROOT / "docs" / "orchestrator" / "mcp.md").read_text()
