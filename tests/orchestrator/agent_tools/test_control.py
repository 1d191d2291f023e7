"""``herdr_interrupt_agent``, ``herdr_close_agent`` and ``herdr_message_agent`` on the
simulator, with fake agents owned through task records written directly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from herdr_sim.client import RequestFailed
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.control import close_agent, interrupt_agent, message_agent
from orchestrator.agent_tools.fleet import list_agents
from orchestrator.agent_tools.transcript import load_messages
from orchestrator.agent_tools.worktree import create_worktree
from orchestrator.client.sync import HerdrClient
from pytest_herdr.agents import Agent, FakeAgents
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient as PytestHerdrClient
from pytest_herdr.handles import Pane
from pytest_herdr.waits import wait_until
from tests.orchestrator.agent_tools.test_fleet import agent_result, make_ctx, own
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    """The agent-tools context of this test."""
    return make_ctx(herdr_server, tmp_path)


def working(fake: FakeAgents, name: str = "w") -> Agent:
    """A pi agent stuck in a turn until Escape."""
    agent = fake.start("pi", fake.scenario().hang(), name=name)
    agent.prompt("loop forever", wait=False)
    agent.wait("working")
    return agent


def agent_names(client: PytestHerdrClient) -> list[str]:
    """The names of Herdr's live agents."""
    return [a["name"] for a in client.call("agent.list")["agents"]]


def user_texts(agent: Agent) -> list[str]:
    """What the pi agent received as prompts (from its session file)."""
    path = agent.info["agent_session"]["value"]
    return [m["text"] for m in load_messages(path) if m["role"] == "user"]


# -- interrupt ----------------------------------------------------------------------------------


def test_interrupt_aborts_the_turn_and_marks_the_record(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = working(herdr_fake_agent)
    record = own(ctx, agent)
    value = agent_result(interrupt_agent({"target": record.task_id}, ctx))
    assert (value["status"], value["error"]["code"]) == ("failed", "INTERRUPTED")
    assert value["task"]["status"] == "interrupted"
    assert ctx.store.get(record.task_id).status == "interrupted"
    assert agent.status == "idle"  # the pane and the agent remain
    assert any(e["detail"].startswith("Escape sent") for e in value["evidence"])


def test_interrupt_refuses_a_foreign_agent(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = working(herdr_fake_agent, name="theirs")
    value = agent_result(interrupt_agent({"target": "theirs"}, ctx))
    assert (value["error"]["code"], value["taskId"]) == ("NOT_OWNED", None)
    assert agent.status == "working"


def test_interrupt_unknown_target(ctx: AgentToolsContext) -> None:
    value = agent_result(interrupt_agent({"target": "nobody"}, ctx))
    assert value["error"]["code"] == "TASK_NOT_FOUND"


def test_interrupt_a_task_whose_pane_is_gone(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_client: PytestHerdrClient
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="w")
    record = own(ctx, agent)
    herdr_client.call("pane.close", pane_id=agent.pane.pane_id)
    value = agent_result(interrupt_agent({"target": "w"}, ctx))
    assert (value["status"], value["error"]["code"]) == ("gone", "PANE_GONE")
    assert ctx.store.get(record.task_id).status == "gone"


def test_interrupt_never_reports_an_answer_from_before_the_task_prompt(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    # the session's last assistant message answered an earlier prompt, not the task's: the
    # completion rule (an answer after our prompt) holds for interrupt too
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("old answer"), name="w")
    agent.prompt("someone else's question")
    record = own(ctx, agent)
    value = agent_result(interrupt_agent({"target": record.task_id}, ctx))
    assert (value["status"], value["error"]["code"]) == ("failed", "INTERRUPTED"), value
    assert value["finalMessage"] is None


def test_interrupt_after_the_task_was_answered_reports_that_answer(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    scenario = herdr_fake_agent.scenario().reply("old answer").then().reply("task answer")
    agent = herdr_fake_agent.start("pi", scenario, name="w")
    agent.prompt("someone else's question")
    record = own(ctx, agent)
    task_md = Path(str(record.artifact_dir)) / "task.md"
    agent.prompt(f"Your task is in {task_md} - read it")
    value = agent_result(interrupt_agent({"target": record.task_id}, ctx))
    assert (value["status"], value["finalMessage"]) == ("completed", "task answer"), value


# Herdr's clocks at 0.2: its 5 s prompt stall is 1 s, the fake pi's 8 s start 1.6 s (the order
# the test needs stays), so the test takes ~1 s instead of ~5 s
@pytest.mark.herdr_time_scale(0.2)
def test_a_message_the_agent_never_showed_taking_is_not_reported_as_a_long_turn(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    # a pi still starting up keeps a submitted prompt in its editor (real pi: "Startup is
    # still in progress"); Herdr answers agent_prompt_stalled after 5 s. The result said
    # "not settled within 30000 ms" — a wait that never happened — and nothing else.
    scenario = herdr_fake_agent.scenario().start_slowly(8000).reply("late")
    agent = herdr_fake_agent.start("pi", scenario, name="w")
    record = own(ctx, agent)
    value = agent_result(
        message_agent(
            {"target": record.task_id, "message": "hi", "wait": True, "timeout_ms": 30_000},
            ctx,
        )
    )
    details = [e["detail"] for e in value["evidence"]]
    assert "no state change after the message (agent_prompt_stalled)" in details, value
    assert not any("not settled within" in d for d in details)
    assert any("no sign of taking the message" in w for w in value["warnings"]), value


# -- close --------------------------------------------------------------------------------------


def test_close_an_idle_owned_agent_keeps_the_session_file(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_client: PytestHerdrClient
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("done"), name="w")
    agent.prompt("go")
    session = Path(agent.info["agent_session"]["value"])
    record = own(ctx, agent)
    value = agent_result(close_agent({"target": "w"}, ctx))
    assert (value["status"], value["nextAction"], value["task"]["status"]) == (
        "gone",
        "none",
        "closed",
    )
    assert "w" not in agent_names(herdr_client)
    assert session.is_file()
    assert value["artifacts"]["sessionFile"] == str(session)
    assert ctx.store.get(record.task_id).status == "closed"


def test_closing_a_task_that_never_got_a_pane_says_so(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    """A spawn that failed before Herdr gave it a pane leaves a record with no pane: closing
    it says that, not that a pane ``None`` was already gone."""
    record, _ = ctx.store.create(kind="pi", cwd=str(tmp_path), name="never")
    ctx.store.update(record.task_id, status="failed")
    value = agent_result(close_agent({"target": record.task_id}, ctx))
    assert (value["status"], value["task"]["status"]) == ("gone", "closed"), value
    said = [item["detail"] for item in value["evidence"]]
    assert "the task never got a pane (its spawn did not start one)" in said, said
    assert not any("None" in detail for detail in said), said


def test_close_refuses_a_working_agent_unless_forced(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_client: PytestHerdrClient
) -> None:
    agent = working(herdr_fake_agent)
    record = own(ctx, agent)
    refused = agent_result(close_agent({"target": "w"}, ctx))
    assert (refused["status"], refused["error"]["code"]) == ("running", "AGENT_WORKING")
    assert "w" in agent_names(herdr_client)
    forced = agent_result(close_agent({"target": "w", "force": True}, ctx))
    assert forced["status"] == "gone"
    assert "w" not in agent_names(herdr_client)
    assert ctx.store.get(record.task_id).status == "closed"


def test_close_refuses_unowned_panes(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_client: PytestHerdrClient
) -> None:
    herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="theirs")
    value = agent_result(close_agent({"target": "theirs", "force": True}, ctx))
    assert value["error"]["code"] == "NOT_OWNED"
    assert "theirs" in agent_names(herdr_client)


def git(cwd: Path, *args: str) -> None:
    """Run git quietly in ``cwd``."""
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_close_removes_an_isolated_worktree_dirty_needs_force(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="iso")
    record = own(ctx, agent)
    tree = create_worktree(repo, record.task_id, tmp_path / "wt")
    ctx.store.update(
        record.task_id,
        isolated=True,
        worktree_path=tree.path,
        branch=tree.branch,
        base_commit=tree.base_commit,
    )
    (Path(tree.path) / "new.txt").write_text("dirty\n")
    dirty = agent_result(close_agent({"target": "iso", "remove_worktree": True}, ctx))
    assert dirty["error"]["code"] == "WORKTREE_DIRTY"
    assert Path(tree.path).is_dir()
    assert ctx.store.get(record.task_id).status == "running"
    closed = agent_result(
        close_agent({"target": "iso", "remove_worktree": True, "force": True}, ctx)
    )
    assert closed["status"] == "gone"
    assert not Path(tree.path).exists()
    assert any(e["source"] == "git" for e in closed["evidence"])


# -- message ------------------------------------------------------------------------------------


def test_note_is_wrapped_and_waited_for(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    scenario = herdr_fake_agent.scenario().reply("first").then().reply("noted, fixed")
    agent = herdr_fake_agent.start("pi", scenario, name="w")
    agent.prompt("task")
    record = own(ctx, agent, status="completed")
    value = agent_result(
        message_agent(
            {"target": "w", "message": "also fix b.py", "kind": "NOTE", "wait": True}, ctx
        )
    )
    assert (value["status"], value["finalMessage"]) == ("completed", "noted, fixed")
    assert user_texts(agent)[-1] == (
        '<agent-message from="dsh:orchestrator" to="w" kind="NOTE">NOTE: also fix b.py'
        "</agent-message>"
    )
    assert ctx.store.get(record.task_id).status == "completed"


def test_review_findings_go_through_a_file_with_the_round(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="w")
    record = own(ctx, agent)
    findings = "BLOCKER: a.py crashes on empty input\nNIT: typo in README"
    value = agent_result(
        message_agent(
            {
                "target": "w",
                "message": findings,
                "kind": "REVIEW_FINDINGS",
                "round": 2,
                "wait": True,
            },
            ctx,
        )
    )
    assert value["status"] == "completed"
    file = Path(str(record.artifact_dir)) / "messages" / "001-review-findings.md"
    body = file.read_text()
    assert "REVIEW_FINDINGS round 2" in body
    assert "BLOCKER: a.py crashes on empty input" in body
    prompt = user_texts(agent)[-1]
    assert 'kind="REVIEW_FINDINGS" round="2"' in prompt
    assert str(file) in prompt and "\n" not in prompt


def test_a_blocked_agent_gets_the_answer_typed(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    scenario = herdr_fake_agent.scenario().ask("Which database?").reply("using postgres")
    agent = herdr_fake_agent.start("pi", scenario, name="w")
    agent.prompt("set up storage", until=("blocked",))
    record = own(ctx, agent, status="blocked")
    value = agent_result(
        message_agent({"target": record.task_id, "message": "postgres", "kind": "ANSWER",
                       "wait": True}, ctx)
    )  # fmt: skip
    assert (value["status"], value["finalMessage"]) == ("completed", "using postgres")
    assert any("typed as its answer" in e["detail"] for e in value["evidence"])
    assert user_texts(agent) == ["set up storage"]  # the answer is not a new prompt


def test_without_wait_the_task_is_running(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().hang(), name="w")
    record = own(ctx, agent, status="completed")
    value = agent_result(message_agent({"target": "w", "message": "go on"}, ctx))
    assert (value["status"], value["nextAction"]) == ("running", "wait")
    assert ctx.store.get(record.task_id).status == "running"
    agent.wait("working")


def test_message_to_a_starting_task_leaves_its_spawn_the_record(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    # a spawn in flight (its owner, this process, is alive) owns its "starting" record: the
    # message goes through the record-write check and never marks it running
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="w")
    record = own(ctx, agent, status="starting")
    value = agent_result(message_agent({"target": "w", "message": "go on"}, ctx))
    assert value["status"] == "running", value
    assert ctx.store.get(record.task_id).status == "starting"
    assert "running" not in [step["status"] for step in ctx.store.get(record.task_id).history]


def test_message_to_a_foreign_agent_is_an_observation(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("hi"), name="ext")
    value = agent_result(message_agent({"target": "ext", "message": "hello", "wait": True}, ctx))
    assert (value["status"], value["observation"], value["taskId"]) == ("idle", True, None)
    assert user_texts(agent) == [
        '<agent-message from="dsh:orchestrator" to="ext">hello</agent-message>'
    ]


def test_message_refuses_a_remote_machine(ctx: AgentToolsContext) -> None:
    value = agent_result(message_agent({"target": "w", "message": "x", "machine": "gpu"}, ctx))
    assert value["error"]["code"] == "MACHINE_NOT_ENABLED"


def test_message_to_a_task_whose_pane_closed_is_gone(
    ctx: AgentToolsContext,
    herdr_fake_agent: FakeAgents,
    herdr_pane: Pane,
    herdr_client: PytestHerdrClient,
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="w")
    own(ctx, agent)
    herdr_client.call("pane.close", pane_id=herdr_pane.pane_id)
    value = agent_result(message_agent({"target": "w", "message": "hello"}, ctx))
    assert value["status"] == "gone"


def test_interrupt_and_close_over_the_cli_transport(
    herdr_server: HerdrServer,
    herdr_fake_agent: FakeAgents,
    tmp_path: Path,
    herdr_client: PytestHerdrClient,
) -> None:
    ctx = make_ctx(herdr_server, tmp_path)
    ctx._client = HerdrClient.build("cli", herdr=herdr_server.cli_path, env=herdr_server.env)
    agent = working(herdr_fake_agent)
    record = own(ctx, agent)
    interrupted = agent_result(interrupt_agent({"target": "w"}, ctx))
    assert interrupted["error"]["code"] == "INTERRUPTED"
    closed = agent_result(close_agent({"target": record.task_id}, ctx))
    assert closed["status"] == "gone"
    assert "w" not in agent_names(herdr_client)


def test_message_numbers_are_reserved_once_each_even_when_sent_at_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from orchestrator.agent_tools.control import _next_seq

    with ThreadPoolExecutor(8) as pool:
        numbers = list(pool.map(lambda _: _next_seq(tmp_path), range(40)))
    assert sorted(numbers) == list(range(1, 41))


def test_a_symlinked_messages_dir_is_never_written_through(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    # the child replaced messages/ with a link to a directory of its choosing
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("ok"), name="w")
    record = own(ctx, agent)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    artifacts = Path(str(record.artifact_dir))
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / "messages").symlink_to(elsewhere)
    value = agent_result(
        message_agent({"target": "w", "message": "a\nlong\nmessage", "wait": True}, ctx)
    )
    assert list(elsewhere.iterdir()) == []
    assert value["status"] == "failed" and value["error"]["code"] == "ARTIFACT_UNSAFE", value
    assert "symbolic link" in value["error"]["message"]
    # nothing was typed: pi writes its session file on the first prompt (the path comes with
    # pi's session report, which a loaded machine may not have delivered yet)
    session = wait_until(
        lambda: agent.info.get("agent_session"), 20, what="the fake pi's session report"
    )
    assert not Path(session["value"]).exists()


def test_a_message_file_swapped_for_a_link_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    from orchestrator.agent_tools.envelope import prepare_message

    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    prepared = prepare_message("a\nb", to="w", artifact_dir=tmp_path / "art", seq=1)
    assert prepared.file is not None
    prepared.file.parent.mkdir(parents=True)
    prepared.file.symlink_to(target)
    prepared.write()
    assert target.read_text() == "keep me"
    assert not prepared.file.is_symlink() and "a\nb" in prepared.file.read_text()


def test_task_md_is_not_written_through_a_symlinked_artifact_dir(tmp_path: Path) -> None:
    from orchestrator.agent_tools.envelope import TaskEnvelope
    from orchestrator.client.file_trust.private_files import UnsafeFile

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "art").symlink_to(elsewhere)
    task = TaskEnvelope(task_id="t-000000000001", goal="g", artifact_dir=tmp_path / "art", cwd="/")
    with pytest.raises(UnsafeFile, match="symbolic link"):
        task.write()
    assert list(elsewhere.iterdir()) == []


# -- a foreign agent in a task's pane -----------------------------------------------------------


def foreign_after_exit(
    fake: FakeAgents, ctx: AgentToolsContext, client: PytestHerdrClient, kind: str
) -> tuple[Agent, str]:
    """A task whose pi agent exited, and an agent of ``kind`` the user then started by hand in
    the same pane (unnamed, as Herdr leaves it): ``(the task's agent, task id)``."""
    agent = fake.start("pi", fake.scenario().reply("x"), name="w")
    record = own(ctx, agent, terminal_id=str(agent.info["terminal_id"]))
    pane = agent.pane.pane_id
    agent.pane.run("/exit")
    wait_until(lambda: "w" not in agent_names(client), 20, what="the task's agent to exit")
    agent.pane.run(f"{kind} --scenario {fake.write(fake.scenario().hang())}")

    def detected() -> bool:
        try:
            info = client.call("agent.get", target=pane)["agent"]
        except RequestFailed:
            return False
        return bool(info.get("agent") == kind and info.get("agent_status") in ("idle", "done"))

    wait_until(detected, 20, what=f"the hand-started {kind} to be detected")
    return agent, record.task_id


@pytest.mark.parametrize("kind", ["claude", "pi"])
def test_a_hand_started_agent_in_a_task_pane_is_not_owned_nor_controlled(
    ctx: AgentToolsContext,
    herdr_fake_agent: FakeAgents,
    herdr_client: PytestHerdrClient,
    kind: str,
) -> None:
    agent, task_id = foreign_after_exit(herdr_fake_agent, ctx, herdr_client, kind)
    pane = agent.pane.pane_id
    (row,) = list_agents({}, ctx)["agents"]
    assert (row["paneId"], row["kind"], row["owned"], row["taskId"]) == (pane, kind, False, None)
    assert list_agents({"owned_only": True}, ctx)["agents"] == []
    for target in (task_id, "w", pane):
        for value in (
            interrupt_agent({"target": target}, ctx),
            close_agent({"target": target, "force": True}, ctx),
            message_agent({"target": target, "message": "stop that"}, ctx),
        ):
            assert agent_result(value)["error"]["code"] == "NOT_OWNED", (target, value)
            assert value["nextAction"] == "none"
    info = herdr_client.call("agent.get", target=pane)["agent"]
    assert info["agent"] == kind  # still running, never closed
    assert ctx.store.get(task_id).status == "running"  # the task's record is left as it was
    assert "stop that" not in agent.pane.read("recent")
