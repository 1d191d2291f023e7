"""Issue 15's bad input and faults, end to end on the simulator with fake pi children.

Each test drives the tools through the registry (``run_tool``) and checks the seed's
category, a message that says what is wrong, and that nothing is lost or delivered twice:
the read-only configuration (R0 calls never mutate Herdr), a mailbox record that is a
symlink or truncated, an owner whose pane died, a pane replaced under the same agent name,
and ``files`` that do not resolve on the live controls.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.managed.definitions import approve_project
from orchestrator.managed.mailbox import Box, Kind, Mailbox
from orchestrator.managed.owner import PaneOwner
from orchestrator.managed.tools import BACKGROUND_KEY, enable_background
from pytest_herdr.backends import HerdrServer
from pytest_herdr.request_log import RequestLog
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS

#: the fixtures of a managed world (a simulator whose fake pis play the world's scenario)
herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world

#: the Herdr methods that only read (what a read-only controller may send)
READS = frozenset(
    {"pane.get", "pane.list", "agent.get", "agent.list", "agent.read", "tab.list",
     "workspace.list", "pane.process_info", "pane.read", "ping"}
)  # fmt: skip


def mailbox_of(world: ManagedWorld, started: dict[str, object]) -> Mailbox:
    return Mailbox(world.service.store.root, str(started["workspace_id"]), str(started["agent"]))


def wait_result_posted(mailbox: Mailbox) -> None:
    """Wait until the child posted its result (read straight from the mailbox, so no
    controller call delivers it meanwhile)."""
    wait_until(
        lambda: any(m.kind is Kind.RESULT for m in mailbox.pending(Box.TO_OWNER)),
        10,
        interval=0.05,
        what="the child's result in the mailbox",
    )


def test_read_only_r0_calls_send_no_mutating_request_and_deliver_nothing(
    world: ManagedWorld, herdr_server: HerdrServer, herdr_requests: RequestLog
) -> None:
    """agent_list, agent_inspect and agent_transcript are R0 (readOnlyHint): under
    ``readOnly`` they only observe. A finished agent's result is neither delivered nor
    cleaned up there; a controller without readOnly then delivers it, once."""
    world.scenario(Scenario().reply("kept for later"))
    started = world.ok("agent_delegate", definition="scout", task="x", label="kept")
    wait_result_posted(mailbox_of(world, started))
    read_only = ManagedWorld(herdr_server, world.root, read_only=True)
    assert read_only.service.read_only is True
    before = len(herdr_requests.requests())
    listed = read_only.ok("agent_list")
    read_only.call("agent_inspect", agent="kept")
    read_only.call("agent_transcript", agent="kept")
    sent = [r for r in herdr_requests.requests()[before:] if r.sender is None]
    assert sent, "the read-only calls observed Herdr"
    assert {r.method for r in sent} <= READS, sorted({r.method for r in sent})
    assert listed["delivery"] == "none" and listed["deliveries"] == []
    assert "Read-only configuration" in listed["text"]
    (record,) = [a for a in listed["agents"] if a.get("agent") == "kept"]
    assert record["state"] == "settling"  # the result waits, durable
    assert started["pane_id"] in {p.pane_id for p in world.client.pane_list()}
    # the R2 tools are not callable at all under readOnly
    assert read_only.call("agent_close", agent="kept")["ok"] is False
    # a controller that may mutate delivers it exactly once and cleans up
    delivery = world.wait_delivery("result", "kept")
    assert "kept for later" in delivery["text"]
    world.ok("agent_list")
    assert len(world.delivered("result", "kept")) == 1
    assert started["pane_id"] not in {p.pane_id for p in world.client.pane_list()}


def test_a_read_only_mcp_server_runs_no_background(
    world: ManagedWorld, herdr_server: HerdrServer
) -> None:
    """The background reconcile and health monitor deliver into the owner's pane and close
    finished agents' panes: a read-only server over existing managed state starts neither."""
    world.scenario(Scenario().hang())
    world.ok("agent_delegate", definition="scout", task="x", label="bg")
    read_only = ManagedWorld(herdr_server, world.root, read_only=True)
    enable_background(read_only.ctx)
    assert read_only.service.read_only is True
    assert read_only.ctx.derived[BACKGROUND_KEY] is True  # asked for, never started


@pytest.mark.parametrize("fault", ["symlink", "truncated"])
def test_a_linked_or_truncated_mailbox_record_is_unknown_and_nothing_is_lost(
    world: ManagedWorld, tmp_path: Path, fault: str
) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="boxed")
    world.wait_state("boxed", "working")
    mailbox = mailbox_of(world, started)
    planted = mailbox.path / Box.TO_OWNER.value / "00000000-0000-4000-8000-000000000000.json"
    if fault == "symlink":
        secret = tmp_path / "secret.json"
        secret.write_text('{"not": "a record"}')
        planted.symlink_to(secret)
    else:
        planted.write_bytes(b'{"version": 4, "id": "00000000-0000-4000-8000-0000')
    record = world.wait_state("boxed", "unknown")
    assert record["available_tools"] == []
    assert "mailbox unreadable" in record["diagnostic"]
    error = world.refused("agent_steer", "target_ambiguous", agent="boxed", message="x")
    assert "cannot be proved" in error["message"]
    world.refused("agent_close", "target_ambiguous", agent="boxed")
    assert mailbox.pending(Box.TO_CHILD) == []  # the refused steer posted nothing
    # the fault removed: the agent is back, with its assignment, and nothing was posted
    planted.unlink()
    world.wait_state("boxed", "working")
    history = [m for m in mailbox.history() if m.kind is not Kind.TASK]
    assert history == []


def test_an_owner_whose_pane_died_gets_its_result_once_by_the_pull(world: ManagedWorld) -> None:
    """The lead's host pane is closed while its agent works: the result is not lost (the
    push has nowhere to go) and agent_list delivers it, once."""
    created = world.run_in_an_idle_pi()
    client, owner_pane = world.client, created.root_pane.pane_id
    assert isinstance(world.service.owner, PaneOwner)
    world.scenario(Scenario().wait(300).reply("orphaned result"))
    started = world.ok("agent_delegate", definition="scout", task="x", label="orphan")
    client.pane_split(owner_pane, "right", cwd=str(world.root), focus=False)  # keep the tab
    client.pane_close(owner_pane)
    delivery = world.wait_delivery("result", "orphan")
    assert "orphaned result" in delivery["text"]
    listed = world.ok("agent_list")
    assert listed["delivery"] == "pull" and listed["deliveries"] == []
    assert len(world.delivered("result", "orphan")) == 1
    assert started["pane_id"] not in {p.pane_id for p in client.pane_list()}


def test_a_pane_replaced_under_the_same_agent_name_fails_closed(world: ManagedWorld) -> None:
    """The agent's pane is gone and its Herdr agent name now runs in another pane: the
    identity cannot be proved, so the record is unknown with no actions, every control is
    refused, and neither the impostor's pane nor the mailbox is touched."""
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="twin")
    world.wait_state("twin", "working")
    generation = next(g for g in world.service.store.scan()[0] if g.label == "twin")
    world.client.pane_close(str(started["pane_id"]))
    other = world.client.workspace_create(str(world.root), label="impostor", focus=False)
    impostor = other.root_pane.pane_id
    world.client.agent_start(generation.agent_name, "pi", impostor, timeout_ms=20_000)
    record = world.wait_state("twin", "unknown")
    assert record["available_tools"] == []
    assert f"now on pane {impostor}" in record["diagnostic"]
    for tool in ("agent_steer", "agent_interrupt", "agent_reply"):
        world.refused(tool, "target_ambiguous", agent="twin", message="m")
    for tool in ("agent_close", "agent_inspect", "agent_transcript"):
        world.refused(tool, "target_ambiguous", agent="twin")
    assert impostor in {p.pane_id for p in world.client.pane_list()}
    mailbox = mailbox_of(world, started)
    assert [m.kind for m in mailbox.history()] == [Kind.TASK]


def test_bad_files_on_the_live_controls_are_refused_and_nothing_is_posted(
    world: ManagedWorld, tmp_path: Path
) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="filed")
    world.wait_state("filed", "working")
    outside = tmp_path / "outside.txt"
    outside.write_text("not under the cwd\n")
    (world.root / "work" / "adir").mkdir()
    cases = [
        (["result:nobody#1"], "target_not_found", "result:nobody#1"),
        (["result:filed#0"], "invalid_request", "result:filed#0"),
        ([str(outside)], "invalid_request", "outside.txt"),
        (["adir"], "invalid_request", "adir"),
        (["missing.txt"], "invalid_request", "missing.txt"),
    ]
    for tool in ("agent_steer", "agent_interrupt"):
        for files, category, named in cases:
            error = world.refused(tool, category, agent="filed", message="m", files=files)
            assert named in error["message"], error
    world.refused("agent_reply", "agent_busy", agent="filed", message="m", files=["adir"])
    mailbox = mailbox_of(world, started)
    assert [m.kind for m in mailbox.history()] == [Kind.TASK]
    assert world.agent("filed") is not None


def test_the_definition_body_is_the_childs_instructions(world: ManagedWorld) -> None:
    """The body reaches pi as ``--append-system-prompt`` of a private file in the mailbox
    (pi reads a value naming a file as its text; the fake pi does as pi does), and
    ``excludeTools`` without ``tools`` is pi's ``--exclude-tools``."""
    (world.root / "pi" / "agents" / "careful.md").write_text(
        "---\nname: careful\ndescription: Careful\nthinking: high\nexcludeTools: [bash]\n"
        "---\nYou check every claim twice.\n"
    )
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="careful", task="x", label="careful")
    instructions = Path(mailbox_of(world, started).path) / "instructions.md"
    assert instructions.read_text() == "You check every claim twice."
    assert oct(instructions.stat().st_mode & 0o777) == "0o600"
    commands = json.dumps(world.client.pane_process_info(str(started["pane_id"])))
    for expected in ("--append-system-prompt", str(instructions), "--exclude-tools", "high"):
        assert expected in commands, commands
    session = Path(str(started["session_path"]))
    wait_until(lambda: session.exists() and "check every claim" in session.read_text(), 10)
    world.ok("agent_close", agent="careful")
    assert not instructions.exists()  # gone with the mailbox


def test_body_at_lines_are_expanded_into_the_instructions(world: ManagedWorld) -> None:
    """A body ``@./file`` line becomes the file's text in the child's instructions; a file
    the caller passes in ``files`` too is dropped from the body (a trusted project's layer,
    inside the cwd); a line naming a file outside the layer refuses the delegation before
    anything is launched."""
    agents = world.root / "pi" / "agents"
    (agents / "style.txt").write_text("Cite every source.\n")
    (agents / "styled.md").write_text(
        "---\nname: styled\n---\nYou review.\n@./style.txt\nBe brief.\n"
    )
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="styled", task="x", label="styled")
    instructions = Path(mailbox_of(world, started).path) / "instructions.md"
    assert instructions.read_text() == "You review.\nCite every source.\nBe brief."
    project = world.root / "work" / ".pi" / "agents"
    project.mkdir(parents=True)
    (project / "spec.txt").write_text("THE SPEC\n")
    (project / "proj.md").write_text("---\nname: proj\n---\nProject rules.\n@./spec.txt\n")
    approve_project(world.service.state_dir, world.root / "work")
    started = world.ok(
        "agent_delegate", definition="proj", task="y", label="proj", files=[".pi/agents/spec.txt"]
    )
    instructions = Path(mailbox_of(world, started).path) / "instructions.md"
    assert instructions.read_text() == "Project rules."
    session = Path(str(started["session_path"]))
    wait_until(lambda: session.exists() and "THE SPEC" in session.read_text(), 10)
    (world.root / "pi" / "secret.txt").write_text("not for agents")
    (agents / "leaky.md").write_text("---\nname: leaky\n---\n@../secret.txt\n")
    error = world.refused("agent_delegate", "invalid_request", definition="leaky", task="z")
    assert "@../secret.txt" in error["message"] and str(agents / "leaky.md") in error["message"]
    assert "outside the definition's layer directory" in error["message"]
    assert error["rollbackOccurred"] is False
    assert world.agent("leaky") is None


def test_a_replace_mode_body_replaces_the_system_prompt(world: ManagedWorld) -> None:
    (world.root / "pi" / "agents" / "solo.md").write_text(
        "---\nname: solo\nsystemPromptMode: replace\n---\nOnly this prompt.\n"
    )
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="solo", task="x")
    commands = json.dumps(world.client.pane_process_info(str(started["pane_id"])))
    assert "--system-prompt" in commands and "--append-system-prompt" not in commands


def test_an_exclusion_pattern_matching_ask_owner_refuses_the_launch(world: ManagedWorld) -> None:
    (world.root / "pi" / "agents" / "mute.md").write_text(
        "---\nname: mute\nexcludeTools: ['ask*']\n---\nNo asking.\n"
    )
    error = world.refused("agent_delegate", "invalid_request", definition="mute", task="x")
    assert "ask_owner" in error["message"]
    assert world.agent("mute") is None


def test_a_session_retired_under_context_pressure_is_not_continued(world: ManagedWorld) -> None:
    """The fake pi compacts under pressure mid-assignment (contextRetirement on, the
    default): the result is delivered once with the seed's retirement instruction, and
    agent_continue of that session (path or UUID) is refused with the guidance to delegate
    fresh with the handoff and files."""
    world.scenario(Scenario().compact("threshold").reply("handoff: did A, next B"))
    first = world.ok("agent_delegate", definition="scout", task="big job", label="tired")
    delivery = world.wait_delivery("result", "tired")
    assert "handoff: did A, next B" in delivery["text"]
    assert "retired after context pressure" in delivery["text"]
    assert "Delegate a fresh agent" in delivery["text"]
    for session in (first["session_path"], first["session_id"]):
        error = world.refused("agent_continue", "invalid_request", session=session, task="more")
        assert "retired" in error["message"]
        assert "Delegate a fresh agent" in error["nextAction"]
        assert "handoff/result" in error["nextAction"]
    # a restarted controller still knows (the record is durable)
    world.restart()
    world.refused("agent_continue", "invalid_request", session=first["session_id"], task="x")
    # with contextRetirement off, the retired session may be continued
    world.service.settings = replace(world.service.settings, context_retirement=False)
    world.scenario(Scenario().reply("continued anyway"))
    again = world.ok("agent_continue", session=first["session_id"], task="more")
    assert again["agent"] == "tired"
    assert len(world.delivered("result", "tired")) == 1


def test_without_context_retirement_a_compaction_retires_nothing(world: ManagedWorld) -> None:
    world.service.settings = replace(world.service.settings, context_retirement=False)
    world.scenario(Scenario().compact("threshold").reply("done"))
    first = world.ok("agent_delegate", definition="scout", task="job", label="fresh")
    delivery = world.wait_delivery("result", "fresh")
    assert "retired" not in delivery["text"]
    world.service.settings = replace(world.service.settings, context_retirement=True)
    world.scenario(Scenario().hang())
    assert world.ok("agent_continue", session=first["session_id"], task="more")["ok"]
