"""``pane.process_info`` and ``herdr pane process-info``: the pane shell and its foreground job.

Herdr reads the shell pid from the pty child and the foreground job from ``/proc`` (Linux:
``argv0`` is never filled). The tests compare against what the shell itself reports
(``$$``) and against ``/proc``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    Raw,
    cli_error,
    cli_json,
    failure,
    process_info,
    split,
    wait_line,
)
from tests.waits import wait_until


def foreground(herdr_client: HerdrClient, pane: str, name: str) -> dict[str, Any]:
    """Wait until ``name`` is in the pane's foreground job; that job's process info."""

    def found() -> dict[str, Any]:
        current = process_info(herdr_client, pane)
        names = [proc["name"] for proc in current.get("foreground_processes", [])]
        return current if name in names else {}

    return wait_until(found, what=f"{name} in the foreground")


@pytest.fixture
def workdir(short_dir: Path) -> Path:
    """A directory for the pane to start in."""
    path = short_dir / "work"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def first_workspace(herdr_client: HerdrClient, workdir: Path) -> dict[str, Any]:
    """The first workspace starts in ``workdir`` here (so ``pane`` does too)."""
    return herdr_client.call("workspace.create", cwd=str(workdir))


def test_shell_pid_is_the_pane_shell(herdr_client: HerdrClient, pane: str) -> None:
    shell_pid = process_info(herdr_client, pane)["shell_pid"]
    herdr_client.call("pane.send_text", pane_id=pane, text="echo PID=$$\r")
    assert wait_line(herdr_client, pane, r"^PID=\d+$") == f"PID={shell_pid}"


def test_idle_shell_is_its_own_foreground_job(
    herdr_client: HerdrClient, pane: str, workdir: Path
) -> None:
    current = process_info(herdr_client, pane)
    shell_pid = current["shell_pid"]
    assert current["pane_id"] == pane
    assert current["foreground_process_group_id"] == shell_pid
    [shell] = current["foreground_processes"]
    assert (shell["pid"], shell["name"], shell["cwd"]) == (shell_pid, "bash", str(workdir))
    assert shell["cmdline"] == " ".join(shell["argv"])
    assert "tty" not in current  # Herdr never fills it


def test_running_command_is_the_foreground_job(
    herdr_client: HerdrClient, pane: str, workdir: Path
) -> None:
    shell_pid = process_info(herdr_client, pane)["shell_pid"]
    herdr_client.call("pane.send_text", pane_id=pane, text="sleep 100\r")
    current = foreground(herdr_client, pane, "sleep")
    [sleep] = current["foreground_processes"]
    assert current["shell_pid"] == shell_pid
    assert current["foreground_process_group_id"] == sleep["pid"] != shell_pid
    assert sleep == {
        "pid": sleep["pid"],
        "name": "sleep",
        "argv": ["sleep", "100"],
        "cmdline": "sleep 100",
        "cwd": str(workdir),
    }  # no argv0: Herdr's Linux probe leaves it out
    assert Path(f"/proc/{sleep['pid']}/cmdline").read_bytes() == b"sleep\x00100\x00"


def test_foreground_cwd_is_the_process_cwd(
    herdr_client: HerdrClient, pane: str, workdir: Path
) -> None:
    (workdir / "sub").mkdir()
    herdr_client.call("pane.send_text", pane_id=pane, text="(cd sub && exec sleep 100)\r")
    current = foreground(herdr_client, pane, "sleep")
    [sleep] = current["foreground_processes"]
    assert sleep["cwd"] == str(workdir / "sub")


def test_pipeline_members_are_all_listed_sorted_by_pid(
    herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="sleep 100 | cat\r")

    def both() -> dict[str, Any]:
        current = process_info(herdr_client, pane)
        names = sorted(proc["name"] for proc in current.get("foreground_processes", []))
        return current if names == ["cat", "sleep"] else {}

    current = wait_until(both, what="the pipeline in the foreground")
    pids = [proc["pid"] for proc in current["foreground_processes"]]
    assert pids == sorted(pids)
    group = current["foreground_process_group_id"]
    assert all(os.getpgid(pid) == group for pid in pids)


def test_foreground_returns_to_the_shell_after_the_command(
    herdr_client: HerdrClient, pane: str
) -> None:
    shell_pid = process_info(herdr_client, pane)["shell_pid"]
    herdr_client.call("pane.send_text", pane_id=pane, text="sleep 100\r")
    foreground(herdr_client, pane, "sleep")
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["C-c"])
    wait_until(
        lambda: process_info(herdr_client, pane)["foreground_process_group_id"] == shell_pid,
        what="the shell in the foreground",
    )


def test_without_pane_id_the_focused_pane_answers(herdr_client: HerdrClient, pane: str) -> None:
    other = split(herdr_client, pane)
    root_shell = process_info(herdr_client, pane)["shell_pid"]
    other_shell = process_info(herdr_client, other)["shell_pid"]
    assert root_shell != other_shell
    assert (process_info(herdr_client)["pane_id"], process_info(herdr_client)["shell_pid"]) == (
        pane,
        root_shell,
    )
    herdr_client.call("pane.focus", pane_id=other)
    assert (process_info(herdr_client)["pane_id"], process_info(herdr_client)["shell_pid"]) == (
        other,
        other_shell,
    )


def test_legacy_id_answers_the_canonical_id(herdr_client: HerdrClient, pane: str) -> None:
    assert process_info(herdr_client, "w1-1")["pane_id"] == "w1:p1"


def test_unknown_pane_is_pane_not_found_without_naming_it(raw: Raw, pane: str) -> None:
    assert raw("pane.process_info", pane_id="w9:p9") == {
        "id": "t",
        "error": {"code": "pane_not_found", "message": "pane not found"},
    }


def test_no_focused_pane_is_pane_not_found(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "pane.process_info") == ("pane_not_found", "pane not found")


# -- CLI ---------------------------------------------------------------------------------------


def test_cli_process_info_prints_the_response(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    result = herdr_cli("pane", "process-info", "--pane", pane)
    response = cli_json(result, "cli:pane:process_info")
    assert result.stderr == ""
    assert response["process_info"]["shell_pid"] == process_info(herdr_client, pane)["shell_pid"]


def test_cli_process_info_current_uses_herdr_pane_id(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    other = split(herdr_client, pane)
    result = herdr_cli("pane", "process-info", "--current", env={"HERDR_PANE_ID": other})
    assert result.json["result"]["process_info"]["pane_id"] == other
    focused = herdr_cli("pane", "process-info")
    assert focused.json["result"]["process_info"]["pane_id"] == pane


def test_cli_process_info_current_without_herdr_pane_id_is_a_usage_error(
    herdr_cli: HerdrCli,
) -> None:
    result = herdr_cli("pane", "process-info", "--current")
    assert (result.code, result.stdout) == (2, "")
    assert "--current requires HERDR_PANE_ID" in result.stderr


def test_cli_process_info_unknown_pane_is_the_error_json(herdr_cli: HerdrCli, pane: str) -> None:
    assert cli_error(herdr_cli("pane", "process-info", "--pane", "w9:p9")) == {
        "error": {"code": "pane_not_found", "message": "pane not found"},
        "id": "cli:pane:process_info",
    }


@pytest.mark.herdr_sim_only
def test_foreground_members_are_found_without_scanning_every_process(
    herdr_client: HerdrClient, pane: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: the foreground job used to be found by reading every process on the machine
    (~10 ms on the server's loop per call on a busy machine; a fleet's start watch asks a few
    times a second per agent). Now the pane's tree and the orphans the simulator adopted are
    walked: the same members — here one whose parent exited (re-parented to the simulator,
    the subreaper) — with no whole-machine scan."""
    from herdr_sim.host import procfs
    from herdr_sim.methods import pane_io

    def no_scan(pgid: int) -> list[procfs.ProcInfo]:
        raise AssertionError("scanned every process")

    herdr_client.call(
        "pane.send_text", pane_id=pane, text="sh -c '(sleep 100 &); exec sleep 101'\r"
    )

    def job() -> dict[str, Any]:
        current = process_info(herdr_client, pane)
        argv = sorted(" ".join(p.get("argv", [])) for p in current.get("foreground_processes", []))
        return current if argv == ["sleep 100", "sleep 101"] else {}

    wait_until(job, what="the job with its orphaned member")
    monkeypatch.setattr(pane_io, "foreground_processes", no_scan)
    walked = process_info(herdr_client, pane)
    scanned = procfs.foreground_processes(walked["foreground_process_group_id"])
    assert [p["pid"] for p in walked["foreground_processes"]] == [p.pid for p in scanned]
    orphan = next(p for p in walked["foreground_processes"] if p["argv"] == ["sleep", "100"])
    assert procfs.proc_info(orphan["pid"]).ppid == os.getpid()  # type: ignore[union-attr]
