"""The file-access seam (remote_files): the same answers here and over SSH.

The SSH side runs against ``herdr_machine``'s real SSH server on loopback, with the ssh
configuration the fixture wrote (never ``~/.ssh``). The "remote" files are in a directory of
their own, reached only through ``ssh``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest.mock import ANY

import pytest

from herdr_sim.fake_agent.session import PiSession
from orchestrator.agent_tools import worktree as wt
from orchestrator.agent_tools.harvest import task_diff
from orchestrator.agent_tools.inbox import read_inbox
from orchestrator.agent_tools.records import TaskRecord
from orchestrator.agent_tools.remote_files import (
    _WRITE_SCRIPT,
    SSH_OPTIONS,
    LocalFiles,
    RemoteFiles,
    RemoteUnavailable,
    SshFiles,
    check_ssh_target,
    run_bounded,
)
from orchestrator.agent_tools.transcript import read_entries
from orchestrator.client.file_trust.private_files import UnsafeFile
from pytest_herdr.machines import Machine, MachineFactory, local_config_dir
from tests.orchestrator.agent_tools.test_worktree import _git, make_hostile
from tests.waits import SCALE


def _ssh_files(machine: Machine, timeout: float = 30.0) -> SshFiles:
    config = local_config_dir(machine.local) / "ssh" / "config"
    return SshFiles(machine.label, machine.target, config, timeout=timeout * SCALE)


def _tree(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "result.md").write_bytes(b"0123456789" * 10)
    (root / "it's $(odd) name.txt").write_text("quoted\n")
    (root / "secret.txt").write_text("not the child's\n")
    (root / "link.md").symlink_to(root / "secret.txt")
    os.mkfifo(root / "fifo")


@pytest.fixture(params=["local", "ssh"])
def files(
    request: pytest.FixtureRequest, tmp_path: Path, herdr_machine_factory: MachineFactory
) -> tuple[RemoteFiles, Path]:
    root = tmp_path / "remote"
    _tree(root)
    if request.param == "local":
        return LocalFiles(), root
    return _ssh_files(herdr_machine_factory("box")), root


def test_bounded_reads_answer_the_same_on_both_sides(files: tuple[RemoteFiles, Path]) -> None:
    fs, root = files
    whole = fs.read_bounded(str(root / "result.md"), 1000)
    assert (whole.data, whole.size, whole.offset, whole.truncated) == (
        b"0123456789" * 10,
        100,
        0,
        False,
    )
    head = fs.read_bounded(str(root / "result.md"), 15)
    assert (head.data, head.size, head.truncated) == (b"012345678901234", 100, True)
    middle = fs.read_bounded(str(root / "result.md"), 4, offset=33)
    assert (middle.data, middle.offset) == (b"3456", 33)
    tail = fs.read_bounded(str(root / "result.md"), 5, tail=True)
    assert (tail.data, tail.offset, tail.size) == (b"56789", 95, 100)
    past = fs.read_bounded(str(root / "result.md"), 5, offset=500)
    assert (past.data, past.size) == (b"", 100)
    odd = fs.read_bounded(str(root / "it's $(odd) name.txt"), 100)
    assert odd.data == b"quoted\n"  # the name reached the file as one word, nothing ran


def test_links_fifos_and_directories_are_refused_and_missing_files_say_so(
    files: tuple[RemoteFiles, Path],
) -> None:
    fs, root = files
    for name in ("link.md", "fifo"):
        with pytest.raises(UnsafeFile):
            fs.read_bounded(str(root / name), 100)  # bounded: a FIFO never blocks the read
    with pytest.raises(UnsafeFile):
        fs.read_bounded(str(root), 100)
    with pytest.raises(FileNotFoundError):
        fs.read_bounded(str(root / "missing.md"), 100)
    assert fs.exists(str(root / "link.md")) and not fs.exists(str(root / "missing.md"))
    assert fs.is_regular_file(str(root / "result.md"))
    assert not fs.is_regular_file(str(root / "link.md"))
    assert not fs.is_regular_file(str(root / "fifo"))
    assert fs.list_dir(str(root)) == sorted(
        ["result.md", "it's $(odd) name.txt", "secret.txt", "link.md", "fifo"]
    )


def test_run_passes_argv_and_env_word_for_word_and_bounds_the_output(
    files: tuple[RemoteFiles, Path],
) -> None:
    fs, root = files
    odd = "a b;$(touch PWNED)'\"*"
    ran = fs.run(
        ["sh", "-c", 'printf "%s|%s" "$1" "$ORCH_TEST"', "sh", odd], env={"ORCH_TEST": odd}
    )
    assert (ran.returncode, ran.stdout) == (0, f"{odd}|{odd}".encode())
    assert not (root / "PWNED").exists() and not Path("PWNED").exists()
    big = fs.run(["sh", "-c", "yes x | head -c 1000000"], limit=1000)
    assert big.truncated and len(big.stdout) == 1000
    failed = fs.run(["sh", "-c", "echo why >&2; exit 7"])
    assert (failed.returncode, failed.reason) == (7, "why")
    git = fs.run(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"])
    assert git.returncode != 0  # git runs there and answers; not a repository


def test_ssh_argv_never_uses_a_shell_nor_the_users_config(tmp_path: Path) -> None:
    fs = SshFiles("box", "me@host", tmp_path / "ssh_config")
    argv = fs.ssh_argv(["git", "-C", "/r p", "diff"], {"GIT_INDEX_FILE": "/t/i x"})
    assert argv[:3] == ["ssh", "-F", str(tmp_path / "ssh_config")]
    for option in SSH_OPTIONS:
        assert option in argv
    assert "BatchMode=yes" in SSH_OPTIONS and "StrictHostKeyChecking=yes" in SSH_OPTIONS
    assert argv[-3:-1] == ["--", "me@host"]  # the target can never be read as an option
    assert argv[-1] == "env 'GIT_INDEX_FILE=/t/i x' git -C '/r p' diff"
    for bad in ("-oProxyCommand=x", "", "a b", "a\nb"):
        assert check_ssh_target(bad)
        with pytest.raises(ValueError, match="SSH target"):
            SshFiles("box", bad, tmp_path / "ssh_config")
    with pytest.raises(ValueError, match="absolute"):
        fs.read_bounded("relative/result.md", 10)


def test_a_machine_that_cannot_be_reached_is_unavailable_not_missing(
    herdr_machine: Machine, tmp_path: Path
) -> None:
    """A dead SSH server is RemoteUnavailable (state unknown), never FileNotFoundError or a
    failed command, on every operation."""
    (tmp_path / "result.md").write_text("done\n")
    fs = _ssh_files(herdr_machine)
    assert fs.read_bounded(str(tmp_path / "result.md"), 100).data == b"done\n"
    herdr_machine.host.stop()
    calls = (
        lambda: fs.read_bounded(str(tmp_path / "result.md"), 100),
        lambda: fs.exists(str(tmp_path / "result.md")),
        lambda: fs.is_regular_file(str(tmp_path / "result.md")),
        lambda: fs.list_dir(str(tmp_path)),
        lambda: fs.run(["true"]),
    )
    for call in calls:
        with pytest.raises(RemoteUnavailable, match="machine 'box' over SSH"):
            call()


def test_run_bounded_kills_a_command_past_its_timeout() -> None:
    with pytest.raises(TimeoutError):
        run_bounded(
            [sys.executable, "-c", "import time; time.sleep(30)"],
            env=dict(os.environ),
            timeout=0.5,
            limit=100,
        )


def test_local_run_drops_secrets_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCH_TEST_API_KEY", "sk-secret")
    ran = LocalFiles().run(["sh", "-c", 'printf "%s" "${ORCH_TEST_API_KEY-unset}"'])
    assert ran.stdout == b"unset"
    assert subprocess.run(["true"], check=False).returncode == 0


def committed_repo(path: Path) -> Path:
    """A new repository at ``path`` with one commit: ``a.txt`` ("one")."""
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("one\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "init")
    return path


# -- git on the machine: the task's snapshot and diff computed there -------------------------


def test_snapshot_and_diff_run_on_the_machine_and_match_the_local_ones(
    herdr_machine: Machine, tmp_path: Path
) -> None:
    """The diff comes back over SSH equal to the one computed here on the same repository;
    the repository's own programs (filters, fsmonitor, hooks) run on neither side.

    Slow because every git step (~10-15 s under load) is its own SSH connection (no connection
    reuse yet), and this test takes two snapshots and three diffs."""
    repo = committed_repo(tmp_path / "remote repo")
    markers = make_hostile(repo, tmp_path)
    (repo / "a.txt").write_text("dirty before the task\n")
    fs = _ssh_files(herdr_machine)
    baseline = wt.snapshot(str(repo), files=fs)
    assert baseline.cwd == str(repo) and baseline.tree
    assert baseline == wt.snapshot(str(repo))  # same commit, same tree object, same repo
    (repo / "a.txt").write_text("the task's edit\n")
    (repo / "it's new $(x).txt").write_text("new\n")
    remote = wt.diff(str(repo), baseline, files=fs)
    local = wt.diff(str(repo), baseline)
    assert remote == local
    assert {path for _, path in remote.files} == {"a.txt", "it's new $(x).txt"}
    assert "-dirty before the task" in remote.patch and "+the task's edit" in remote.patch
    cut = wt.diff(str(repo), baseline, files=fs, max_bytes=40)
    assert cut.truncated and cut.bytes == local.bytes
    assert sorted(p.name for p in markers.iterdir()) == []
    with pytest.raises(wt.WorktreeError, match="on machine 'box'") as missing:
        wt.snapshot(str(tmp_path / "nowhere"), files=fs)
    assert missing.value.code == "CWD_NOT_FOUND"


def test_a_machine_lost_before_the_diff_is_an_unavailable_machine_not_an_empty_diff(
    herdr_machine: Machine, tmp_path: Path
) -> None:
    """Slow (~5 s): the snapshot before the loss is a dozen SSH connections."""
    repo = committed_repo(tmp_path / "repo")
    fs = _ssh_files(herdr_machine)
    baseline = wt.snapshot(str(repo), files=fs)
    (repo / "a.txt").write_text("two\n")
    herdr_machine.host.stop()
    with pytest.raises(RemoteUnavailable):
        wt.diff(str(repo), baseline, files=fs)


# -- the task's files read where the task runs ------------------------------------------------


def test_inbox_session_and_task_diff_read_over_ssh_equal_the_local_reads(
    herdr_machine: Machine, tmp_path: Path
) -> None:
    """read_inbox, read_entries and task_diff given the machine's SshFiles answer as they do
    here (same messages and offsets, same session entries, same diff); a lost machine is
    an inbox error and a diff warning, never an empty inbox or "no changes".

    Slow because of SSH (~7 s under load): a snapshot and two diffs, a connection per git step."""
    fs = _ssh_files(herdr_machine)
    inbox = tmp_path / "inbox.ndjson"
    note = {"ts": "2026-10-20T09:00:00Z", "type": "NOTE", "text": "hi"}
    inbox.write_text(json.dumps(note) + "\n" + json.dumps({**note, "text": "two"}) + "\n{part")
    remote_read = read_inbox(inbox, 0, 1, files=fs)
    assert remote_read == read_inbox(inbox, 0, 1)
    assert remote_read.more and [m["text"] for m in remote_read.messages] == ["hi"]
    rest = read_inbox(inbox, remote_read.next_offset, files=fs)
    assert [m["text"] for m in rest.messages] == ["two"] and rest.partial
    session = PiSession(
        tmp_path / "s.jsonl", "0190-test", "/repo", provider="fake", model="m", thinking="off",
        append_system_prompt=None,
    )  # fmt: skip
    session.user("do it")
    assert read_entries(session.path, files=fs) == read_entries(session.path)
    assert any(e.get("type") == "message" for e in read_entries(session.path, files=fs))

    repo = committed_repo(tmp_path / "repo")
    baseline = wt.snapshot(str(repo), files=fs)
    (repo / "a.txt").write_text("two\n")
    record = TaskRecord(
        task_id="t1", status="running", created_at="", updated_at="", kind="pi", cwd=str(repo),
        machine="box", extra={"baseline": baseline.to_json()},
    )  # fmt: skip
    remote_diff, note_text = task_diff(record, fs)
    assert note_text is None and remote_diff == task_diff(record)[0]
    assert remote_diff is not None and [f.path for f in remote_diff.files] == ["a.txt"]

    herdr_machine.host.stop()
    lost = read_inbox(inbox, 0, files=fs)
    assert lost.error and "machine 'box' over SSH" in lost.error and not lost.messages
    assert task_diff(record, fs) == (None, ANY)
    assert "no diff: machine 'box' over SSH" in str(task_diff(record, fs)[1])
    with pytest.raises(RemoteUnavailable):
        read_entries(session.path, files=fs)


def test_write_atomic_replaces_privately_and_never_writes_through_a_link(
    files: tuple[RemoteFiles, Path],
) -> None:
    fs, root = files
    fresh = root / "new dir" / "task.md"
    fs.write_atomic(str(fresh), b"the envelope\n")
    assert fresh.read_bytes() == b"the envelope\n"
    assert fresh.stat().st_mode & 0o777 == 0o600
    assert fresh.parent.stat().st_mode & 0o777 == 0o700
    fs.write_atomic(str(fresh), b"again\n")
    assert fresh.read_bytes() == b"again\n"
    fs.write_atomic(str(root / "link.md"), b"mine\n")  # the link is replaced
    assert not (root / "link.md").is_symlink() and (root / "link.md").read_bytes() == b"mine\n"
    assert (root / "secret.txt").read_text() == "not the child's\n"
    (root / "linked dir").symlink_to(root / "new dir")
    with pytest.raises(UnsafeFile):
        fs.write_atomic(str(root / "linked dir" / "task.md"), b"through a link\n")
    assert fresh.read_bytes() == b"again\n"
    leftovers = [p.name for p in root.rglob("*.tmp")]
    assert leftovers == []


def test_a_write_cut_short_replaces_nothing(tmp_path: Path) -> None:
    """The remote write script renames only when every byte arrived: a stream that ends
    early (the SSH connection dropped) leaves the old file in place and no temp file."""
    target = tmp_path / "task.md"
    target.write_text("old\n")
    ran = run_bounded(
        ["sh", "-c", _WRITE_SCRIPT, "sh", str(target), "100"],
        env=dict(os.environ),
        timeout=10 * SCALE,
        limit=0,
        stdin=b"only part",
    )
    assert ran.returncode == 6
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "task.md"
    ]
