"""The fake pi as a managed child, in a simulator pane, driven through its V4 mailbox.

The test plays the controller by hand: it starts ``pi`` (the fake) with the child
environment in a Herdr tab, waits for ``state.json`` (the readiness proof), then posts
``task``/``steer``/``interrupt``/``reply`` records straight into the :class:`Mailbox` and
reads what comes back (``ask``, ``result``). The protocol brain is
:class:`orchestrator.managed.child.ManagedChild` (unit-tested in
``tests/orchestrator/managed/test_child.py``); these tests prove the fake pi drives it:
scenario turns run for mailbox tasks, ``ask_owner`` ends the turn, steers reach the pi
session at step boundaries, an interrupt aborts a slow step and the assignment goes on.
"""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario, ScenarioError, Step
from orchestrator.managed import env as child_env_names
from orchestrator.managed.child_state import ChildState, read_state
from orchestrator.managed.env import child_env
from orchestrator.managed.extension_install import EXTENSION_SOURCE
from orchestrator.managed.mailbox import Box, Kind, Mailbox, Message
from orchestrator.managed.pi_extension.fake_pi import MAILBOX_ENV
from pytest_herdr.backends import HerdrServer
from tests.fresh_python import fresh_python
from tests.orchestrator.support import FAST_AGENTS, client
from tests.waits import wait_until

pytestmark = FAST_AGENTS

LABEL = "scout"


@dataclass
class Child:
    """A fake pi child in a pane, and the owner's side of its mailbox."""

    box: Mailbox
    run_id: str
    pane_id: str

    def state(self) -> ChildState | None:
        return read_state(self.box.path)

    def wait_state(self, what: str, **expected: Any) -> ChildState:
        def matches() -> ChildState | None:
            state = self.state()
            if state is None:
                return None
            ok = all(getattr(state, key) == value for key, value in expected.items())
            return state if ok else None

        return wait_until(matches, 10.0, 0.02, what)

    def wait_owner(self, kind: Kind) -> Message:
        def found() -> Message | None:
            return next((m for m in self.box.pending(Box.TO_OWNER) if m.kind is kind), None)

        return wait_until(found, 10.0, 0.02, f"a {kind.value} record")

    def session_entries(self) -> list[dict[str, Any]]:
        state = self.state()
        assert state is not None and state.pi_session_file is not None
        lines = Path(state.pi_session_file).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


def user_texts(entries: list[dict[str, Any]]) -> list[str]:
    return [
        block["text"]
        for entry in entries
        if entry.get("type") == "message" and entry["message"]["role"] == "user"
        for block in entry["message"]["content"]
    ]


def shows(server: HerdrServer, pane_id: str, *texts: str) -> str:
    """The pane's screen once one read shows every text (a redraw may be read half done)."""
    herdr = client(server, "socket")

    def screen() -> str | None:
        text = herdr.pane_read(pane_id, source="visible").text
        return text if all(t in text for t in texts) else None

    return wait_until(screen, 10.0, 0.05, f"{texts} on screen")


def start_child(server: HerdrServer, tmp_path: Path, scenario: Scenario) -> Child:
    """The fake pi started in a new tab with the managed child's environment."""
    herdr = client(server, "socket")
    work = tmp_path / "work"
    work.mkdir()
    created = herdr.workspace_create(str(work))
    workspace_id = created.workspace.workspace_id
    box = Mailbox(tmp_path / "managed", workspace_id, LABEL)
    run_id = str(uuid.uuid4())
    env = child_env(
        mailbox_dir=box.path,
        run_id=run_id,
        owner_session_id="owner-session",
        label=LABEL,
        workspace_id=workspace_id,
        definition="scout",
    )
    tab = herdr.tab_create(workspace_id, str(work), label=LABEL, env=env)
    pane_id = tab.root_pane.pane_id
    path = scenario.dump(tmp_path / "scenario.json")
    # the launch names the managed-child extension, as pi's `-e` does: the fake loads its twin
    args = ["-e", str(EXTENSION_SOURCE), "--scenario", str(path)]
    herdr.agent_start(LABEL, "pi", pane_id, args=args, timeout_ms=20_000)
    child = Child(box, run_id, pane_id)
    ready = child.wait_state("the readiness state.json", run_id=run_id)
    assert (ready.label, ready.workspace_id, ready.pane_id) == (LABEL, workspace_id, pane_id)
    assert (ready.operation, ready.active_request_id, ready.completed_request_id) == (
        "idle",
        None,
        None,
    )
    assert ready.cwd == str(work) and ready.pi_session_file is not None
    return child


def test_the_mailbox_variable_is_the_orchestrators() -> None:
    assert MAILBOX_ENV == child_env_names.MAILBOX_ENV


def test_an_unmanaged_fake_agent_imports_nothing_of_the_orchestrator() -> None:
    # the managed side is imported only when an extension names it: fakes start fast (the
    # client library below the simulator, orchestrator.client, is the simulator's own base)
    code = (
        "import sys\nimport herdr_sim.fake_agent.app\n"
        "print(sorted(m for m in sys.modules if m.startswith('orchestrator')"
        " and m != 'orchestrator' and not m.startswith('orchestrator.client')))\n"
    )
    assert fresh_python(code) == ["[]"]


def test_a_task_gets_exactly_one_result(herdr_server: HerdrServer, tmp_path: Path) -> None:
    child = start_child(herdr_server, tmp_path, Scenario().run_tool("bash", "true").reply("found"))
    task = child.box.post(Kind.TASK, "find the bug")
    result = child.wait_owner(Kind.RESULT)
    assert (result.status, result.text, result.assignment_id) == (
        "completed",
        "found",
        task.message_id,
    )
    state = child.wait_state("settled", operation="idle", completed_request_id=task.message_id)
    assert state.active_request_id is None
    assert child.box.pending(Box.TO_CHILD) == []  # the task was consumed (acknowledged)
    assert user_texts(child.session_entries()) == ["find the bug"]
    assert [m.kind for m in child.box.history()] == [Kind.TASK, Kind.RESULT]


def test_ask_owner_then_reply_then_result(herdr_server: HerdrServer, tmp_path: Path) -> None:
    scenario = Scenario().reply("thinking").ask_owner("A or B?").then().reply("did B")
    child = start_child(herdr_server, tmp_path, scenario)
    task = child.box.post(Kind.TASK, "choose")
    ask = child.wait_owner(Kind.ASK)
    assert (ask.text, ask.assignment_id) == ("A or B?", task.message_id)
    child.wait_state("asking", operation="asking", active_request_id=task.message_id)
    assert [m.kind for m in child.box.pending(Box.TO_OWNER)] == [Kind.ASK]  # no result yet
    child.box.consume(ask)
    child.box.post(Kind.REPLY, "B", assignment_id=task.message_id, ask_id=ask.message_id)
    result = child.wait_owner(Kind.RESULT)
    assert (result.status, result.text) == ("completed", "did B")
    child.wait_state("settled", operation="idle", completed_request_id=task.message_id)
    entries = child.session_entries()
    assert user_texts(entries) == ["choose", "B"]
    calls = [
        block
        for entry in entries
        if entry.get("type") == "message" and entry["message"]["role"] == "assistant"
        for block in entry["message"]["content"]
        if block["type"] == "toolCall"
    ]
    assert [(c["name"], c["arguments"]) for c in calls] == [("ask_owner", {"question": "A or B?"})]


def test_a_steer_reaches_the_running_turn(herdr_server: HerdrServer, tmp_path: Path) -> None:
    child = start_child(herdr_server, tmp_path, Scenario().wait(1500).reply("done"))
    task = child.box.post(Kind.TASK, "write it")
    child.wait_state("working", operation="working", active_request_id=task.message_id)
    child.box.post(Kind.STEER, "also update the docs", assignment_id=task.message_id)
    result = child.wait_owner(Kind.RESULT)
    assert result.status == "completed"
    assert user_texts(child.session_entries()) == ["write it", "also update the docs"]
    assert [m.kind for m in child.box.history()].count(Kind.RESULT) == 1


def test_an_interrupt_aborts_a_slow_step_and_the_assignment_goes_on(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    scenario = Scenario().hang().then().reply("took the other way")
    child = start_child(herdr_server, tmp_path, scenario)
    task = child.box.post(Kind.TASK, "run the long job")
    child.wait_state("working", operation="working", active_request_id=task.message_id)
    child.box.post(Kind.INTERRUPT, "stop; take the other way", assignment_id=task.message_id)
    result = child.wait_owner(Kind.RESULT)
    assert (result.status, result.text, result.assignment_id) == (
        "completed",
        "took the other way",
        task.message_id,
    )
    child.wait_state("settled", operation="idle", completed_request_id=task.message_id)
    entries = child.session_entries()
    stops = [
        e["message"]["stopReason"]
        for e in entries
        if e.get("type") == "message" and e["message"]["role"] == "assistant"
    ]
    assert stops == ["aborted", "stop"]
    assert user_texts(entries) == ["run the long job", "stop; take the other way"]
    assert [m.kind for m in child.box.history()] == [Kind.TASK, Kind.INTERRUPT, Kind.RESULT]


@pytest.mark.parametrize("broken", ["PI_HERDSMAN_LABEL"])
def test_a_broken_environment_leaves_pi_unmanaged(
    herdr_server: HerdrServer, tmp_path: Path, broken: str
) -> None:
    herdr = client(herdr_server, "socket")
    work = tmp_path / "work"
    work.mkdir()
    workspace_id = herdr.workspace_create(str(work)).workspace.workspace_id
    box = Mailbox(tmp_path / "managed", workspace_id, LABEL)
    env = child_env(
        mailbox_dir=box.path, run_id=str(uuid.uuid4()), owner_session_id="o", label=LABEL,
        workspace_id=workspace_id, definition="scout",
    )  # fmt: skip
    env[broken] = "Not A Label"
    pane_id = herdr.tab_create(workspace_id, str(work), env=env).root_pane.pane_id
    args = ["-e", str(EXTENSION_SOURCE)]
    herdr.agent_start(LABEL, "pi", pane_id, args=args, timeout_ms=20_000)
    shows(herdr_server, pane_id, "not managed", "PI_HERDSMAN_LABEL is not a valid label")
    assert read_state(box.path) is None  # it never claimed the mailbox


def test_the_ask_owner_step_round_trips_through_a_scenario_file() -> None:
    scenario = Scenario.from_dict({"turns": [{"steps": [{"ask_owner": "A or B?"}]}]})
    assert scenario.turns[0].steps == [Step("ask_owner", text="A or B?")]
    assert Scenario.from_dict(scenario.to_dict()) == scenario
    assert Scenario().ask_owner("A or B?").turns == scenario.turns
    with pytest.raises(ScenarioError, match="must be a string"):
        Scenario.from_dict({"turns": [[{"ask_owner": 3}]]})


def test_the_agent_tool_step_round_trips_through_a_scenario_file() -> None:
    raw = {"agent_tool": "agent_delegate", "arguments": {"definition": "scout", "task": "t"}}
    scenario = Scenario.from_dict({"turns": [[raw]]})
    assert scenario.turns[0].steps[0].to_dict() == raw
    assert Scenario.from_dict(scenario.to_dict()) == scenario
    built = Scenario().agent_tool("agent_delegate", definition="scout", task="t")
    assert built.to_dict() == scenario.to_dict()
    with pytest.raises(ScenarioError, match="'arguments' must be an object"):
        Scenario.from_dict({"turns": [[{"agent_tool": "agent_list", "arguments": [1]}]]})
    with pytest.raises(ScenarioError, match="unknown key"):
        Scenario.from_dict({"turns": [[{"agent_tool": "agent_list", "args": {}}]]})


def prompt_unmanaged(server: HerdrServer, tmp_path: Path, scenario: Scenario) -> str:
    """The fake pi started without the managed child's environment and prompted "go";
    its pane id."""
    herdr = client(server, "socket")
    work = tmp_path / "work"
    work.mkdir()
    pane_id = herdr.workspace_create(str(work)).root_pane.pane_id
    path = scenario.dump(tmp_path / "s.json")
    herdr.agent_start("plain", "pi", pane_id, args=["--scenario", str(path)], timeout_ms=20_000)
    herdr.agent_prompt(pane_id, "go")
    return pane_id


def test_unmanaged_an_agent_tool_fails_and_the_turn_goes_on(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    scenario = Scenario().agent_tool("agent_list").reply("went on")
    pane_id = prompt_unmanaged(herdr_server, tmp_path, scenario)
    shows(herdr_server, pane_id, "agent_list is available only to a managed", "went on")


def test_unmanaged_the_ask_owner_tool_fails_and_the_turn_goes_on(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    scenario = Scenario().ask_owner("A or B?").reply("went on")
    pane_id = prompt_unmanaged(herdr_server, tmp_path, scenario)
    shows(herdr_server, pane_id, "ask_owner is available only to a managed agent", "went on")


def test_a_corrupt_record_is_shown_and_left_in_place(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    child = start_child(herdr_server, tmp_path, Scenario().reply("never"))
    bad = child.box.path / "to-child" / f"{uuid.uuid4()}.json"
    bad.write_text("{torn")
    shows(herdr_server, child.pane_id, "malformed mailbox record")
    assert bad.exists()
    state = child.state()
    assert state is not None and state.operation == "idle"  # nothing was taken


def test_after_cleanup_a_late_turn_neither_crashes_nor_recreates_the_mailbox(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    scenario = Scenario().reply("done").then().reply("second answer")
    child = start_child(herdr_server, tmp_path, scenario)
    child.box.post(Kind.TASK, "t")
    child.wait_owner(Kind.RESULT)
    child.wait_state("settled", operation="idle", active_request_id=None)
    shutil.rmtree(child.box.path)  # the controller's cleanup
    herdr = client(herdr_server, "socket")
    herdr.agent_prompt(child.pane_id, "anything else?")
    shows(herdr_server, child.pane_id, "the mailbox directory is gone", "second answer")
    assert not child.box.path.exists()


def test_an_interrupt_drops_the_steers_still_queued(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    # the hanging step never reaches a boundary, so the steer stays queued in pi until the
    # interrupt's native abort drops it: it never reaches the session
    scenario = Scenario().hang().then().reply("fresh start")
    child = start_child(herdr_server, tmp_path, scenario)
    task = child.box.post(Kind.TASK, "run")
    child.wait_state("working", operation="working", active_request_id=task.message_id)
    child.box.post(Kind.STEER, "superseded hint", assignment_id=task.message_id)
    wait_until(lambda: not child.box.pending(Box.TO_CHILD), 10.0, 0.02, "the steer handed over")
    child.box.post(Kind.INTERRUPT, "start over", assignment_id=task.message_id)
    result = child.wait_owner(Kind.RESULT)
    assert (result.status, result.text) == ("completed", "fresh start")
    assert user_texts(child.session_entries()) == ["run", "start over"]
