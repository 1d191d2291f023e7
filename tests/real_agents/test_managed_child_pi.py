"""A REAL pi (1.6, offline against the fake LLM) as a managed child: the project's pi
extension (``orchestrator/managed/pi_extension``) drives the child-protocol bridge
(``python -m orchestrator.managed.child_cli``) from pi's events, and the test plays the
controller by posting to and reading the V4 mailbox directly.

Each test starts pi in a simulator pane with the child environment the controller sets
(:func:`orchestrator.managed.env.child_env`) and the extension installed by
:func:`orchestrator.managed.extension_install.install_child_extension`, then waits on the
mailbox and the child's ``state.json``, never on time: a tool that must still be running
when a steer or an interrupt arrives is a ``bash`` loop waiting for a file the test creates
(or never creates). Marker ``real_agent``; each test takes a few seconds (pi's start-up),
which is why they live in this tier.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

from herdr_sim.fake_llm import FakeLLM, Match, Script
from herdr_sim.host.procfs import all_processes
from herdr_sim.real_agents import PiHome, prepare_pi_home
from orchestrator.managed.child_state import ChildState, read_state
from orchestrator.managed.env import child_env
from orchestrator.managed.extension_install import EXTENSION_SOURCE, install_child_extension
from orchestrator.managed.mailbox import MARKER, Box, Kind, Mailbox, Message
from pytest_herdr.agents import Agent, start_agent
from pytest_herdr.client import HerdrClient
from pytest_herdr.fixtures import ServerFactory
from pytest_herdr.handles import Pane
from pytest_herdr.real_agents import RealAgents, require_pi
from pytest_herdr.waits import wait_until

pytestmark = pytest.mark.real_agent

LABEL = "scout"
OWNER = "owner-session-1"
#: the bound of one wait on the child (pi's start-up, a turn against the fake LLM)
WAIT_S = 30.0


@dataclass
class ManagedPi:
    """A real pi running as the managed child ``scout``, and the mailbox it serves."""

    agent: Agent
    pane: Pane
    home: PiHome
    llm: FakeLLM
    mailbox: Mailbox
    run_id: str
    cwd: Path

    def state(self) -> ChildState | None:
        """The child's ``state.json`` (None before its hello)."""
        return read_state(self.mailbox.path)

    def wait_state(self, what: str, **expected: Any) -> ChildState:
        """Wait until ``state.json`` has every ``expected`` attribute value; that state."""

        def matches() -> ChildState | None:
            state = self.state()
            if state is None or any(getattr(state, k) != v for k, v in expected.items()):
                return None
            return state

        found = wait_until(matches, WAIT_S, interval=0.05, what=what)
        assert found is not None
        return found

    def to_owner(self, kind: Kind) -> list[Message]:
        """Every record of ``kind`` the child posted to the owner (pending or consumed)."""
        return [m for m in self.mailbox.history() if m.kind is kind]

    def wait_to_owner(self, kind: Kind) -> Message:
        """The first pending ``kind`` record the child posted (bounded wait)."""

        def posted() -> Message | None:
            found = [m for m in self.mailbox.pending(Box.TO_OWNER) if m.kind is kind]
            return found[0] if found else None

        message = wait_until(posted, WAIT_S, interval=0.05, what=f"a {kind.value}")
        assert message is not None
        return message

    def wait_consumed(self, message: Message) -> None:
        """Wait until the child consumed ``message`` (handed it to pi)."""
        wait_until(
            lambda: all(m.message_id != message.message_id
                        for m in self.mailbox.pending(Box.TO_CHILD)),
            WAIT_S, interval=0.05, what=f"the child to take the {message.kind.value}",
        )  # fmt: skip

    def wait_requests(self, count: int) -> None:
        """Wait until pi sent ``count`` requests to the fake LLM."""
        wait_until(lambda: len(self.llm.requests) >= count, WAIT_S, what=f"{count} model calls")

    def user_texts(self) -> list[str]:
        """The last user text of every request pi sent to the fake LLM, in order."""
        return [r.last_user_text for r in self.llm.requests]

    def session_messages(self) -> list[dict[str, Any]]:
        """The messages of pi's session file, in order."""
        state = self.state()
        assert state is not None and state.pi_session_file is not None
        lines = Path(state.pi_session_file).read_text().splitlines()
        entries = [json.loads(line) for line in lines if line.strip()]
        return [e["message"] for e in entries if e.get("type") == "message"]


class StartChild(Protocol):
    def __call__(
        self, script: Script, args: tuple[str, ...] = (), settings: dict[str, Any] | None = None
    ) -> ManagedPi: ...


@pytest.fixture
def managed_pi(
    herdr_fake_llm: FakeLLM, herdr_server_factory: ServerFactory, tmp_path: Path
) -> StartChild:
    """Starts the real pi as a managed child, as the controller launches it (the child
    environment on its pane, the extension in ``$PI_CODING_AGENT_DIR/extensions``), with
    ``script`` as the fake LLM's answers and ``args`` after pi's own; returns once the
    child said hello (its first ``state.json``, the controller's readiness proof)."""
    installed = require_pi()

    def start(
        script: Script, args: tuple[str, ...] = (), settings: dict[str, Any] | None = None
    ) -> ManagedPi:
        herdr_fake_llm.set_script(script)
        home = prepare_pi_home(tmp_path / "pi-home", herdr_fake_llm.openai_base_url)
        if settings:  # pi's settings.json additions (e.g. its compaction settings)
            path = home.agent_dir / "settings.json"
            path.write_text(json.dumps({**json.loads(path.read_text()), **settings}))
        install_child_extension(home.agent_dir / "extensions")
        server = herdr_server_factory(fake_agents=False, agent_manifests_dir=None)
        client = HerdrClient(server.socket_path)
        cwd = tmp_path / "project"
        cwd.mkdir()
        pi_env = home.env(installed, path=server.env.get("PATH"))
        created = client.call("workspace.create", cwd=str(cwd), env=pi_env, label="managed")
        workspace_id = created["workspace"]["workspace_id"]
        mailbox = Mailbox(tmp_path / "managed", workspace_id, LABEL)
        run_id = str(uuid.uuid4())
        env = pi_env | child_env(
            mailbox_dir=mailbox.path, run_id=run_id, owner_session_id=OWNER, label=LABEL,
            workspace_id=workspace_id, definition="scout",
        )  # fmt: skip
        info = client.call("pane.split", target_pane_id=created["root_pane"]["pane_id"],
                           direction="right", cwd=str(cwd), env=env)  # fmt: skip
        pane = Pane.from_info(client, info["pane"])
        agent = start_agent(client, "pi", pane, LABEL, [*home.args(), *args], WAIT_S)
        child = ManagedPi(agent, pane, home, herdr_fake_llm, mailbox, run_id, cwd)
        child.wait_state("the child's hello", run_id=run_id)
        return child

    return start


def test_outside_a_managed_child_the_extension_adds_nothing(
    herdr_real_agent: RealAgents,
) -> None:
    pi = herdr_real_agent.start("pi", Script().reply("plain pi"),
                                extra_extensions=(EXTENSION_SOURCE,))  # fmt: skip
    assert pi.prompt("hello")["agent_status"] == "idle"
    (request,) = pi.requests()
    tools = [t["function"]["name"] for t in request.body["tools"]]
    assert "ask_owner" not in tools and "bash" in tools
    assert MARKER not in json.dumps(request.body)


def test_the_child_says_hello_with_its_identity(managed_pi: StartChild) -> None:
    child = managed_pi(Script())
    state = child.state()
    assert state is not None
    assert (state.label, state.owner_session_id) == (LABEL, OWNER)
    assert state.pane_id == child.pane.pane_id  # Herdr's HERDR_PANE_ID of the child's pane
    assert (state.operation, state.active_request_id, state.completed_request_id) == (
        "idle", None, None,
    )  # fmt: skip
    assert state.cwd == str(child.cwd) and state.pid > 0
    assert state.pi_session_file is not None
    assert Path(state.pi_session_file).parent.parent == child.home.sessions_dir
    assert child.mailbox.history() == []  # nothing posted before a task


def test_a_task_ends_in_exactly_one_completed_result_with_the_final_text(
    managed_pi: StartChild,
) -> None:
    script = Script().reply("Found three config files.", when=Match(user_contains="find"))
    child = managed_pi(script)
    task = child.mailbox.post(Kind.TASK, "find the config files")
    result = child.wait_to_owner(Kind.RESULT)
    assert (result.status, result.text, result.assignment_id) == (
        "completed", "Found three config files.", task.message_id,
    )  # fmt: skip
    child.wait_state("the assignment completed", operation="idle", active_request_id=None,
                     completed_request_id=task.message_id)  # fmt: skip
    assert child.user_texts() == ["find the config files"]
    assert len(child.to_owner(Kind.RESULT)) == 1 and child.to_owner(Kind.ASK) == []
    # the task went in under the control marker and the session holds its text
    user = [m for m in child.session_messages() if m["role"] == "user"]
    assert [c["text"] for c in user[0]["content"]] == ["find the config files"]
    assert MARKER not in json.dumps(child.session_messages())


def test_a_turn_that_ends_in_a_provider_error_is_a_failed_result(managed_pi: StartChild) -> None:
    # a 4xx is not retried by pi: the operation settles with an error and no text
    child = managed_pi(Script().fail(400, "bad request from the fake"))
    task = child.mailbox.post(Kind.TASK, "do the thing")
    result = child.wait_to_owner(Kind.RESULT)
    assert result.status == "failed" and result.text.startswith("empty_result: ")
    assert result.assignment_id == task.message_id
    child.wait_state("the assignment ended", operation="idle",
                     completed_request_id=task.message_id)  # fmt: skip


def test_ask_owner_posts_an_ask_and_the_reply_starts_the_next_turn(
    managed_pi: StartChild,
) -> None:
    script = (
        Script()
        .call_tool("ask_owner", {"question": "Which branch?"}, when=Match(user_contains="deploy"))
        .reply("Deployed to main.", when=Match(user_contains="main please"))
    )
    child = managed_pi(script)
    task = child.mailbox.post(Kind.TASK, "deploy the app")
    ask = child.wait_to_owner(Kind.ASK)
    assert (ask.text, ask.assignment_id) == ("Which branch?", task.message_id)
    child.wait_state("the child asking", operation="asking", active_request_id=task.message_id)
    assert len(child.llm.requests) == 1  # the ask ended the turn: no follow-up model call
    child.mailbox.post(Kind.REPLY, "main please", assignment_id=task.message_id,
                       ask_id=ask.message_id)  # fmt: skip
    result = child.wait_to_owner(Kind.RESULT)
    assert (result.status, result.text) == ("completed", "Deployed to main.")
    assert "main please" in child.user_texts()[-1]
    assert len(child.to_owner(Kind.RESULT)) == 1 and len(child.to_owner(Kind.ASK)) == 1
    child.wait_state("the assignment completed", operation="idle",
                     completed_request_id=task.message_id)  # fmt: skip


def test_a_steer_reaches_pi_at_the_next_boundary(managed_pi: StartChild) -> None:
    script = (
        Script()
        .call_tool("bash", {"command": "while [ ! -e go ]; do sleep 0.05; done; echo waited"},
                   when=Match(user_contains="survey", tool_result=False))
        .reply("Steered: tests first.", when=Match(user_contains="tests first"))
    )  # fmt: skip
    child = managed_pi(script)
    task = child.mailbox.post(Kind.TASK, "survey the repository")
    child.wait_requests(1)
    child.wait_state("the child working", operation="working", active_request_id=task.message_id)
    steer = child.mailbox.post(Kind.STEER, "tests first", assignment_id=task.message_id)
    child.wait_consumed(steer)
    (child.cwd / "go").touch()  # the tool may end now; the steer waits in pi for it
    result = child.wait_to_owner(Kind.RESULT)
    assert (result.status, result.text) == ("completed", "Steered: tests first.")
    assert len(child.llm.requests) == 2
    second = child.llm.requests[1]
    assert second.last_user_text == "tests first"  # delivered after the tool, as a user turn
    assert "survey the repository" in json.dumps(second.body)  # the same conversation
    assert len(child.to_owner(Kind.RESULT)) == 1


def test_an_interrupt_aborts_a_slow_tool_and_the_assignment_goes_on(
    managed_pi: StartChild,
) -> None:
    child, task = building_forever(managed_pi, "Stopped the build; here is the summary.")
    child.wait_state("the child working", operation="working", active_request_id=task.message_id)
    child.mailbox.post(Kind.INTERRUPT, "stop and summarize", assignment_id=task.message_id)
    result = child.wait_to_owner(Kind.RESULT)
    assert (result.status, result.text) == ("completed", "Stopped the build; here is the summary.")
    assert child.user_texts()[-1] == "stop and summarize"
    assert len(child.to_owner(Kind.RESULT)) == 1
    child.wait_state("the assignment completed", operation="idle",
                     completed_request_id=task.message_id)  # fmt: skip
    # pi's native abort ended the tool (its loop never ends on its own)
    aborted = [m for m in child.session_messages() if m["role"] == "toolResult"]
    assert len(aborted) == 1 and aborted[0]["isError"] is True
    assert aborted[0]["content"][0]["text"] == "Command aborted"
    wait_until(lambda: not loop_processes(child), WAIT_S, what="the aborted loop to be gone")


def test_an_interrupt_supersedes_a_steer_pi_still_holds(managed_pi: StartChild) -> None:
    child, task = building_forever(managed_pi, "Summary only.")
    steer = child.mailbox.post(Kind.STEER, "also lint", assignment_id=task.message_id)
    child.wait_consumed(steer)  # queued in pi: the tool never reaches a boundary
    child.pane.wait_for("also lint")  # pi shows it pending
    child.mailbox.post(Kind.INTERRUPT, "stop and summarize", assignment_id=task.message_id)
    assert child.wait_to_owner(Kind.RESULT).text == "Summary only."
    assert child.user_texts() == ["build everything", "stop and summarize"]
    assert all("also lint" not in json.dumps(r.body) for r in child.llm.requests)
    # nor is it left in pi's editor, where the next Enter would send it
    wait_until(lambda: "also lint" not in child.agent.read("visible"), WAIT_S,
               what="the superseded steer gone from pi's screen")  # fmt: skip


def test_an_interrupt_in_the_same_poll_as_a_steer_supersedes_it(managed_pi: StartChild) -> None:
    """A steer and an interrupt posted back to back (microseconds apart, against the
    extension's 250 ms poll: the same poll) — the bridge hands pi only the interrupt, so the
    steer never reaches the model, the session or the editor."""
    child, task = building_forever(managed_pi, "Summary only.")
    child.mailbox.post(Kind.STEER, "also lint", assignment_id=task.message_id)
    child.mailbox.post(Kind.INTERRUPT, "stop and summarize", assignment_id=task.message_id)
    assert child.wait_to_owner(Kind.RESULT).text == "Summary only."
    assert child.user_texts() == ["build everything", "stop and summarize"]
    assert all("also lint" not in json.dumps(r.body) for r in child.llm.requests)
    assert all("also lint" not in json.dumps(m) for m in child.session_messages())
    assert "also lint" not in child.agent.read("visible")
    assert len(child.to_owner(Kind.RESULT)) == 1


def building_forever(managed_pi: StartChild, summary: str) -> tuple[ManagedPi, Message]:
    """A child on the task "build everything", whose ``bash`` loop runs (and never ends on
    its own); a follow-up that says "summarize" gets ``summary`` as the model's reply."""
    script = (
        Script()
        .call_tool("bash", {"command": "while [ ! -e never ]; do sleep 0.05; done"},
                   when=Match(user_contains="build", tool_result=False))
        .reply(summary, when=Match(user_contains="summarize"))
    )  # fmt: skip
    child = managed_pi(script)
    task = child.mailbox.post(Kind.TASK, "build everything")
    child.wait_requests(1)
    wait_until(lambda: loop_processes(child), WAIT_S, what="the tool's loop to run")
    return child, task


def loop_processes(child: ManagedPi) -> list[int]:
    """The pids of the interrupt test's endless ``bash`` loop in the child's project."""
    return [p.pid for p in all_processes()
            if p.cwd == str(child.cwd) and p.argv and "! -e never" in " ".join(p.argv)]  # fmt: skip


@pytest.mark.parametrize(
    ("tools", "declared"),
    [("read,ask_owner", ["ask_owner", "read"]), ("read", ["read"])],
)
def test_a_tools_allowlist_keeps_ask_owner_only_when_it_names_it(
    managed_pi: StartChild, tools: str, declared: list[str]
) -> None:
    """The launch contract: pi's ``--tools`` unregisters every tool it does not name,
    extension tools included, so the controller must name ``ask_owner`` there."""
    child = managed_pi(Script().reply("Looked.", when=Match(user_contains="look")),
                       args=("--tools", tools))  # fmt: skip
    child.mailbox.post(Kind.TASK, "look around")
    assert child.wait_to_owner(Kind.RESULT).text == "Looked."
    (request,) = child.llm.requests
    assert sorted(t["function"]["name"] for t in request.body["tools"]) == declared


def test_a_threshold_compaction_retires_the_session_and_is_cancelled(
    managed_pi: StartChild,
) -> None:
    """The fake LLM reports a context near the model's window, so pi compacts at the end of
    the run (reason ``threshold``): the extension has the bridge retire the session before
    the result and cancels the compaction."""
    script = (
        Script()
        .call_tool("bash", {"command": "echo surveyed"},
                   when=Match(user_contains="big job", tool_result=False))
        .reply("handoff: did A, next B", when=Match(user_contains="big job"),
               input_tokens=125_000)
    )  # fmt: skip
    # a tiny keepRecentTokens gives pi something to compact in a short session
    child = managed_pi(script, settings={"compaction": {"keepRecentTokens": 1}})
    child.mailbox.post(Kind.TASK, "big job")
    result = child.wait_to_owner(Kind.RESULT)
    assert (result.status, result.text) == ("completed", "handoff: did A, next B")
    state = child.wait_state("the assignment completed", operation="idle")
    assert state.session_retired is True
    entries = Path(str(state.pi_session_file)).read_text()
    assert '"type":"compaction"' not in entries.replace(" ", "")  # cancelled
    assert len(child.llm.requests) == 2  # the task's two calls; no summarizing call
