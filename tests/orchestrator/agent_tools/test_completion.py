"""No ``completed`` without evidence (issue 10 §1): each reproduction of a false ``completed``
and of a slot held by a finished task, on the simulator with fake agents.

(a) the spawning process (``herdr-orchestrator call``) killed with a real ``kill -9`` before
its prompt was delivered, then a retry with the same ``client_task_id``; (b) the same
``client_task_id`` while the first spawn is still in flight; (c) the simulator killed and
restarted (session restored, the agent resumed idle) under a ``wait: false`` task; (d) an
agent that flickers ``working → done → working → done``; and the concurrency cap freeing the
slot of a task that finished or lost its pane, without anyone harvesting it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools import completion
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.control import close_agent, message_agent
from orchestrator.agent_tools.records import TaskRecord, now_iso
from orchestrator.client.types import AgentInfo
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools.test_get_result import get_result
from tests.orchestrator.agent_tools.test_spawn import checked, make_ctx, scenario_args, spawn
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import SCALE, wait_until

pytestmark = FAST_AGENTS

BIN = Path(sys.executable).parent


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    return make_ctx(herdr_server, tmp_path)


def history(ctx: AgentToolsContext, task_id: str) -> list[str]:
    """The statuses the record went through."""
    return [step["status"] for step in ctx.store.get(task_id).history]


# -- (a) the spawn killed before its prompt was delivered --------------------------------------


def test_spawn_killed_before_its_prompt_then_retried_is_spawn_interrupted(
    herdr_server: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kill -9`` of ``herdr-orchestrator call herdr_spawn_agent`` while its ``agent.prompt``
    is in flight (held by a fault, then dropped unanswered: the prompt never reaches the
    agent); the agent is up and idle. The retry with the same ``client_task_id`` must not
    read that idle agent as the task's result.

    The retry must wait out ``SUBMIT_GRACE_MS`` (a prompt in flight when its spawn died may
    still land) before it may call the spawn interrupted: it runs in this process, with the
    grace cut from 10 s to one (the killed spawn was another process all the same).
    """
    monkeypatch.setattr(completion, "SUBMIT_GRACE_MS", 1_000)
    assert herdr_server.sim is not None
    state = tmp_path / "state"
    env = {k: v for k, v in herdr_server.env.items() if k != "HERDR_PANE_ID"}
    env.update(
        HERDR_BIN_PATH=str(herdr_server.cli_path),
        HERDR_ORCHESTRATOR_STATE_DIR=str(state),
        HERDR_ORCHESTRATOR_ARTIFACT_DIR=str(state / "artifacts"),
    )
    args = {
        "prompt": "write the report",
        "cwd": str(tmp_path),
        "client_task_id": "job-a",
        "timeout_ms": 30_000,
        "agent_args": scenario_args(tmp_path, Scenario().reply("an answer")),
    }
    fault = herdr_server.sim.faults.add("agent.prompt", delay=3.0, drop="before", times=1)
    argv = [str(BIN / "herdr-orchestrator"), "call", "herdr_spawn_agent", json.dumps(args)]
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: fault.hits >= 1, 30, what="the spawn's agent.prompt in flight")
    finally:
        first.kill()  # SIGKILL: no handler, no cleanup
        first.communicate(timeout=30)
    assert first.returncode == -signal.SIGKILL
    ctx = make_ctx(herdr_server, tmp_path)
    [record] = ctx.store.list_records()
    assert record.pane_id is not None
    assert ctx.client.agent_get(record.pane_id).agent_status in ("idle", "done")

    result = spawn(ctx, **args)
    assert result["taskId"] == record.task_id
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "SPAWN_INTERRUPTED"
    assert "prompt not delivered" in result["error"]["message"]
    assert result["finalMessage"] is None
    assert result["task"]["status"] == "failed"
    # never started twice
    assert len(ctx.client.agent_list()) == 1


def test_a_starting_record_whose_spawn_is_alive_reads_running(ctx: AgentToolsContext) -> None:
    """The spawn (this process) has not delivered the prompt yet: running, never completed or
    failed, and the record stays the spawn's."""
    record, _ = ctx.store.create(kind="pi", cwd="/")
    result = get_result(ctx, target=record.task_id, wait=False)
    assert result["status"] == "running", result
    assert result["error"] is None
    assert any("still preparing" in note for note in result["warnings"]), result["warnings"]
    assert ctx.store.get(record.task_id).status == "starting"


def test_a_reused_pid_is_not_the_owner_of_a_starting_record(ctx: AgentToolsContext) -> None:
    """The spawn died long ago and its pid now names another process: not "running"."""
    record, _ = ctx.store.create(kind="pi", cwd="/")
    assert record.owner_alive  # this process, with its own start time
    assert record.owner_start is not None
    record = ctx.store.update(record.task_id, owner_start=record.owner_start - 1)
    result = get_result(ctx, target=record.task_id, wait=False)
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "SPAWN_INTERRUPTED"


# -- (b) a duplicate client_task_id while the first spawn is in flight -------------------------


def test_duplicate_client_task_id_in_flight_waits_for_the_first_and_never_writes_over_it(
    herdr_server: HerdrServer, ctx: AgentToolsContext, tmp_path: Path
) -> None:
    assert herdr_server.sim is not None
    args = {
        "prompt": "the real job",
        "cwd": str(tmp_path),
        "client_task_id": "job-b",
        "agent_args": scenario_args(tmp_path, Scenario().wait(600).reply("the real answer")),
    }
    # the first spawn is held in agent.start: its pane exists, its agent does not yet
    fault = herdr_server.sim.faults.add("agent.start", delay=3.0, times=1)
    results: dict[str, dict[str, Any]] = {}

    def first() -> None:
        results["first"] = spawn(make_ctx(herdr_server, tmp_path), **args)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        wait_until(lambda: fault.hits >= 1, 30, what="the first spawn in agent.start")
        [record] = ctx.store.list_records()
        peek = spawn(ctx, **args, wait=False)
        assert peek["taskId"] == record.task_id
        assert peek["status"] == "running", peek
        assert peek["nextAction"] == "wait"
        assert ctx.store.get(record.task_id).updated_at == record.updated_at  # not written
        waited = spawn(ctx, **args, timeout_ms=60_000)
    finally:
        thread.join(60 * SCALE)
    assert waited["taskId"] == record.task_id
    assert waited["status"] == "completed", waited
    assert waited["finalMessage"] == "the real answer"
    assert results["first"]["status"] == "completed", results["first"]
    assert results["first"]["finalMessage"] == "the real answer"
    assert history(ctx, record.task_id) == ["starting", "running", "completed"]
    assert len(ctx.client.agent_list()) == 1


# -- (c) the simulator killed and restarted under a running task -------------------------------


def test_agent_restored_after_a_restart_without_its_answer_is_not_completed(
    herdr_server: HerdrServer, ctx: AgentToolsContext, tmp_path: Path
) -> None:
    sim = herdr_server.sim
    assert sim is not None
    handle = spawn(
        ctx,
        prompt="a long job",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, Scenario().hang()),
    )
    assert handle["status"] == "running", handle
    pane = handle["paneId"]
    session_json = sim.socket_path.with_name("session.json")

    def saved() -> bool:
        try:
            data = json.loads(session_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        panes = [p for w in data["workspaces"] for t in w["tabs"] for p in t["panes"].values()]
        return any("agent_session" in p and p.get("agent_name") == handle["name"] for p in panes)

    wait_until(saved, 10, what="the agent's session saved")
    before = ctx.client.agent_get(pane)
    sim.stop()  # the server and every pane process die with it
    restarted = Simulator(sim.config).start()
    try:
        resumed = wait_until(
            lambda: _idle_agent(ctx, pane), 20, what="the agent resumed idle after the restore"
        )
        assert resumed.terminal_id != before.terminal_id
        result = get_result(ctx, target=handle["taskId"], timeout_ms=20_000)
        assert result["status"] == "failed", result
        assert result["error"]["code"] == "AGENT_RESTARTED"
        assert result["finalMessage"] is None
        assert result["task"]["status"] == "failed"
    finally:
        restarted.stop()


def test_a_restored_agent_resuming_the_tasks_session_is_still_the_tasks_to_control(
    herdr_server: HerdrServer, ctx: AgentToolsContext, tmp_path: Path
) -> None:
    # Herdr restarted: it restored the task's pi into a new terminal with `pi --session
    # <path>` (its resume plan), same pane, name and session file. The control tools used to
    # refuse it NOT_OWNED ("this orchestrator did not start it"), which was untrue: it is the
    # task's own conversation, resumed. Real pi: tests/real_agents/test_orchestrator_pi.py.
    sim = herdr_server.sim
    assert sim is not None
    done = spawn(
        ctx, prompt="first", cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, Scenario().reply("answered before")),
    )  # fmt: skip
    assert done["status"] == "completed", done
    pane, session = done["paneId"], done["artifacts"]["sessionFile"]
    before = ctx.client.agent_get(pane)
    sim.stop()
    restarted = Simulator(sim.config).start()
    try:
        resumed = wait_until(
            lambda: _idle_agent(ctx, pane), 20, what="the agent resumed idle after the restore"
        )
        assert resumed.terminal_id != before.terminal_id and resumed.name == done["name"]
        assert completion.session_path_of(resumed) == session
        answered = checked(
            message_agent(
                {"target": done["taskId"], "message": "and now?", "kind": "NOTE", "wait": True},
                ctx,
            )
        )
        if answered["status"] == "running":
            # Herdr's prompt wait ends at the first status change after the prompt; a
            # restored agent still settling can make one before the message's turn starts
            # (real Herdr too): the turn is then awaited from its session, as a caller would
            answered = get_result(ctx, target=done["taskId"], timeout_ms=20_000)
        assert answered["status"] == "completed", answered
        assert answered["finalMessage"] != "answered before", answered
        assert "and now?" in Path(session).read_text()  # the resumed session got the message
        closed = checked(close_agent({"target": done["taskId"]}, ctx))
        assert (closed["status"], closed["task"]["status"]) == ("gone", "closed"), closed
    finally:
        restarted.stop()


def _idle_agent(ctx: AgentToolsContext, pane: str) -> Any:
    try:
        info = ctx.client.agent_get(pane)
    except Exception:
        return None
    return info if info.agent_status in ("idle", "done") else None


# -- (d) working → done → working → done ------------------------------------------------------


def test_a_flicker_to_done_mid_turn_is_not_the_end_of_the_turn(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = Scenario().blip(400).wait(200).reply("after the flicker")
    result = spawn(
        ctx, prompt="flicker", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert result["status"] == "completed", result
    assert result["finalMessage"] == "after the flicker"
    assert ctx.store.get(result["taskId"]).status == "completed"


def test_harvest_waits_through_a_flicker_for_the_answer(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = Scenario().blip(400).wait(200).reply("harvested after the flicker")
    handle = spawn(
        ctx,
        prompt="flicker",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, scenario),
    )
    ctx.client.agent_wait(handle["paneId"], until=("idle", "done"), timeout_ms=10_000)
    result = get_result(ctx, target=handle["taskId"], timeout_ms=20_000)
    assert result["status"] == "completed", result
    assert result["finalMessage"] == "harvested after the flicker"


def test_settled_pi_that_never_answered_is_no_answer_after_the_grace(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(completion, "ANSWER_GRACE_MS", 300)
    handle = spawn(
        ctx,
        prompt="x",
        cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, Scenario().reply("answered")),
    )
    assert handle["status"] == "completed", handle
    # the same idle agent, but a record whose task file the session never mentions
    record = ctx.store.update(handle["taskId"], artifact_dir=str(tmp_path / "elsewhere"))
    result = get_result(ctx, target=record.task_id, timeout_ms=10_000)
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "NO_ANSWER"


# -- slots --------------------------------------------------------------------------------------


def test_a_finished_wait_false_task_frees_its_slot_without_a_harvest(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = make_ctx(herdr_server, tmp_path, max_concurrent=1, queue_timeout_ms=8_000)
    first = spawn(
        ctx,
        prompt="quick",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, Scenario().wait(1500).reply("first done")),
    )
    assert first["status"] == "running", first
    second = spawn(
        ctx,
        prompt="next",
        cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, Scenario().reply("second done")),
    )
    assert second["status"] == "completed", second
    assert ctx.store.get(first["taskId"]).status == "completed"


def test_a_task_whose_pane_was_closed_frees_its_slot_without_a_harvest(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = make_ctx(herdr_server, tmp_path, max_concurrent=1, queue_timeout_ms=8_000)
    first = spawn(
        ctx,
        prompt="forever",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, Scenario().hang()),
    )
    assert first["status"] == "running", first
    ctx.client.pane_close(first["paneId"])
    second = spawn(
        ctx,
        prompt="next",
        cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, Scenario().reply("second done")),
    )
    assert second["status"] == "completed", second
    assert ctx.store.get(first["taskId"]).status == "gone"


def test_a_working_task_keeps_its_slot(herdr_server: HerdrServer, tmp_path: Path) -> None:
    ctx = make_ctx(herdr_server, tmp_path, max_concurrent=1, queue_timeout_ms=300)
    first = spawn(
        ctx,
        prompt="forever",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, Scenario().hang()),
    )
    second = spawn(ctx, prompt="queued", cwd=str(tmp_path))
    assert second["error"]["code"] == "QUEUE_TIMEOUT", second
    assert ctx.store.get(first["taskId"]).status == "running"


# -- the rule for kinds without a session, and a prompt held back at start -------------------


def _agent(status: str, seq: int, terminal: str = "term_1") -> AgentInfo:
    return AgentInfo.from_wire(
        {"terminal_id": terminal, "pane_id": "w1:p1", "agent_status": status,
         "state_change_seq": seq}
    )  # fmt: skip


def _record(tmp_path: Path, kind: str = "claude", **delivery: Any) -> TaskRecord:
    stamp = now_iso()
    return TaskRecord(
        task_id="t-000000000001", status="running", created_at=stamp, updated_at=stamp,
        kind=kind, cwd=str(tmp_path), pane_id="w1:p1", artifact_dir=str(tmp_path / "art"),
        terminal_id="term_1", delivery={"sendingAt": stamp, **delivery},
    )  # fmt: skip


def test_screen_kind_completes_only_after_herdr_saw_it_settle_after_the_prompt(
    tmp_path: Path,
) -> None:
    record = _record(tmp_path, seqBefore=3, sentAt=now_iso(), seqAfter=4, statusAfter="working")
    root = tmp_path / "artifacts"
    # still the status Herdr reported right after the prompt, seen settled: no turn since
    assert completion.judge(record, _agent("idle", 4), None, root).status == "running"
    done = completion.judge(record, _agent("done", 5), None, root)
    assert (done.status, done.conclusive) == ("completed", True)
    assert "after the task prompt" in done.evidence[0].detail
    assert completion.judge(record, _agent("working", 6), None, root).status == "running"
    restarted = completion.judge(record, _agent("idle", 9, terminal="term_2"), None, root)
    assert restarted.error is not None and restarted.error.code == "AGENT_RESTARTED"
    (tmp_path / "art").mkdir()
    # a link planted as result.md is not the child's report (safe_fs: no link followed)
    (tmp_path / "elsewhere.md").write_text("done\n")
    (tmp_path / "art" / "result.md").symlink_to(tmp_path / "elsewhere.md")
    linked = completion.judge(record, _agent("idle", 9, "term_2"), None, root)
    assert linked.error is not None and linked.error.code == "AGENT_RESTARTED"
    (tmp_path / "art" / "result.md").unlink()
    (tmp_path / "art" / "result.md").write_text("done\n")
    assert completion.judge(record, _agent("idle", 9, "term_2"), None, root).status == "completed"


def test_the_prompted_terminal_is_the_records_own_terminal_id(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    # one fact in one place: ownership (fleet.same_agent) and the restart rule read the same
    result = spawn(
        ctx, prompt="x", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, Scenario())
    )
    assert result["status"] == "completed", result
    record = ctx.store.get(result["taskId"])
    assert record.terminal_id and record.delivery is not None
    assert "terminalId" not in record.delivery
    assert completion.Delivery.of(record).terminal_id == record.terminal_id


def test_a_prompt_held_back_by_a_question_at_start_is_never_completed(tmp_path: Path) -> None:
    stamp = now_iso()
    record = TaskRecord(
        task_id="t-000000000002", status="blocked", created_at=stamp, updated_at=stamp,
        kind="pi", cwd=str(tmp_path), pane_id="w1:p1", delivery=completion.held(),
    )  # fmt: skip
    verdict = completion.judge(record, _agent("idle", 7), None, tmp_path)
    assert verdict.status == "failed"
    assert verdict.error is not None and verdict.error.code == "PROMPT_NOT_SENT"
    assert completion.phase(record) == "held"


def test_a_spawn_that_failed_before_its_prompt_reports_its_own_error(
    herdr_server: HerdrServer, ctx: AgentToolsContext, tmp_path: Path
) -> None:
    """Whatever the pane shows afterwards, the recorded cause stands (not AGENT_EXITED)."""
    assert herdr_server.sim is not None
    herdr_server.sim.faults.add("agent.start", error=("agent_name_taken", "name taken"), times=1)
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), name="taken")
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "NAME_TAKEN"
    assert result["error"]["herdrCode"] == "agent_name_taken"
    assert result["task"]["error"]["code"] == "NAME_TAKEN"


def test_a_message_whose_turn_is_not_in_the_session_is_not_completed(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Herdr answered agent.prompt's wait with a settled status that predates the message (a
    # restored agent under load did so): the session's last answer is the older turn's, and
    # message_agent used to call that "completed" with the old answer as its final message.
    done = spawn(
        ctx, prompt="first", cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, Scenario().reply("answered before")),
    )  # fmt: skip
    assert done["status"] == "completed", done
    client = ctx.client

    def settled_before_the_message(pane_id: str, text: str, **_: Any) -> AgentInfo:
        return client.agent_get(pane_id)  # nothing typed: the turn never starts

    monkeypatch.setattr(client, "agent_prompt", settled_before_the_message)
    result = checked(
        message_agent({"target": done["taskId"], "message": "and now?", "wait": True}, ctx)
    )
    assert result["status"] == "running", result
    assert result.get("finalMessage") is None, result
    details = [item["detail"] for item in result["evidence"]]
    assert "the message not yet in it" in details, details
    assert ctx.store.get(done["taskId"]).status == "running"
    # nor does a harvest right after take the older answer for the message's
    harvested = get_result(ctx, target=done["taskId"], wait=False)
    assert harvested["status"] == "running", harvested
    assert harvested.get("finalMessage") is None, harvested
