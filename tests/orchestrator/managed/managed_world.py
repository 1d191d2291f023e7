"""A test world for the managed-agent tools: a simulator, fake pi children, definitions.

Every call goes through the registry (``run_tool``), exactly as MCP and
``herdr-orchestrator call`` run it. The fake pi plays the scenario in
``<root>/scenario.json`` (``HERDR_SIM_FAKE_SCENARIO`` in every pane, set by this module's
``herdr_pane_env`` override): write it with :meth:`ManagedWorld.scenario` before a delegation.
A test module binds the two fixtures by name (``herdr_pane_env = managed_world.herdr_pane_env``,
``world = managed_world.world``): they override the plugin's pane env for that module only.
The controller runs outside Herdr (no ``HERDR_PANE_ID``), so ``agent_list`` is the pull path
where results and questions are delivered; :meth:`ManagedWorld.restart` builds a fresh
controller (a new server process's) over the same state dir.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.client.sync import HerdrClient
from orchestrator.client.types import WorkspaceCreated
from orchestrator.core.config import Config
from orchestrator.managed.service import ManagedService
from orchestrator.managed.tools import managed_service
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.backends import HerdrServer
from tests.waits import wait_until

SCENARIO_FILE = "scenario.json"

DEFINITIONS = {
    "scout": "---\nname: scout\ndescription: Looks around and reports\n---\nYou scout.\n",
    "helper": "---\nname: helper\ndescription: Delegates to scouts\nagents: [scout]\n---\nHelp.\n",
}


def pane_env(root: Path) -> dict[str, str]:
    """The variables every pane of the world's simulator gets."""
    return {"HERDR_SIM_FAKE_SCENARIO": str(root / SCENARIO_FILE)}


@pytest.fixture
def herdr_pane_env(tmp_path: Path) -> dict[str, str]:
    """The simulator's pane variables for a module that uses :func:`world` (import both)."""
    return pane_env(tmp_path)


@pytest.fixture
def world(
    herdr_server: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ManagedWorld:
    """A :class:`ManagedWorld` under ``tmp_path``, run from its ``work`` directory."""
    made = ManagedWorld(herdr_server, tmp_path)
    monkeypatch.chdir(tmp_path / "work")
    return made


class ToolCaller:
    """A controller's calls: ``run_tool`` on ``ctx`` as MCP makes them, and every delivery
    an ``agent_list`` answered kept in ``deliveries`` (the real-pi tests' lead is one too)."""

    ctx: AgentToolsContext
    deliveries: list[dict[str, Any]]

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = run_tool(name, arguments, self.ctx)
        if name == "agent_list" and result.get("ok"):
            self.deliveries += result["deliveries"]
        return result

    def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.call(name, **arguments)
        assert result["ok"] is True, result
        return result


@dataclass
class ManagedWorld(ToolCaller):
    server: HerdrServer
    root: Path
    ctx: AgentToolsContext = field(init=False)
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    #: the configuration's ``readOnly``
    read_only: bool = False

    def __post_init__(self) -> None:
        agents = self.root / "pi" / "agents"
        agents.mkdir(parents=True, exist_ok=True)
        for name, text in DEFINITIONS.items():
            (agents / f"{name}.md").write_text(text)
        (self.root / "work").mkdir(exist_ok=True)
        self.ctx = self._context()

    def _context(self) -> AgentToolsContext:
        state = self.root / "state"
        config = Config(state_dir=state, artifact_dir=state / "artifacts", read_only=self.read_only)
        client = HerdrClient.build(
            "socket",
            socket_path=self.server.socket_path,
            herdr=self.server.cli_path,
            env=self.server.env,
        )
        env = {k: v for k, v in self.server.env.items() if k != "HERDR_PANE_ID"}
        env["PI_CODING_AGENT_DIR"] = str(self.root / "pi")
        return AgentToolsContext.create(env, config=config, client=client)

    @property
    def service(self) -> ManagedService:
        return managed_service(self.ctx)

    @property
    def client(self) -> HerdrClient:
        return self.ctx.client

    def restart(self) -> None:
        """A new controller process over the same state dir (nothing kept in memory)."""
        self.ctx = self._context()

    def scenario(self, scenario: Scenario) -> None:
        scenario.dump(self.root / SCENARIO_FILE)

    def run_in_pane(self, pane_id: str) -> None:
        """The controller from now on as one running in ``pane_id`` (its ``HERDR_PANE_ID``;
        what the context derived from the environment, such as the owner channel, rebuilt)."""
        self.ctx.env = {**self.ctx.env, "HERDR_PANE_ID": pane_id}
        self.ctx.derived.clear()

    def run_in_an_idle_pi(self) -> WorkspaceCreated:
        """The controller in the pane of an idle fake pi (the default scenario) in a new
        workspace ``owner``; that workspace."""
        self.scenario(Scenario())
        client = self.client
        created = client.workspace_create(str(self.root / "work"), label="owner", focus=False)
        owner_pane = created.root_pane.pane_id
        client.agent_start("owner", "pi", owner_pane, timeout_ms=20_000)
        wait_until(
            lambda: client.agent_get(owner_pane).agent_status == "idle", 10, what="idle owner"
        )
        self.run_in_pane(owner_pane)
        return created

    def refused(self, name: str, category: str, **arguments: Any) -> dict[str, Any]:
        result = self.call(name, **arguments)
        assert result["ok"] is False, result
        assert result["error"]["category"] == category, result
        return result["error"]  # type: ignore[no-any-return]

    def agent(self, label: str) -> dict[str, Any] | None:
        for record in self.ok("agent_list")["agents"]:
            if record.get("agent") == label:
                return record  # type: ignore[no-any-return]
        return None

    def wait_state(self, label: str, state: str, timeout: float = 10.0) -> dict[str, Any]:
        def seen() -> dict[str, Any] | None:
            record = self.agent(label)
            return record if record is not None and record["state"] == state else None

        return wait_until(seen, timeout, interval=0.05, what=f"{label} {state}")

    def wait_delivery(self, kind: str, agent: str, timeout: float = 10.0) -> dict[str, Any]:
        def seen() -> dict[str, Any] | None:
            self.call("agent_list")
            for delivery in self.deliveries:
                if delivery["kind"] == kind and delivery["agent"] == agent:
                    return delivery
            return None

        return wait_until(seen, timeout, interval=0.05, what=f"{kind} of {agent}")

    def delivered(self, kind: str, agent: str) -> list[Mapping[str, Any]]:
        return [d for d in self.deliveries if d["kind"] == kind and d["agent"] == agent]
