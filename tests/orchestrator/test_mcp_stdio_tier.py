"""The MCP tier: every tool of ``ALL_TOOLS`` driven through the MCP SDK's own stdio client.

One ``herdr-orchestrator mcp`` process per module, spawned by ``mcp.client.stdio.stdio_client``
and spoken to by ``mcp.ClientSession`` (the same code a host runs), pointed at a simulator by
``HERDR_SOCKET_PATH`` and at a private state directory. For each tool: a success, a refusal
(arguments its schema rejects, in the tool family's shape) and a failure where one exists, with
``isError`` checked against what the result says (issue 10, "Success is not an error"): a
success or a result to read (``completed``, ``running``, ``blocked``, a page) is never an
error. ``test_every_tool_is_covered`` fails when a tool is added without a case here.

The session lives in a blocking portal (an event loop on its own thread), so the module's
tests stay plain functions and share one server process: the tier costs one process start.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from herdr_sim.config import SimulatorConfig
from herdr_sim.detection import BUILTIN_MANIFESTS_DIR
from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.contract import AGENT_RESULT_SCHEMA
from orchestrator.pipeline.registry import ALL_TOOLS
from pytest_herdr import backends
from pytest_herdr.backends import HerdrServer
from tests import results
from tests.waits import SCALE, wait_until

BIN = Path(sys.executable).parent
#: the scenario file every fake pi of the tier reads unless given ``--scenario``
MANAGED_SCENARIO = "managed-scenario.json"
#: Bound of one call (a spawn of a fake pi settles in about a second).
CALL_TIMEOUT = 60.0
AGENT_RESULT = jsonschema.Draft202012Validator(AGENT_RESULT_SCHEMA)


def body_of(result: CallToolResult) -> dict[str, Any]:
    """The result object, the same in the text block and the structured content."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    assert result.structured_content == body
    return body


def agent_result(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` (an AgentResult in its compact wire form) restored and schema-checked."""
    full = dict(body)
    task = body.get("task")
    if isinstance(task, Mapping):
        full["task"] = {**{k: body.get(k) for k in task}, **task}
        for key in ("taskId", "status", "kind", "name", "model", "paneId", "machine"):
            full["task"].setdefault(key, body.get(key))
        full["task"] = {
            key: full["task"].get(key)
            for key in AGENT_RESULT_SCHEMA["properties"]["task"]["oneOf"][1]["required"]
        }
    AGENT_RESULT.validate(full)
    return full


@dataclass
class McpProcess:
    """A ``herdr-orchestrator mcp`` process and an initialised ``ClientSession`` on it."""

    portal: anyio.from_thread.BlockingPortal
    session: ClientSession
    stack: ExitStack
    errlog: Path
    instructions: str | None = None
    calls: list[str] = field(default_factory=list)

    def call(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """One ``tools/call``, bounded."""
        self.calls.append(name)

        async def bounded() -> CallToolResult:
            with anyio.fail_after(CALL_TIMEOUT):
                result = await self.session.call_tool(name, dict(arguments))
            assert isinstance(result, CallToolResult), result
            return result

        return self.portal.call(bounded)

    def run(self, body: Callable[[ClientSession], Any]) -> Any:
        """Run an async ``body(session)`` in the session's event loop."""

        async def bounded() -> Any:
            with anyio.fail_after(CALL_TIMEOUT):
                return await body(self.session)

        return self.portal.call(bounded)


def start_mcp(env: Mapping[str, str], errlog: Path) -> McpProcess:
    """Spawn the server through the SDK's stdio client and run the handshake."""
    stack = ExitStack()
    try:
        portal = stack.enter_context(anyio.from_thread.start_blocking_portal())
        log = stack.enter_context(errlog.open("w"))
        params = StdioServerParameters(
            command=str(BIN / "herdr-orchestrator"),
            args=["mcp"],
            env=dict(env),
            cwd=str(errlog.parent),  # the controller cwd of managed delegations
        )
        enter: Callable[[Any], Any] = stack.enter_context
        read, write = enter(portal.wrap_async_context_manager(stdio_client(params, errlog=log)))
        manager: AbstractContextManager[ClientSession] = portal.wrap_async_context_manager(
            ClientSession(read, write)
        )
        session = stack.enter_context(manager)
        init = portal.call(session.initialize)
    except BaseException:
        stack.close()
        raise
    return McpProcess(portal, session, stack, errlog, instructions=init.instructions)


@dataclass
class Tier:
    """The module's simulator, server process and the objects the cases act on."""

    sim: HerdrServer
    mcp: McpProcess
    root: Path

    def call(self, name: str, arguments: Mapping[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = self.mcp.call(name, arguments)
        assert result.is_error is not None
        return result.is_error, body_of(result)

    def scenario(self, name: str, scenario: Scenario) -> list[str]:
        return ["--scenario", str(scenario.dump(self.root / f"{name}.json"))]


@pytest.fixture(scope="module")
def tier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tier]:
    root = tmp_path_factory.mktemp("mcp-tier")
    config = SimulatorConfig(  # fast fake agents, as the agent-tool tests use
        agent_manifests_dir=BUILTIN_MANIFESTS_DIR,
        agent_start_settle=0.1,
        agent_prompt_submit_delay=0.05,
        detection_interval=0.1,
        detection_debounce=0.02,
        detection_idle_hold=0.1,
    )
    # managed agents (seed 002): a definition, and the scenario every fake pi child plays
    (root / "pi" / "agents").mkdir(parents=True)
    (root / "pi" / "agents" / "scout.md").write_text(
        "---\nname: scout\ndescription: Scouts for the tier\n---\nScout.\n"
    )
    Scenario().dump(root / MANAGED_SCENARIO)
    config.coerce_paths()
    server = backends.start_sim(
        config, pane_env={"HERDR_SIM_FAKE_SCENARIO": str(root / MANAGED_SCENARIO)}
    )
    env = {
        **{k: v for k, v in server.env.items() if k != "HERDR_PANE_ID"},
        "HERDR_BIN_PATH": str(server.cli_path),
        "HERDR_ORCHESTRATOR_STATE_DIR": str(root / "state"),
        # the fake agents' scenarios travel in agent_args, off by default over MCP (issue 18)
        "HERDR_ORCHESTRATOR_ALLOW_AGENT_ARGS": "1",
        "PI_CODING_AGENT_DIR": str(root / "pi"),
    }
    try:
        process = start_mcp(env, root / "server.stderr")
    except BaseException:
        server.stop()
        raise
    try:
        yield Tier(server, process, root)
    finally:
        process.stack.close()
        server.stop()


# -- the cases ----------------------------------------------------------------------------------

#: Every R2 tool (seed 001 and 000): what DSH_HERDR_PREVIEW_REQUIRED refuses without a preview.
R2_TOOLS = (
    "_dsh_herdr_pane_run",
    "_dsh_herdr_agent_start",
    "_dsh_herdr_agent_prompt",
    "herdr_spawn_agent",
    "herdr_message_agent",
    "agent_delegate",
    "agent_continue",
    "agent_steer",
    "agent_interrupt",
    "agent_reply",
)
MANAGED = (
    "agent_list",
    "agent_delegate",
    "agent_continue",
    "agent_steer",
    "agent_interrupt",
    "agent_reply",
    "agent_close",
    "agent_inspect",
    "agent_transcript",
)
#: Which test exercises which tools, and how (checked by ``test_99_every_tool_is_covered``).
#: Static, so the check holds whichever xdist worker runs which test.
_PANE_READS = ("pane_get", "pane_layout", "pane_process_info", "pane_edges", "pane_read")
COVERAGE: dict[str, dict[str, tuple[str, ...]]] = {
    "test_02_low_level_workspaces_tabs_and_panes": {
        "_dsh_herdr_workspace_create": ("success",),
        "_dsh_herdr_workspace_list": ("success",),
        "_dsh_herdr_tab_list": ("success",),
        **{
            f"_dsh_herdr_{name}": ("success", "failure")
            for name in ("workspace_get", "tab_get", "tab_create", "pane_list", "pane_split")
        },
        **{f"_dsh_herdr_{name}": ("success", "failure") for name in _PANE_READS},
    },
    "test_03_pane_read_sends_its_text_once": {
        f"_dsh_herdr_{name}": ("success", "failure")
        for name in ("pane_run", "pane_wait_output", "pane_send_text")
    },
    "test_04_low_level_agents": {
        "_dsh_herdr_agent_list": ("success",),
        "_dsh_herdr_doctor": ("success",),
        **{
            f"_dsh_herdr_{name}": ("success", "failure")
            for name in (
                "agent_start",
                "agent_get",
                "agent_wait",
                "agent_prompt",
                "agent_read",
                "agent_explain",
            )
        },
    },
    "test_05_low_level_refusals_are_low_level_errors": {
        name: ("refusal",) for name in ALL_TOOLS if name.startswith("_dsh_herdr_")
    },
    "test_06_agent_tool_refusals_are_agent_results": {
        name: ("refusal",) for name in ALL_TOOLS if name.startswith("herdr_")
    },
    "test_07_spawn_completed_is_not_an_error": {"herdr_spawn_agent": ("success",)},
    "test_08_spawn_blocked_and_running_are_results_failed_is_an_error": {
        "herdr_spawn_agent": ("success", "failure")
    },
    "test_09_get_result_message_inbox_read": {
        **dict.fromkeys(
            ("herdr_get_agent_result", "herdr_message_agent", "herdr_inbox", "herdr_read_agent"),
            ("success", "failure"),
        ),
        "herdr_list_agents": ("success",),
        "herdr_doctor": ("success",),
    },
    "test_10_interrupt_and_close": {
        "herdr_interrupt_agent": ("success", "failure"),
        "herdr_close_agent": ("success", "failure"),
    },
    "test_13_previews_name_taken_and_a_blocked_header": {
        **dict.fromkeys(
            ("_dsh_herdr_agent_start", "_dsh_herdr_agent_prompt", "_dsh_herdr_pane_run"),
            ("success",),
        ),
        "herdr_spawn_agent": ("success", "failure"),
        "herdr_message_agent": ("success",),
    },
    "test_14_the_preview_gate_over_stdio": {
        **dict.fromkeys(R2_TOOLS, ("refusal",)),
    },
    "test_15_managed_tool_refusals_are_structured_errors": dict.fromkeys(MANAGED, ("refusal",)),
    "test_16_managed_agents_over_stdio": {
        **dict.fromkeys(MANAGED, ("success",)),
        "agent_close": ("success", "failure"),
        "agent_steer": ("success", "failure"),
    },
}


@dataclass
class World:
    """What the module's cases act on: panes, and four spawns with their MCP outcome."""

    workspace: str
    pane: str
    split: str
    spawned: dict[str, tuple[bool, dict[str, Any]]]

    def task(self, label: str) -> str:
        task_id = self.spawned[label][1]["taskId"]
        assert isinstance(task_id, str), self.spawned[label]
        return task_id


SPAWNS: dict[str, tuple[str, Scenario, dict[str, Any]]] = {
    "done": ("tier-done", Scenario().reply("COMPLETE done: the tier works"), {}),
    "blocked": ("tier-asks", Scenario().ask("Which database?").reply("using postgres"), {}),
    "running": ("tier-hangs", Scenario().hang(), {"wait": False}),
    "failed": ("tier-fails", Scenario().reply("trying").fail("model overloaded"), {}),
}


@pytest.fixture(scope="module")
def world(tier: Tier) -> World:
    """A workspace with a split, and the four spawns (each through MCP), made once per module."""
    created = ok_call(tier, "_dsh_herdr_workspace_create", {"cwd": str(tier.root)})
    workspace = results.field(created, "data", "workspace", "workspace_id")
    pane = results.field(created, "data", "root_pane", "pane_id")
    split = ok_call(tier, "_dsh_herdr_pane_split", {"pane": pane, "direction": "right"})
    spawned = {
        label: tier.call(
            "herdr_spawn_agent",
            {
                "prompt": f"tier task {label}",
                "cwd": str(tier.root),
                "name": name,
                "agent_args": tier.scenario(label, scenario),
                **extra,
            },
        )
        for label, (name, scenario, extra) in SPAWNS.items()
    }
    return World(workspace, pane, results.field(split, "data", "pane", "pane_id"), spawned)


def ok_call(tier: Tier, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A low-level call that must succeed: ``ok: true`` and ``isError`` false."""
    is_error, body = tier.call(name, arguments)
    assert body["ok"] is True, body
    assert is_error is False, body
    return body


def failed_call(tier: Tier, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A low-level call that must fail at Herdr: ``ok: false`` and ``isError`` true."""
    is_error, body = tier.call(name, arguments)
    assert body["ok"] is False, body
    assert is_error is True, body
    assert body.get("errorCode") not in (None, "invalid_arguments"), body
    return body


def test_01_the_handshake_lists_every_tool_and_instructs_a_model(tier: Tier) -> None:
    listed = tier.mcp.run(lambda s: s.list_tools())
    assert [tool.name for tool in listed.tools] == list(ALL_TOOLS)
    assert all("Herdr herdr" not in (tool.title or "") for tool in listed.tools)
    assert tier.mcp.instructions is not None
    for word in ("herdr_spawn_agent", "nextAction", "herdr_doctor", "_dsh_herdr_doctor"):
        assert word in tier.mcp.instructions


def test_02_low_level_workspaces_tabs_and_panes(tier: Tier, world: World) -> None:
    cwd = str(tier.root)
    created = ok_call(tier, "_dsh_herdr_workspace_create", {"cwd": cwd, "label": "tier"})
    workspace = results.field(created, "data", "workspace", "workspace_id")
    root_pane = results.field(created, "data", "root_pane", "pane_id")
    ok_call(tier, "_dsh_herdr_workspace_list", {})
    ok_call(tier, "_dsh_herdr_workspace_get", {"workspace": workspace})
    failed_call(tier, "_dsh_herdr_workspace_get", {"workspace": "w999"})
    tabs = ok_call(tier, "_dsh_herdr_tab_list", {"workspace": workspace})
    tab = results.field(tabs, "data", "tabs")[0]["tab_id"]
    ok_call(tier, "_dsh_herdr_tab_get", {"tab": tab})
    failed_call(tier, "_dsh_herdr_tab_get", {"tab": "w999:t9"})
    ok_call(tier, "_dsh_herdr_tab_create", {"workspace": workspace, "cwd": cwd})
    failed_call(tier, "_dsh_herdr_tab_create", {"workspace": "w999", "cwd": cwd})
    ok_call(tier, "_dsh_herdr_pane_list", {"workspace": workspace})
    failed_call(tier, "_dsh_herdr_pane_list", {"workspace": "w999"})
    for name in ("pane_get", "pane_layout", "pane_process_info", "pane_edges", "pane_read"):
        ok_call(tier, f"_dsh_herdr_{name}", {"pane": root_pane})
        failed_call(tier, f"_dsh_herdr_{name}", {"pane": "w999:p9"})
    ok_call(tier, "_dsh_herdr_pane_split", {"pane": root_pane, "direction": "down"})
    failed_call(tier, "_dsh_herdr_pane_split", {"pane": "w999:p9", "direction": "down"})


def test_03_pane_read_sends_its_text_once(tier: Tier, world: World) -> None:
    pane = world.split
    ok_call(tier, "_dsh_herdr_pane_run", {"pane": pane, "command": "echo tier-$((40+2))"})
    waited = ok_call(
        tier,
        "_dsh_herdr_pane_wait_output",
        {"pane": pane, "pattern": "tier-42", "timeout": 10_000},
    )
    assert waited["ok"] is True
    read = ok_call(tier, "_dsh_herdr_pane_read", {"pane": pane, "source": "recent"})
    wire = json.dumps(read)
    assert wire.count("tier-42") == 1, read  # the text once (stdout), not again in data.read
    assert "tier-42" in read["stdout"]
    failed_call(tier, "_dsh_herdr_pane_run", {"pane": "w999:p9", "command": "true"})
    failed_call(
        tier, "_dsh_herdr_pane_wait_output", {"pane": pane, "pattern": "never-42", "timeout": 300}
    )
    ok_call(tier, "_dsh_herdr_pane_send_text", {"pane": pane, "text": "typed"})
    failed_call(tier, "_dsh_herdr_pane_send_text", {"pane": "w999:p9", "text": "x"})
    preview = ok_call(
        tier, "_dsh_herdr_pane_run", {"pane": pane, "command": "true", "preview": True}
    )
    assert results.field(preview, "data", "preview") is True


def test_04_low_level_agents(tier: Tier, world: World) -> None:
    started = ok_call(
        tier,
        "_dsh_herdr_agent_start",
        {"pane": world.pane, "kind": "pi", "name": "raw-agent", "timeout": 30_000},
    )
    assert started["ok"] is True
    agent = "raw-agent"
    ok_call(tier, "_dsh_herdr_agent_list", {})
    ok_call(tier, "_dsh_herdr_agent_get", {"agent": agent})
    failed_call(tier, "_dsh_herdr_agent_get", {"agent": "nobody"})
    ok_call(
        tier,
        "_dsh_herdr_agent_wait",
        {"agent": agent, "until": ["idle", "done"], "timeout": 20_000},
    )
    failed_call(tier, "_dsh_herdr_agent_wait", {"agent": "nobody", "timeout": 500})
    ok_call(tier, "_dsh_herdr_agent_prompt", {"agent": agent, "prompt": "say hi"})
    failed_call(tier, "_dsh_herdr_agent_prompt", {"agent": "nobody", "prompt": "x"})
    ok_call(tier, "_dsh_herdr_agent_read", {"agent": agent})
    failed_call(tier, "_dsh_herdr_agent_read", {"agent": "nobody"})
    ok_call(tier, "_dsh_herdr_agent_explain", {"agent": agent})
    failed_call(tier, "_dsh_herdr_agent_explain", {"agent": "nobody"})
    failed_call(
        tier,
        "_dsh_herdr_agent_start",
        {"pane": "w999:p9", "kind": "pi", "name": "x", "timeout": 10_000},
    )
    doctor = ok_call(tier, "_dsh_herdr_doctor", {})
    assert doctor["ok"] is True


@pytest.mark.parametrize("name", [n for n in ALL_TOOLS if n.startswith("_dsh_herdr_")])
def test_05_low_level_refusals_are_low_level_errors(tier: Tier, name: str) -> None:
    is_error, body = tier.call(name, {"unexpected": 1})
    assert is_error is True
    results.assert_refused(body, "invalid_arguments")


@pytest.mark.parametrize("name", [n for n in ALL_TOOLS if n.startswith("herdr_")])
def test_06_agent_tool_refusals_are_agent_results(tier: Tier, name: str) -> None:
    is_error, body = tier.call(name, {"unexpected": 1})
    assert is_error is True
    full = agent_result(body)
    assert results.field(full, "status") == "failed" and full["nextAction"] == "retry"
    assert full["error"]["code"] == "INVALID_ARGUMENTS"
    assert full["error"]["field"] == "unexpected"
    assert full["tool"] == name
    assert "ok" not in body


def test_07_spawn_completed_is_not_an_error(world: World) -> None:
    is_error, body = world.spawned["done"]
    full = agent_result(body)
    assert results.field(full, "status") == "completed", full
    assert is_error is False
    # the wire form repeats nothing under task that the top level says
    assert not {"taskId", "name", "kind", "paneId", "machine"} & set(body["task"])


def test_08_spawn_blocked_and_running_are_results_failed_is_an_error(world: World) -> None:
    is_error, body = world.spawned["blocked"]
    assert agent_result(body)["status"] == "blocked", body
    assert is_error is False
    is_error, body = world.spawned["running"]
    assert agent_result(body)["status"] == "running", body
    assert is_error is False
    is_error, body = world.spawned["failed"]
    full = agent_result(body)
    assert results.field(full, "status") == "failed" and full["error"]["code"] == "AGENT_ERROR", (
        full
    )
    assert is_error is True


def test_09_get_result_message_inbox_read(tier: Tier, world: World) -> None:
    is_error, body = tier.call("herdr_get_agent_result", {"target": world.task("done")})
    assert agent_result(body)["status"] == "completed" and is_error is False, body
    is_error, body = tier.call("herdr_get_agent_result", {"target": world.task("failed")})
    assert agent_result(body)["status"] == "failed" and is_error is True, body
    is_error, body = tier.call("herdr_get_agent_result", {"target": "no-such-task"})
    assert agent_result(body)["error"]["code"] == "TASK_NOT_FOUND" and is_error is True

    is_error, body = tier.call(
        "herdr_message_agent",
        {"target": "tier-done", "kind": "NOTE", "message": "one more thing", "wait": True},
    )
    assert agent_result(body)["status"] in ("completed", "running"), body
    assert is_error is False
    is_error, body = tier.call("herdr_message_agent", {"target": "nobody", "message": "hi"})
    assert agent_result(body)["error"]["code"] == "TASK_NOT_FOUND" and is_error is True

    is_error, body = tier.call("herdr_list_agents", {})
    assert is_error is False
    assert "tier-done" in {row["name"] for row in body["agents"]}

    is_error, body = tier.call("herdr_inbox", {})
    assert is_error is False and "messages" in body, body
    is_error, body = tier.call("herdr_inbox", {"target": "no-such-task"})
    assert agent_result(body)["error"]["code"] == "TASK_NOT_FOUND" and is_error is True

    is_error, body = tier.call("herdr_read_agent", {"target": world.task("done")})
    assert is_error is False and "messages" in body, body
    is_error, body = tier.call("herdr_read_agent", {"target": "no-such-task"})
    assert agent_result(body)["status"] == "failed" and is_error is True

    is_error, body = tier.call("herdr_doctor", {})
    assert is_error is False and body["checks"], body


def test_10_interrupt_and_close(tier: Tier, world: World) -> None:
    is_error, body = tier.call("herdr_interrupt_agent", {"target": world.task("running")})
    full = agent_result(body)
    assert full["error"] is None or full["error"]["code"] == "INTERRUPTED", full
    assert is_error is False
    is_error, body = tier.call("herdr_interrupt_agent", {"target": "nobody"})
    assert agent_result(body)["error"]["code"] == "TASK_NOT_FOUND" and is_error is True

    is_error, body = tier.call("herdr_close_agent", {"target": world.task("done")})
    assert agent_result(body)["status"] == "gone" and is_error is False, body
    is_error, body = tier.call("herdr_close_agent", {"target": "nobody"})
    assert agent_result(body)["error"]["code"] == "TASK_NOT_FOUND" and is_error is True


def test_11_call_exit_status_follows_the_same_rule(tier: Tier, world: World) -> None:
    env = {
        **{k: v for k, v in tier.sim.env.items() if k != "HERDR_PANE_ID"},
        "HERDR_BIN_PATH": str(tier.sim.cli_path),
        "HERDR_ORCHESTRATOR_STATE_DIR": str(tier.root / "state"),
    }

    def call(name: str, arguments: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        done = subprocess.run(
            [str(BIN / "herdr-orchestrator"), "call", name, json.dumps(arguments)],
            env=env,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT,
            check=False,
        )
        return done.returncode, json.loads(done.stdout)

    done = tier.scenario("cli-done", Scenario().reply("COMPLETE done over the CLI"))
    status, body = call(
        "herdr_spawn_agent",
        {"prompt": "say done", "cwd": str(tier.root), "name": "tier-cli", "agent_args": done},
    )
    assert (status, results.field(body, "status")) == (0, "completed"), body
    status, body = call("herdr_get_agent_result", {"target": world.task("blocked")})
    assert (status, results.field(body, "status")) == (0, "blocked"), body
    status, body = call("herdr_list_agents", {})
    assert status == 0 and body["agents"], body
    status, body = call("herdr_get_agent_result", {"target": world.task("failed")})
    assert (status, results.field(body, "status")) == (1, "failed"), body
    status, body = call("herdr_spawn_agent", {})
    assert (status, body["error"]["code"]) == (1, "INVALID_ARGUMENTS"), body


def test_12_a_hundred_long_waits_do_not_starve_other_calls(tier: Tier, world: World) -> None:
    """100 ``herdr_inbox wait:true`` calls pending; ``tools/list`` and a quick call answer."""
    target = world.task("running")
    _, body = tier.call("herdr_get_agent_result", {"target": target, "wait": False})
    inbox = Path(agent_result(body)["artifacts"]["inbox"])
    waits = 100

    async def body_(session: ClientSession) -> tuple[float, list[CallToolResult]]:
        results: list[CallToolResult] = []

        async def one() -> None:
            answer = await session.call_tool(
                "herdr_inbox",
                {"target": target, "wait": True, "timeout_ms": 45_000, "consume": False},
            )
            assert isinstance(answer, CallToolResult)
            results.append(answer)

        async with anyio.create_task_group() as group:
            for _ in range(waits):
                group.start_soon(one)
            await anyio.lowlevel.checkpoint()  # let the requests go out
            began = time.monotonic()
            # Generous bound: with the old shared pool this waited for the waits' timeout.
            with anyio.fail_after(20):
                listed = await session.list_tools()
                quick = await session.call_tool("_dsh_herdr_workspace_list", {})
            took = time.monotonic() - began
            assert len(listed.tools) == len(ALL_TOOLS)
            assert isinstance(quick, CallToolResult) and quick.is_error is False
            assert not results, "a wait returned before any message was posted"
            line = json.dumps({"ts": "2026-12-01T00:00:00Z", "type": "NOTE", "text": "wake"})
            async with await anyio.open_file(inbox, "a") as handle:
                await handle.write(line + "\n")
        return took, results

    async def bounded() -> tuple[float, list[CallToolResult]]:
        with anyio.fail_after(CALL_TIMEOUT):
            return await body_(tier.mcp.session)

    took, results = tier.mcp.portal.call(bounded)
    assert took < 20 * SCALE
    assert len(results) == waits
    for result in results:
        answer = body_of(result)
        assert result.is_error is False, answer
        assert [m["text"] for m in answer["messages"]] == ["wake"], answer


def test_13_previews_name_taken_and_a_blocked_header(tier: Tier, world: World) -> None:
    # previews of the R2 tools: nothing runs, a result to read (isError false)
    for name, arguments in (
        ("_dsh_herdr_agent_start", {"pane": world.split, "kind": "pi", "name": "never"}),
        ("_dsh_herdr_agent_prompt", {"agent": "tier-asks", "prompt": "secret words"}),
        ("_dsh_herdr_pane_run", {"pane": world.split, "command": "touch never"}),
    ):
        body = ok_call(tier, name, {**arguments, "preview": True})
        assert results.field(body, "data", "preview") is True and "secret words" not in json.dumps(
            body
        )
    for name, arguments in (
        ("herdr_spawn_agent", {"prompt": "secret words", "cwd": str(tier.root)}),
        ("herdr_message_agent", {"target": "tier-asks", "message": "secret words"}),
    ):
        is_error, body = tier.call(name, {**arguments, "preview": True})
        full = agent_result(body)
        assert (results.field(full, "status"), full["nextAction"]) == ("idle", "ask_user"), full
        assert full["preview"] is not None and "secret words" not in json.dumps(body)
        assert is_error is False
    assert not (tier.root / "never").exists()
    # a name a live agent has: NAME_TAKEN (a failure), nothing left behind
    panes = len(ok_call(tier, "_dsh_herdr_pane_list", {})["data"]["panes"])
    is_error, body = tier.call(
        "herdr_spawn_agent", {"prompt": "x", "cwd": str(tier.root), "name": "tier-asks"}
    )
    full = agent_result(body)
    assert (results.field(full, "status"), full["error"]["code"]) == ("failed", "NAME_TAKEN"), full
    assert full["error"]["field"] == "name" and is_error is True
    assert len(ok_call(tier, "_dsh_herdr_pane_list", {})["data"]["panes"]) == panes
    # a turn ending with the BLOCKED header: blocked with the question, not an error
    asks = tier.scenario("tier-header", Scenario().reply("BLOCKED\nShould I drop the table?"))
    is_error, body = tier.call(
        "herdr_spawn_agent",
        {"prompt": "migrate", "cwd": str(tier.root), "name": "tier-header", "agent_args": asks},
    )
    full = agent_result(body)
    assert (results.field(full, "status"), full["question"]) == (
        "blocked",
        "Should I drop the table?",
    ), full
    assert full["nextAction"] == "ask_user" and is_error is False


def test_14_the_preview_gate_over_stdio(tier: Tier, world: World) -> None:
    """A server whose environment turns the gate on (spelt ``on``): every R2 tool without a
    preview is refused in its family's shape, isError true, and nothing runs."""
    env = {
        **{k: v for k, v in tier.sim.env.items() if k != "HERDR_PANE_ID"},
        "HERDR_BIN_PATH": str(tier.sim.cli_path),
        "HERDR_ORCHESTRATOR_STATE_DIR": str(tier.root / "gated-state"),
        "HERDR_ORCHESTRATOR_ALLOW_AGENT_ARGS": "1",
        "DSH_HERDR_PREVIEW_REQUIRED": "on",
    }
    gated = start_mcp(env, tier.root / "gated.stderr")
    try:
        for name, arguments in (
            ("_dsh_herdr_pane_run", {"pane": world.split, "command": "touch gated"}),
            ("_dsh_herdr_agent_start", {"pane": world.split, "kind": "pi", "name": "gated"}),
            ("_dsh_herdr_agent_prompt", {"agent": "tier-asks", "prompt": "x"}),
            ("herdr_spawn_agent", {"prompt": "x", "cwd": str(tier.root), "name": "gated"}),
            ("herdr_message_agent", {"target": "tier-asks", "message": "x"}),
            ("agent_delegate", {"definition": "scout", "task": "x", "label": "gated"}),
            ("agent_continue", {"session": "00000000-0000-4000-8000-000000000000", "task": "x"}),
            ("agent_steer", {"agent": "gated", "message": "x"}),
            ("agent_interrupt", {"agent": "gated", "message": "x"}),
            ("agent_reply", {"agent": "gated", "message": "x"}),
        ):
            result = gated.call(name, arguments)
            body = body_of(result)
            assert result.is_error is True, body
            if name.startswith("_dsh_herdr_"):
                assert results.field(body, "errorCode") == "preview_required", body
            elif name.startswith("agent_"):
                assert body["error"]["category"] == "invalid_request", body
                assert "DSH_HERDR_PREVIEW_REQUIRED" in body["error"]["message"], body
            else:
                assert agent_result(body)["error"]["code"] == "PREVIEW_REQUIRED", body
    finally:
        gated.stack.close()
    assert not (tier.root / "gated").exists()
    names = {row["name"] for row in tier.call("herdr_list_agents", {})[1]["agents"]}
    assert "gated" not in names


@pytest.mark.parametrize("name", MANAGED)
def test_15_managed_tool_refusals_are_structured_errors(tier: Tier, name: str) -> None:
    is_error, body = tier.call(name, {"unexpected": 1})
    assert is_error is True
    assert body["ok"] is False, body
    assert body["error"]["category"] == "invalid_request"
    # the first problem: a missing required field, else the unexpected one
    required = ALL_TOOLS[name].input_schema["required"]
    assert body["error"]["details"]["field"] == (required[0] if required else "unexpected")
    assert body["error"]["rollbackOccurred"] is False


def _managed(tier: Tier, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    is_error, body = tier.call(name, arguments)
    assert body["ok"] is True, body
    assert is_error is False, body
    return body


def _pulled(tier: Tier, kind: str, agent: str) -> dict[str, Any]:
    """Wait (bounded) until ``agent_list`` delivers ``kind`` for ``agent`` (the pull path)."""

    def delivered() -> dict[str, Any] | None:
        for delivery in _managed(tier, "agent_list", {})["deliveries"]:
            if delivery["kind"] == kind and delivery["agent"] == agent:
                return delivery  # type: ignore[no-any-return]
        return None

    return wait_until(delivered, 15, interval=0.05, what=f"the {kind} of {agent} delivered")


def _wait_tool(tier: Tier, agent: str, tool: str) -> None:
    """Wait (bounded) until ``agent_list`` lists ``tool`` among ``agent``'s tools."""

    def listed() -> bool:
        records = _managed(tier, "agent_list", {})["agents"]
        record = next(r for r in records if r.get("agent") == agent)
        return tool in record["available_tools"]

    wait_until(listed, 10, interval=0.05, what=f"{tool} listed for {agent}")


def test_16_managed_agents_over_stdio(tier: Tier) -> None:
    """The nine managed tools through a real ``herdr-orchestrator mcp`` process and the SDK's
    client: delegate → ask_owner → reply → steer → interrupt → result delivered once;
    continue from the session; inspect, transcript, close."""
    (tier.root / MANAGED_SCENARIO).write_text(
        json.dumps(
            {
                "turns": [
                    {"steps": [{"ask_owner": "Which branch?"}]},
                    {"steps": [*([{"wait": 150}] * 10), {"hang": True}]},
                    {"steps": [{"reply": "tier managed done"}]},
                ]
            }
        )
    )
    listed = _managed(tier, "agent_list", {})
    assert "scout" in [d["name"] for d in listed["agent_definitions"]]
    started = _managed(
        tier, "agent_delegate", {"definition": "scout", "task": "tier job", "label": "tier-m"}
    )
    ask = _pulled(tier, "ask", "tier-m")
    assert "Which branch?" in ask["text"]
    _, refused = tier.call("agent_steer", {"agent": "tier-m", "message": "not now"})
    assert refused["ok"] is False and refused["error"]["category"] == "agent_busy"
    _managed(tier, "agent_reply", {"agent": "tier-m", "message": "main"})
    _wait_tool(tier, "tier-m", "agent_steer")
    _managed(tier, "agent_steer", {"agent": "tier-m", "message": "mind the tests"})
    _managed(tier, "agent_inspect", {"agent": "tier-m"})
    _managed(tier, "agent_interrupt", {"agent": "tier-m", "message": "wrap up"})
    result = _pulled(tier, "result", "tier-m")
    assert "tier managed done" in result["text"] and "result:tier-m#1" in result["text"]
    # continue the saved session: a new generation with the inherited label
    (tier.root / MANAGED_SCENARIO).write_text(
        json.dumps({"turns": [{"steps": [{"wait": 100}, {"hang": True}]}]})
    )
    again = _managed(tier, "agent_continue", {"session": started["session_path"], "task": "more"})
    assert again["agent"] == "tier-m" and again["run_id"] != started["run_id"]
    _wait_tool(tier, "tier-m", "agent_transcript")
    transcript = _managed(tier, "agent_transcript", {"agent": "tier-m"})
    assert "tier job" in transcript["transcript"]
    closed = _managed(tier, "agent_close", {"agent": "tier-m"})
    assert closed["closed"] == ["tier-m"]
    is_error, gone = tier.call("agent_close", {"agent": "tier-m"})
    assert is_error is True and gone["error"]["category"] == "target_not_found"


def test_99_every_tool_is_covered() -> None:
    """A success and a refusal for all 42 tools (failures where a tool has one)."""
    covered = {
        (tool, kind)
        for test, tools in COVERAGE.items()
        for tool, kinds in tools.items()
        for kind in kinds
    }
    assert all(callable(globals().get(test)) for test in COVERAGE)
    for name in ALL_TOOLS:
        assert (name, "success") in covered, name
        assert (name, "refusal") in covered, name
    assert len(ALL_TOOLS) == 42
    r2 = {name for name, tool in ALL_TOOLS.items() if tool.risk == "R2"}
    assert r2 == set(R2_TOOLS)  # the preview gate case drives every R2 tool
