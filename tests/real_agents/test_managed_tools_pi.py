"""The managed-agent tools' core flows with a REAL pi (1.6, offline against the fake LLM).

The same tools as the simulator tests (``tests/orchestrator/managed``), called through the
registry as MCP calls them, but the child is real pi running the project's extension: the
controller launches it (placement, child env, the extension installed in the children's
``$PI_CODING_AGENT_DIR``, readiness through ``state.json``), and the flows are issue 15's
core ones: delegate → result delivered once, ``ask_owner`` → ``agent_reply`` → result, steer,
interrupt, close. The controller runs outside Herdr, so ``agent_list`` is the pull path.
Marker ``real_agent``; each test takes a few seconds (pi's start-up).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_llm import FakeLLM, Match, Script
from herdr_sim.host.procfs import all_processes
from herdr_sim.real_agents import PiHome, prepare_pi_home
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.client.sync import HerdrClient
from orchestrator.core.config import Config
from orchestrator.managed.mailbox import Box, Mailbox
from pytest_herdr.fixtures import ServerFactory
from pytest_herdr.real_agents import require_pi
from pytest_herdr.waits import wait_until
from tests.orchestrator.managed.managed_world import ToolCaller

pytestmark = pytest.mark.real_agent

#: the bound of one wait on the child (pi's start-up, a turn against the fake LLM)
WAIT_S = 30.0
#: the scout definition's body: the child's instructions (in pi's system prompt)
SCOUT_BODY = "You are the scout: report what you find, briefly."


@dataclass
class Lead(ToolCaller):
    """A lead controller (outside Herdr) over a simulator whose panes run the real pi."""

    ctx: AgentToolsContext
    llm: FakeLLM
    home: PiHome
    cwd: Path
    deliveries: list[dict[str, Any]] = field(default_factory=list)

    def record(self, label: str) -> dict[str, Any] | None:
        for agent in self.ok("agent_list")["agents"]:
            if agent.get("agent") == label:
                return agent  # type: ignore[no-any-return]
        return None

    def wait_tool(self, label: str, tool: str) -> dict[str, Any]:
        def listed() -> dict[str, Any] | None:
            record = self.record(label)
            return record if record is not None and tool in record["available_tools"] else None

        found = wait_until(listed, WAIT_S, interval=0.1, what=f"{tool} for {label}")
        assert found is not None
        return found

    def wait_delivery(self, kind: str, label: str) -> dict[str, Any]:
        def delivered() -> dict[str, Any] | None:
            self.call("agent_list")
            found = [d for d in self.deliveries if (d["kind"], d["agent"]) == (kind, label)]
            return found[0] if found else None

        found = wait_until(delivered, WAIT_S, interval=0.1, what=f"the {kind} of {label}")
        assert found is not None
        return found

    def delivered(self, kind: str, label: str) -> int:
        return sum((d["kind"], d["agent"]) == (kind, label) for d in self.deliveries)


@pytest.fixture
def lead(
    herdr_fake_llm: FakeLLM,
    herdr_server_factory: ServerFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[Script], Lead]:
    installed = require_pi()

    def start(script: Script) -> Lead:
        herdr_fake_llm.set_script(script)
        home = prepare_pi_home(tmp_path / "pi-home", herdr_fake_llm.openai_base_url)
        (home.agent_dir / "agents").mkdir(parents=True, exist_ok=True)
        (home.agent_dir / "agents" / "scout.md").write_text(
            f"---\nname: scout\ndescription: Scouts\nmodel: {home.model}\n---\n{SCOUT_BODY}\n"
        )
        pi_env = home.env(installed)
        server = herdr_server_factory(fake_agents=False, agent_manifests_dir=None, pane_env=pi_env)
        cwd = tmp_path / "project"
        cwd.mkdir()
        monkeypatch.chdir(cwd)
        state = tmp_path / "state"
        env = {k: v for k, v in server.env.items() if k != "HERDR_PANE_ID"}
        env["PI_CODING_AGENT_DIR"] = str(home.agent_dir)
        client = HerdrClient.build(
            "socket", socket_path=server.socket_path, herdr=server.cli_path, env=server.env
        )
        config = Config(state_dir=state, artifact_dir=state / "artifacts")
        ctx = AgentToolsContext.create(env, config=config, client=client)
        return Lead(ctx, herdr_fake_llm, home, cwd)

    return start


def test_delegate_then_one_result_delivered_and_the_agent_cleaned_up(
    lead: Callable[[Script], Lead],
) -> None:
    controller = lead(Script().reply("Found three config files.", when=Match(user_contains="find")))
    started = controller.ok("agent_delegate", definition="scout", task="find the config files")
    assert started["agent"] == "scout" and started["session_path"]
    result = controller.wait_delivery("result", "scout")
    assert "status=completed" in result["text"] and "Found three config files." in result["text"]
    assert controller.record("scout") is None  # cleaned up
    assert controller.ok("agent_list")["deliveries"] == []
    assert controller.delivered("result", "scout") == 1
    installed = controller.home.agent_dir / "extensions" / "herdr-managed-child.ts"
    assert installed.is_file()
    # the definition body reached real pi's system prompt (its instructions)
    (request,) = controller.llm.requests
    system = [m for m in request.body["messages"] if m.get("role") in ("system", "developer")]
    assert SCOUT_BODY in json.dumps(system)


def test_ask_owner_then_agent_reply_then_the_result(lead: Callable[[Script], Lead]) -> None:
    script = (
        Script()
        .call_tool("ask_owner", {"question": "Which branch?"}, when=Match(user_contains="deploy"))
        .reply("Deployed to main.", when=Match(user_contains="main please"))
    )
    controller = lead(script)
    controller.ok("agent_delegate", definition="scout", task="deploy the app", label="deployer")
    ask = controller.wait_delivery("ask", "deployer")
    assert "Which branch?" in ask["text"]
    record = controller.wait_tool("deployer", "agent_reply")
    assert record["state"] == "blocked"
    controller.ok("agent_reply", agent="deployer", message="main please")
    result = controller.wait_delivery("result", "deployer")
    assert "Deployed to main." in result["text"]
    assert controller.delivered("ask", "deployer") == 1
    assert controller.delivered("result", "deployer") == 1


def test_steer_then_interrupt_of_a_running_tool(lead: Callable[[Script], Lead]) -> None:
    script = (
        Script()
        .call_tool(
            "bash",
            {"command": "while [ ! -e never ]; do sleep 0.05; done"},
            when=Match(user_contains="build", tool_result=False),
        )
        .reply("Stopped; summary follows.", when=Match(user_contains="summarize"))
    )
    controller = lead(script)
    controller.ok("agent_delegate", definition="scout", task="build everything", label="builder")
    wait_until(lambda: loops(controller.cwd), WAIT_S, what="the tool's loop to run")
    controller.wait_tool("builder", "agent_interrupt")
    steered = controller.ok("agent_steer", agent="builder", message="also lint")
    assert steered["action"] == "steer"
    record = controller.record("builder")
    assert record is not None
    box = Mailbox(controller.ctx.config.state_dir / "managed", record["workspace_id"], "builder")
    # the child took the steer into pi (where the running tool keeps it queued) before the
    # interrupt, so the interrupt supersedes a steer pi already holds (a steer and an interrupt
    # of the same poll: test_managed_child_pi.py)
    wait_until(lambda: box.pending(Box.TO_CHILD) == [], WAIT_S, what="the steer taken")
    controller.ok("agent_interrupt", agent="builder", message="stop and summarize")
    result = controller.wait_delivery("result", "builder")
    assert "Stopped; summary follows." in result["text"]
    assert "also lint" not in json.dumps([r.body for r in controller.llm.requests])
    wait_until(lambda: not loops(controller.cwd), WAIT_S, what="the aborted loop to end")


def test_close_a_working_agent(lead: Callable[[Script], Lead]) -> None:
    script = Script().call_tool(
        "bash",
        {"command": "while [ ! -e never ]; do sleep 0.05; done"},
        when=Match(user_contains="forever", tool_result=False),
    )
    controller = lead(script)
    started = controller.ok("agent_delegate", definition="scout", task="run forever", label="x")
    wait_until(lambda: loops(controller.cwd), WAIT_S, what="the tool's loop to run")
    closed = controller.ok("agent_close", agent="x")
    assert closed["closed"] == ["x"]
    assert controller.record("x") is None
    panes = {p.pane_id for p in controller.ctx.client.pane_list()}
    assert started["pane_id"] not in panes
    wait_until(lambda: not loops(controller.cwd), WAIT_S, what="the loop to end with its pane")


def loops(cwd: Path) -> list[int]:
    """The pids of the tests' endless ``bash`` loop in the project."""
    return [
        p.pid
        for p in all_processes()
        if p.cwd == str(cwd) and p.argv and "! -e never" in " ".join(p.argv)
    ]


def test_a_delegating_pi_delegates_a_leaf_and_reports_after_its_result(
    lead: Callable[[Script], Lead],
) -> None:
    """Real pi as a delegating child: its extension gives it the agent_* tools (run as
    ``python -m orchestrator call`` in its environment); it delegates a leaf, its turn ends
    waiting (``blocked``; the lead sees the leaf without tools), the leaf's result is typed
    into its pane once, and its next turn's answer is delivered to the lead once. Slow because
    two real pis start (each about 1-2 s) and each delegated call starts a Python process."""
    script = (
        Script()
        .call_tool(
            "agent_delegate",
            {"definition": "scout", "task": "survey the files", "label": "leaf"},
            when=Match(user_contains="coordinate", tool_result=False),
        )
        .reply("Waiting for leaf.", when=Match(user_contains="coordinate", tool_result=True))
        .reply("Leaf: found two files.", when=Match(user_contains="survey the files"))
        .reply("Boss final: the leaf found two files.", when=Match(user_contains="Agent result"))
    )
    controller = lead(script)
    (controller.home.agent_dir / "agents" / "helper.md").write_text(
        f"---\nname: helper\ndescription: Coordinates\nmodel: {controller.home.model}\n"
        "agents: [scout]\n---\nCoordinate.\n"
    )
    boss = controller.ok("agent_delegate", definition="helper", task="coordinate", label="boss")
    result = controller.wait_delivery("result", "boss")
    assert "Boss final: the leaf found two files." in result["text"]
    assert controller.delivered("result", "leaf") == 0  # the leaf's result went to boss
    delegated = [
        r
        for r in controller.llm.requests
        if "Agent result · agent=leaf" in json.dumps(r.body, ensure_ascii=False)
    ]
    assert delegated, "the leaf's result never reached boss's model"
    assert controller.delivered("result", "boss") == 1
    records = {g.label: g for g in _store(controller).scan()[0]}
    assert records["leaf"].owner_session_id == boss["session_id"]
    assert records["leaf"].parent_label == "boss"


def test_closing_a_delegating_pi_closes_its_leaf_first(lead: Callable[[Script], Lead]) -> None:
    """The close cascade with real pis: boss (a delegating pi) delegates a leaf whose tool
    runs forever and ends its turn waiting; the lead closes boss, and the cascade closes the
    leaf first, then boss: both panes gone, the leaf's loop ended, nothing delivered. Slow
    because two real pis start (each about 1-2 s) and boss's call starts a Python process."""
    script = (
        Script()
        .call_tool(
            "agent_delegate",
            {"definition": "scout", "task": "run forever", "label": "leaf"},
            when=Match(user_contains="coordinate", tool_result=False),
        )
        .reply("Waiting for leaf.", when=Match(user_contains="coordinate", tool_result=True))
        .call_tool(
            "bash",
            {"command": "while [ ! -e never ]; do sleep 0.05; done"},
            when=Match(user_contains="run forever", tool_result=False),
        )
    )
    controller = lead(script)
    (controller.home.agent_dir / "agents" / "helper.md").write_text(
        f"---\nname: helper\ndescription: Coordinates\nmodel: {controller.home.model}\n"
        "agents: [scout]\n---\nCoordinate.\n"
    )
    boss = controller.ok("agent_delegate", definition="helper", task="coordinate", label="boss")
    wait_until(lambda: loops(controller.cwd), WAIT_S, what="the leaf's loop to run")
    leaf = wait_until(lambda: controller.record("leaf"), WAIT_S, what="the leaf listed")
    assert leaf is not None
    assert leaf["available_tools"] == []  # the lead sees its grandchild, without tools
    controller.wait_tool("boss", "agent_close")
    closed = controller.ok("agent_close", agent="boss")
    assert closed["closed"] == ["leaf", "boss"]  # child first
    panes = {p.pane_id for p in controller.ctx.client.pane_list()}
    assert boss["pane_id"] not in panes and leaf["pane_id"] not in panes
    assert controller.record("boss") is None and controller.record("leaf") is None
    wait_until(lambda: not loops(controller.cwd), WAIT_S, what="the leaf's loop to end")
    assert controller.delivered("result", "leaf") == controller.delivered("result", "boss") == 0


def _store(controller: Lead) -> Any:
    from orchestrator.managed.store import ManagedStore

    return ManagedStore(controller.ctx.config.state_dir)
