"""Delegating agents on the simulator: a fake pi child that runs the managed tools itself.

The lead (this test, outside Herdr: ``agent_list`` is its pull path) delegates ``boss``
(definition ``helper``, ``agents: [scout]``). boss's scenario calls ``agent_*`` tools with
the ``agent_tool`` step, which runs ``$PI_HERDSMAN_PYTHON -m orchestrator call`` in boss's
environment, exactly as the pi extension would: boss is then its own controller (its pi
session id, its allowlisted leaf roster, its direct agents only). Every fake pi reads the one
scenario file when it starts, so a test writes boss's scenario, delegates boss, then writes
the leaf's; boss's first step waits for a gate file so the order is fixed.

These tests start two or three fake pi children and several ``orchestrator call``
processes each (an interpreter start apiece), so they take a few seconds more than the
lead-only tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from herdr_sim.fake_agent import Scenario
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS


#: the fixtures of a managed world (a simulator whose fake pis play the world's scenario)
herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world


def gate(name: str) -> str:
    """A shell step that waits (bounded, 20 s) until the test creates ``name`` in the cwd."""
    return f"for i in $(seq 400); do [ -e {name} ] && exit 0; sleep 0.05; done; exit 1"


def release(world: ManagedWorld, name: str) -> None:
    (world.root / "work" / name).touch()


def session_messages(path: str, role: str) -> list[dict[str, Any]]:
    """The ``role`` messages of a (fake) pi session file, in order."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("message")
        if entry.get("type") == "message" and message.get("role") == role:
            out.append(message)
    return out


def tool_results(path: str, tool: str) -> list[dict[str, Any]]:
    """The JSON answers of ``tool`` calls recorded in a pi session file."""
    return [
        json.loads(m["content"][0]["text"])
        for m in session_messages(path, "toolResult")
        if m["toolName"] == tool
    ]


def user_texts(path: str) -> list[str]:
    return [m["content"][0]["text"] for m in session_messages(path, "user")]


def start_boss_with_a_gated_leaf(world: ManagedWorld) -> dict[str, Any]:
    """boss delegates ``leaf`` (a scout that works until the gate ``leafgo``), ends its
    turn waiting, and on its next turn (the leaf's delivered result) answers."""
    world.scenario(
        Scenario()
        .run_tool("bash", gate("go"))
        .agent_tool("agent_delegate", definition="scout", task="leaf work", label="leaf")
        .reply("waiting for leaf")
        .then()
        .reply("boss final: leaf reported")
    )
    boss = world.ok("agent_delegate", definition="helper", task="coordinate", label="boss")
    world.scenario(Scenario().run_tool("bash", gate("leafgo")).reply("leaf found it"))
    release(world, "go")
    return boss


def test_a_delegating_child_gets_its_leafs_result_in_its_pane_then_reports_once(
    world: ManagedWorld,
) -> None:
    """The whole nested flow: boss delegates a leaf through the tools; the lead sees the
    leaf (parent boss, no tools) and boss ``blocked`` waiting (steer, no interrupt); the
    leaf's result is typed into boss's pane once (not delivered to the lead); boss's next
    turn posts boss's result, delivered to the lead once."""
    boss = start_boss_with_a_gated_leaf(world)
    leaf = wait_until(lambda: world.agent("leaf"), 20, interval=0.1, what="the leaf listed")
    assert leaf["parent_label"] == "boss"
    assert leaf["owner_session_id"] == boss["session_id"]
    assert leaf["available_tools"] == []  # not a direct agent of the lead
    waiting = world.wait_state("boss", "blocked", timeout=20)
    assert waiting["available_tools"] == [
        "agent_inspect",
        "agent_transcript",
        "agent_steer",
        "agent_close",
    ]
    assert "pending_ask" not in waiting
    world.refused("agent_steer", "target_not_found", agent="leaf", message="hi")
    world.refused("agent_close", "target_not_found", agent="leaf")
    release(world, "leafgo")
    delivery = world.wait_delivery("result", "boss", timeout=20)
    assert "boss final: leaf reported" in delivery["text"]
    assert world.delivered("result", "leaf") == []  # the leaf's result went to boss only
    path = waiting["pi_session_path"]
    [started] = tool_results(path, "agent_delegate")
    assert started["ok"] is True and started["agent"] == "leaf"
    assert started["owner_session_id"] == boss["session_id"]
    typed = [t for t in user_texts(path) if "Agent result · agent=leaf" in t]
    assert len(typed) == 1, user_texts(path)
    wait_until(lambda: world.agent("leaf") is None and world.agent("boss") is None, 10)
    world.ok("agent_list")
    assert world.delivered("result", "boss") == [delivery]  # once


def test_a_delegating_childs_roster_and_view_are_its_own(world: ManagedWorld) -> None:
    """boss may delegate only its allowlisted leaves (``helper`` is refused,
    ``invalid_request``), its ``agent_list`` shows only its own agents (not the lead's
    ``other``) and its definitions, it cannot close the lead's agent, and a leaf's own
    ``agent_*`` call is refused."""
    world.scenario(Scenario().agent_tool("agent_list").hang())
    other = world.ok("agent_delegate", definition="scout", task="be here", label="other")
    world.scenario(
        Scenario()
        .agent_tool("agent_delegate", definition="helper", task="nested")
        .agent_tool("agent_list")
        .agent_tool("agent_close", agent="other")
        .reply("boss saw its view")
    )
    boss = world.ok("agent_delegate", definition="helper", task="look", label="boss")
    delivery = world.wait_delivery("result", "boss", timeout=20)
    assert "boss saw its view" in delivery["text"]
    path = world.service.store.load(boss["run_id"]).pi_session_file
    assert path is not None
    [refused] = tool_results(path, "agent_delegate")
    assert refused["ok"] is False
    assert refused["error"]["category"] == "invalid_request"
    assert "not in the roster of agent boss" in refused["error"]["message"]
    [listed] = tool_results(path, "agent_list")
    assert listed["ok"] is True
    assert listed["owner_session_id"] == boss["session_id"]
    assert listed["agents"] == []  # the lead's "other" is not boss's
    assert [d["name"] for d in listed["agent_definitions"]] == ["scout"]
    assert "agents" not in listed["agent_definitions"][0]  # a leaf under boss
    [close] = tool_results(path, "agent_close")
    assert close["error"]["category"] == "target_not_found"
    assert world.agent("other") is not None  # untouched
    leaf_path = world.service.store.load(other["run_id"]).pi_session_file
    assert leaf_path is not None
    [leaf_call] = wait_until(
        lambda: tool_results(leaf_path, "agent_list") or None, 10, what="the leaf's call"
    )
    assert leaf_call["ok"] is False
    assert leaf_call["error"]["category"] == "invalid_request"
    assert "leaf agent" in leaf_call["error"]["message"]


def test_closing_a_delegating_agent_closes_its_cascade_child_first(world: ManagedWorld) -> None:
    boss = start_boss_with_a_gated_leaf(world)
    # listed as soon as its launch is recorded; its pane comes with the launch's next step
    leaf = wait_until(
        lambda: (agent := world.agent("leaf")) and agent.get("pane_id") and agent,
        20,
        interval=0.1,
        what="the leaf listed with its pane",
    )
    world.wait_state("boss", "blocked", timeout=20)
    closed = world.ok("agent_close", agent="boss")
    assert closed["closed"] == ["leaf", "boss"]
    panes = {p.pane_id for p in world.client.pane_list()}
    assert boss["pane_id"] not in panes and leaf["pane_id"] not in panes
    statuses = {g.label: g.status for g in world.service.store.scan()[0]}
    assert statuses == {"boss": "closed", "leaf": "closed"}
    assert world.ok("agent_list")["agents"] == []


def test_a_lead_restarted_mid_cascade_finishes_it_once(world: ManagedWorld) -> None:
    """The lead's controller process is replaced while the leaf works: the new one finds
    the cascade, types the leaf's result into boss's pane once, and delivers boss's result
    to the lead once."""
    boss = start_boss_with_a_gated_leaf(world)
    wait_until(lambda: world.agent("leaf"), 20, interval=0.1, what="the leaf listed")
    path = world.wait_state("boss", "blocked", timeout=20)["pi_session_path"]
    world.restart()
    assert world.service.controller_id == world.ok("agent_list")["owner_session_id"]
    assert world.agent("leaf") is not None  # the cascade is found again
    release(world, "leafgo")
    delivery = world.wait_delivery("result", "boss", timeout=20)
    assert boss["session_id"] in delivery["text"]
    world.restart()
    world.ok("agent_list")
    assert world.delivered("result", "boss") == [delivery]
    typed = [t for t in user_texts(path) if "Agent result · agent=leaf" in t]
    assert len(typed) == 1


def test_a_delegating_child_pulls_its_leafs_result_with_its_own_agent_list(
    world: ManagedWorld,
) -> None:
    """While boss works, nothing is pushed into its pane; its own ``agent_list`` delivers
    the leaf's result (the pull path), once, and boss's turn then ends with its result."""
    pull = (
        'for i in $(seq 200); do out=$("$PI_HERDSMAN_PYTHON" -m orchestrator call agent_list '
        '\'{}\'); case "$out" in *\'"kind": "result"\'*) echo "$out"; exit 0;; esac; '
        "sleep 0.1; done; exit 1"
    )
    world.scenario(
        Scenario()
        .run_tool("bash", gate("go"))
        .agent_tool("agent_delegate", definition="scout", task="quick", label="leaf")
        .run_tool("bash", pull)
        .reply("boss pulled the leaf")
    )
    boss = world.ok("agent_delegate", definition="helper", task="coordinate", label="boss")
    world.scenario(Scenario().reply("leaf quick answer"))
    release(world, "go")
    delivery = world.wait_delivery("result", "boss", timeout=30)
    assert "boss pulled the leaf" in delivery["text"]
    path = world.service.store.load(boss["run_id"]).pi_session_file
    assert path is not None
    pulled = [
        json.loads(m["content"][0]["text"])
        for m in session_messages(path, "toolResult")
        if m["toolName"] == "bash" and '"deliveries"' in m["content"][0]["text"]
    ]
    [listed] = pulled
    [got] = listed["deliveries"]
    assert got["kind"] == "result" and got["agent"] == "leaf"
    assert "leaf quick answer" in got["text"]
    assert not [t for t in user_texts(path) if "Agent result · agent=leaf" in t]  # not pushed


def test_steering_a_waiting_delegating_agent_posts_no_early_result(world: ManagedWorld) -> None:
    """A steer to boss while it waits for its leaf starts a turn (it is idle), whose end
    posts nothing: boss is still waiting; the leaf's result then starts the turn that
    reports."""
    world.scenario(
        Scenario()
        .run_tool("bash", gate("go"))
        .agent_tool("agent_delegate", definition="scout", task="leaf work", label="leaf")
        .reply("waiting for leaf")
        .then()
        .reply("steered, still waiting")
        .then()
        .reply("boss final after the leaf")
    )
    world.ok("agent_delegate", definition="helper", task="coordinate", label="boss")
    world.scenario(Scenario().run_tool("bash", gate("leafgo")).reply("leaf found it"))
    release(world, "go")
    path = world.wait_state("boss", "blocked", timeout=20)["pi_session_path"]
    world.ok("agent_steer", agent="boss", message="hurry")

    def steered_turn_ended() -> bool:
        texts = [c.get("text") for m in session_messages(path, "assistant") for c in m["content"]]
        return "steered, still waiting" in texts

    wait_until(steered_turn_ended, 10, what="boss's steered turn")
    record = world.wait_state("boss", "blocked")
    assert "agent_steer" in record["available_tools"]
    assert world.delivered("result", "boss") == []  # no early result
    release(world, "leafgo")
    delivery = world.wait_delivery("result", "boss", timeout=20)
    assert "boss final after the leaf" in delivery["text"]


def test_a_leafs_question_goes_to_its_delegating_owner_who_replies(world: ManagedWorld) -> None:
    """The leaf's ``ask_owner`` is typed into boss's pane (not delivered to the lead); boss
    answers with its own ``agent_reply``; the leaf's result then reaches boss, and boss's
    result the lead, each once."""
    world.scenario(
        Scenario()
        .run_tool("bash", gate("go"))
        .agent_tool("agent_delegate", definition="scout", task="leaf work", label="leaf")
        .reply("waiting for leaf")
        .then()
        .agent_tool("agent_reply", agent="leaf", message="take B")
        .reply("answered the leaf")
        .then()
        .reply("boss final: leaf did B")
    )
    boss = world.ok("agent_delegate", definition="helper", task="coordinate", label="boss")
    world.scenario(Scenario().ask_owner("A or B?").then().reply("leaf did B"))
    release(world, "go")
    delivery = world.wait_delivery("result", "boss", timeout=30)
    assert "boss final: leaf did B" in delivery["text"]
    assert world.delivered("ask", "leaf") == []  # the question was boss's, not the lead's
    path = world.service.store.load(boss["run_id"]).pi_session_file
    assert path is not None
    typed = user_texts(path)
    assert sum("Agent leaf needs your input" in t for t in typed) == 1, typed
    assert sum("Agent result · agent=leaf" in t for t in typed) == 1, typed
    [replied] = tool_results(path, "agent_reply")
    assert replied["ok"] is True and replied["agent"] == "leaf"
