"""The orchestrator's agent tools with the REAL pi (1.6, offline against the fake LLM).

The flows are :mod:`tests.orchestrator.agent_tools.flows`, the very functions
``tests/orchestrator/agent_tools/test_flows.py`` runs with the fake pi; only the agent's setup
differs (:class:`RealPi`): the simulator's panes get pi's environment (the installed pi first
on ``PATH``, ``$PI_CODING_AGENT_DIR`` with ``models.json`` naming the fake LLM and the
project's Herdr extension), the orchestrator's ``pi`` default alias is the fake model, and the
scenario becomes the fake LLM's answers (:func:`~tests.orchestrator.agent_tools.flows.script_of`),
so the real pi runs the tool calls itself. Marker ``real_agent``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_llm import FakeLLM, Script
from herdr_sim.model.agents import SessionRef
from herdr_sim.persist import session as persist
from herdr_sim.real_agents import PiHome, prepare_pi_home
from orchestrator.agent_tools.context import AgentToolsContext
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient
from pytest_herdr.fixtures import ServerFactory
from pytest_herdr.real_agents import require_pi
from pytest_herdr.waits import wait_until
from tests.orchestrator.agent_tools import flows
from tests.orchestrator.agent_tools.test_spawn import make_ctx

pytestmark = pytest.mark.real_agent

#: The simulator's settle delay, short to keep the tier fast: real pi is not taking prompts
#: yet when it passes (its startup is still running), and the spawn waits for pi's session
#: report before it prompts (orchestrator.agent_tools.start_watch.wait_for_session).
SETTLE_S = 0.3


@dataclass(frozen=True)
class RealPi:
    """The real pi's setup: the scenario is played by the fake LLM, pi runs the tools."""

    ctx: AgentToolsContext
    root: Path
    llm: FakeLLM
    home: PiHome
    server: HerdrServer

    def agent_args(self, scenario: Scenario) -> list[str]:
        self.llm.set_script(flows.script_of(scenario))
        return []


@pytest.fixture
def real_pi(herdr_fake_llm: FakeLLM, herdr_server_factory: ServerFactory, tmp_path: Path) -> RealPi:
    """A simulator whose panes run the real pi against ``herdr_fake_llm``, and an agent-tools
    context on it whose ``pi`` default model is the fake one."""
    installed = require_pi()
    home = prepare_pi_home(tmp_path / "pi-home", herdr_fake_llm.openai_base_url)
    server = herdr_server_factory(
        fake_agents=False, agent_manifests_dir=None, agent_start_settle=SETTLE_S
    )
    # Herdr's panes inherit the server's environment: pi's goes there (as if Herdr had been
    # started from a shell set up for pi), before any pane exists. (start_sim gives every
    # simulator a hermetic environment of its own, so it is added to that one.)
    assert server.sim is not None
    base = server.sim.config.base_env
    base.update(home.env(installed, path=base.get("PATH")))
    ctx = make_ctx(server, tmp_path, aliases={"pi": {"default": home.model}})
    return RealPi(ctx, tmp_path, herdr_fake_llm, home, server)


def test_spawn_completed_with_result_md_and_diff(real_pi: RealPi) -> None:
    done = flows.completed_with_result_md_and_diff(real_pi)
    # the real pi ran the tools: the fake LLM saw their results come back
    last = real_pi.llm.requests[-1]
    assert last.tool_results == ("Successfully wrote to a.txt", "(no output)")
    assert real_pi.llm.unmatched == []
    assert done["artifacts"]["sessionFile"].startswith(str(real_pi.home.sessions_dir))


def test_blocked_by_the_protocol_then_answered(real_pi: RealPi) -> None:
    flows.blocked_then_answered(real_pi)


def test_interrupt_a_long_turn(real_pi: RealPi) -> None:
    flows.interrupted_long_turn(real_pi)


def test_read_agent_pages_a_real_transcript(real_pi: RealPi) -> None:
    flows.transcript_paged(real_pi)


def test_a_provider_error_is_failed(real_pi: RealPi) -> None:
    failed = flows.provider_error_is_failed(real_pi)
    assert [r.status for r in real_pi.llm.requests] == [400]  # a 4xx: pi does not retry
    assert failed["artifacts"]["sessionFile"] is not None


def test_pi_retrying_a_provider_error_is_completed_by_its_retry(real_pi: RealPi) -> None:
    # pi retries an error naming overload (and every 5xx) after agent_end: the failed attempt
    # is in the session (an error message, then a context_edit), the retry's answer after it.
    # The task is what the retry answered, not the first attempt's error.
    settings = real_pi.home.agent_dir / "settings.json"
    quick = {**json.loads(settings.read_text()), "retry": {"maxRetries": 2, "baseDelayMs": 50}}
    settings.write_text(json.dumps(quick))
    script = Script().fail(429, "model overloaded, retry later").reply("COMPLETE after a retry")
    real_pi.llm.set_script(script)
    done = flows.result(
        real_pi.ctx, "herdr_spawn_agent", prompt="try", cwd=str(real_pi.root), timeout_ms=60_000
    )
    assert (done["status"], done["finalMessage"]) == ("completed", "COMPLETE after a retry"), done
    assert [r.status for r in real_pi.llm.requests] == [429, 200]
    lines = Path(done["artifacts"]["sessionFile"]).read_text().splitlines()
    kinds = [json.loads(line).get("type") for line in lines]
    assert "context_edit" in kinds  # the failed attempt is in the file, edited out of context


def test_a_restarted_simulator_resumes_real_pi_with_its_session(real_pi: RealPi) -> None:
    # A task's pi answered once; Herdr (the simulator, persisting its session) stops and
    # starts again: the pane runs Herdr's resume plan for pi, `pi --session <path>`, pi comes
    # back on the same session file, and the task answers a message with its history.
    ctx = real_pi.ctx
    real_pi.llm.set_script(
        Script().reply("answered before the restart").reply("answered after the restart")
    )
    done = flows.result(
        ctx, "herdr_spawn_agent", prompt="first", cwd=str(real_pi.root), timeout_ms=60_000
    )
    assert done["status"] == "completed", done
    session = done["artifacts"]["sessionFile"]
    pane = done["paneId"]

    first = real_pi.server.sim
    assert first is not None
    assert persist.builtin_resume(SessionRef("herdr:pi", "pi", "path", session)) == [
        "pi", "--session", session,
    ]  # Herdr's resume plan for the session pi reported  # fmt: skip
    config = dataclasses.replace(first.config)
    first.stop()
    reports: list[dict[str, Any]] = []

    def tap(kind: str, line: dict[str, Any]) -> None:
        if kind == "request" and line.get("method") == "pane.report_agent_session":
            reports.append(dict(line.get("params") or {}))

    again = Simulator(config)
    again.wire_taps.append(tap)
    again.start()
    try:
        client = HerdrClient(again.socket_path)
        # pi itself reports that session from the new pane (its extension's report; pi calls
        # a session opened with --session at start a "startup" one)
        resumed = wait_until(lambda: list(reports), 60, interval=0.1, what="pi's session report")
        assert (resumed[0]["agent_session_path"], resumed[0]["pane_id"]) == (session, pane)
        agent = client.call("agent.get", target=pane)["agent"]
        assert (agent["agent"], agent["name"]) == ("pi", done["name"])
        assert agent["agent_session"]["value"] == session
        assert real_pi.home.session_files() == [Path(session)]  # no new session was started

        def redrawn() -> bool:
            read = client.call("pane.read", pane_id=pane, source="visible")["read"]
            return "answered before the restart" in read["text"]

        # Herdr brings a restored agent back ready at once; pi takes prompts only once it has
        # started up, which is when it has drawn the resumed session's messages
        wait_until(redrawn, 60, interval=0.1, what="pi drew its resumed session")

        # the orchestrator's task goes on in the resumed pi, which remembers the first turn
        answered = flows.result(
            ctx, "herdr_message_agent", target=done["taskId"], message="and now?",
            kind="NOTE", wait=True, timeout_ms=30_000,
        )  # fmt: skip
        assert answered["status"] == "completed", answered
        assert answered["finalMessage"] == "answered after the restart"
        last = real_pi.llm.requests[-1].body["messages"]
        assert any(m.get("content") == "answered before the restart" for m in last), last
        assert answered["artifacts"]["sessionFile"] == session
    finally:
        again.stop()
