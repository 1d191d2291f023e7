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

from herdr_sim import Simulator
from tests.contract.helpers import (
    Api,
    Herdr,
    Raw,
    cli_error,
    cli_json,
    failure,
    process_info,
    split,
    wait_line,
)
from tests.waits import wait_until


def foreground(api: Api, pane: str, name: str) -> dict[str, Any]:
    """Wait until ``name`` is in the pane's foreground job; that job's process info."""

    def found() -> dict[str, Any]:
        current = process_info(api, pane)
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
def first_workspace(api: Api, workdir: Path) -> dict[str, Any]:
    """The first workspace starts in ``workdir`` here (so ``pane`` does too)."""
    return api("workspace.create", cwd=str(workdir))


def test_shell_pid_is_the_pane_shell(api: Api, pane: str) -> None:
    shell_pid = process_info(api, pane)["shell_pid"]
    api("pane.send_text", pane_id=pane, text="echo PID=$$\r")
    assert wait_line(api, pane, r"^PID=\d+$") == f"PID={shell_pid}"


def test_idle_shell_is_its_own_foreground_job(api: Api, pane: str, workdir: Path) -> None:
    current = process_info(api, pane)
    shell_pid = current["shell_pid"]
    assert current["pane_id"] == pane
    assert current["foreground_process_group_id"] == shell_pid
    [shell] = current["foreground_processes"]
    assert (shell["pid"], shell["name"], shell["cwd"]) == (shell_pid, "bash", str(workdir))
    assert shell["cmdline"] == " ".join(shell["argv"])
    assert "tty" not in current  # Herdr never fills it


def test_running_command_is_the_foreground_job(api: Api, pane: str, workdir: Path) -> None:
    shell_pid = process_info(api, pane)["shell_pid"]
    api("pane.send_text", pane_id=pane, text="sleep 100\r")
    current = foreground(api, pane, "sleep")
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


def test_foreground_cwd_is_the_process_cwd(api: Api, pane: str, workdir: Path) -> None:
    (workdir / "sub").mkdir()
    api("pane.send_text", pane_id=pane, text="(cd sub && exec sleep 100)\r")
    current = foreground(api, pane, "sleep")
    [sleep] = current["foreground_processes"]
    assert sleep["cwd"] == str(workdir / "sub")


def test_pipeline_members_are_all_listed_sorted_by_pid(api: Api, pane: str) -> None:
    api("pane.send_text", pane_id=pane, text="sleep 100 | cat\r")

    def both() -> dict[str, Any]:
        current = process_info(api, pane)
        names = sorted(proc["name"] for proc in current.get("foreground_processes", []))
        return current if names == ["cat", "sleep"] else {}

    current = wait_until(both, what="the pipeline in the foreground")
    pids = [proc["pid"] for proc in current["foreground_processes"]]
    assert pids == sorted(pids)
    group = current["foreground_process_group_id"]
    assert all(os.getpgid(pid) == group for pid in pids)


def test_foreground_returns_to_the_shell_after_the_command(api: Api, pane: str) -> None:
    shell_pid = process_info(api, pane)["shell_pid"]
    api("pane.send_text", pane_id=pane, text="sleep 100\r")
    foreground(api, pane, "sleep")
    api("pane.send_keys", pane_id=pane, keys=["C-c"])
    wait_until(
        lambda: process_info(api, pane)["foreground_process_group_id"] == shell_pid,
        what="the shell in the foreground",
    )


def test_without_pane_id_the_focused_pane_answers(api: Api, pane: str) -> None:
    other = split(api, pane)
    root_shell = process_info(api, pane)["shell_pid"]
    other_shell = process_info(api, other)["shell_pid"]
    assert root_shell != other_shell
    assert (process_info(api)["pane_id"], process_info(api)["shell_pid"]) == (pane, root_shell)
    api("pane.focus", pane_id=other)
    assert (process_info(api)["pane_id"], process_info(api)["shell_pid"]) == (other, other_shell)


def test_legacy_id_answers_the_canonical_id(api: Api, pane: str) -> None:
    assert process_info(api, "w1-1")["pane_id"] == "w1:p1"


def test_unknown_pane_is_pane_not_found_without_naming_it(raw: Raw, pane: str) -> None:
    assert raw("pane.process_info", pane_id="w9:p9") == {
        "id": "t",
        "error": {"code": "pane_not_found", "message": "pane not found"},
    }


@pytest.mark.herdr_sim_only
def test_no_focused_pane_is_pane_not_found(api: Api, sim: Simulator) -> None:
    assert failure(api, "pane.process_info") == ("pane_not_found", "pane not found")


# -- CLI ---------------------------------------------------------------------------------------


def test_cli_process_info_prints_the_response(api: Api, pane: str, herdr: Herdr) -> None:
    result = herdr("pane", "process-info", "--pane", pane)
    response = cli_json(result, "cli:pane:process_info")
    assert result.stderr == ""
    assert response["process_info"]["shell_pid"] == process_info(api, pane)["shell_pid"]


def test_cli_process_info_current_uses_herdr_pane_id(api: Api, pane: str, herdr: Herdr) -> None:
    other = split(api, pane)
    result = herdr("pane", "process-info", "--current", env={"HERDR_PANE_ID": other})
    assert result.json["result"]["process_info"]["pane_id"] == other
    focused = herdr("pane", "process-info")
    assert focused.json["result"]["process_info"]["pane_id"] == pane


@pytest.mark.herdr_sim_only
def test_cli_process_info_current_without_herdr_pane_id_is_a_usage_error(
    herdr: Herdr, sim: Simulator
) -> None:
    result = herdr("pane", "process-info", "--current")
    assert (result.code, result.stdout) == (2, "")
    assert "--current requires HERDR_PANE_ID" in result.stderr


def test_cli_process_info_unknown_pane_is_the_error_json(herdr: Herdr, pane: str) -> None:
    assert cli_error(herdr("pane", "process-info", "--pane", "w9:p9")) == {
        "error": {"code": "pane_not_found", "message": "pane not found"},
        "id": "cli:pane:process_info",
    }
