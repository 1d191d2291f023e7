"""A spawn on a machine reached only over SSH (``machineTargets``, no ``sharedFilesystem``).

The machine is ``herdr_machine_factory``'s second simulator behind a real SSH server. Its
tasks' files live in ``machineArtifactDirs`` (``remote-art`` here, apart from this host's
``artifactDir``): the envelope and message files are written there over SSH, ``result.md``,
pi's session and the inbox are read from there, git runs there, and only the patch comes
back to this host (``<artifactDir>/<taskId>/diff.patch``). The remote simulator runs on this
host, so its paths happen to exist here too; test_task_files_reads.py proves the reads go
through the seam with paths this host lacks. Each SSH call is its own connection (about a
quarter of a second), so a spawn takes several seconds.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.client import call as herdr_call
from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.records import now_iso
from orchestrator.agent_tools.transcript import last_assistant_message
from pytest_herdr.backends import HerdrServer
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.machines import Machine, MachineFactory, local_config_dir
from tests.orchestrator.agent_tools.test_machines import call, make_ctx, remote_agents
from tests.orchestrator.agent_tools.test_spawn import checked, git_repo, scenario_args
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS


@pytest.fixture
def box(herdr_machine_factory: MachineFactory) -> Machine:
    return herdr_machine_factory("box", **dict(FAST_AGENTS.kwargs))


def ssh_ctx(
    server: HerdrServer, root: Path, box: Machine, ssh_config: Path | None = None
) -> AgentToolsContext:
    """A context whose machine ``box`` has only an SSH target (its files over SSH)."""
    return make_ctx(
        server,
        root,
        machines=("box",),
        machine_targets={"box": box.target},
        ssh_config=ssh_config or local_config_dir(box.local) / "ssh" / "config",
        machine_artifact_dirs={"box": str(root / "remote-art")},
    )


def write_remote_result(root: Path, text: str) -> str:
    """A shell command writing ``text`` to result.md of every task in ``remote-art``."""
    art = root / "remote-art"
    return f"for d in {art}/t-*/; do printf '%s\\n' {json.dumps(text)} > \"$d\"result.md; done"


def append_remote_inbox(root: Path, type_: str, text: str) -> str:
    """A shell command appending one message to every task's inbox in ``remote-art``."""
    line = json.dumps({"ts": now_iso(), "type": type_, "text": text})
    art = root / "remote-art"
    return f'for d in {art}/t-*/; do printf "%s\\n" {shlex.quote(line)} >> "$d"inbox.ndjson; done'


def test_ssh_only_spawn_completes_with_the_diff_from_the_machine_and_the_patch_here(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """Slow because of SSH (about 15 s under load): a spawn, a harvest and a message are some thirty
    SSH connections (``--machine`` calls and file calls), each about a quarter of a second."""
    ctx = ssh_ctx(herdr_server, tmp_path, box)
    repo = git_repo(tmp_path / "repo")
    scenario = (
        Scenario()
        .write_file(str(repo / "b.txt"), "new file\n")
        .run_tool("bash", write_remote_result(tmp_path, "# Report\nadded b.txt"))
        .run_tool("bash", append_remote_inbox(tmp_path, "NOTE", "b.txt is new"))
        .reply("COMPLETE result.md\nAdded b.txt.")
    )
    result = checked(
        call(ctx, "herdr_spawn_agent", prompt="add b.txt", cwd=str(repo), machine="box",
             agent_args=scenario_args(tmp_path, scenario))
    )  # fmt: skip
    assert (result["status"], result["machine"]) == ("completed", "box"), result
    task_id = result["taskId"]
    assert [f["path"] for f in result["diff"]["files"]] == ["b.txt"]
    assert "+new file" in result["diff"]["patch"]
    assert "added b.txt" in (result["resultText"] or "")
    assert result["artifacts"]["resultMdExists"] is True
    assert result["artifacts"]["artifactDir"] == str(tmp_path / "remote-art" / task_id)
    # the envelope was written on the machine, in its artifact directory, not here
    remote_dir = tmp_path / "remote-art" / task_id
    assert (remote_dir / "task.md").is_file()
    assert (remote_dir.stat().st_mode & 0o777) == 0o700
    local_dir = tmp_path / "state" / "artifacts" / task_id
    assert sorted(p.name for p in local_dir.iterdir()) == ["diff.patch"]
    patch = (local_dir / "diff.patch").read_text()
    assert "+new file" in patch and patch == result["diff"]["patch"]
    assert any(e.get("path") == str(local_dir / "diff.patch") for e in result["evidence"])
    (agent,) = remote_agents(box)
    assert agent["pane_id"] == result["paneId"]

    # a restarted orchestrator harvests it from the record and the machine's files
    again = ssh_ctx(herdr_server, tmp_path, box)
    harvested = checked(call(again, "herdr_get_agent_result", target=task_id))
    assert (harvested["status"], harvested["machine"]) == ("completed", "box"), harvested
    assert "added b.txt" in (harvested["resultText"] or "")

    # the inbox and the transcript are read on the machine
    inbox = call(again, "herdr_inbox", target=task_id)
    assert [m["text"] for m in inbox["messages"]] == ["b.txt is new"], inbox
    assert inbox["tasks"][0]["inbox"] == str(remote_dir / "inbox.ndjson")
    page = call(again, "herdr_read_agent", target=task_id)
    assert page["taskId"] == task_id, page
    assert any("Added b.txt." in m["text"] for m in page["messages"]), page

    # a multi-line message goes into a file on the machine, numbered there
    sent = checked(
        call(again, "herdr_message_agent", target=task_id, message="line one\nline two",
             wait=False)
    )  # fmt: skip
    assert sent["status"] != "failed", sent
    messages = sorted(p.name for p in (remote_dir / "messages").iterdir())
    assert messages == [".001.seq", "001-message.md"], messages
    assert "line two" in (remote_dir / "messages" / "001-message.md").read_text()
    assert not (local_dir / "messages").exists()


def test_file_access_lost_mid_harvest_concludes_nothing_and_resends_nothing(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """Slow because of SSH (about 15 s under load): a spawn and three harvests over SSH. Herdr's API
    still answers (its own SSH path), but this host's SSH access to the machine's files fails: the
    harvest reads ``running`` with the reason, writes no verdict into the record and sends nothing
    again; with access back it completes."""
    ctx = ssh_ctx(herdr_server, tmp_path, box)
    repo = git_repo(tmp_path / "repo")
    scenario = Scenario().run_tool("bash", write_remote_result(tmp_path, "done")).reply("COMPLETE")
    started = checked(
        call(ctx, "herdr_spawn_agent", prompt="x", cwd=str(repo), machine="box", wait=False,
             agent_args=scenario_args(tmp_path, scenario))
    )  # fmt: skip
    task_id = started["taskId"]
    good = local_config_dir(box.local) / "ssh" / "config"
    broken = tmp_path / "broken-ssh-config"
    broken.write_text(re.sub(r"Port \d+", "Port 1", good.read_text()))
    broken.chmod(0o600)
    cut = ssh_ctx(herdr_server, tmp_path, box, ssh_config=broken)
    before = ctx.store.get(task_id)
    wait_until(
        lambda: [a["agent_status"] for a in remote_agents(box)] in (["idle"], ["done"]),
        what="the remote agent's turn over",
    )
    seen = checked(call(cut, "herdr_get_agent_result", target=task_id, wait=False))
    assert seen["status"] == "running", seen
    text = " ".join(seen["warnings"])
    assert "could not be read" in text and "box" in text, seen["warnings"]
    after = ctx.store.get(task_id)
    assert after.status == "running" and after.delivery == before.delivery
    assert len(remote_agents(box)) == 1
    done = checked(call(ctx, "herdr_get_agent_result", target=task_id, timeout_ms=20_000))
    assert done["status"] == "completed", done
    assert len(remote_agents(box)) == 1


def test_ssh_only_spawn_refusals_name_the_fix(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """About 2 s: two cwd resolutions over SSH."""
    ctx = ssh_ctx(herdr_server, tmp_path, box)
    repo = git_repo(tmp_path / "repo")
    isolated: dict[str, Any] = checked(
        call(ctx, "herdr_spawn_agent", prompt="x", cwd=str(repo), machine="box", isolated=True)
    )
    assert isolated["error"]["code"] == "MACHINE_ISOLATED_NOT_SUPPORTED", isolated
    missing = checked(
        call(ctx, "herdr_spawn_agent", prompt="x", cwd=str(tmp_path / "nope"), machine="box")
    )
    assert missing["error"]["code"] == "CWD_NOT_FOUND" and "on machine 'box'" in str(missing)
    no_dir = make_ctx(
        herdr_server, tmp_path, machines=("box",), machine_targets={"box": box.target},
        ssh_config=local_config_dir(box.local) / "ssh" / "config",
    )  # fmt: skip
    refused = checked(call(no_dir, "herdr_spawn_agent", prompt="x", cwd=str(repo), machine="box"))
    assert refused["error"]["code"] == "MACHINE_NO_ARTIFACT_DIR"
    assert "machineArtifactDirs" in refused["error"]["message"]
    assert remote_agents(box) == []


def test_the_machine_down_mid_harvest_leaves_the_record_as_it_was_and_one_agent(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """Slow because of SSH (about 15 s under load): a spawn over SSH, then calls with the SSH server
    stopped and back. Nothing can be learnt while it is down: no verdict is written, nothing is sent
    again."""
    ctx = ssh_ctx(herdr_server, tmp_path, box)
    repo = git_repo(tmp_path / "repo")
    marker = tmp_path / "started"
    scenario = Scenario().run_tool("bash", f"touch {marker}").hang()
    started = checked(
        call(ctx, "herdr_spawn_agent", prompt="x", cwd=str(repo), machine="box", wait=False,
             agent_args=scenario_args(tmp_path, scenario))
    )  # fmt: skip
    task_id = started["taskId"]
    wait_until(marker.exists, what="the remote agent at work")
    before = ctx.store.get(task_id)
    box.host.stop()
    down = checked(call(ctx, "herdr_get_agent_result", target=task_id, wait=False))
    assert (down["status"], down["error"]["code"]) == ("failed", "HERDR_ERROR"), down
    after = ctx.store.get(task_id)
    assert (after.status, after.delivery, after.pane_id) == (
        "running", before.delivery, before.pane_id,
    )  # fmt: skip
    sent = call(ctx, "herdr_message_agent", target=task_id, message="zebra-note")
    assert sent["status"] == "failed", sent
    box.host.start()
    back = checked(call(ctx, "herdr_get_agent_result", target=task_id, wait=False))
    assert (back["status"], back["machine"]) == ("running", "box"), back
    assert len(remote_agents(box)) == 1
    screen = HerdrCli(box.server.cli_path, box.server.env)("pane", "read", back["paneId"],
                                                           "--source", "recent")  # fmt: skip
    assert screen.ok and "zebra-note" not in screen.stdout  # never sent later either


def test_an_external_pis_last_message_is_read_from_its_session_over_ssh(
    herdr_server: HerdrServer, box: Machine, tmp_path: Path
) -> None:
    """About 5 s: a handful of ``--machine`` calls and one session read over SSH."""
    remote = HerdrCli(box.server.cli_path, box.server.env)
    assert remote("workspace", "create", "--cwd", str(tmp_path)).ok
    started = remote("agent", "start", "outsider", "--kind", "pi", "--pane", "w1:p1")
    assert started.ok, started
    ctx = ssh_ctx(herdr_server, tmp_path, box)
    sent = call(ctx, "herdr_message_agent", target="outsider", message="hi", machine="box")
    assert sent["status"] != "failed", sent
    # an observation does not wait for the agent: let pi answer first (the session file is
    # on this disk too; the tool reads it over SSH)
    agent = herdr_call(box.server.socket_path, "agent.get", {"target": "outsider"})["agent"]
    session = agent["agent_session"]["value"]
    wait_until(lambda: last_assistant_message(session), 10, what="the outsider's answer")
    observed = checked(call(ctx, "herdr_get_agent_result", target="outsider", machine="box"))
    assert observed["observation"] is True, observed
    assert [e["source"] for e in observed["evidence"]] == ["herdr", "session"], observed
