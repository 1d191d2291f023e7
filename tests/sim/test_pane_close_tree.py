"""Closing a pane ends exactly that pane's processes, found without reading every process on
the machine (issue 17).

The simulator is the child subreaper of its panes, so a pane's processes are under its
shell or came back to the simulator; ``pane.close`` walks those trees (a scan of the whole
process table, and of every process's environment, per kill step blocked the loop for
seconds with a hundred agents). A pane's mark is matched whole: ``MARK=token:1`` is a prefix
of pane 12's ``MARK=token:12``, and closing pane 1 used to end panes 10 to 19 as well."""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.host import procfs
from tests.waits import wait_until

PROMPT = {"type": "regex", "value": r"^\$ ?$"}


def _alive(pid: int) -> bool:
    info = procfs.proc_info(pid)
    return info is not None and info.state != "Z"


def test_closing_pane_1_leaves_panes_10_and_up_running(
    sim: Simulator, api: Callable[..., dict[str, Any]]
) -> None:
    created = api("workspace.create")
    workspace = created["workspace"]["workspace_id"]
    panes = [created["root_pane"]["pane_id"]]
    rt = sim.runtime
    while max(rt.processes) < 12:
        panes.append(api("tab.create", workspace_id=workspace)["root_pane"]["pane_id"])
    for pane in panes:
        api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    shells = {key: proc.pty.pid for key, proc in rt.processes.items()}
    first = min(shells)
    longer = [key for key in shells if key != first and str(key).startswith(str(first))]
    assert longer, shells  # keys such as 1 and 10..12 (or 2 and 2x): the case that matters
    api("pane.close", pane_id=rt.session.locate(first).pane_id)
    wait_until(lambda: not _alive(shells[first]), 10, what="the closed pane's shell ending")
    assert [key for key in longer if not _alive(shells[key])] == []


def test_closing_a_pane_walks_its_tree_and_finds_its_escaped_processes(
    sim: Simulator, api: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[str] = []
    real = procfs._stats

    def counting() -> list[Any]:
        scans.append(" > ".join(frame.name for frame in traceback.extract_stack()[-6:]))
        return real()

    pane = api("workspace.create")["root_pane"]["pane_id"]
    api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    # a job, a nohup job, and a daemon that left the session and whose parent is gone
    # (it came back to the simulator and carries only the pane's mark)
    command = (
        "sleep 1001 & echo J=$!; nohup sleep 1002 >/dev/null 2>&1 & echo N=$!;"
        " setsid sh -c 'sleep 1003 & echo D=$!'\r"
    )
    api("pane.send_text", pane_id=pane, text=command)
    done = {"type": "regex", "value": r"\bD=\d+"}  # after the next prompt: setsid forked
    api("pane.wait_for_output", pane_id=pane, source="visible", match=done, timeout_ms=10_000)
    text = api("pane.read", pane_id=pane, source="visible")["read"]["text"]
    pids = {name: int(pid) for name, pid in re.findall(r"\b([JND])=(\d+)", text)}
    assert set(pids) == {"J", "N", "D"}, text
    daemon = pids["D"]
    wait_until(lambda: (info := procfs.proc_info(daemon)) is not None and info.ppid != 0, 10)
    monkeypatch.setattr(procfs, "_stats", counting)
    api("pane.close", pane_id=pane)
    wait_until(lambda: not any(_alive(pid) for pid in pids.values()), 10, what=f"{pids} ending")
    assert [scan for scan in scans if "refresh" in scan] == []


def test_closing_a_pane_reads_no_other_panes_environment(
    sim: Simulator, api: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    created = api("workspace.create")
    workspace = created["workspace"]["workspace_id"]
    panes = [created["root_pane"]["pane_id"]]
    panes += [api("tab.create", workspace_id=workspace)["root_pane"]["pane_id"] for _ in range(4)]
    for pane in panes:
        api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    rt = sim.runtime
    shells = {proc.pty.pid for proc in rt.processes.values()}
    read: list[int] = []
    real = procfs._environ_entries

    def recording(pid: int) -> list[bytes] | None:
        read.append(pid)
        return real(pid)

    monkeypatch.setattr(procfs, "_environ_entries", recording)
    closing = rt.session.find_pane(panes[0])
    assert closing is not None
    closed_shell = rt.processes[closing.pane.key].pty.pid
    api("pane.close", pane_id=panes[0])
    wait_until(lambda: not _alive(closed_shell), 10, what="the closed pane's shell ending")
    # the other panes' shells are the simulator's children too, in other sessions; they are
    # known, so their environments are not read to look for the closed pane's mark
    assert sorted(set(read) & (shells - {closed_shell})) == []


def test_a_server_stop_walks_its_tree_and_ends_its_panes_daemons(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last sweep of a stop (whatever escaped the panes' ends) walks the simulator's own
    tree for its mark, as the child subreaper of every pane: reading every process's
    ``stat`` on the machine at each stop was 9 s of the test suite's CPU."""
    from herdr_sim.client import call

    socket = short_dir / "herdr.sock"
    sim = Simulator(socket_path=socket).start()
    try:
        pane = call(socket, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        call(
            socket, "pane.wait_for_output", {"pane_id": pane, "source": "visible", "match": PROMPT}
        )
        call(
            socket,
            "pane.send_text",
            {"pane_id": pane, "text": "setsid sh -c 'sleep 1004 & echo D=$!'\r"},
        )
        done = {"type": "regex", "value": r"\bD=\d+"}
        call(socket, "pane.wait_for_output", {"pane_id": pane, "source": "visible", "match": done})
        text = call(socket, "pane.read", {"pane_id": pane, "source": "visible"})["read"]["text"]
        daemon = int(re.findall(r"\bD=(\d+)", text)[0])
        wait_until(lambda: _alive(daemon), 10, what="the daemon")
        monkeypatch.setattr(procfs, "_stats", lambda: pytest.fail("scanned every process"))
    finally:
        sim.stop()
    assert not _alive(daemon)
