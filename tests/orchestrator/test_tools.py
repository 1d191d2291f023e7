"""Every one of the 24 tools end to end, over the socket AND through the real ``herdr`` CLI.

Each test runs one tool against the simulator, checks the result contract (``ok``,
``command``, ``exitCode``, ``data``/``stdout``) and proves the argv mapping by what the
simulator RECEIVED (method and params on its wire), not by comparing strings alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import TOOLS, run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import FAST_AGENTS, Kind, Received, client, context, received
from tests.results import assert_refused, field

pytestmark = FAST_AGENTS

SEED_TOOLS = {
    "workspace_list": "R0",
    "workspace_get": "R0",
    "workspace_create": "R1",
    "tab_list": "R0",
    "tab_get": "R0",
    "tab_create": "R1",
    "pane_list": "R0",
    "pane_get": "R0",
    "pane_layout": "R0",
    "pane_process_info": "R0",
    "pane_edges": "R0",
    "pane_read": "R0",
    "pane_split": "R1",
    "pane_run": "R2",
    "pane_wait_output": "R0",
    "pane_send_text": "R1",
    "agent_list": "R0",
    "agent_get": "R0",
    "agent_read": "R0",
    "agent_start": "R2",
    "agent_wait": "R0",
    "agent_prompt": "R2",
    "agent_explain": "R0",
    "doctor": "R0",
}


@dataclass
class Env:
    """One test's world: a server, a tool context of one transport, a workspace."""

    server: HerdrServer
    kind: Kind
    ctx: ToolContext
    rec: Received
    cwd: Path
    workspace: str
    tab: str
    pane: str

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """A direct request to the simulator (setup; not on the recorded wire)."""
        assert self.server.sim is not None
        response = self.server.sim.call(method, params)
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    def tool(self, tool: str, /, **args: Any) -> dict[str, Any]:
        """Run ``_dsh_herdr_<tool>`` and check the result contract."""
        self.rec.clear()
        result = run_tool(f"_dsh_herdr_{tool}", args, self.ctx)
        check_contract(result)
        return result

    def only(self, method: str) -> dict[str, Any]:
        """The params of the one ``method`` request the tool sent."""
        calls = self.rec.calls(method)
        assert len(calls) == 1, (method, self.rec.requests)
        return calls[0]

    def shell_output(self, text: str) -> None:
        """Wait (server side) until the pane shows ``text``."""
        self.call(
            "pane.wait_for_output",
            pane_id=self.pane,
            source="recent",
            match={"type": "substring", "value": text},
            timeout_ms=5000,
        )


def check_contract(result: Mapping[str, Any]) -> None:
    """The seed's rules: ok / command / exitCode always; errorCode and data.error on failure."""
    assert isinstance(result["ok"], bool)
    assert isinstance(result["command"], str) and result["command"].startswith("herdr ")
    assert result["exitCode"] is None or isinstance(result["exitCode"], int)
    if result["ok"]:
        assert result["exitCode"] == 0 and "errorCode" not in result
    else:
        assert result["exitCode"] != 0
        assert field(result, "errorCode") == field(result, "data", "error", "code")


def subset(expected: Mapping[str, Any], got: Mapping[str, Any]) -> bool:
    return all(got.get(key) == value for key, value in expected.items())


@pytest.fixture(params=["socket", "cli"])
def env(request: pytest.FixtureRequest, herdr_server: HerdrServer, tmp_path: Path) -> Env:
    kind: Kind = request.param
    assert herdr_server.sim is not None
    created = herdr_server.sim.call("workspace.create", {"cwd": str(tmp_path)})["result"]
    rec = received(herdr_server)
    return Env(
        herdr_server,
        kind,
        context(herdr_server, kind),
        rec,
        tmp_path,
        created["workspace"]["workspace_id"],
        created["tab"]["tab_id"],
        created["root_pane"]["pane_id"],
    )


@pytest.fixture
def agent(env: Env, tmp_path: Path) -> str:
    """A fake pi named ``worker`` in the env's pane, ready for prompts."""
    scenario = tmp_path / "turns.json"
    scenario.write_text('{"turns": [{"steps": [{"wait": 200}, {"reply": "done-by-pi"}]}]}')
    client(env.server, "socket").agent_start(
        "worker", "pi", env.pane, args=["--scenario", str(scenario)], timeout_ms=20_000
    )
    return "worker"


# -- the registry ------------------------------------------------------------------------------


def test_the_registry_has_the_seeds_24_tools_in_order_with_their_risks() -> None:
    assert [(t.name, t.risk) for t in TOOLS.values()] == [
        (f"_dsh_herdr_{name}", risk) for name, risk in SEED_TOOLS.items()
    ]


def test_every_schema_rejects_unknown_fields_and_names_its_required_ones() -> None:
    for tool in TOOLS.values():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        result = run_tool(tool.name, {"bogus": 1})
        assert_refused(result, "invalid_arguments", tool.name)


# -- workspaces --------------------------------------------------------------------------------


def test_workspace_list(env: Env) -> None:
    result = env.tool("workspace_list")
    assert [w["workspace_id"] for w in field(result, "data", "workspaces")] == [env.workspace]
    assert env.only("workspace.list") == {}
    assert result["transport"] == env.kind


def test_workspace_get(env: Env) -> None:
    result = env.tool("workspace_get", workspace=env.workspace)
    assert field(result, "data", "workspace", "workspace_id") == env.workspace
    assert env.only("workspace.get") == {"workspace_id": env.workspace}


def test_workspace_create_never_takes_focus(env: Env) -> None:
    result = env.tool("workspace_create", cwd=str(env.cwd), label="task", env={"TOKEN": "s3"})
    sent = env.only("workspace.create")
    assert subset({"cwd": str(env.cwd), "label": "task", "env": {"TOKEN": "s3"}}, sent)
    assert sent["focus"] is False
    assert "--no-focus" in result["command"] and "s3" not in result["command"]
    created = field(result, "data")
    assert created["workspace"]["focused"] is False
    assert created["root_pane"]["pane_id"].startswith(created["workspace"]["workspace_id"])
    assert env.call("workspace.get", workspace_id=env.workspace)["workspace"]["focused"]


# -- tabs --------------------------------------------------------------------------------------


def test_tab_list(env: Env) -> None:
    result = env.tool("tab_list", workspace=env.workspace)
    assert [t["tab_id"] for t in field(result, "data", "tabs")] == [env.tab]
    assert env.only("tab.list") == {"workspace_id": env.workspace}


def test_tab_get(env: Env) -> None:
    result = env.tool("tab_get", tab=env.tab)
    assert field(result, "data", "tab", "tab_id") == env.tab
    assert env.only("tab.get") == {"tab_id": env.tab}


def test_tab_create_never_takes_focus(env: Env) -> None:
    result = env.tool("tab_create", workspace=env.workspace, cwd=str(env.cwd), env={"A": "1"})
    sent = env.only("tab.create")
    assert subset({"workspace_id": env.workspace, "cwd": str(env.cwd), "env": {"A": "1"}}, sent)
    assert sent["focus"] is False
    assert field(result, "data", "tab", "focused") is False
    assert field(result, "data", "root_pane", "tab_id") == field(result, "data", "tab", "tab_id")


# -- panes -------------------------------------------------------------------------------------


def test_pane_list(env: Env) -> None:
    result = env.tool("pane_list", workspace=env.workspace)
    assert [p["pane_id"] for p in field(result, "data", "panes")] == [env.pane]
    assert env.only("pane.list") == {"workspace_id": env.workspace}


@pytest.mark.parametrize(
    ("name", "method", "key"),
    [
        ("pane_get", "pane.get", "pane"),
        ("pane_layout", "pane.layout", "layout"),
        ("pane_process_info", "pane.process_info", "process_info"),
        ("pane_edges", "pane.edges", "edges"),
    ],
)
def test_pane_queries(env: Env, name: str, method: str, key: str) -> None:
    result = env.tool(name, pane=env.pane)
    assert key in field(result, "data")
    assert env.only(method) == {"pane_id": env.pane}


def test_pane_split_never_takes_focus_and_returns_the_new_pane(env: Env) -> None:
    result = env.tool("pane_split", pane=env.pane, direction="down", ratio=0.25)
    sent = env.only("pane.split")
    assert subset({"target_pane_id": env.pane, "direction": "down", "ratio": 0.25}, sent)
    assert sent["focus"] is False
    new = field(result, "data", "pane")
    assert new["pane_id"] != env.pane and new["focused"] is False
    layout = env.call("pane.layout", pane_id=env.pane)["layout"]
    assert layout["focused_pane_id"] == env.pane


@pytest.mark.parametrize(("source", "wire"), [("recent-unwrapped", "recent_unwrapped"),
                                              ("visible", "visible")])  # fmt: skip
def test_pane_read_sources(env: Env, source: str, wire: str) -> None:
    env.call("pane.send_input", pane_id=env.pane, text="echo read-$((40+2))", keys=["Enter"])
    env.shell_output("read-42")
    result = env.tool("pane_read", pane=env.pane, source=source, lines=20)
    assert "read-42" in result["stdout"]
    assert subset({"pane_id": env.pane, "source": wire, "lines": 20}, env.only("pane.read"))


def test_pane_run_types_the_command_and_enter_and_redacts_it(env: Env) -> None:
    result = env.tool("pane_run", pane=env.pane, command="echo ran-$((6*7))")
    assert env.only("pane.send_input") == {
        "pane_id": env.pane,
        "text": "echo ran-$((6*7))",
        "keys": ["Enter"],
    }
    assert "echo" not in result["command"] and "redacted" in result["command"]
    env.shell_output("ran-42")


@pytest.mark.parametrize(("pattern", "regex"), [("wait-7", False), (r"^wait-\d$", True)])
def test_pane_wait_output_text_or_regex(env: Env, pattern: str, regex: bool) -> None:
    env.call("pane.send_input", pane_id=env.pane, text="echo wait-$((3+4))", keys=["Enter"])
    result = env.tool("pane_wait_output", pane=env.pane, pattern=pattern, regex=regex, timeout=5000)
    assert field(result, "data", "matched_line") == "wait-7"
    sent = env.only("pane.wait_for_output")
    kind = "regex" if regex else "substring"
    assert subset({"pane_id": env.pane, "match": {"type": kind, "value": pattern}}, sent)
    assert sent["timeout_ms"] == 5000


def test_pane_wait_output_timeout_is_herdrs_timeout(env: Env) -> None:
    result = env.tool("pane_wait_output", pane=env.pane, pattern="never-there", timeout=200)
    assert_refused(result, "timeout")
    assert field(result, "data", "error", "message") == "timed out waiting for output match"
    assert result["exitCode"] == 1


def test_pane_send_text_types_without_enter(env: Env) -> None:
    result = env.tool("pane_send_text", pane=env.pane, text="echo typed-only")
    assert env.only("pane.send_text") == {"pane_id": env.pane, "text": "echo typed-only"}
    assert "typed-only" not in result["command"]
    assert field(result, "data") == {"type": "ok"}


# -- agents ------------------------------------------------------------------------------------


def test_agent_start_waits_until_interactive(env: Env, tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text('{"turns": []}')
    result = env.tool(
        "agent_start",
        name="starter",
        kind="pi",
        pane=env.pane,
        args=["--scenario", str(scenario)],
        timeout=20_000,
    )
    agent = field(result, "data", "agent")
    assert (agent["name"], agent["agent"], agent["interactive_ready"]) == ("starter", "pi", True)
    sent = env.only("agent.start")
    assert subset({"name": "starter", "kind": "pi", "pane_id": env.pane}, sent)
    assert sent["args"] == ["--scenario", str(scenario)] and sent["timeout_ms"] == 20_000
    assert str(scenario) not in result["command"]


def test_agent_list(env: Env, agent: str) -> None:
    result = env.tool("agent_list")
    assert [a["name"] for a in field(result, "data", "agents")] == [agent]
    assert env.only("agent.list") == {}


def test_agent_get(env: Env, agent: str) -> None:
    result = env.tool("agent_get", agent=agent)
    assert field(result, "data", "agent", "pane_id") == env.pane
    assert env.only("agent.get") == {"target": agent}


def test_agent_read_is_recent_unwrapped(env: Env, agent: str) -> None:
    result = env.tool("agent_read", agent=agent, lines=50)
    assert isinstance(result["stdout"], str) and result["stdout"]
    sent = env.only("agent.read")
    assert subset({"target": agent, "source": "recent_unwrapped", "lines": 50}, sent)


def test_agent_wait(env: Env, agent: str) -> None:
    result = env.tool("agent_wait", agent=agent, until=["idle"], timeout=5000)
    assert field(result, "data", "agent", "agent_status") == "idle"
    assert env.only("agent.wait") == {"target": agent, "until": ["idle"], "timeout_ms": 5000}


def test_agent_prompt_waits_for_the_turn_and_redacts_the_prompt(env: Env, agent: str) -> None:
    result = env.tool("agent_prompt", agent=agent, prompt="secret plan", timeout=20_000)
    assert field(result, "data", "agent", "agent_status") in ("idle", "done")
    sent = env.only("agent.prompt")
    assert subset({"target": agent, "text": "secret plan"}, sent)
    assert sent["wait"] == {"timeout_ms": 20_000}
    assert "secret" not in result["command"]
    text = env.call("pane.read", pane_id=env.pane, source="recent")["read"]["text"]
    assert "done-by-pi" in text


def test_agent_explain(env: Env, agent: str) -> None:
    result = env.tool("agent_explain", agent=agent)
    assert field(result, "data", "explain", "agent") == "pi"
    assert env.only("agent.explain") == {"target": agent}


# -- doctor ------------------------------------------------------------------------------------


def test_doctor_reports_server_workspaces_and_agents(env: Env) -> None:
    result = env.tool("doctor")
    assert field(result, "data", "server", "protocol") == 22
    assert field(result, "data", "server", "compatible") is True
    assert [w["workspace_id"] for w in field(result, "data", "workspaces")] == [env.workspace]
    assert {"workspace.list", "agent.list"} <= set(env.rec.methods())
    assert "ping" in env.rec.methods(pings=True)
    # the contract's four checks: version (server), session, workspaces, agents
    names = [check["name"] for check in result["data"]["checks"]]
    assert names == ["server", "session", "workspaces", "agents"]
    session = result["data"]["session"]
    assert session["socket"] == str(env.server.socket_path), session


def test_the_doctor_names_the_session_as_herdr_resolves_it(tmp_path: Path) -> None:
    from orchestrator.tools.doctor import session_of

    home = {"HOME": str(tmp_path)}
    config = tmp_path / ".config" / "herdr"
    assert session_of(home, None)["name"] == "default"
    named = session_of({**home, "HERDR_SESSION": "work"}, None)
    assert (named["name"], named["socket"]) == ("work", str(config / "sessions/work/herdr.sock"))
    given = session_of({**home, "HERDR_SOCKET_PATH": str(tmp_path / "x.sock")}, None)
    assert (given["name"], given["override"]) == (None, True)
