"""Fake agents for tests (the ``herdr_fake_agent`` fixture): scenarios in, running agents out.

``start`` launches a fake agent the way an orchestrator would — ``agent.start`` with the
kind's executable, a scenario file as its argument — and waits, like ``herdr agent start``
does, until Herdr calls it ``interactive_ready``. The returned :class:`Agent` prompts and
waits through Herdr's own ``agent.prompt`` and ``agent.wait``.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herdr_sim.client import RequestFailed
from herdr_sim.fake_agent import LAUNCHER_KINDS, Scenario

from .client import WireClient
from .handles import Pane
from .waits import AGENT_WAIT, SCALE, HerdrWait, WaitTimeout, wait_until

if TYPE_CHECKING:
    from .events import EventRecorder

#: the kinds the simulator ships a fake for
FAKE_KINDS: tuple[str, ...] = tuple(LAUNCHER_KINDS)


@dataclass(frozen=True)
class Agent:
    """One named agent, by name."""

    client: WireClient
    name: str
    pane: Pane
    #: the server's event recorder: a prompt or wait returns once it has the end status too
    events: EventRecorder | None = None
    #: the server's time scale: the default bounds of :meth:`prompt` and :meth:`wait` run at it
    time_scale: float = 1.0

    def _bound(self, timeout: float | None) -> float:
        return AGENT_WAIT * self.time_scale if timeout is None else timeout

    @property
    def info(self) -> dict[str, Any]:
        """AgentInfo, read now (``agent.get``)."""
        info: dict[str, Any] = self.client.call("agent.get", target=self.name)["agent"]
        return info

    @property
    def status(self) -> str:
        """The agent's public status now (idle, working, blocked, done, unknown)."""
        return str(self.info["agent_status"])

    def prompt(
        self,
        text: str,
        *,
        wait: bool = True,
        until: tuple[str, ...] = (),
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """``agent.prompt``; with ``wait`` (the default) return after the agent's turn, the
        AgentInfo of the end of the turn (bounded: ``timeout``, default 30 s at the server's
        time scale)."""
        params: dict[str, Any] = {"target": self.name, "text": text}
        if wait:
            options: dict[str, Any] = {"timeout_ms": int(self._bound(timeout) * SCALE * 1000)}
            if until:
                options["until"] = list(until)
            params["wait"] = options
        since = 0 if self.events is None else self.events.mark()
        info: dict[str, Any] = self.client.call("agent.prompt", **params)["agent"]
        if wait and self.events is not None:
            # the turn changed the status since the mark: the latest status recorded before
            # it (the previous turn's idle) does not count
            self.events.catch_up(info["pane_id"], info["agent_status"], since=since, changed=True)
        return info

    def wait(self, *statuses: str, timeout: float | None = None) -> dict[str, Any]:
        """``agent.wait`` for one of ``statuses`` (default: idle or done), bounded by
        ``timeout`` (default 30 s at the server's time scale)."""
        __tracebackhide__ = True
        waits = HerdrWait(self.client, events=self.events)
        return waits.for_agent(self.name, *statuses, timeout=self._bound(timeout))

    def send_keys(self, *keys: str) -> None:
        """``agent.send_keys`` (``"Escape"``, ``"Enter"``, ``"C-c"`` …)."""
        self.client.call("agent.send_keys", target=self.name, keys=list(keys))

    def read(self, source: str = "recent") -> str:
        """The agent pane's text (``agent.read``)."""
        text: str = self.client.call("agent.read", target=self.name, source=source)["read"]["text"]
        return text


class FakeAgents:
    """Builds scenarios and starts fake agents on one server."""

    def __init__(
        self,
        client: WireClient,
        directory: Path,
        default_pane: Pane | None,
        events: EventRecorder | None = None,
        *,
        time_scale: float = 1.0,
    ) -> None:
        self.client = client
        self.directory = directory
        self.default_pane = default_pane
        self.events = events
        #: the server's time scale: the default bounds of starts, prompts and waits run at it
        self.time_scale = time_scale
        self._numbers = itertools.count(1)

    @staticmethod
    def scenario() -> Scenario:
        """A new scenario builder: ``.reply("hi").then().ask("Proceed?")``."""
        return Scenario()

    def write(self, scenario: Scenario) -> Path:
        """Save ``scenario`` as a file the fake agent reads (``--scenario PATH``)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        return scenario.dump(self.directory / f"scenario-{next(self._numbers)}.json")

    def start(
        self,
        kind: str = "pi",
        scenario: Scenario | None = None,
        *,
        pane: Pane | None = None,
        name: str | None = None,
        args: tuple[str, ...] = (),
        ready_timeout: float | None = None,
    ) -> Agent:
        """Start a fake agent of ``kind`` with ``scenario`` in ``pane`` (default: the test's
        ``herdr_pane``) and wait until it is ``interactive_ready`` and has made its startup
        report (bounded: ``ready_timeout``, default 30 s at the server's time scale).

        Herdr calls an agent ready once its process is seen and the settle delay has passed;
        a test server shortens that delay, and on a loaded machine a fake agent can still be
        starting then (its terminal modes not set, its first reports in flight, so a prompt
        could race them). Every fake reports its session when it is up, so that report is
        waited for too, except for a scenario that starts up slowly on purpose
        (``start_slowly``): it returns at ``interactive_ready``, as Herdr's CLI does."""
        target = pane or self.default_pane
        if target is None:
            raise ValueError("no pane: pass pane=… (or use the herdr_pane fixture)")
        argv = list(args)
        if scenario is not None:
            argv = ["--scenario", str(self.write(scenario)), *argv]
        agent_name = name or f"{kind}-{next(self._numbers)}"
        bound = AGENT_WAIT * self.time_scale if ready_timeout is None else ready_timeout
        began = time.monotonic()
        agent = start_agent(
            self.client,
            kind,
            target,
            agent_name,
            argv,
            bound,
            events=self.events,
            time_scale=self.time_scale,
        )
        if scenario is not None and scenario.startup_ms:
            return agent
        left = max(0.0, bound - (time.monotonic() - began))
        wait_until(
            lambda: "agent_session" in agent.info,
            left,
            interval=0.02,
            what=f"{agent_name}'s startup report (its session)",
        )
        return agent


def start_agent(
    client: WireClient,
    kind: str,
    pane: Pane,
    name: str,
    args: list[str],
    ready_timeout: float,
    events: EventRecorder | None = None,
    time_scale: float = 1.0,
) -> Agent:
    """``agent.start`` of ``kind`` named ``name`` in ``pane``, then wait (bounded) until Herdr
    calls it ``interactive_ready``, as ``herdr agent start`` does; fake and real agents alike."""
    client.call("agent.start", name=name, kind=kind, pane_id=pane.pane_id, args=args)
    agent = Agent(client, name, pane, events, time_scale)

    def ready() -> bool:
        try:
            return bool(agent.info.get("interactive_ready"))
        except RequestFailed as exc:
            if exc.code == "agent_not_found":  # the launch failed and lost its name
                raise WaitTimeout(f"{kind} agent {name} failed to start") from exc
            raise

    wait_until(ready, ready_timeout, interval=0.05, what=f"{name} to be interactive_ready")
    return agent
