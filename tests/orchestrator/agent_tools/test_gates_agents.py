"""The gates hold for the agent tools that start or prompt agents (issue 10 §3).

``herdr_spawn_agent`` and ``herdr_message_agent`` are R2: under ``DSH_HERDR_PREVIEW_REQUIRED``
they refuse (``PREVIEW_REQUIRED``) unless ``preview: true``, which answers what would happen
and touches nothing. ``enabled`` and ``allowCwd`` bind message too; spawn re-checks ``cwd``
after its queue wait; an isolated task runs in the same subdirectory of its worktree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.transcript import load_messages
from orchestrator.client.poll import Deadline
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.agents import Agent, FakeAgents
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools.test_fleet import agent_result, own
from tests.orchestrator.agent_tools.test_spawn import (
    git_repo,
    make_ctx,
    scenario_args,
    spawn,
)
from tests.orchestrator.support import FAST_AGENTS, Received, received

pytestmark = FAST_AGENTS

GATE = "DSH_HERDR_PREVIEW_REQUIRED"
BIN = Path(sys.executable).parent
HARNESS = {"ping", "events.subscribe"}


def acted(rec: Received) -> list[str]:
    """The methods the orchestrator sent, the harness's own aside."""
    return [m for m in rec.methods(pings=True) if m not in HARNESS]


def prompts(agent: Agent) -> list[str]:
    """What the pi agent received as prompts; none when it never got one (no session yet:
    a fake pi that was never prompted may not have reported its session to Herdr at all)."""
    session = agent.info.get("agent_session")
    if not session:
        return []
    path = Path(session["value"])
    if not path.exists():
        return []
    return [m["text"] for m in load_messages(str(path)) if m["role"] == "user"]


def gated(ctx: AgentToolsContext, value: str) -> AgentToolsContext:
    """``ctx`` with the preview gate set to ``value``."""
    ctx.env = {**ctx.env, GATE: value}
    return ctx


def records(ctx: AgentToolsContext) -> list[Any]:
    return list(ctx.store.tasks_dir.glob("*.json")) if ctx.store.tasks_dir.exists() else []


# -- spawn -------------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["1", "on", "y", "YES"])
def test_spawn_under_the_preview_gate_is_refused_and_starts_nothing(
    herdr_server: HerdrServer, tmp_path: Path, word: str
) -> None:
    ctx = gated(make_ctx(herdr_server, tmp_path), word)
    rec = received(herdr_server)
    result = spawn(ctx, prompt="delete everything", cwd=str(tmp_path))
    assert (result["status"], result["nextAction"]) == ("failed", "retry")
    assert (result["error"]["code"], result["error"]["field"]) == ("PREVIEW_REQUIRED", "preview")
    assert result["taskId"] is None
    assert acted(rec) == []
    assert records(ctx) == []


def test_spawn_preview_answers_what_would_start_and_touches_nothing(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = gated(make_ctx(herdr_server, tmp_path), "1")
    rec = received(herdr_server)
    result = spawn(
        ctx,
        prompt="the secret plan",
        cwd=str(tmp_path),
        agent_args=["--api-key", "sk-123"],
        preview=True,
    )
    assert (result["status"], result["nextAction"], result["observation"]) == (
        "idle",
        "ask_user",
        False,
    )
    assert result["taskId"] is None and result["error"] is None
    preview = result["preview"]
    assert preview["action"] == "start and prompt an agent"
    assert preview["target"]["kind"] == "pi"
    assert preview["target"]["cwd"] == str(tmp_path.resolve())
    assert "secret" not in json.dumps(result) and "sk-123" not in json.dumps(result)
    assert "[idle · preview]" in result["header"]
    assert acted(rec) == []
    assert records(ctx) == []


def test_spawn_with_an_unreadable_gate_is_refused(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = gated(make_ctx(herdr_server, tmp_path), "perhaps")
    rec = received(herdr_server)
    result = spawn(ctx, prompt="x", cwd=str(tmp_path))
    assert result["error"]["code"] == "CONFIG_INVALID"
    assert acted(rec) == []


def test_spawn_rechecks_cwd_after_the_queue_wait(herdr_server: HerdrServer, tmp_path: Path) -> None:
    allowed = (tmp_path / "allowed").resolve()
    outside = (tmp_path / "outside").resolve()
    (allowed / "work").mkdir(parents=True)
    outside.mkdir()
    ctx = make_ctx(
        herdr_server, tmp_path, allow_cwd=(allowed,), max_concurrent=1, queue_timeout_ms=30_000
    )
    held = ctx.slots.acquire(None, timeout_ms=0)
    rec = received(herdr_server)
    answer: dict[str, Any] = {}

    def run() -> None:
        answer.update(spawn(ctx, prompt="x", cwd=str(allowed / "work"), wait=False))

    thread = threading.Thread(target=run)
    thread.start()
    deadline = Deadline(20)
    while ctx.slots.waiting() < 1:  # the spawn is queued, its cwd checked once
        assert not deadline.expired(), "the spawn never queued"
        time.sleep(0.02)
    # While it waits, the checked directory is swapped for a link out of allowCwd.
    (allowed / "work").rename(allowed / "work.old")
    (allowed / "work").symlink_to(outside)
    held.release()
    thread.join(30)
    assert not thread.is_alive()
    assert answer["status"] == "failed", answer
    assert answer["error"]["code"] in ("CWD_NOT_ALLOWED", "CWD_CHANGED")
    assert "after waiting for a slot" in answer["error"]["message"]
    assert answer["taskId"] is None
    assert not {"workspace.create", "tab.create", "pane.split", "agent.start"} & set(acted(rec))
    assert records(ctx) == []
    assert ctx.slots.running() == 0


def test_an_isolated_task_runs_in_the_same_subdirectory_of_its_worktree(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "pkg"], cwd=repo, check=True)
    ctx = make_ctx(herdr_server, tmp_path)
    scenario = Scenario().reply("COMPLETE\nlooked around")
    result = spawn(
        ctx,
        prompt="work in pkg",
        cwd=str(repo / "pkg"),
        isolated=True,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert result["status"] in ("completed", "running"), result
    tree = Path(result["task"]["worktreePath"])
    pane = ctx.client.pane_get(result["paneId"])
    assert pane.cwd == str(tree / "pkg")


def test_an_isolated_task_in_an_untracked_subdirectory_fails_clearly(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "scratch").mkdir()  # untracked: not in the worktree
    ctx = make_ctx(herdr_server, tmp_path)
    result = spawn(ctx, prompt="x", cwd=str(repo / "scratch"), isolated=True)
    assert result["status"] == "failed"
    assert "scratch" in result["error"]["message"]
    assert "does not exist at the base commit" in result["error"]["message"]


# -- message -----------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["1", "on", "y"])
def test_message_under_the_preview_gate_is_refused_and_sends_nothing(
    herdr_server: HerdrServer, tmp_path: Path, herdr_fake_agent: FakeAgents, word: str
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="w")
    ctx = gated(make_ctx(herdr_server, tmp_path), word)
    own(ctx, agent, status="completed")
    rec = received(herdr_server)
    value = agent_result(
        run_tool("herdr_message_agent", {"target": "w", "message": "rm -rf /"}, ctx)
    )
    assert (value["status"], value["error"]["code"]) == ("failed", "PREVIEW_REQUIRED")
    assert acted(rec) == []
    assert prompts(agent) == []


def test_message_preview_touches_nothing(
    herdr_server: HerdrServer, tmp_path: Path, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="w")
    ctx = gated(make_ctx(herdr_server, tmp_path), "1")
    own(ctx, agent, status="completed")
    rec = received(herdr_server)
    value = agent_result(
        run_tool(
            "herdr_message_agent", {"target": "w", "message": "the secret", "preview": True}, ctx
        )
    )
    assert (value["status"], value["nextAction"]) == ("idle", "ask_user")
    assert value["preview"]["target"]["target"] == "w"
    assert "the secret" not in json.dumps(value)
    assert acted(rec) == []
    assert prompts(agent) == []


def test_message_is_refused_when_disabled(
    herdr_server: HerdrServer, tmp_path: Path, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="w")
    ctx = make_ctx(herdr_server, tmp_path, enabled=False)
    own(ctx, agent, status="completed")
    value = agent_result(run_tool("herdr_message_agent", {"target": "w", "message": "go"}, ctx))
    assert (value["status"], value["error"]["code"]) == ("failed", "DISABLED")
    assert prompts(agent) == []


def test_message_to_an_agent_outside_allow_cwd_is_refused(
    herdr_server: HerdrServer, tmp_path: Path, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="ext")
    elsewhere = tmp_path / "allowed-only-here"
    elsewhere.mkdir()
    ctx = make_ctx(herdr_server, tmp_path, allow_cwd=(elsewhere,))
    value = agent_result(run_tool("herdr_message_agent", {"target": "ext", "message": "go"}, ctx))
    assert (value["status"], value["error"]["code"]) == ("failed", "CWD_NOT_ALLOWED")
    assert prompts(agent) == []


def test_message_is_registered_as_r2() -> None:
    from orchestrator.agent_tools.tools import AGENT_TOOLS

    assert AGENT_TOOLS["herdr_message_agent"].risk == "R2"
    assert AGENT_TOOLS["herdr_spawn_agent"].risk == "R2"


# -- over `herdr-orchestrator call` ----------------------------------------------------------


def cli_call(server: HerdrServer, state: Path, tool: str, args: dict[str, Any], **env: str) -> Any:
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HERDR_", "DSH_HERDR_"))},
        **{k: v for k, v in server.env.items() if k != "HERDR_PANE_ID"},
        "HERDR_BIN_PATH": str(server.cli_path),
        "XDG_STATE_HOME": str(state),
        **env,
    }
    done = subprocess.run(
        [str(BIN / "herdr-orchestrator"), "call", tool, json.dumps(args)],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("herdr_spawn_agent", {"prompt": "do it"}),
        ("herdr_message_agent", {"target": "w", "message": "do it"}),
    ],
)
def test_cli_agent_tools_under_the_gate_spelt_y(
    herdr_server: HerdrServer, tmp_path: Path, tool: str, args: dict[str, Any]
) -> None:
    rec = received(herdr_server)
    args = {**args, "cwd": str(tmp_path)} if tool == "herdr_spawn_agent" else args
    result = cli_call(herdr_server, tmp_path / "state", tool, args, **{GATE: "y"})
    assert (result["status"], result["error"]["code"]) == ("failed", "PREVIEW_REQUIRED")
    assert acted(rec) == []
    preview = cli_call(
        herdr_server, tmp_path / "state", tool, {**args, "preview": True}, **{GATE: "y"}
    )
    assert (preview["status"], preview["preview"] is not None) == ("idle", True)
    assert acted(rec) == []


def test_cli_spawn_with_an_empty_allow_cwd_is_refused(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    result = cli_call(
        herdr_server,
        tmp_path / "state",
        "herdr_spawn_agent",
        {"prompt": "x", "cwd": str(tmp_path)},
        HERDR_ORCHESTRATOR_ALLOW_CWD="",
    )
    assert (result["status"], result["error"]["code"]) == ("failed", "CONFIG_INVALID")
    assert "empty" in result["error"]["message"]
    assert acted(rec) == []


def test_an_isolated_subdirectory_that_is_a_committed_symlink_out_is_refused(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = git_repo(tmp_path / "repo")
    (repo / "sub").symlink_to(outside)
    subprocess.run(["git", "add", "sub"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "link"], cwd=repo, check=True)
    # The working tree now has a real directory where the base commit has the link.
    (repo / "sub").unlink()
    (repo / "sub").mkdir()
    ctx = make_ctx(herdr_server, tmp_path)
    rec = received(herdr_server)
    result = spawn(ctx, prompt="x", cwd=str(repo / "sub"), isolated=True)
    assert result["status"] == "failed", result
    assert "leads out of the worktree" in result["error"]["message"]
    assert not {"workspace.create", "tab.create", "pane.split", "agent.start"} & set(acted(rec))


# -- over MCP (in process, the SDK's client) -------------------------------------------------


@pytest.mark.parametrize("tool", ["herdr_spawn_agent", "herdr_message_agent"])
def test_mcp_agent_tools_under_the_gate_spelt_on(
    herdr_server: HerdrServer, tmp_path: Path, tool: str
) -> None:
    import anyio
    from mcp import Client
    from mcp.types import CallToolResult, TextContent

    from orchestrator.core.tool import ToolContext
    from orchestrator.mcp_server import build_server

    rec = received(herdr_server)
    env = {
        **{k: v for k, v in herdr_server.env.items() if k != "HERDR_PANE_ID"},
        "HERDR_BIN_PATH": str(herdr_server.cli_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        GATE: "on",
    }
    args: dict[str, Any] = (
        {"prompt": "do it", "cwd": str(tmp_path)}
        if tool == "herdr_spawn_agent"
        else {"target": "w", "message": "do it"}
    )

    async def body() -> CallToolResult:
        with anyio.fail_after(20):
            server = build_server(context=ToolContext.from_env(env))
            async with Client(server, mode="legacy") as client:
                return await client.call_tool(tool, args)

    result = anyio.run(body)
    answer = result.structured_content
    if answer is None:  # the body as JSON text
        block = result.content[0]
        assert isinstance(block, TextContent)
        answer = json.loads(block.text)
    assert (answer["status"], answer["error"]["code"]) == ("failed", "PREVIEW_REQUIRED")
    assert result.is_error is True  # a refusal is an error under any result contract
    assert acted(rec) == []
