"""The nine managed-agent tools end to end on the simulator with fake pi children.

Each test drives the tools through the registry (``run_tool``: schema, handler and result
shape together) against a simulator whose panes run the fake pi in managed mode (it speaks
the V4 mailbox when ``PI_HERDSMAN_MAILBOX`` is set). The controller runs outside Herdr, so
``agent_list`` is the pull path: every result and question must show up there exactly once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.managed.definitions import AgentDefinition
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.mailbox import Box, Kind, Mailbox
from orchestrator.managed.service import MANAGED_TOOL_NAMES, tool_policy_args
from orchestrator.managed.tools import SCHEMAS
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS


#: the fixtures of a managed world (a simulator whose fake pis play the world's scenario)
herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world


def write_scenario(world: ManagedWorld, turns: list[list[dict[str, Any]]]) -> None:
    (world.root / "scenario.json").write_text(
        json.dumps({"turns": [{"steps": steps} for steps in turns]})
    )


def test_delegate_then_the_result_is_delivered_once_and_the_agent_cleaned_up(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().reply("found three files"))
    started = world.ok("agent_delegate", definition="scout", task="Look around")
    assert started["action"] == "delegate"
    assert started["agent"] == "scout"  # the automatic label is the definition name
    assert started["request_id"] and started["session_id"] and started["pane_id"]
    delivery = world.wait_delivery("result", "scout")
    assert delivery["text"].startswith(
        f"Agent result · agent=scout · definition=scout · session={started['session_id']}"
        " · status=completed\nResult ref: result:scout#1"
    )
    assert "found three files" in delivery["text"]
    # cleaned up: the pane is closed, the agent gone from the list, never delivered again
    listed = world.ok("agent_list")
    assert [a for a in listed["agents"] if a.get("agent") == "scout"] == []
    assert listed["deliveries"] == []
    assert len(world.delivered("result", "scout")) == 1
    panes = {p.pane_id for p in world.client.pane_list()}
    assert started["pane_id"] not in panes


def test_an_ask_owner_question_then_a_reply_then_the_result(world: ManagedWorld) -> None:
    write_scenario(
        world,
        [[{"ask_owner": "Which database?"}], [{"reply": "used postgres"}]],
    )
    world.ok("agent_delegate", definition="scout", task="Pick a database", label="db")
    ask = world.wait_delivery("ask", "db")
    assert "Which database?" in ask["text"] and 'agent="db"' in ask["text"]
    record = world.wait_state("db", "blocked")
    assert record["available_tools"] == ["agent_inspect", "agent_reply", "agent_close"] or (
        record["available_tools"]
        == ["agent_inspect", "agent_transcript", "agent_reply", "agent_close"]
    )
    assert record["pending_ask"]["question"] == "Which database?"
    # steering is refused while the agent waits for its owner
    world.refused("agent_steer", "agent_busy", agent="db", message="hurry")
    replied = world.ok("agent_reply", agent="db", message="postgres")
    assert replied["ask_id"] == ask["ask_id"]
    result = world.wait_delivery("result", "db")
    assert "used postgres" in result["text"]
    assert len(world.delivered("ask", "db")) == 1
    # nothing left to answer
    world.refused("agent_reply", "target_not_found", agent="db", message="again")


def test_labels_automatic_collision_and_grammar(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    first = world.ok("agent_delegate", definition="scout", task="one")
    second = world.ok("agent_delegate", definition="scout", task="two")
    assert (first["agent"], second["agent"]) == ("scout", "scout-2")
    error = world.refused(
        "agent_delegate", "agent_label_exists", definition="scout", task="x", label="scout"
    )
    assert error["ids"] == {"label": "scout"}
    bad = world.refused(
        "agent_delegate", "invalid_request", definition="scout", task="x", label="Bad Label"
    )
    assert bad["details"]["field"] == "label"
    world.refused("agent_delegate", "invalid_request", definition="nope", task="x")


def test_steer_and_interrupt_while_working(world: ManagedWorld) -> None:
    # short waits give steering boundaries (for up to 6 s, however loaded the machine);
    # the interrupt aborts whichever step runs
    scenario = Scenario()
    for _ in range(40):
        scenario = scenario.wait(150)
    world.scenario(scenario.hang().then().reply("after the interrupt"))
    world.ok("agent_delegate", definition="scout", task="Long job", label="job")
    record = world.wait_state("job", "working")
    assert "agent_steer" in record["available_tools"]
    assert "agent_interrupt" in record["available_tools"]
    steered = world.ok("agent_steer", agent="job", message="also check tests")
    assert steered["assignment_request_id"] == record["active_request_id"]
    mailbox = Mailbox(world.service.store.root, record["workspace_id"], "job")
    wait_until(lambda: mailbox.pending(Box.TO_CHILD) == [], 10, what="the steer consumed")
    session = Path(record["pi_session_path"])
    wait_until(lambda: "also check tests" in session.read_text(), 10, what="steer in session")
    interrupted = world.ok("agent_interrupt", agent="job", message="stop and summarise")
    assert interrupted["assignment_request_id"] == record["active_request_id"]
    result = world.wait_delivery("result", "job")
    assert "status=completed" in result["text"]
    assert "after the interrupt" in result["text"]  # the same assignment went on
    assert len(world.delivered("result", "job")) == 1


def test_close_removes_the_agent_and_refuses_unknown_labels(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="gone")
    world.wait_state("gone", "working")
    closed = world.ok("agent_close", agent="gone")
    assert closed["closed"] == ["gone"]
    assert world.agent("gone") is None
    assert started["pane_id"] not in {p.pane_id for p in world.client.pane_list()}
    mailbox = Mailbox(world.service.store.root, started["workspace_id"], "gone")
    assert not mailbox.path.exists()
    world.refused("agent_close", "target_not_found", agent="gone")
    # the label is free again
    world.ok("agent_delegate", definition="scout", task="y", label="gone")


def test_close_cascades_child_first(world: ManagedWorld) -> None:
    """A record owned by the parent's pi session is the parent's child: closing the parent
    closes that child first (here a child whose pane is already gone, proven ``lost``),
    then the parent; an unprovable child would refuse the whole close."""
    world.scenario(Scenario().hang())
    parent = world.ok("agent_delegate", definition="helper", task="lead", label="parent")
    child = world.ok("agent_delegate", definition="scout", task="sub", label="child")
    store = world.service.store
    child_record = next(g for g in store.scan()[0] if g.label == "child")
    store.update(child_record, owner_session_id=parent["session_id"])
    shown = world.agent("child")  # in the lead's cascade, but not a direct agent: no tools
    assert shown is not None and shown["available_tools"] == []
    world.client.pane_close(child["pane_id"])
    closed = world.ok("agent_close", agent="parent")
    assert closed["closed"] == ["child", "parent"]
    assert parent["pane_id"] not in {p.pane_id for p in world.client.pane_list()}
    assert store.load(child["run_id"]).status == "closed"
    assert not Mailbox(store.root, child["workspace_id"], "child").path.exists()


def test_a_child_that_cannot_be_proved_refuses_the_cascade(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    parent = world.ok("agent_delegate", definition="helper", task="lead", label="parent")
    world.ok("agent_delegate", definition="scout", task="sub", label="child")
    store = world.service.store
    child_record = next(g for g in store.scan()[0] if g.label == "child")
    # the child's own state still names the controller: its ownership cannot be proved
    store.update(child_record, owner_session_id=parent["session_id"])
    error = world.refused("agent_close", "target_ambiguous", agent="parent")
    assert error["ids"] == {"label": "child"}
    assert world.agent("parent") is not None  # nothing was closed


def test_continue_from_the_session_path_inherits_the_label(world: ManagedWorld) -> None:
    world.scenario(Scenario().reply("first pass"))
    first = world.ok("agent_delegate", definition="scout", task="first", label="keeper")
    world.wait_delivery("result", "keeper")
    world.scenario(Scenario().reply("second pass"))
    again = world.ok("agent_continue", session=first["session_path"], task="continue")
    assert again["action"] == "continue"
    assert again["agent"] == "keeper"
    assert again["run_id"] != first["run_id"]
    assert again["session_id"] == first["session_id"]

    def second() -> dict[str, Any] | None:
        world.call("agent_list")
        found = [d for d in world.delivered("result", "keeper") if "second pass" in d["text"]]
        return dict(found[0]) if found else None

    result = wait_until(second, 10, interval=0.05, what="the second result")
    assert "result:keeper#2" in result["text"]
    # by UUID too, and an unknown one is refused
    world.refused(
        "agent_continue",
        "invalid_request",
        session="00000000-0000-4000-8000-000000000000",
        task="x",
    )
    world.refused("agent_continue", "invalid_request", session="abc", task="x")


def test_continue_while_the_session_is_live_is_busy(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    first = world.ok("agent_delegate", definition="scout", task="x", label="busy")
    world.refused("agent_continue", "agent_busy", session=first["session_id"], task="y")


def test_a_restarted_controller_finds_its_agents_and_delivers_nothing_twice(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().wait(300).reply("done after restart"))
    first = world.ok("agent_delegate", definition="scout", task="x", label="durable")
    owner = world.service.controller_id
    world.restart()
    assert world.service.controller_id == owner  # the durable identity
    result = world.wait_delivery("result", "durable")
    assert "done after restart" in result["text"]
    world.restart()
    listed = world.ok("agent_list")
    assert listed["deliveries"] == [] and world.agent("durable") is None
    assert len(world.delivered("result", "durable")) == 1
    assert first["pane_id"] not in {p.pane_id for p in world.client.pane_list()}


def test_a_result_posted_while_no_controller_ran_is_delivered_once_after_restart(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().reply("while away"))
    started = world.ok("agent_delegate", definition="scout", task="x", label="away")
    mailbox = Mailbox(world.service.store.root, started["workspace_id"], "away")
    wait_until(
        lambda: any(m.kind is Kind.RESULT for m in mailbox.pending(Box.TO_OWNER)),
        10,
        what="the child's result record",
    )
    world.restart()
    first = world.ok("agent_list")
    second = world.ok("agent_list")
    assert [d["kind"] for d in first["deliveries"]] == ["result"]
    assert second["deliveries"] == []


def test_a_pane_closed_under_the_agent_is_lost_and_closable(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="victim")
    world.wait_state("victim", "working")
    world.client.pane_close(started["pane_id"])
    record = world.wait_state("victim", "lost")
    assert "agent_close" in record["available_tools"]
    assert "agent_steer" not in record["available_tools"]
    world.refused("agent_steer", "agent_busy", agent="victim", message="x")
    world.ok("agent_close", agent="victim")
    assert world.agent("victim") is None


def test_inspect_and_transcript_of_a_working_agent(world: ManagedWorld) -> None:
    world.scenario(Scenario().run_tool("bash", "echo hello-from-child").hang())
    world.ok("agent_delegate", definition="scout", task="x", label="seen")
    record = world.wait_state("seen", "working")
    inspected = world.ok("agent_inspect", agent="seen")
    assert inspected["pane_id"] == record["pane_id"]
    assert inspected["recent_output_truncated"] is False
    assert inspected["text"].startswith("Inspect agent seen.")
    wait_until(
        lambda: "agent_transcript" in (world.agent("seen") or {}).get("available_tools", []),
        10,
        what="a materialized session file",
    )
    transcript = world.ok("agent_transcript", agent="seen")
    assert "user:\nx" in transcript["transcript"]
    assert transcript["transcript_truncated"] is False


def test_operations_on_an_unknown_agent_are_target_not_found(world: ManagedWorld) -> None:
    for tool in ("agent_inspect", "agent_transcript", "agent_close"):
        world.refused(tool, "target_not_found", agent="ghost")
    for tool in ("agent_steer", "agent_interrupt", "agent_reply"):
        world.refused(tool, "target_not_found", agent="ghost", message="m")


def test_the_child_gets_the_extension_and_the_definitions_tool_allowlist(
    world: ManagedWorld,
) -> None:
    """A real pi loads the managed-child extension from ``$PI_CODING_AGENT_DIR/extensions``
    and drops every tool ``--tools`` does not name, so ``ask_owner`` is always named."""
    (world.root / "pi" / "agents" / "reader.md").write_text(
        "---\nname: reader\ndescription: Reads only\ntools: [read, bash]\n"
        "excludeTools: [bash]\n---\nRead.\n"
    )
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="reader", task="x")
    installed = world.root / "pi" / "extensions" / "herdr-managed-child.ts"
    assert installed.is_file() and oct(installed.stat().st_mode & 0o777) == "0o600"
    info = world.client.pane_process_info(started["pane_id"])
    commands = json.dumps(info)
    assert "--tools read,ask_owner" in commands or '"read,ask_owner"' in commands, commands


def test_tool_policy_args() -> None:
    def of(**front: object) -> list[str]:
        return tool_policy_args(AgentDefinition("d", {"name": "d", **front}, "", ()))

    assert of() == []
    assert of(excludeTools=["bash"]) == ["--exclude-tools", "bash"]
    assert of(excludeTools=["ask_owner", "bash"]) == ["--exclude-tools", "bash"]
    assert of(tools=["read", "bash"], excludeTools=["bash", "web*"]) == [
        "--tools",
        "read,ask_owner",
        "--exclude-tools",
        "web*",
    ]
    with pytest.raises(ManagedAgentError, match="mandatory ask_owner") as refused:
        of(excludeTools=["ask_*"])
    assert refused.value.category == "invalid_request"
    assert of(noTools=True) == ["--tools", "ask_owner"]
    assert of(tools=["read", "ask_owner"]) == ["--tools", "read,ask_owner"]
    assert of(tools=["read", "bash"], excludeTools=["bash"]) == ["--tools", "read,ask_owner"]


def test_a_delegating_definitions_tool_allowlist_names_the_managed_tools() -> None:
    helper = AgentDefinition("h", {"name": "h", "tools": ["read"], "agents": ["scout"]}, "", ())
    [flag, names] = tool_policy_args(helper)
    assert flag == "--tools"
    assert names.split(",") == ["read", "ask_owner", *MANAGED_TOOL_NAMES]
    assert set(MANAGED_TOOL_NAMES) == set(SCHEMAS)  # the nine, as served
