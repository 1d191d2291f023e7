"""``herdr_spawn_agent`` end to end on the simulator with fake pi agents.

Each test spawns through the registry entry (``AGENT_TOOLS``), so the schema, the handler and
the AgentResult contract are exercised together; every result is validated against
``AGENT_RESULT_SCHEMA``. The fake pi gets its scenario through ``agent_args``
(``--scenario FILE``), which is also how a real kind's raw flags travel.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.contract import AGENT_RESULT_SCHEMA
from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.client.sync import HerdrClient
from orchestrator.core.config import Config
from orchestrator.core.tool import Tool
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import SCALE

pytestmark = FAST_AGENTS

RESULT = jsonschema.Draft202012Validator(AGENT_RESULT_SCHEMA)
SPAWN = "herdr_spawn_agent"


def checked(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` after asserting it is a valid AgentResult."""
    RESULT.validate(value)
    return value


def make_ctx(server: HerdrServer, root: Path, **config: Any) -> AgentToolsContext:
    """An agent-tools context on ``server`` with its state under ``root``."""
    state = root / "state"
    cfg = Config(state_dir=state, artifact_dir=state / "artifacts", **config)
    client = HerdrClient.build(
        "socket", socket_path=server.socket_path, herdr=server.cli_path, env=server.env
    )
    env = {k: v for k, v in server.env.items() if k != "HERDR_PANE_ID"}
    return AgentToolsContext.create(env, config=cfg, client=client)


def git_repo(path: Path) -> Path:
    """A git repository at ``path`` with one committed file ``a.txt``."""
    path.mkdir(parents=True, exist_ok=True)
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "config", "user.email", "t@example.com"],
        ["git", "config", "user.name", "t"],
    ):
        subprocess.run(argv, cwd=path, check=True)
    (path / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=path, check=True)
    return path


def scenario_args(root: Path, scenario: Scenario) -> list[str]:
    """``agent_args`` that make the fake pi play ``scenario``."""
    return ["--scenario", str(scenario.dump(root / "scenario.json"))]


def write_result_md(ctx: AgentToolsContext, text: str) -> str:
    """A shell command writing ``text`` to the result.md of every task (one per test)."""
    art = ctx.config.artifact_dir
    return f"for d in {art}/t-*/; do printf '%s\\n' {json.dumps(text)} > \"$d\"result.md; done"


def spawn(ctx: AgentToolsContext, **args: Any) -> dict[str, Any]:
    """A spawn through the one path every call takes (``run_tool``: the runner's gates,
    then the handler)."""
    tool: Tool = AGENT_TOOLS[SPAWN]
    jsonschema.Draft202012Validator(dict(tool.input_schema)).validate(args)
    return checked(run_tool(SPAWN, args, ctx))


def spawn_handler(ctx: AgentToolsContext, **args: Any) -> dict[str, Any]:
    """The spawn handler called directly (what a caller around ``run_tool`` reaches: its own
    argument checks still hold)."""
    tool: Tool = AGENT_TOOLS[SPAWN]
    jsonschema.Draft202012Validator(dict(tool.input_schema)).validate(args)
    return checked(tool.handler(args, ctx))


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    return make_ctx(herdr_server, tmp_path)


def test_completed_with_diff_and_result_md(ctx: AgentToolsContext, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    scenario = (
        Scenario()
        .write_file(str(repo / "b.txt"), "new file\n")
        .run_tool("bash", write_result_md(ctx, "# Report\nadded b.txt"))
        .reply("COMPLETE result.md\nAdded b.txt.")
    )
    result = spawn(
        ctx, prompt="add b.txt", cwd=str(repo), agent_args=scenario_args(tmp_path, scenario)
    )
    assert result["status"] == "completed", result
    assert result["nextAction"] == "review"
    assert result["finalMessage"] == "COMPLETE result.md\nAdded b.txt."
    assert result["resultText"] is not None and "added b.txt" in result["resultText"]
    assert result["artifacts"]["resultMdExists"] is True
    assert [f["path"] for f in result["diff"]["files"]] == ["b.txt"]
    assert result["diff"]["files"][0]["status"] == "added"
    assert result["task"]["status"] == "completed"


def test_a_pi_still_starting_up_gets_the_prompt_once_it_reported_its_session(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    # Herdr calls the agent interactive after its settle delay, but pi takes prompts only once
    # its startup is over (before, Enter leaves the text in the editor: "Startup is still in
    # progress") — which is when its integration reports the session. Prompted at once, the
    # task failed PROMPT_NOT_SUBMITTED; it waits for the report now.
    scenario = Scenario().start_slowly(1500).reply("took it")
    result = spawn(
        ctx, prompt="go", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert (result["status"], result["finalMessage"]) == ("completed", "took it"), result
    assert result["warnings"] == []


def test_blocked_agent_is_reported_never_answered(ctx: AgentToolsContext, tmp_path: Path) -> None:
    scenario = Scenario().ask("Delete the build directory?").reply("deleted")
    result = spawn(
        ctx, prompt="clean up", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert result["status"] == "blocked", result
    assert result["nextAction"] == "ask_user"
    assert "Delete the build directory?" in (result["question"] or "")
    assert result["task"]["status"] == "blocked"
    # Nothing was typed into the dialog: the agent still waits for the user.
    assert ctx.client.agent_get(result["paneId"]).agent_status == "blocked"


def test_turn_ending_in_error_is_failed(ctx: AgentToolsContext, tmp_path: Path) -> None:
    scenario = Scenario().reply("trying").fail("model overloaded")
    result = spawn(
        ctx, prompt="do it", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert result["status"] == "failed", result
    assert result["nextAction"] == "inspect"
    assert result["error"]["code"] == "AGENT_ERROR"
    assert result["error"]["message"] == "model overloaded"
    assert result["task"]["status"] == "failed"
    assert result["task"]["error"]["code"] == "AGENT_ERROR"


def test_agent_crash_is_failed_with_pane_tail(ctx: AgentToolsContext, tmp_path: Path) -> None:
    scenario = Scenario().reply("about to crash").crash(7)
    result = spawn(
        ctx, prompt="do it", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "AGENT_EXITED"
    assert "pane" in [e["source"] for e in result["evidence"]]


def test_wait_false_returns_a_live_handle(ctx: AgentToolsContext, tmp_path: Path) -> None:
    scenario = Scenario().hang()
    result = spawn(
        ctx,
        prompt="long job",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert result["status"] == "running", result
    assert result["nextAction"] == "wait"
    assert result["task"]["status"] == "running"
    assert result["paneId"] is not None and result["name"] == f"pi-{result['taskId'][2:]}"
    # the slot stays with the task after the call returned
    assert [h["taskId"] for h in ctx.slots.holders()] == [result["taskId"]]


def test_client_task_id_repeat_returns_the_existing_task(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    args = scenario_args(tmp_path, Scenario().reply("done once"))
    first = spawn(ctx, prompt="once", cwd=str(tmp_path), client_task_id="job-1", agent_args=args)
    again = spawn(ctx, prompt="once", cwd=str(tmp_path), client_task_id="job-1", agent_args=args)
    assert first["status"] == "completed", first
    assert again["taskId"] == first["taskId"]
    assert again["status"] == "completed"
    assert any("job-1" in w for w in again["warnings"])
    assert len(ctx.client.agent_list()) == 1
    assert len(ctx.store.list_records()) == 1


def test_cwd_outside_allow_cwd_is_refused(herdr_server: HerdrServer, tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    ctx = make_ctx(herdr_server, tmp_path, allow_cwd=(allowed,))
    result = spawn(ctx, prompt="x", cwd=str(tmp_path))
    assert result["status"] == "failed"
    assert result["nextAction"] == "retry"
    assert result["taskId"] is None
    assert result["error"]["code"] == "CWD_NOT_ALLOWED"
    assert result["error"]["field"] == "cwd"
    assert ctx.store.list_records() == []


def test_symlink_escaping_allow_cwd_is_refused(herdr_server: HerdrServer, tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    outside = tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "link").symlink_to(outside)
    ctx = make_ctx(herdr_server, tmp_path, allow_cwd=(allowed,))
    result = spawn(ctx, prompt="x", cwd=str(allowed / "link"))
    assert result["error"]["code"] == "CWD_NOT_ALLOWED"
    assert "resolves to" in result["error"]["message"]
    assert ctx.client.pane_list() == []


def test_invalid_name_is_refused(ctx: AgentToolsContext, tmp_path: Path) -> None:
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), name="Bad Name")
    assert result["error"]["code"] == "FIELD_INVALID"
    assert result["error"]["field"] == "name"
    assert result["taskId"] is None


def test_disabled_refuses_every_spawn(herdr_server: HerdrServer, tmp_path: Path) -> None:
    ctx = make_ctx(herdr_server, tmp_path, enabled=False)
    result = spawn(ctx, prompt="x", cwd=str(tmp_path))
    assert result["error"]["code"] == "DISABLED"


def test_kind_without_model_flag_refuses_model(ctx: AgentToolsContext, tmp_path: Path) -> None:
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), kind="agy", model="flash")
    assert result["error"]["code"] == "FIELD_UNSUPPORTED"
    assert result["error"]["field"] == "model"


def test_remote_machine_is_refused(ctx: AgentToolsContext, tmp_path: Path) -> None:
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), machine="build-box")
    assert result["error"]["code"] == "MACHINE_NOT_ENABLED"
    assert result["error"]["field"] == "machine"


def test_remote_spawn_refusals_name_the_fix(herdr_server: HerdrServer, tmp_path: Path) -> None:
    ctx = make_ctx(herdr_server, tmp_path, machines=("box",))
    no_files = spawn(ctx, prompt="x", cwd=str(tmp_path), machine="box")
    assert no_files["error"]["code"] == "MACHINE_NO_FILE_ACCESS"
    assert "sharedFilesystem" in no_files["error"]["message"]
    relative = spawn(ctx, prompt="x", cwd="repo", machine="box")
    assert (relative["error"]["code"], relative["error"]["field"]) == ("CWD_NOT_ABSOLUTE", "cwd")
    assert not list((tmp_path / "state").glob("tasks/*.json"))  # refused before any record
    assert HerdrClient.build("socket", socket_path=herdr_server.socket_path).agent_list() == []


def test_queue_timeout_at_the_cap_names_the_wait(herdr_server: HerdrServer, tmp_path: Path) -> None:
    ctx = make_ctx(herdr_server, tmp_path, max_concurrent=1, queue_timeout_ms=150)
    first = spawn(
        ctx,
        prompt="hold the slot",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, Scenario().hang()),
    )
    assert first["status"] == "running", first
    second = spawn(ctx, prompt="queued", cwd=str(tmp_path))
    assert second["status"] == "failed"
    assert second["taskId"] is None
    assert second["error"]["code"] == "QUEUE_TIMEOUT"
    assert "queueTimeoutMs" in second["error"]["message"]
    assert "1 of 1 running" in second["error"]["message"]
    assert [r.task_id for r in ctx.store.list_records()] == [first["taskId"]]


def test_isolated_task_works_in_its_own_worktree(ctx: AgentToolsContext, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    scenario = Scenario().write_file("a.txt", "two\n").reply("changed a.txt")
    result = spawn(
        ctx,
        prompt="change a.txt",
        cwd=str(repo),
        isolated=True,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert result["status"] == "completed", result
    task = result["task"]
    assert task["isolated"] is True
    assert task["branch"] == f"dsh/{result['taskId']}"
    worktree = Path(task["worktreePath"])
    assert result["artifacts"]["worktree"] == str(worktree)
    assert (worktree / "a.txt").read_text() == "two\n"
    assert (repo / "a.txt").read_text() == "one\n"
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert result["diff"]["base"] == head == task["baseCommit"]
    assert result["diff"]["files"] == [
        {"path": "a.txt", "status": "modified", "additions": 1, "deletions": 1, "oldPath": None}
    ]


def test_diff_leaves_out_changes_made_before_the_spawn(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("edited by the user\n")
    scenario = Scenario().write_file("c.txt", "agent\n").reply("added c.txt")
    result = spawn(ctx, prompt="add c", cwd=str(repo), agent_args=scenario_args(tmp_path, scenario))
    assert [(f["path"], f["status"]) for f in result["diff"]["files"]] == [("c.txt", "added")]


def test_reviewer_gets_a_read_only_envelope(ctx: AgentToolsContext, tmp_path: Path) -> None:
    result = spawn(
        ctx,
        prompt="review src/",
        cwd=str(tmp_path),
        role="reviewer",
        agent_args=scenario_args(tmp_path, Scenario().reply("ACCEPT")),
    )
    assert result["task"]["role"] == "reviewer"
    task_md = Path(result["artifacts"]["artifactDir"]) / "task.md"
    assert "READ-ONLY" in task_md.read_text()


def test_record_exists_before_the_pane(ctx: AgentToolsContext, tmp_path: Path) -> None:
    result = spawn(
        ctx, prompt="x", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, Scenario())
    )
    record = ctx.store.get(result["taskId"])
    assert [h["status"] for h in record.history][:2] == ["starting", "running"]
    assert record.pane_id == result["paneId"]


def test_caller_inside_herdr_gets_a_sibling_split(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = make_ctx(herdr_server, tmp_path)
    caller = ctx.client.workspace_create(str(tmp_path), label="caller").root_pane
    ctx = AgentToolsContext.create(
        {**ctx.env, "HERDR_PANE_ID": caller.pane_id}, config=ctx.config, client=ctx.client
    )
    result = spawn(
        ctx, prompt="x", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, Scenario())
    )
    pane = ctx.client.pane_get(result["paneId"])
    assert pane.tab_id == caller.tab_id
    assert [w.label for w in ctx.client.workspace_list()] == ["caller"]


def test_without_herdr_each_task_gets_a_tab_in_one_workspace(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    args = scenario_args(tmp_path, Scenario())
    one = spawn(ctx, prompt="x", cwd=str(tmp_path), agent_args=args)
    two = spawn(ctx, prompt="y", cwd=str(tmp_path), agent_args=args)
    workspaces = ctx.client.workspace_list()
    assert [w.label for w in workspaces] == ["herdr-agents"]
    tabs = {ctx.client.pane_get(r["paneId"]).tab_id for r in (one, two)}
    assert len(tabs) == 2


def test_timeout_is_clamped_to_ten_seconds_one_hour() -> None:
    from orchestrator.agent_tools.spawn import clamp_timeout

    assert clamp_timeout(None) == 900_000
    assert clamp_timeout(1) == 10_000
    assert clamp_timeout(5_000_000) == 3_600_000
    assert clamp_timeout(60_000) == 60_000


def test_five_spawns_with_a_cap_of_two_all_complete_in_their_own_records(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    base = make_ctx(herdr_server, tmp_path, max_concurrent=2, queue_timeout_ms=30_000)
    results: dict[int, dict[str, Any]] = {}

    def one(i: int) -> None:
        ctx = make_ctx(herdr_server, tmp_path, max_concurrent=2, queue_timeout_ms=30_000)
        # Each turn flickers to done mid-way (what a busy machine produced at random): a
        # harvest must wait for the answer in the session, not take the first done.
        scenario = Scenario().wait(100).blip(150).wait(100).reply(f"result {i}")
        path = scenario.dump(tmp_path / f"s{i}.json")
        results[i] = spawn(
            ctx, prompt=f"task {i}", cwd=str(tmp_path), agent_args=["--scenario", str(path)]
        )

    threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == [0, 1, 2, 3, 4]
    for i, result in results.items():
        assert result["status"] == "completed", result
        assert result["finalMessage"] == f"result {i}"
        record = base.store.get(result["taskId"])
        assert record.status == "completed"
        assert record.prompt_preview == f"task {i}"
    assert sorted(p.name for p in base.config.slots_dir.glob("slot-*")) == ["slot-0", "slot-1"]
    assert base.slots.holders() == []
    # the first two raced to place their panes: one shared workspace, one tab per task
    assert herdr_server.sim is not None
    listed = herdr_server.sim.call("workspace.list", {})["result"]["workspaces"]
    assert [w["label"] for w in listed] == ["herdr-agents"]
    assert listed[0]["tab_count"] == 5


def test_plain_tool_context_reads_the_configuration_from_its_env(tmp_path: Path) -> None:
    from orchestrator.core.tool import ToolContext

    env = {
        "HOME": str(tmp_path),
        "HERDR_ORCHESTRATOR_CONFIG": str(tmp_path / "config.toml"),
        "HERDR_ORCHESTRATOR_ENABLED": "0",
    }
    (tmp_path / "config.toml").write_text(f'stateDir = "{tmp_path / "state"}"\n')
    result = checked(run_tool(SPAWN, {"prompt": "x"}, ToolContext(env=env)))
    assert result["error"]["code"] == "DISABLED"


def test_placing_a_pane_in_the_existing_agents_workspace_takes_no_lock(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    """Issue 17: twenty spawns at once queued on the placement lock for two Herdr requests
    each. Once the agents workspace exists, a placement adds its tab without the lock: here it
    completes while another holder keeps the lock."""
    from orchestrator.agent_tools.spawn import _place, _placement_lock

    first = _place(ctx, str(tmp_path), "first")  # creates the workspace (under the lock)
    placed: list[tuple[str, str, str, list[str]]] = []
    with _placement_lock(ctx.config.state_dir):
        worker = threading.Thread(target=lambda: placed.append(_place(ctx, str(tmp_path), "x")))
        worker.start()
        worker.join(timeout=10 * SCALE)
        held = worker.is_alive()
    worker.join(timeout=10 * SCALE)
    assert not held, "the placement waited for the lock"
    assert placed[0][1] == first[1]  # the same workspace, a tab of its own
    assert placed[0][2] != first[2]


def test_a_workspace_gone_between_listing_and_tab_falls_back_to_find_or_create(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unlocked path's race: the workspace listed was closed before the tab was made
    (not found: nothing was created); the locked find-or-create then makes a new one."""
    from orchestrator.agent_tools import spawn as spawn_module

    only_pane, gone, _tab, _notes = spawn_module._place(ctx, str(tmp_path), "first")
    ctx.client.pane_close(only_pane)  # its last pane: the workspace closes with it
    real = spawn_module._agents_workspace
    answers = iter([gone])  # the first look still sees the closed workspace
    monkeypatch.setattr(spawn_module, "_agents_workspace", lambda a: next(answers, None) or real(a))
    pane, workspace, _tab, _notes = spawn_module._place(ctx, str(tmp_path), "again")
    assert workspace != gone
    assert [w.label for w in ctx.client.workspace_list()] == ["herdr-agents"]
    assert ctx.client.pane_get(pane).workspace_id == workspace


def test_a_spawn_asks_herdr_nothing_twice(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spawn sent a ``ping`` before every ``agent start`` (the client had checked the
    protocol once already) and asked ``agent.get`` again right after the session wait had
    just seen the agent: two requests of the eleven a fake pi's spawn sent, on every spawn of
    a fleet. Now the start's first read stands in for the reachability check, and the
    session wait's last look is the one the prompt's delivery record is taken from."""
    from orchestrator.client.transports import SocketTransport

    repo = git_repo(tmp_path / "repo")
    sent: list[tuple[str, bool]] = []  # (method, an agent.get of ours saw the session)
    real = SocketTransport.request

    def counting(
        self: SocketTransport, method: str, params: Any, request_id: str, timeout: float
    ) -> dict[str, Any]:
        answer = real(self, method, params, request_id, timeout)
        agent = (answer.get("result") or {}).get("agent") or {}
        ours = method == "agent.get" and not request_id.startswith("cli:agent:start")
        sent.append((method, ours and "agent_session" in agent))
        return answer

    spawn(ctx, prompt="warm", cwd=str(repo), agent_args=scenario_args(tmp_path, Scenario()))
    monkeypatch.setattr(SocketTransport, "request", counting)
    scenario = Scenario().write_file(str(repo / "b.txt"), "b\n").reply("done")
    result = spawn(ctx, prompt="go", cwd=str(repo), agent_args=scenario_args(tmp_path, scenario))
    assert result["status"] == "completed", result
    methods = [method for method, _ in sent]
    assert "ping" not in methods, methods
    before_prompt = sent[: methods.index("agent.prompt")]
    # the session wait's look that saw the session is the last before the prompt, and the
    # only one of ours that saw it
    assert [session for _, session in before_prompt].count(True) == 1, sent
    assert before_prompt[-1] == ("agent.get", True), sent


def test_the_snapshot_is_taken_while_the_pane_is_placed(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a worktree the baseline (git) and the pane (Herdr) need nothing of each
    other: here the snapshot finishes only after the pane was placed, which a spawn that
    took them one after the other could never do."""
    from orchestrator.agent_tools import spawn as spawn_module
    from orchestrator.agent_tools import worktree

    repo = git_repo(tmp_path / "repo")
    placed = threading.Event()
    real_place, real_snapshot = spawn_module._place, worktree.snapshot

    def place(*args: Any, **kwargs: Any) -> tuple[str, str, str, list[str]]:
        answer = real_place(*args, **kwargs)
        placed.set()
        return answer

    def snapshot(*args: Any, **kwargs: Any) -> worktree.Baseline:
        if not placed.wait(10 * SCALE):
            raise AssertionError("the snapshot was taken before the pane was asked for")
        return real_snapshot(*args, **kwargs)

    monkeypatch.setattr(spawn_module, "_place", place)
    monkeypatch.setattr(worktree, "snapshot", snapshot)
    scenario = Scenario().write_file("d.txt", "agent\n").reply("added d.txt")
    result = spawn(ctx, prompt="add d", cwd=str(repo), agent_args=scenario_args(tmp_path, scenario))
    assert result["status"] == "completed", result
    assert [(f["path"], f["status"]) for f in result["diff"]["files"]] == [("d.txt", "added")]
    record = ctx.store.get(result["taskId"])
    assert record.base_commit is not None and "baseline" in record.extra


def test_a_snapshot_that_fails_after_the_pane_was_placed_closes_it(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot's failure arrives once the pane exists: the task never ran, so the
    pane goes (and the record says it has none)."""
    from orchestrator.agent_tools import worktree

    repo = git_repo(tmp_path / "repo")

    def broken(*args: Any, **kwargs: Any) -> worktree.Baseline:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(worktree, "snapshot", broken)
    result = spawn(ctx, prompt="x", cwd=str(repo), agent_args=scenario_args(tmp_path, Scenario()))
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "WORKTREE_FAILED"
    assert "No space left on device" in result["error"]["message"]
    record = ctx.store.get(result["taskId"])
    assert record.pane_id is None, "the record keeps no pane"
    assert all(
        w.label != "herdr-agents" or len(ctx.client.tab_list(w.workspace_id)) == 0
        for w in ctx.client.workspace_list()
    ), "the task's pane was closed"
