"""The reference's live scenarios (pi-herdsman.md A.18 manual smoke list) on the simulator.

Fake pi children speak the V4 mailbox; every call goes through the registry. Covered here:
push delivery into an idle owner's pane (the controller inside Herdr), concurrent
continuation of one session (exactly one wins), failure diagnostics with a complete
rollback, the cleanup checklist (no stray panes or mailboxes), result handoff through
``files`` refs, a corrupt mailbox shown ``unknown`` with no actions, and concurrent
delegations getting distinct labels.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.client.errors import ClientError
from orchestrator.managed.background import ControllerBackground
from orchestrator.managed.mailbox import Box, Kind, Mailbox
from orchestrator.managed.model_text import MODEL_TEXT_MAX_BYTES
from orchestrator.managed.owner import PaneOwner
from orchestrator.managed.supervisor import SPOOL_DIR
from orchestrator.pipeline.registry import run_tool
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS, short_start_grace
from tests.waits import wait_until

pytestmark = FAST_AGENTS

#: the fixtures of a managed world (a simulator whose fake pis play the world's scenario)
herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world


def panes(world: ManagedWorld) -> set[str]:
    """The ids of every pane now."""
    return {p.pane_id for p in world.client.pane_list()}


def test_a_result_is_pushed_once_into_the_idle_owners_pane(world: ManagedWorld) -> None:
    """The controller runs inside Herdr: its pane hosts an (idle) pi; the background
    reconcile types the result into it exactly once, and agent_list delivers nothing."""
    created = world.run_in_an_idle_pi()
    client, owner_pane = world.client, created.root_pane.pane_id
    service = world.service
    assert isinstance(service.owner, PaneOwner)
    background = ControllerBackground(service, interval_s=0.05)
    background.start()
    try:
        world.scenario(Scenario().reply("pushed result text"))
        started = world.ok("agent_delegate", definition="scout", task="push", label="pushed")
        assert started["workspace_id"] == created.workspace.workspace_id  # the caller's

        def typed() -> int:
            screen = client.pane_read(owner_pane, "recent", 200).text
            return screen.count("Agent result · agent=pushed")

        wait_until(typed, 15, what="the result typed into the owner's pane")
        wait_until(lambda: world.agent("pushed") is None, 10, what="cleanup")
        listed = world.ok("agent_list")
        assert listed["delivery"] == "pane" and listed["deliveries"] == []
        background.reconcile_once()
        assert typed() == 1
    finally:
        background.stop()


def test_two_concurrent_continues_of_one_session_one_wins(world: ManagedWorld) -> None:
    world.scenario(Scenario().reply("first"))
    first = world.ok("agent_delegate", definition="scout", task="x", label="twin")
    world.wait_delivery("result", "twin")
    world.scenario(Scenario().hang())
    outcomes: list[dict[str, Any]] = []

    def go() -> None:
        outcomes.append(
            run_tool("agent_continue", {"session": first["session_id"], "task": "y"}, world.ctx)
        )

    threads = [threading.Thread(target=go) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(o["ok"] for o in outcomes) == [False, True], outcomes
    loser = next(o for o in outcomes if not o["ok"])
    assert loser["error"]["category"] == "agent_busy", loser
    assert [a["agent"] for a in world.ok("agent_list")["agents"]] == ["twin"]


def test_a_child_that_never_starts_is_pane_not_ready_and_rolled_back(
    world: ManagedWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi exits at start (a model outside its catalog): pane_not_ready with the startup
    diagnostic, the pane closed, the mailbox removed. The start watch waits its grace of a
    shell alone in the pane before it calls pi exited (cut to a second here)."""
    short_start_grace(monkeypatch)
    agents = world.root / "pi" / "agents"
    (agents / "broken.md").write_text(
        "---\nname: broken\ndescription: Wrong model\nmodel: nowhere/missing\n---\nX\n"
    )
    (world.root / "scenario.json").write_text(json.dumps({"models": ["known/model"]}))
    error = world.refused("agent_delegate", "pane_not_ready", definition="broken", task="x")
    assert error["rollbackOccurred"] is True
    assert "not found" in error["details"]["startupDiagnostic"]
    # only the managed-agents workspace's own first pane is left: the child's is closed
    (home,) = [w for w in world.client.workspace_list() if w.label == "managed-agents"]
    assert [p.tab_id for p in world.client.pane_list()] == [
        t.tab_id for t in world.client.tab_list(home.workspace_id)
    ]
    assert len(world.client.pane_list()) == 1
    namespace = world.service.store.root / "mailboxes-v4"
    assert not namespace.exists() or list(namespace.iterdir()) == []
    assert world.ok("agent_list")["agents"] == []


def test_a_failed_rollback_is_rollback_failure(
    world: ManagedWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The launch fails as above (the same shortened start-watch grace), and closing its
    pane fails too: ``rollback_failure`` with the primary error and the cleanup's."""
    short_start_grace(monkeypatch)
    (world.root / "scenario.json").write_text(json.dumps({"models": ["known/model"]}))
    (world.root / "pi" / "agents" / "broken.md").write_text(
        "---\nname: broken\ndescription: Wrong model\nmodel: nowhere/missing\n---\nX\n"
    )
    client = world.client

    def refuse(_pane: str) -> None:
        raise ClientError("pane close refused for the test")

    monkeypatch.setattr(client, "pane_close", refuse)
    error = world.refused("agent_delegate", "rollback_failure", definition="broken", task="x")
    assert error["rollbackOccurred"] is True and error["retryAttempted"] is True
    assert error["details"]["primary"]["category"] == "pane_not_ready"
    assert error["details"]["cleanup"]["operation"] == "rollback"


def test_cleanup_checklist_after_a_result(world: ManagedWorld) -> None:
    world.scenario(Scenario().reply("clean"))
    started = world.ok("agent_delegate", definition="scout", task="x", label="tidy")
    world.wait_delivery("result", "tidy")
    root = world.service.store.root
    assert started["pane_id"] not in panes(world)
    assert not Mailbox(root, started["workspace_id"], "tidy").path.exists()
    artifact = json.loads(
        (root / "results" / "artifacts" / f"{started['request_id']}.json").read_text()
    )
    assert artifact["label"] == "tidy" and artifact["piSessionId"] == started["session_id"]
    record = world.service.store.load(started["run_id"])
    assert record.status == "delivered" and record.pi_session_file == started["session_path"]


def test_a_result_ref_hands_the_result_to_the_next_agent(world: ManagedWorld) -> None:
    world.scenario(Scenario().reply("the answer is 42"))
    world.ok("agent_delegate", definition="scout", task="find it", label="finder")
    world.wait_delivery("result", "finder")
    world.scenario(Scenario().hang())
    (world.root / "work" / "notes.txt").write_text("local notes\n")
    started = world.ok(
        "agent_delegate",
        definition="scout",
        task="use it",
        label="user",
        files=["result:finder#1", "notes.txt"],
    )
    session = Path(started["session_path"])
    wait_until(lambda: session.exists() and "the answer is 42" in session.read_text(), 10)
    assert "local notes" in session.read_text()
    error = world.refused(
        "agent_delegate", "target_not_found", definition="scout", task="x", files=["result:x#9"]
    )
    assert "result:x#9" in error["message"]
    world.refused("agent_delegate", "invalid_request", definition="scout", task="x", files=["/"])


def test_a_result_over_the_model_bound_is_delivered_as_its_head_and_its_ref(
    world: ManagedWorld,
) -> None:
    """A final answer over the 50 KiB model bound (reference A.13): the owner sees its head,
    the ref and ``truncated``; the artifact keeps the whole, and ``files`` with the ref
    hands the whole text (its last line too) to the next agent."""
    lines = [f"row {n:04d} " + "x" * 90 for n in range(600)]  # 600 lines, 60 000 bytes
    world.scenario(Scenario().reply("\n".join(lines)))
    world.ok("agent_delegate", definition="scout", task="a long report", label="longer")
    delivery = world.wait_delivery("result", "longer", timeout=20)
    assert delivery["truncated"] is True and delivery["result_ref"] == "result:longer#1"
    text = delivery["text"]
    assert len(text.encode()) < MODEL_TEXT_MAX_BYTES + 1024
    assert lines[0] in text and lines[-1] not in text
    assert "Result ref: result:longer#1" in text
    assert "The full result is result:longer#1; pass it in files" in text
    artifact = world.service.results.resolve(
        "result:longer#1", owner_session_id=world.service.controller_id
    )
    assert artifact.text == "\n".join(lines)
    world.scenario(Scenario().hang())
    started = world.ok(
        "agent_delegate",
        definition="scout",
        task="read it",
        label="reader",
        files=["result:longer#1"],
    )
    session = Path(started["session_path"])
    wait_until(lambda: session.exists() and lines[-1] in session.read_text(), 10)


def test_a_long_result_pushed_into_the_owners_pane_is_the_bounded_text(
    world: ManagedWorld,
) -> None:
    """The push path gets the same bounded text: the owner's pane gets one line pointing at
    the spooled message, which holds the head and the ref, not the whole answer."""
    world.run_in_an_idle_pi()
    background = ControllerBackground(world.service, interval_s=0.05)
    background.start()
    try:
        lines = [f"row {n:04d} " + "y" * 90 for n in range(600)]  # 60 000 bytes
        world.scenario(Scenario().reply("\n".join(lines)))
        started = world.ok("agent_delegate", definition="scout", task="long", label="pushlong")
        store = world.service.store
        wait_until(
            lambda: store.load(started["run_id"]).status == "delivered",
            15,
            what="the result pushed into the owner's pane and the agent cleaned up",
        )
    finally:
        background.stop()
    assert world.ok("agent_list")["deliveries"] == []  # pushed, not pulled
    spooled = [
        text
        for text in (p.read_text() for p in (store.root / SPOOL_DIR).iterdir())
        if "Agent result · agent=pushlong" in text
    ]
    assert len(spooled) == 1
    (message,) = spooled
    assert lines[0] in message and lines[-1] not in message
    assert "The full result is result:pushlong#1; pass it in files" in message
    assert len(message.encode()) < MODEL_TEXT_MAX_BYTES + 1024


def test_a_corrupt_mailbox_record_is_unknown_with_no_actions(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="broken")
    mailbox = Mailbox(world.service.store.root, started["workspace_id"], "broken")
    (mailbox.path / Box.TO_OWNER.value / "00000000-0000-4000-8000-000000000000.json").write_text(
        "{truncated"
    )
    record = world.wait_state("broken", "unknown")
    assert record["available_tools"] == []
    assert "mailbox unreadable" in record["diagnostic"]
    world.refused("agent_steer", "target_ambiguous", agent="broken", message="x")
    world.refused("agent_close", "target_ambiguous", agent="broken")


def test_five_concurrent_delegations_get_distinct_labels(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    outcomes: list[dict[str, Any]] = []
    lock = threading.Lock()

    def go() -> None:
        result = run_tool("agent_delegate", {"definition": "scout", "task": "t"}, world.ctx)
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=go) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(o["ok"] for o in outcomes), [o for o in outcomes if not o["ok"]]
    labels = sorted(o["agent"] for o in outcomes)
    assert labels == ["scout", "scout-2", "scout-3", "scout-4", "scout-5"]
    for outcome in outcomes:
        mailbox = Mailbox(world.service.store.root, outcome["workspace_id"], outcome["agent"])
        tasks = [m for m in mailbox.history() if m.kind is Kind.TASK]
        assert [t.message_id for t in tasks] == [outcome["request_id"]]


def test_tab_placement_shares_one_tab_and_split_splits_the_callers_pane(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().hang())
    service = world.service
    service.settings = replace(service.settings, spawn_placement="tab")
    first = world.ok("agent_delegate", definition="scout", task="one")
    second = world.ok("agent_delegate", definition="scout", task="two")
    assert first["tab_id"] == second["tab_id"] and first["pane_id"] != second["pane_id"]
    (tab,) = [
        t for t in world.client.tab_list(first["workspace_id"]) if t.tab_id == first["tab_id"]
    ]
    assert tab.label == f"agents · lead-{service.controller_id[:8]}"
    # split: the controller runs in a Herdr pane, the agent's pane is split off it
    caller = world.client.workspace_create(str(world.root), label="caller", focus=False)
    world.run_in_pane(caller.root_pane.pane_id)
    world.service.settings = replace(world.service.settings, spawn_placement="split")
    third = world.ok("agent_delegate", definition="scout", task="three")
    assert third["workspace_id"] == caller.workspace.workspace_id
    assert third["tab_id"] == caller.tab.tab_id


def test_an_owner_pane_without_an_agent_falls_back_to_the_pull_path(
    world: ManagedWorld,
) -> None:
    """A host in a Herdr pane that Herdr does not recognise as an agent is never idle, so
    nothing could be pushed to it: agent_list delivers instead, once."""
    caller = world.client.workspace_create(str(world.root), label="shell", focus=False)
    world.run_in_pane(caller.root_pane.pane_id)
    assert isinstance(world.service.owner, PaneOwner)
    world.scenario(Scenario().reply("pulled anyway"))
    world.ok("agent_delegate", definition="scout", task="x", label="shelled")
    delivery = world.wait_delivery("result", "shelled")
    assert "pulled anyway" in delivery["text"]
    assert world.ok("agent_list")["delivery"] == "pull"
    assert len(world.delivered("result", "shelled")) == 1
