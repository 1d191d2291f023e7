"""The audit log (issue 18 §5): one JSON line per call that is not R0, nothing secret in it or
in the server's logs, a private file never written through a link, rotated by size, and the
``herdr-orchestrator audit`` command that prints and follows it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

from orchestrator.core.tool import Tool
from orchestrator.pipeline import audit
from orchestrator.pipeline.registry import ALL_TOOLS, run_tool
from pytest_herdr.backends import HerdrServer
from pytest_herdr.waits import SCALE
from tests.orchestrator.support import context
from tests.results import field

BIN = Path(sys.executable).parent
#: an API key, planted everywhere a caller can put text
SECRET = "sk-ant-api03-PLANTEDsecretKEYvalue0123456789abcdefXYZ"


def _value(schema: Any) -> Any:
    """A value ``schema`` accepts where it can, carrying the secret wherever it takes text."""
    if not isinstance(schema, dict):
        return SECRET
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [_value(schema.get("items"))]
    if kind == "object":
        return {"SECRET_NAME": SECRET}
    return SECRET


def planted(tool: Tool, *, extra: bool) -> dict[str, Any]:
    """Arguments for ``tool`` with the secret in every text parameter (the schema passes them
    where it can, so the handlers run); ``extra`` adds a parameter named by the secret."""
    props = tool.input_schema.get("properties") or {}
    args = {name: _value(schema) for name, schema in props.items() if name != "preview"}
    if extra:
        args[SECRET] = SECRET
    return args


def lines_of(state: Path) -> list[dict[str, Any]]:
    path = audit.audit_path(state)
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_secret_in_every_field_of_every_call_reaches_neither_the_audit_log_nor_the_logs(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    """Over a real ``herdr-orchestrator mcp`` process at DEBUG level, with the secret also as
    the client's name; every tool that is not R0 is called (about 3 s: one server process)."""
    state = tmp_path / "state"
    env = {
        **herdr_server.env,
        "HERDR_BIN_PATH": str(herdr_server.cli_path),
        "HERDR_ORCHESTRATOR_STATE_DIR": str(state),
        "HERDR_ORCHESTRATOR_ALLOW_AGENT_ARGS": "1",  # so the secret in args reaches handlers
        "PATH": os.environ.get("PATH", ""),
    }
    params = StdioServerParameters(
        command=str(BIN / "herdr-orchestrator"), args=["mcp", "--log-level", "DEBUG"], env=env
    )
    writers = [tool for tool in ALL_TOOLS.values() if tool.risk != "R0"]
    stderr = tmp_path / "server.stderr"

    async def body() -> None:
        with anyio.fail_after(60 * SCALE), stderr.open("w") as errlog:
            transport = stdio_client(params, errlog=errlog)
            info = Implementation(name=SECRET, version=SECRET)
            async with Client(transport, mode="legacy", client_info=info) as client:
                for tool in writers:
                    await client.call_tool(tool.name, planted(tool, extra=False))
                    await client.call_tool(tool.name, planted(tool, extra=True))
                await client.call_tool("_dsh_herdr_workspace_list", {})  # R0: not audited

    anyio.run(body)
    raw = audit.audit_path(state).read_text()
    logs = stderr.read_text()
    assert "DEBUG" in logs or "called" in logs  # the server did log at DEBUG
    for needle in (SECRET, SECRET[:16], SECRET[-16:], "PLANTEDsecret"):
        assert needle not in raw
        assert needle not in logs
    lines = lines_of(state)
    assert [line["tool"] for line in lines] == [t.name for t in writers for _ in (1, 2)]
    assert [line.get("unknownArgs") for line in lines] == [None, 1] * len(writers)
    for line in lines:
        assert line["caller"].startswith("mcp:sha256:")
        for value in [*line["targets"].values(), *line["args"].values()]:
            if isinstance(value, dict):
                assert set(value) == {"sha256", "len"}


def test_one_line_per_call_that_is_not_r0_with_its_facts(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    assert herdr_server.sim is not None
    pane = herdr_server.sim.call("workspace.create", {"cwd": str(tmp_path)})["result"]["root_pane"][
        "pane_id"
    ]
    state = tmp_path / "state"
    ctx = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_STATE_DIR": str(state)})
    run_tool("_dsh_herdr_pane_list", {}, ctx)
    run_tool("_dsh_herdr_pane_send_text", {"pane": pane, "text": "typed"}, ctx)
    run_tool("_dsh_herdr_pane_run", {"pane": pane, "command": "true", "preview": True}, ctx)
    ro = context(
        herdr_server,
        "socket",
        {"HERDR_ORCHESTRATOR_STATE_DIR": str(state), "HERDR_ORCHESTRATOR_READ_ONLY": "1"},
    )
    run_tool("_dsh_herdr_pane_send_text", {"pane": pane, "text": "no"}, ro)
    first, second, third = lines_of(state)
    assert first["tool"] == "_dsh_herdr_pane_send_text" and first["risk"] == "R1"
    assert (first["outcome"], field(first, "errorCode"), first["caller"]) == ("ok", None, "cli")
    assert first["targets"] == {"pane": pane}
    assert first["args"]["text"] == audit.digest("typed")
    assert isinstance(first["durationMs"], int) and first["time"].endswith("+00:00")
    assert second["args"]["preview"] is True and second["outcome"] == "ok"
    assert (third["outcome"], field(third, "errorCode")) == ("refused", "read_only")
    mode = audit.audit_path(state).stat().st_mode & 0o777
    assert mode == 0o600
    assert state.stat().st_mode & 0o777 == 0o700


def sample_line(n: int = 0) -> dict[str, Any]:
    return {"tool": "t", "n": n, "pad": "x" * 200}


def test_a_link_planted_at_the_log_is_never_followed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    audit.audit_path(state).symlink_to(victim)
    with pytest.raises(OSError, match="symbolic link"):
        audit.append(state, sample_line(), 1 << 20)
    assert victim.read_text() == "untouched\n"


def test_the_log_rotates_by_size_keeping_three_older_files(tmp_path: Path) -> None:
    state = tmp_path / "state"
    for n in range(200):
        audit.append(state, sample_line(n), 4096)
    path = audit.audit_path(state)
    rotated = sorted(p.name for p in state.glob("audit.jsonl.*"))
    assert rotated == ["audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"]
    for file in [path, *state.glob("audit.jsonl.*")]:
        assert file.stat().st_size <= 4096
        assert file.stat().st_mode & 0o777 == 0o600
    newest = [json.loads(line)["n"] for line in path.read_text().splitlines()]
    older = [json.loads(line)["n"] for line in (state / "audit.jsonl.1").read_text().splitlines()]
    assert newest[-1] == 199 and older[-1] == newest[0] - 1  # nothing lost at the seam


def test_the_audit_command_prints_the_last_lines_and_follows(tmp_path: Path) -> None:
    state = tmp_path / "state"
    for n in range(5):
        audit.append(state, sample_line(n), 1 << 20)
    env = {**os.environ, "HERDR_ORCHESTRATOR_STATE_DIR": str(state)}
    cmd = str(BIN / "herdr-orchestrator")
    shown = subprocess.run(
        [cmd, "audit", "--lines", "2"], env=env, capture_output=True, text=True, check=True
    )
    assert [json.loads(line)["n"] for line in shown.stdout.splitlines()] == [3, 4]
    follower = subprocess.Popen(
        [cmd, "audit", "--follow", "--lines", "1"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert follower.stdout is not None
        assert json.loads(follower.stdout.readline())["n"] == 4
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(follower.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        audit.append(state, sample_line(5), 1 << 20)
        reader.join(timeout=10 * SCALE)
        assert got and json.loads(got[0])["n"] == 5
    finally:
        follower.terminate()
        follower.wait(timeout=10 * SCALE)
        if follower.stdout is not None:
            follower.stdout.close()
