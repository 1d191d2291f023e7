"""The agent tools keep their context across calls (issue 12c) and see a changed config.

A server holds one :class:`~orchestrator.core.tool.ToolContext` per process; each agent-tool
call used to rebuild the configuration, the records, the slots and the client from it, and
so ping Herdr again before its first request. Now the derived context is kept in the
``ToolContext`` and refreshed per call (orchestrator/agent_tools/context.py says when).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from orchestrator.agent_tools.context import DERIVED_KEY, AgentToolsContext
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import ALL_TOOLS, run_tool, validator_of
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import received


def _server_context(server: HerdrServer, tmp_path: Path) -> tuple[ToolContext, Path]:
    config = tmp_path / "config.toml"
    config.write_text("maxConcurrent = 3\n", encoding="utf-8")
    env = {
        **server.env,
        "HERDR_ORCHESTRATOR_CONFIG": str(config),
        "HERDR_ORCHESTRATOR_TRANSPORT": "socket",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    return ToolContext.from_env(env), config


def test_a_second_call_reuses_the_context_and_does_not_ping_again(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx, _ = _server_context(herdr_server, tmp_path)
    wire = received(herdr_server)
    first = run_tool("herdr_list_agents", {}, ctx)
    assert first.get("agents") == [], first
    kept = ctx.derived[DERIVED_KEY]
    assert isinstance(kept, AgentToolsContext)
    assert kept.config.max_concurrent == 3
    assert wire.methods(pings=True).count("ping") == 1
    second = run_tool("herdr_list_agents", {}, ctx)
    assert second.get("agents") == [], second
    assert ctx.derived[DERIVED_KEY] is kept
    # the second call asked Herdr for the agents and did not re-check the protocol
    assert wire.methods(pings=True).count("ping") == 1
    assert wire.methods().count("agent.list") == 2


def test_a_changed_config_file_is_seen_by_the_next_call(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx, config = _server_context(herdr_server, tmp_path)
    assert "agents" in run_tool("herdr_list_agents", {}, ctx)
    kept = ctx.derived[DERIVED_KEY]
    assert isinstance(kept, AgentToolsContext)
    assert kept.config.max_concurrent == 3
    config.write_text("maxConcurrent = 7\n", encoding="utf-8")
    stat = config.stat()  # same size: make sure the mtime moves even on a coarse clock
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert "agents" in run_tool("herdr_list_agents", {}, ctx)
    assert kept.config.max_concurrent == 7
    config.write_text("maxConcurent = 2\n", encoding="utf-8")  # misspelt: a refusal
    refused = run_tool("herdr_list_agents", {}, ctx)
    assert refused["status"] == "failed"
    assert refused["error"]["code"] == "CONFIG_INVALID"


def test_a_changed_environment_rebuilds_the_context(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx, _ = _server_context(herdr_server, tmp_path)
    assert "agents" in run_tool("herdr_list_agents", {}, ctx)
    ctx.env = {**ctx.env, "HERDR_ORCHESTRATOR_MAX_CONCURRENT": "5"}
    assert "agents" in run_tool("herdr_list_agents", {}, ctx)
    kept = ctx.derived[DERIVED_KEY]
    assert isinstance(kept, AgentToolsContext)
    assert kept.config.max_concurrent == 5


def test_a_tool_schema_validator_is_built_once() -> None:
    tool = ALL_TOOLS["herdr_list_agents"]
    assert validator_of(tool) is validator_of(tool)
    assert validator_of(tool) is not validator_of(ALL_TOOLS["herdr_inbox"])


def test_a_new_socket_means_a_new_client_and_a_given_client_is_kept(tmp_path: Path) -> None:
    # a restarted Herdr makes a new socket file: the kept client (and its protocol check)
    # is dropped; a client the caller gave is never dropped
    sock = tmp_path / "herdr.sock"
    sock.write_text("")
    built: list[object] = []

    def factory(env: object) -> Any:
        built.append(object())
        return built[-1]

    env = {"HERDR_SOCKET_PATH": str(sock), "HOME": str(tmp_path)}
    ctx = AgentToolsContext(env=env, client_factory=factory)
    ctx.refresh()
    first = ctx.client
    ctx.refresh()
    assert ctx.client is first and len(built) == 1
    sock.unlink()
    sock.write_text("new server")
    ctx.refresh()
    assert ctx.client is not first and len(built) == 2

    given = AgentToolsContext.create(env, client=first)
    given.refresh()
    sock.unlink()
    sock.write_text("another")
    given.refresh()
    assert given.client is first
