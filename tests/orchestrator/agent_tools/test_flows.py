"""Combined paths through several agent tools, end to end on the simulator with fake pi agents.

Each flow goes through the registry entries (``AGENT_TOOLS``) only, the way a model would
call them: spawn, then answer / harvest / review / close. Every value is checked against
its result schema. The flows of :mod:`.flows` run here with the fake pi and, unchanged but
for the agent's setup, with the real pi in ``tests/real_agents/test_orchestrator_pi.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.inbox_tool import INBOX_RESULT_SCHEMA
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools import flows
from tests.orchestrator.agent_tools.flows import FakePi, call, result
from tests.orchestrator.agent_tools.test_spawn import (
    git_repo,
    make_ctx,
    scenario_args,
    spawn,
    write_result_md,
)
from tests.orchestrator.agent_tools.test_worktree import make_hostile
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS

INBOX = jsonschema.Draft202012Validator(INBOX_RESULT_SCHEMA)


def inbox(ctx: AgentToolsContext, **args: Any) -> dict[str, Any]:
    """``herdr_inbox`` with its value checked."""
    value = call(ctx, "herdr_inbox", **args)
    INBOX.validate(value)
    return value


def post(ctx: AgentToolsContext, kind: str, text: str) -> str:
    """A shell command the child runs to append one message to its task's inbox."""
    line = json.dumps({"ts": "2026-10-20T09:00:00Z", "type": kind, "text": text})
    art = ctx.config.artifact_dir
    return f"for d in {art}/t-*/; do printf '%s\\n' '{line}' >> \"$d\"inbox.ndjson; done"


def git(cwd: Path | str, *args: str) -> str:
    """git's stdout in ``cwd``."""
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def branches(repo: Path) -> list[str]:
    """The repository's local branch names."""
    return git(repo, "branch", "--format=%(refname:short)").splitlines()


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    return make_ctx(herdr_server, tmp_path)


# -- the shared flows (tests/real_agents/test_orchestrator_pi.py runs them with the real pi) ------


@pytest.fixture
def fake_pi(ctx: AgentToolsContext, tmp_path: Path) -> FakePi:
    return FakePi(ctx, tmp_path)


def test_flow_completed_with_result_md_and_diff(fake_pi: FakePi) -> None:
    flows.completed_with_result_md_and_diff(fake_pi)


def test_flow_blocked_by_the_protocol_then_answered(fake_pi: FakePi) -> None:
    flows.blocked_then_answered(fake_pi)


def test_flow_interrupted_long_turn(fake_pi: FakePi) -> None:
    flows.interrupted_long_turn(fake_pi)


def test_flow_transcript_paged(fake_pi: FakePi) -> None:
    flows.transcript_paged(fake_pi)


def test_flow_provider_error_is_failed(fake_pi: FakePi) -> None:
    flows.provider_error_is_failed(fake_pi)


# -- blocked -> ANSWER -> harvested -------------------------------------------------------------


def blocked_task(ctx: AgentToolsContext, tmp_path: Path) -> str:
    """The task id of a spawned pi agent blocked on "Which database?" (answer: a reply)."""
    scenario = Scenario().ask("Which database?").reply("using postgres")
    spawned = spawn(
        ctx,
        prompt="set up storage",
        cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert (spawned["status"], spawned["nextAction"]) == ("blocked", "ask_user"), spawned
    return str(spawned["taskId"])


def assert_harvested_completed(ctx: AgentToolsContext, task_id: str) -> None:
    """``herdr_get_agent_result`` on ``task_id`` answers the turn the answer finished."""
    harvested = result(ctx, "herdr_get_agent_result", target=task_id, timeout_ms=20_000)
    assert (harvested["status"], harvested["nextAction"]) == ("completed", "review"), harvested
    assert harvested["finalMessage"] == "using postgres"
    assert harvested["task"]["status"] == "completed"
    assert ctx.store.get(task_id).status == "completed"


def test_blocked_task_answered_with_wait_then_harvested_completed(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    task_id = blocked_task(ctx, tmp_path)
    answered = result(
        ctx,
        "herdr_message_agent",
        target=task_id,
        message="postgres",
        kind="ANSWER",
        wait=True,
        timeout_ms=20_000,
    )
    assert (answered["taskId"], answered["status"]) == (task_id, "completed"), answered
    assert any("typed as its answer" in e["detail"] for e in answered["evidence"])
    assert_harvested_completed(ctx, task_id)


def test_blocked_task_answered_then_harvested_completed(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    task_id = blocked_task(ctx, tmp_path)
    answered = result(ctx, "herdr_message_agent", target=task_id, message="postgres", kind="ANSWER")
    assert (answered["taskId"], answered["status"]) == (task_id, "running"), answered
    assert any("typed as its answer" in e["detail"] for e in answered["evidence"])
    assert_harvested_completed(ctx, task_id)


# -- isolated spawn -> close with remove_worktree -----------------------------------------------


def test_isolated_diff_then_close_removes_worktree_and_unchanged_branch(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    scenario = Scenario().write_file("a.txt", "two\n").reply("changed a.txt")
    spawned = spawn(
        ctx,
        prompt="change a.txt",
        cwd=str(repo),
        isolated=True,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert spawned["status"] == "completed", spawned
    assert [f["path"] for f in spawned["diff"]["files"]] == ["a.txt"]
    worktree = Path(spawned["task"]["worktreePath"])
    branch = spawned["task"]["branch"]
    assert branch in branches(repo)

    # the agent's edit is uncommitted: removing the worktree needs force
    dirty = result(ctx, "herdr_close_agent", target=spawned["taskId"], remove_worktree=True)
    assert (dirty["status"], dirty["error"]["code"]) == ("failed", "WORKTREE_DIRTY"), dirty
    assert "a.txt" in dirty["error"]["message"]
    assert worktree.is_dir()
    assert ctx.store.get(spawned["taskId"]).status == "completed"

    closed = result(
        ctx, "herdr_close_agent", target=spawned["taskId"], remove_worktree=True, force=True
    )
    assert (closed["status"], closed["task"]["status"]) == ("gone", "closed"), closed
    assert not worktree.exists()
    assert str(worktree) not in git(repo, "worktree", "list")
    # the branch still pointed at the base commit (nothing committed): it is deleted
    assert branch not in branches(repo)
    assert any(
        e["source"] == "git" and "unchanged branch removed" in e["detail"]
        for e in closed["evidence"]
    )
    assert ctx.client.pane_list() == []
    assert (repo / "a.txt").read_text() == "one\n"


def test_isolated_commit_then_close_keeps_the_branch(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    commit = "git add -A && git -c user.email=a@example.com -c user.name=a commit -qm 'agent work'"
    scenario = Scenario().write_file("b.txt", "agent\n").run_tool("bash", commit).reply("committed")
    spawned = spawn(
        ctx,
        prompt="add b.txt and commit",
        cwd=str(repo),
        isolated=True,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert spawned["status"] == "completed", spawned
    worktree = Path(spawned["task"]["worktreePath"])
    branch = spawned["task"]["branch"]
    assert git(repo, "rev-parse", branch) != spawned["task"]["baseCommit"]

    # committed work leaves the worktree clean: no force needed, and the branch is kept
    closed = result(ctx, "herdr_close_agent", target=spawned["taskId"], remove_worktree=True)
    assert closed["status"] == "gone", closed
    assert not worktree.exists()
    assert branch in branches(repo)
    assert git(repo, "show", f"{branch}:b.txt") == "agent"
    assert any(
        e["source"] == "git" and f"branch {branch} kept" in e["detail"] for e in closed["evidence"]
    )


# -- review round -> COMPLETE in the inbox ------------------------------------------------------


def test_review_findings_round_then_complete_in_the_inbox(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = (
        Scenario()
        .run_tool("bash", post(ctx, "REVIEW_REQUEST", "please check a.py"))
        .reply("REVIEW_REQUEST a.py")
        .then()
        .run_tool("bash", post(ctx, "COMPLETE", "fixed the crash; tests pass"))
        .reply("COMPLETE result.md")
    )
    spawned = spawn(
        ctx, prompt="write a.py", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert spawned["status"] == "completed", spawned
    task_id = spawned["taskId"]

    request = inbox(ctx, target=task_id)
    assert [(m["type"], m["text"]) for m in request["messages"]] == [
        ("REVIEW_REQUEST", "please check a.py")
    ]

    reviewed = result(
        ctx,
        "herdr_message_agent",
        target=task_id,
        message="BLOCKER: a.py crashes on empty input",
        kind="REVIEW_FINDINGS",
        round=1,
        wait=True,
        timeout_ms=20_000,
    )
    assert (reviewed["status"], reviewed["finalMessage"]) == ("completed", "COMPLETE result.md")
    findings = Path(spawned["artifacts"]["artifactDir"]) / "messages" / "001-review-findings.md"
    assert "REVIEW_FINDINGS round 1" in findings.read_text()

    done = inbox(ctx, target=task_id)
    assert [(m["type"], m["text"]) for m in done["messages"]] == [
        ("COMPLETE", "fixed the crash; tests pass")
    ]
    # consumed messages are not replayed
    assert inbox(ctx, target=task_id)["messages"] == []


def test_a_screen_detected_kind_is_spawned_and_harvested_from_its_pane_and_result_md(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    # fake claude reports no state of its own: Herdr reads its screen (the turn lasts long
    # enough to be seen working), and the harvest reads the pane tail, not a session file
    repo = git_repo(tmp_path / "repo")
    scenario = (
        Scenario()
        .wait(400)
        .run_tool("bash", write_result_md(ctx, "# Report\nclaude did it"))
        .reply("COMPLETE result.md")
    )
    result = spawn(
        ctx,
        prompt="report",
        kind="claude",
        cwd=str(repo),
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert (result["status"], result["nextAction"]) == ("completed", "review"), result
    assert "COMPLETE result.md" in (result["finalMessage"] or "")
    assert result["resultText"] is not None and "claude did it" in result["resultText"]
    sources = {evidence["source"] for evidence in result["evidence"]}
    assert "pane" in sources or "pane-tail" in sources, result["evidence"]


def test_native_agent_args_never_leave_in_a_result_read_off_the_pane(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    # A real claude's pane tail shows the command line it was started with (the simulator
    # starts agents without echoing it, so here the agent prints its flag itself): a credential
    # passed in agent_args must come back redacted from every text read off the screen.
    secret = "sk-live-0123456789abcdef"
    repo = git_repo(tmp_path / "repo")
    scenario = Scenario().wait(400).reply(f"started with --append-system-prompt {secret}")
    args = ["--append-system-prompt", secret, *scenario_args(tmp_path, scenario)]
    result = spawn(ctx, prompt="report", kind="claude", cwd=str(repo), agent_args=args)
    assert result["status"] == "completed", result
    assert secret not in json.dumps(result)
    assert f"<redacted: {len(secret)} chars>" in (result["finalMessage"] or ""), result
    again = call(ctx, "herdr_get_agent_result", target=result["taskId"], wait=False)
    assert secret not in json.dumps(again)
    assert f"<redacted: {len(secret)} chars>" in (again["finalMessage"] or "")


@pytest.mark.parametrize("plant", ["ln -s {secret} {d}result.md", "mkfifo {d}result.md"])
def test_a_result_md_that_is_a_link_or_a_fifo_is_not_read(
    ctx: AgentToolsContext, tmp_path: Path, plant: str
) -> None:
    # the child makes result.md a link to a file it wants shown (or a FIFO to hang us)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    art = ctx.config.artifact_dir
    command = f"for d in {art}/t-*/; do " + plant.format(secret=secret, d='"$d"') + "; done"
    scenario = Scenario().run_tool("bash", command).reply("COMPLETE result.md")
    result = spawn(
        ctx,
        prompt="report",
        cwd=str(git_repo(tmp_path / "repo")),
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert "TOP-SECRET" not in json.dumps(result)
    assert result["resultText"] is None and result["artifacts"]["resultMdExists"] is False
    assert any("result.md not read" in w for w in result["warnings"]), result["warnings"]


@pytest.mark.parametrize("isolated", [False, True])
def test_spawn_and_harvest_in_a_hostile_repository_run_none_of_its_code(
    ctx: AgentToolsContext, tmp_path: Path, isolated: bool
) -> None:
    # the repository's config names an fsmonitor, filters, diff drivers and hooks that would
    # leave a marker when run: snapshot, worktree creation and the diff must not run them
    repo = git_repo(tmp_path / "repo")
    markers = make_hostile(repo, tmp_path)
    scenario = Scenario().run_tool("bash", "echo agent > b.txt").reply("done")
    result = spawn(
        ctx,
        prompt="work",
        cwd=str(repo),
        isolated=isolated,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert result["status"] == "completed", result
    assert result["diff"] is not None and "+agent" in result["diff"]["patch"], result["diff"]
    assert sorted(p.name for p in markers.iterdir()) == []
