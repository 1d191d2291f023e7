"""Helpers for the orchestrator tests: clients and tool contexts on a test's Herdr server,
and a recorder of what the simulator received (the proof of every argv mapping)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from orchestrator.agent_tools.transcript import load_messages
from orchestrator.client.sync import HerdrClient
from orchestrator.core.tool import ToolContext
from pytest_herdr.agents import Agent
from pytest_herdr.backends import HerdrServer

Kind = Literal["socket", "cli", "auto"]

#: The simulator timings of the tests that run fake agents: start, prompt and settle in a
#: tenth of a second or so (``pytestmark = FAST_AGENTS``).
FAST_AGENTS = pytest.mark.herdr(
    agent_start_settle=0.1,
    agent_prompt_submit_delay=0.05,
    detection_interval=0.1,
    detection_debounce=0.02,
    detection_idle_hold=0.1,
)


def short_start_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The start watch's grace (``start_watch.GRACE_S``, 5 s of a shell alone in the pane
    before an agent never seen running is called gone) cut to one second, for a test whose
    agent does exit at start: no look can be a false alarm there, and the test proves the
    same path without waiting out five seconds."""
    from orchestrator.agent_tools import start_watch

    monkeypatch.setattr(start_watch, "GRACE_S", 1.0)


@dataclass
class Received:
    """Every request line a simulator received: ``(id, method, params)``."""

    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, kind: str, line: dict[str, Any]) -> None:
        if kind == "request":
            with self.lock:
                self.requests.append(
                    (str(line.get("id")), str(line.get("method")), dict(line.get("params") or {}))
                )

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()

    def methods(self, *, pings: bool = False) -> list[str]:
        with self.lock:
            return [m for _, m, _ in self.requests if pings or m != "ping"]

    def calls(self, method: str) -> list[dict[str, Any]]:
        with self.lock:
            return [p for _, m, p in self.requests if m == method]

    def ids(self, method: str) -> list[str]:
        with self.lock:
            return [i for i, m, _ in self.requests if m == method]


def received(server: HerdrServer) -> Received:
    """Start recording what ``server`` (a simulator) receives.

    The plugin's event recorder (``server.events``) opens a subscription for each new pane on
    its own thread; it is made to do so now for every pane (``watch`` is synchronous and a
    no-op for a watched pane), so its ``events.subscribe`` never lands among what a test then
    asserts reached Herdr (a race under load)."""
    assert server.sim is not None
    if server.events is not None:
        for pane in server.sim.call("pane.list", {})["result"]["panes"]:
            server.events.watch(pane["pane_id"])
    recorder = Received()
    server.sim.wire_taps.append(recorder)
    return recorder


def pane_of(server: HerdrServer, cwd: Path) -> str:
    """A fresh workspace's root pane (set up through the simulator, not on the wire)."""
    assert server.sim is not None
    created = server.sim.call("workspace.create", {"cwd": str(cwd)})["result"]
    pane: str = created["root_pane"]["pane_id"]
    return pane


def client(server: HerdrServer, kind: Kind, **kw: Any) -> HerdrClient:
    """A client of ``kind`` on ``server`` (the CLI is the server's own ``herdr``)."""
    return HerdrClient.build(
        kind, socket_path=server.socket_path, herdr=server.cli_path, env=server.env, **kw
    )


def context(server: HerdrServer, kind: Kind, env: Mapping[str, str] | None = None) -> ToolContext:
    """A tool context whose client is of ``kind`` on ``server``."""
    return ToolContext.with_client(client(server, kind), {**server.env, **(env or {})})


def user_texts(agent: Agent) -> list[str]:
    """What the fake pi received as prompts (from its session file; none before it exists)."""
    session = agent.info.get("agent_session")
    if session is None:  # pi reports its session shortly after start
        return []
    path = session["value"]
    try:
        messages = load_messages(path)
    except FileNotFoundError:
        return []
    return [m["text"] for m in messages if m["role"] == "user"]
