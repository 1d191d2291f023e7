"""The agent tools' ``machine`` on two machines: the local simulator and a saved machine.

The remote machine is a second simulator behind a real SSH server (``herdr_machine_factory``),
reached only through ``herdr --machine box …``; both number their workspaces from ``w1``, so
``w1:p1`` exists on each and the tests prove a call lands where the task lives. The remote
simulator runs on this host, so it does see the same paths: the configuration says so with
``sharedFilesystem``, which is what a remote spawn needs. Each ``--machine`` call opens its
own SSH connection (about a quarter of a second here), so a spawn takes a few seconds.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.client.sync import HerdrClient
from orchestrator.core.config import Config
from pytest_herdr.backends import HerdrServer
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.machines import Machine, MachineFactory
from tests.orchestrator.agent_tools.test_spawn import (
    checked,
    git_repo,
    scenario_args,
    write_result_md,
)
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import SCALE, wait_until

pytestmark = FAST_AGENTS


def make_ctx(
    server: HerdrServer, root: Path, caller_pane: str | None = None, **config: Any
) -> AgentToolsContext:
    """A context on the local ``server`` (socket) whose remote calls run its ``herdr``;
    ``caller_pane``: the caller runs in that local pane (``HERDR_PANE_ID``)."""
    state = root / "state"
    cfg = Config(state_dir=state, artifact_dir=state / "artifacts", **config)
    client = HerdrClient.build(
        "socket", socket_path=server.socket_path, herdr=server.cli_path, env=server.env
    )
    env = {k: v for k, v in server.env.items() if k != "HERDR_PANE_ID"}
    env["HERDR_BIN_PATH"] = str(server.cli_path)
    if caller_pane is not None:
        env["HERDR_PANE_ID"] = caller_pane
    return AgentToolsContext.create(env, config=cfg, client=client)


def call(ctx: AgentToolsContext, tool: str, **args: Any) -> dict[str, Any]:
    return AGENT_TOOLS[tool].handler(args, ctx)


@pytest.fixture
def box(herdr_machine_factory: MachineFactory) -> Machine:
    """The saved machine ``box``, its simulator as fast as the local one."""
    return herdr_machine_factory("box", **dict(FAST_AGENTS.kwargs))


def remote_agents(machine: Machine) -> list[dict[str, Any]]:
    listed = HerdrCli(machine.server.cli_path, machine.server.env)("agent", "list")
    assert listed.ok, listed
    agents: list[dict[str, Any]] = listed.json["result"]["agents"]
    return agents


def test_remote_spawn_completes_and_a_new_context_harvests_it(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """Slow because a spawn is a dozen ``--machine`` calls, each its own SSH session (~5 s)."""
    HerdrCli(herdr_server.cli_path, herdr_server.env)("workspace", "create")  # local w1:p1
    # the caller runs in the local pane w1:p1: a remote spawn must not split "w1:p1" there
    ctx = make_ctx(herdr_server, tmp_path, "w1:p1", machines=("box",), shared_filesystem=("box",))
    repo = git_repo(tmp_path / "repo")
    scenario = (
        Scenario()
        .write_file(str(repo / "b.txt"), "new file\n")
        .run_tool("bash", write_result_md(ctx, "# Report\nadded b.txt"))
        .reply("COMPLETE result.md\nAdded b.txt.")
    )
    result = checked(
        call(
            ctx,
            "herdr_spawn_agent",
            prompt="add b.txt",
            cwd=str(repo),
            machine="box",
            agent_args=scenario_args(tmp_path, scenario),
        )
    )
    assert result["status"] == "completed", result
    assert result["machine"] == "box"
    assert [f["path"] for f in result["diff"]["files"]] == ["b.txt"]
    assert "+new file" in result["diff"]["patch"]
    assert "added b.txt" in (result["resultText"] or "")
    # the agent runs on the remote server, not the local one
    (agent,) = remote_agents(box)
    assert agent["pane_id"] == result["paneId"] == "w1:p1"
    local_agents = HerdrClient.build("socket", socket_path=herdr_server.socket_path).agent_list()
    assert local_agents == []

    # a restarted orchestrator: a new context over the same state directory
    again = make_ctx(herdr_server, tmp_path, machines=("box",), shared_filesystem=("box",))
    harvested = checked(call(again, "herdr_get_agent_result", target=result["taskId"]))
    assert (harvested["status"], harvested["machine"]) == ("completed", "box")
    # w1:p1 is the remote task's pane on box, and a bare pane on the local server
    local = checked(call(again, "herdr_get_agent_result", target="w1:p1", wait=False))
    assert local["taskId"] is None and local["machine"] == "local"
    remote = checked(
        call(again, "herdr_get_agent_result", target="w1:p1", machine="box", wait=False)
    )
    assert remote["taskId"] == result["taskId"]

    # the fleet, per machine: the task is owned on box only
    (row,) = call(again, "herdr_list_agents", machine="box")["agents"]
    assert (row["owned"], row["taskId"], row["machine"]) == (True, result["taskId"], "box")
    assert call(again, "herdr_list_agents")["agents"] == []

    # close resolves the task's machine from its record
    closed = checked(call(again, "herdr_close_agent", target=result["taskId"], force=True))
    assert closed["task"]["status"] == "closed", closed
    assert remote_agents(box) == []


def test_unknown_and_disabled_machines_name_the_fix(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    ctx = make_ctx(herdr_server, tmp_path, machines=("box", "ghost"))
    ghost = checked(call(ctx, "herdr_list_agents", machine="ghost"))
    assert ghost["error"]["code"] == "MACHINE_UNAVAILABLE"
    assert "herdr machine add" in ghost["error"]["message"]
    unlisted = checked(call(ctx, "herdr_list_agents", machine="elsewhere"))
    assert unlisted["error"]["code"] == "MACHINE_NOT_ENABLED"
    assert "add its Herdr label to machines" in unlisted["error"]["message"]
    cli = HerdrCli(herdr_server.cli_path, herdr_server.env)
    assert cli("machine", "disable", box.profile_id).ok
    disabled = checked(call(ctx, "herdr_message_agent", target="w", message="hi", machine="box"))
    assert disabled["error"]["code"] == "MACHINE_UNAVAILABLE"
    assert "herdr machine enable" in disabled["error"]["message"]
    observed = checked(call(ctx, "herdr_get_agent_result", target="w", machine="box"))
    assert observed["error"]["code"] == "MACHINE_UNAVAILABLE"


def test_ssh_down_mid_spawn_leaves_one_agent_and_a_record_that_says_so(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """Slow because of SSH (about 4 s). The SSH server stops while the agent works (after Herdr took
    the prompt): the spawn cannot learn the outcome, and must neither start a second agent nor claim
    a result; the record keeps the machine and the pane, so a later call can look."""
    ctx = make_ctx(herdr_server, tmp_path, machines=("box",), shared_filesystem=("box",))
    marker = tmp_path / "started"
    scenario = Scenario().run_tool("bash", f"touch {marker}").hang()

    def stop_when_started() -> None:
        wait_until(marker.exists, timeout=20, what="the remote agent at work")
        box.host.stop()

    thread = threading.Thread(target=stop_when_started, daemon=True)
    thread.start()
    result = checked(
        call(
            ctx,
            "herdr_spawn_agent",
            prompt="work",
            cwd=str(tmp_path),
            machine="box",
            timeout_ms=10_000,
            agent_args=scenario_args(tmp_path, scenario),
        )
    )
    thread.join(timeout=30 * SCALE)
    # Herdr cannot be asked: no verdict, and no claim the task failed or finished
    assert (result["status"], result["error"]["code"]) == ("failed", "HERDR_ERROR"), result
    assert any("not sent again" in w for w in result["warnings"]), result["warnings"]
    assert any("seen to reach the agent" in w for w in result["warnings"])
    record = ctx.store.get(result["taskId"])
    assert (record.status, record.machine, record.pane_id) == ("running", "box", "w1:p1")
    assert (
        record.delivery is not None and record.delivery["sentAt"] is not None
    )  # pi's session shows the prompt
    assert len(remote_agents(box)) == 1  # never started twice
    box.host.start()
    again = checked(call(ctx, "herdr_get_agent_result", target=result["taskId"], wait=False))
    assert (again["status"], again["machine"]) == ("running", "box"), again
    assert len(remote_agents(box)) == 1


def test_an_external_agent_on_the_machine_is_messaged_and_observed_there(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """About 3 s: a handful of ``--machine`` calls."""
    remote = HerdrCli(box.server.cli_path, box.server.env)
    assert remote("workspace", "create", "--cwd", str(tmp_path)).ok
    started = remote("agent", "start", "outsider", "--kind", "pi", "--pane", "w1:p1")
    assert started.ok, started
    ctx = make_ctx(herdr_server, tmp_path, machines=("box",))
    # not on the local server
    here = checked(call(ctx, "herdr_message_agent", target="outsider", message="hi"))
    assert here["error"]["code"] == "TASK_NOT_FOUND", here
    sent = checked(call(ctx, "herdr_message_agent", target="outsider", message="hi", machine="box"))
    assert sent["status"] != "failed" and sent["machine"] == "box", sent
    seen = wait_until(
        lambda: "hi" in remote("pane", "read", "w1:p1", "--source", "recent").stdout,
        what="the message on the remote pane",
    )
    assert seen
    observed = checked(
        call(ctx, "herdr_get_agent_result", target="outsider", machine="box", wait=False)
    )
    assert (observed["observation"], observed["machine"]) == (True, "box"), observed
    assert observed["paneId"] == "w1:p1"


def test_a_remote_herdr_too_old_for_machine_is_refused_naming_the_update(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    old = box.host.remote_home / ".local" / "bin" / "herdr"
    old.write_text('#!/bin/sh\necho "unknown command: $2" >&2\nexit 2\n')
    ctx = make_ctx(herdr_server, tmp_path, machines=("box",), shared_filesystem=("box",))
    listed = checked(call(ctx, "herdr_list_agents", machine="box"))
    assert listed["error"]["code"] == "HERDR_ERROR"
    assert "install or update Herdr 0.9.1 or newer" in listed["error"]["message"]
    spawned = checked(call(ctx, "herdr_spawn_agent", prompt="x", cwd=str(tmp_path), machine="box"))
    assert spawned["status"] == "failed" and "0.9.1 or newer" in spawned["error"]["message"]
    assert spawned["task"] is not None and spawned["task"]["machine"] == "box"
