"""Session persistence: saved on every change, restored with the same ids, agents resumed."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, SimulatorError
from herdr_sim.client import call
from tests.waits import wait_until

#: the simulator's own seams or settings (herdr_sim.testing): not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only


def start(short_dir: Path, **settings: Any) -> Simulator:
    """A simulator on ``short_dir/herdr.sock`` with its own HOME."""
    home = short_dir / "home"
    home.mkdir(exist_ok=True)
    sim = Simulator(
        socket_path=short_dir / "herdr.sock",
        base_env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        **settings,
    )
    sim.start()
    return sim


@pytest.fixture
def simulators(short_dir: Path) -> Iterator[list[Simulator]]:
    """Simulators started by a test, all stopped afterwards."""
    started: list[Simulator] = []
    yield started
    for sim in started:
        sim.stop()


def api(sim: Simulator, method: str, **params: Any) -> dict[str, Any]:
    """One request over the socket; the result."""
    return call(sim.socket_path, method, params)


def wait_line(sim: Simulator, pane: str, regex: str) -> str:
    """Wait (server side, bounded) until a line of the pane matches."""
    matched: str = api(
        sim,
        "pane.wait_for_output",
        pane_id=pane,
        source="recent",
        timeout_ms=10_000,
        match={"type": "regex", "value": regex},
    )["matched_line"]
    return matched


def build(sim: Simulator, short_dir: Path) -> dict[str, str]:
    """Two workspaces, a split, a second tab, labels and a cd; returns the pane ids."""
    work = short_dir / "work"
    (work / "sub").mkdir(parents=True)
    first = api(sim, "workspace.create", cwd=str(work), label="alpha", focus=True)
    root = first["root_pane"]["pane_id"]
    right = api(sim, "pane.split", target_pane_id=root, direction="right", ratio=0.3)["pane"]
    api(sim, "pane.rename", pane_id=right["pane_id"], label="logs")
    tab = api(sim, "tab.create", workspace_id="w1", cwd=str(work), label="second")
    api(sim, "workspace.create", cwd=str(work))
    api(sim, "pane.send_input", pane_id=root, text="cd sub && echo MOVED", keys=["Enter"])
    wait_line(sim, root, "^MOVED$")
    return {"root": root, "right": right["pane_id"], "tab_root": tab["root_pane"]["pane_id"]}


def saved(short_dir: Path) -> dict[str, Any]:
    """The session file as JSON."""
    data: dict[str, Any] = json.loads((short_dir / "session.json").read_text())
    return data


def test_every_change_is_saved_privately(short_dir: Path, simulators: list[Simulator]) -> None:
    sim = start(short_dir)
    simulators.append(sim)
    api(sim, "workspace.create", cwd="/tmp", label="first")
    path = short_dir / "session.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [ws["custom_name"] for ws in saved(short_dir)["workspaces"]] == ["first"]
    api(sim, "workspace.rename", workspace_id="w1", label="renamed")
    assert [ws["custom_name"] for ws in saved(short_dir)["workspaces"]] == ["renamed"]


def test_the_save_after_each_change_makes_no_fsync(
    short_dir: Path, simulators: list[Simulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: the save runs on the server's loop after every change; its ``fsync`` cost
    4-8 ms per split on a loaded machine, delaying the new pane's prompt. Herdr's own save is
    write + rename without one (``src/persist/io.rs``)."""
    synced: list[int] = []
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting)
    sim = start(short_dir)
    simulators.append(sim)
    api(sim, "workspace.create", cwd="/tmp", label="first")
    api(sim, "workspace.rename", workspace_id="w1", label="renamed")
    assert [ws["custom_name"] for ws in saved(short_dir)["workspaces"]] == ["renamed"]
    assert synced == []


def test_restart_restores_ids_layout_labels_and_cwds(
    short_dir: Path, simulators: list[Simulator]
) -> None:
    sim = start(short_dir)
    simulators.append(sim)
    ids = build(sim, short_dir)
    before = api(sim, "session.snapshot")["snapshot"]
    sim.stop()

    again = start(short_dir)
    simulators.append(again)
    after = api(again, "session.snapshot")["snapshot"]
    assert [ws["workspace_id"] for ws in after["workspaces"]] == ["w1", "w2"]
    assert [ws["label"] for ws in after["workspaces"]] == [
        ws["label"] for ws in before["workspaces"]
    ]
    assert [t["tab_id"] for t in after["tabs"]] == [t["tab_id"] for t in before["tabs"]]
    assert [t["label"] for t in after["tabs"]] == [t["label"] for t in before["tabs"]]
    assert [p["pane_id"] for p in after["panes"]] == [p["pane_id"] for p in before["panes"]]
    old_terms = {p["terminal_id"] for p in before["panes"]}
    assert all(p["terminal_id"] not in old_terms for p in after["panes"])
    panes = {p["pane_id"]: p for p in after["panes"]}
    assert panes[ids["right"]]["label"] == "logs"
    assert panes[ids["root"]]["cwd"] == str(short_dir / "work" / "sub")
    assert [x["splits"] for x in after["layouts"]] == [x["splits"] for x in before["layouts"]]
    assert after["focused_pane_id"] == before["focused_pane_id"]
    # the restored shells are live, and counters continue: no number is reused
    api(again, "pane.send_input", pane_id=ids["root"], text="pwd", keys=["Enter"])
    assert wait_line(again, ids["root"], "/sub$").endswith("/work/sub")
    newer = api(again, "pane.split", target_pane_id=ids["root"], direction="down")["pane"]
    assert newer["pane_id"] == "w1:p4"
    assert api(again, "workspace.create", cwd="/tmp")["workspace"]["workspace_id"] == "w3"


def test_third_party_resume_command_runs_after_restore(
    short_dir: Path, simulators: list[Simulator]
) -> None:
    sim = start(short_dir)
    simulators.append(sim)
    pane = api(sim, "workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    api(
        sim,
        "pane.report_agent",
        pane_id=pane,
        source="acme:agent",
        agent="acme",
        state="idle",
        seq=1,
        resume_argv=["echo", "RESUMED-acme"],
    )
    sim.stop()
    again = start(short_dir)
    simulators.append(again)
    assert wait_line(again, pane, "^RESUMED-acme$") == "RESUMED-acme"


def test_official_session_uses_herdrs_resume_plan(
    short_dir: Path, simulators: list[Simulator]
) -> None:
    sim = start(short_dir)
    simulators.append(sim)
    pane = api(sim, "workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    api(
        sim,
        "pane.report_agent_session",
        pane_id=pane,
        source="herdr:claude",
        agent="claude",
        seq=1,
        agent_session_id="sess-42",
        session_start_source="startup",
    )
    assert saved(short_dir)["workspaces"][0]["tabs"][0]["panes"]["1"]["agent_session"] == {
        "source": "herdr:claude",
        "agent": "claude",
        "kind": "id",
        "value": "sess-42",
    }
    sim.stop()
    again = start(short_dir)
    simulators.append(again)
    assert "claude --resume sess-42" in wait_line(again, pane, "claude --resume sess-42")
    restored = api(again, "pane.get", pane_id=pane)["pane"]
    assert restored["agent_session"]["value"] == "sess-42"


def test_resume_can_be_turned_off(short_dir: Path, simulators: list[Simulator]) -> None:
    sim = start(short_dir)
    simulators.append(sim)
    pane = api(sim, "workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    api(
        sim,
        "pane.report_agent",
        pane_id=pane,
        source="acme:agent",
        agent="acme",
        state="idle",
        seq=1,
        resume_argv=["echo", "RESUMED-acme"],
    )
    sim.stop()
    again = start(short_dir, resume_agents_on_restore=False)
    simulators.append(again)
    api(again, "pane.send_input", pane_id=pane, text="echo MARK", keys=["Enter"])
    wait_line(again, pane, "^MARK$")
    text = api(again, "pane.read", pane_id=pane, source="recent")["read"]["text"]
    assert "RESUMED" not in text


def test_persistence_can_be_turned_off(short_dir: Path, simulators: list[Simulator]) -> None:
    sim = start(short_dir, persist=False)
    simulators.append(sim)
    api(sim, "workspace.create", cwd="/tmp")
    assert not (short_dir / "session.json").exists()


def test_unusable_session_file_refuses_to_start_and_is_kept(short_dir: Path) -> None:
    path = short_dir / "session.json"
    path.write_text("{not json")
    with pytest.raises(SimulatorError, match="not JSON"):
        start(short_dir)
    assert path.read_text() == "{not json"
    assert not (short_dir / "herdr.sock").exists()


def test_sockets_sharing_a_directory_keep_separate_sessions(
    short_dir: Path, simulators: list[Simulator]
) -> None:
    other = Simulator(socket_path=short_dir / "other.sock")
    other.start()
    simulators.append(other)
    api(other, "workspace.create", cwd="/tmp", label="other")
    assert (short_dir / "other.session.json").exists()
    assert not (short_dir / "session.json").exists()


def test_the_session_file_is_herdrs_snapshot(short_dir: Path) -> None:
    # Herdr's src/persist/snapshot.rs: SessionSnapshot version 3, its workspace, tab, pane and
    # layout fields (the layout an externally tagged enum, panes keyed by pane id)
    sim = start(short_dir)
    try:
        sim.call("workspace.create", {"cwd": "/tmp", "label": "kept"})
        sim.call("pane.split", {"pane_id": "w1:p1", "direction": "right", "ratio": 0.25})
        sim.call("tab.create", {"workspace_id": "w1", "label": "second"})

        def two_tabs() -> dict[str, Any] | None:
            data = saved(short_dir)
            return data if len(data["workspaces"][0]["tabs"]) == 2 else None

        data = wait_until(two_tabs, what="the second tab to be saved")
    finally:
        sim.stop()
    assert data["version"] == 3 and "format" not in data
    assert {"active", "selected", "sidebar_width", "collapsed_space_keys"} <= set(data)
    ws = data["workspaces"][0]
    assert (ws["id"], ws["custom_name"], ws["identity_cwd"]) == ("w1", "kept", "/tmp")
    assert ws["public_tab_numbers"] == [1, 2] and ws["next_public_tab_number"] == 3
    assert ws["public_pane_numbers"] == {"1": 1, "2": 2, "3": 3}
    first, second = ws["tabs"]
    split = {"direction": "Horizontal", "ratio": 0.25, "first": {"Pane": 1}, "second": {"Pane": 2}}
    assert first["layout"] == {"Split": split}
    assert set(first["panes"]) == {"1", "2"} and first["panes"]["1"]["cwd"] == "/tmp"
    assert (second["custom_name"], second["layout"], second["root_pane"]) == (
        "second",
        {"Pane": 3},
        3,
    )


def test_a_session_json_written_by_herdr_restores(short_dir: Path) -> None:
    # no simulator extras: Herdr's own fields are enough to come back (pane ids are Herdr's
    # internal ids here, numbered by public_pane_numbers)
    tree = {
        "Split": {
            "direction": "Vertical",
            "ratio": 0.5,
            "first": {"Pane": 7},
            "second": {"Pane": 9},
        }
    }
    herdrs = {
        "version": 3,
        "active": 0,
        "selected": 0,
        "workspaces": [
            {
                "id": "w653454be8b07f11",
                "custom_name": "from-herdr",
                "identity_cwd": "/tmp",
                "public_pane_numbers": {"7": 1, "9": 2},
                "next_public_pane_number": 3,
                "public_tab_numbers": [1],
                "next_public_tab_number": 2,
                "tabs": [
                    {
                        "custom_name": None,
                        "layout": tree,
                        "panes": {"7": {"cwd": "/tmp"}, "9": {"cwd": "/", "label": "logs"}},
                        "zoomed": False,
                        "focused": 9,
                        "root_pane": 7,
                    }
                ],
                "active_tab": 0,
            }
        ],
    }
    path = short_dir / "session.json"
    path.write_text(json.dumps(herdrs))
    path.chmod(0o600)
    sim = start(short_dir)
    try:
        listed = sim.call("pane.list", {})["result"]["panes"]
        info = sim.call("workspace.get", {"workspace_id": "w1"})["result"]["workspace"]
    finally:
        sim.stop()
    assert info["label"] == "from-herdr"
    assert [(p["pane_id"], p.get("label"), p["focused"]) for p in listed] == [
        ("w1:p1", None, False),
        ("w1:p2", "logs", True),
    ]
