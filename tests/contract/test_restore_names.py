"""Agent names across a restart, as Herdr's cold restore treats them (``persist/snapshot.rs``,
``persist/restore.rs``, reference §10).

Saving: a pane's agent name is written unless its ``agent.start`` launch is still pending,
with ``managed_agent_kind`` when it belongs to a managed launch. Restoring: only a managed
name on a pane that Herdr's built-in plan resumes comes back, as an *active* managed agent;
an unmanaged name (``agent.rename`` on a detected agent), or a managed one on a pane that is
not resumed (resume off, no plan, a duplicate session), is dropped.

The rules are pinned on :mod:`herdr_sim.persist.session` directly (Herdr's own tests: the
"reviewer" managed opencode name dropped with resume off, the "planner" unmanaged name
dropped on a cold restore), then end to end with fake pi agents: ``agent.start reviewer``
on one pane, ``agent.rename planner`` on another, ``herdr server stop``, start again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import RequestFailed, call
from herdr_sim.config import SimulatorConfig
from herdr_sim.model.session import Session
from herdr_sim.persist import session as persist
from herdr_sim.services.runtime import Runtime
from tests.contract.helpers import failure
from tests.contract_check import contracts_dir
from tests.waits import SCALE, wait_until

#: the simulator's own seams or settings (herdr_sim.testing): not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only

WAIT = 10.0
PI_SESSION = {"source": "herdr:pi", "agent": "pi", "kind": "path", "value": "/s/pi.jsonl"}
CODEX_SESSION = {"source": "herdr:codex", "agent": "codex", "kind": "id", "value": "codex-1"}
OPENCODE_SESSION = {
    "source": "herdr:opencode",
    "agent": "opencode",
    "kind": "id",
    "value": "opencode-session",
}


# -- the rules, on persist directly -----------------------------------------------------------


def _saved(*panes: dict[str, Any]) -> dict[str, Any]:
    """A session file with one workspace and one tab holding ``panes`` side by side."""
    numbers = list(range(1, len(panes) + 1))
    layout: dict[str, Any] = {"pane": numbers[-1]}
    for number in reversed(numbers[:-1]):
        layout = {"direction": "right", "ratio": 0.5, "first": {"pane": number}, "second": layout}
    return {
        "format": persist.FORMAT,
        "version": persist.VERSION,
        "next_workspace_number": 2,
        "active": 0,
        "workspaces": [
            {
                "number": 1,
                "identity_cwd": "/tmp",
                "next_tab_number": 2,
                "next_pane_number": len(panes) + 1,
                "tabs": [
                    {
                        "number": 1,
                        "layout": layout,
                        "focused": 1,
                        "panes": {str(n): pane for n, pane in zip(numbers, panes, strict=True)},
                    }
                ],
            }
        ],
    }


def _pane(name: str | None = None, kind: str | None = None, **extra: Any) -> dict[str, Any]:
    pane: dict[str, Any] = {"cwd": "/tmp", **extra}
    if name is not None:
        pane["agent_name"] = name
    if kind is not None:
        pane["managed_agent_kind"] = kind
    return pane


def _names(session: Session) -> list[str | None]:
    return [ref.pane.agent_rec.name for ref in session.all_panes()]


def test_managed_name_on_a_resumed_pane_comes_back_as_a_managed_agent() -> None:
    session = Session()
    restored = persist.restore(session, _saved(_pane("reviewer", "pi", agent_session=PI_SESSION)))
    [(key, command)] = restored.resumes
    assert command == ["pi", "--session", "/s/pi.jsonl"]
    assert _names(session) == ["reviewer"]
    assert restored.managed == {key: ("reviewer", "pi")}


def test_managed_name_is_dropped_when_resume_is_off() -> None:
    # Herdr's restore_carries_persisted_agent_session_metadata: label and session stay
    session = Session()
    saved = _pane("reviewer", "opencode", label="reviewer", agent_session=OPENCODE_SESSION)
    restored = persist.restore(session, _saved(saved), resume_agents=False)
    [ref] = session.all_panes()
    assert ref.pane.agent_rec.name is None
    assert not restored.managed
    assert ref.pane.label == "reviewer"
    assert ref.pane.agent_rec.session is not None
    assert ref.pane.agent_rec.session.value == "opencode-session"


@pytest.mark.parametrize("resume", [True, False])
def test_unmanaged_name_is_dropped_on_a_cold_restore(resume: bool) -> None:
    # Herdr's cold_restore_with_gapped_public_tab_numbers_drops_unmanaged_agent_name
    session = Session()
    saved = _pane("planner", label="planner", agent_session=CODEX_SESSION)
    restored = persist.restore(session, _saved(saved), resume_agents=resume)
    [(_, command)] = restored.resumes
    assert (command is not None) == resume
    assert _names(session) == [None]
    assert not restored.managed


@pytest.mark.parametrize(
    "saved",
    [
        # no official session: no built-in plan
        _pane("reviewer", "pi"),
        # only a third-party resume command: not a built-in plan either
        _pane("reviewer", "pi", resume={"source": "acme", "argv": ["acme", "--resume", "x"]}),
        # a reference Herdr would not accept (relative path)
        _pane("reviewer", "pi", agent_session={**PI_SESSION, "value": "rel.jsonl"}),
        # a kind that is not a canonical agent label
        _pane("reviewer", "Pi", agent_session=PI_SESSION),
        _pane("reviewer", "nope", agent_session=PI_SESSION),
    ],
)
def test_managed_name_without_a_built_in_resume_is_dropped(saved: dict[str, Any]) -> None:
    session = Session()
    restored = persist.restore(session, _saved(saved))
    assert _names(session) == [None]
    assert not restored.managed


def test_managed_name_on_a_duplicate_session_is_dropped() -> None:
    # the session resumes only in the first pane; the second gets a plain shell, no name
    session = Session()
    restored = persist.restore(
        session,
        _saved(
            _pane("first", "pi", agent_session=PI_SESSION),
            _pane("second", "pi", agent_session=PI_SESSION),
        ),
    )
    assert [command is not None for _, command in restored.resumes] == [True, False]
    assert _names(session) == ["first", None]
    assert list(restored.managed.values()) == [("first", "pi")]


def _saved_pane_of(session: Session, managed: tuple[str, bool] | None) -> dict[str, Any]:
    """What the snapshot writes for the session's one pane, its launch being ``managed``."""
    [ref] = session.all_panes()
    data = persist.snapshot(
        session, {ref.pane.key: "/tmp"}, lambda key: managed if key == ref.pane.key else None
    )
    pane: dict[str, Any] = data["workspaces"][0]["tabs"][0]["panes"]["1"]
    return pane


def _one_named_pane(name: str) -> Session:
    session = Session()
    persist.restore(session, _saved(_pane()))
    [ref] = session.all_panes()
    ref.pane.agent_rec.name = name
    return session


def test_active_managed_agent_is_saved_with_its_kind() -> None:
    pane = _saved_pane_of(_one_named_pane("reviewer"), ("pi", False))
    assert (pane["agent_name"], pane["managed_agent_kind"]) == ("reviewer", "pi")


def test_pending_managed_launch_saves_no_name() -> None:
    # Herdr's managed_agent_snapshot_omits_pending_and_persists_active_ownership
    pane = _saved_pane_of(_one_named_pane("reviewer"), ("pi", True))
    assert "agent_name" not in pane
    assert "managed_agent_kind" not in pane


def test_unmanaged_name_is_saved_without_a_kind() -> None:
    pane = _saved_pane_of(_one_named_pane("planner"), None)
    assert pane["agent_name"] == "planner"
    assert "managed_agent_kind" not in pane


def test_restored_managed_name_is_saved_again_by_the_launch_book(tmp_path: Path) -> None:
    # the runtime's launch book takes the restored managed agent over and reports it back
    rt = Runtime(SimulatorConfig(), tmp_path / "herdr.sock", tmp_path)
    restored = persist.restore(
        rt.session, _saved(_pane("reviewer", "pi", agent_session=PI_SESSION))
    )
    rt.agents.launches.adopt_restored(restored.managed)
    [ref] = rt.session.all_panes()
    data = persist.snapshot(rt.session, {ref.pane.key: "/tmp"}, rt.agents.launches.saved)
    pane = data["workspaces"][0]["tabs"][0]["panes"]["1"]
    assert (pane["agent_name"], pane["managed_agent_kind"]) == ("reviewer", "pi")


# -- end to end with fake pi agents -----------------------------------------------------------

SETTINGS: dict[str, Any] = {
    "agent_manifests_dir": contracts_dir() / "agent-detection",
    "agent_start_settle": 0.1,
    "detection_interval": 0.1,
    "detection_debounce": 0.02,
    "detection_idle_hold": 0.1,
}


def api(sim: Simulator, method: str, **params: Any) -> dict[str, Any]:
    """One request over the socket; the result."""
    return call(sim.socket_path, method, params)


def agent(sim: Simulator, target: str) -> dict[str, Any]:
    """``agent.get``'s AgentInfo."""
    info: dict[str, Any] = api(sim, "agent.get", target=target)["agent"]
    return info


def wait_agent(sim: Simulator, target: str, **expected: Any) -> dict[str, Any]:
    """Wait until ``agent.get target`` shows every expected field; its AgentInfo."""

    def seen() -> dict[str, Any] | None:
        try:
            info = agent(sim, target)
        except RequestFailed as exc:  # not an agent until detection sees the process
            if exc.code != "agent_not_found":
                raise
            return None
        return info if all(info.get(k) == v for k, v in expected.items()) else None

    return wait_until(seen, WAIT, what=f"{target} showing {expected}")


def wait_prompt(sim: Simulator, pane: str) -> None:
    """Block server-side (bounded) until the pane's shell prompt is drawn."""
    api(
        sim,
        "pane.wait_for_output",
        pane_id=pane,
        source="recent",
        timeout_ms=int(WAIT * 1000 * SCALE),
        match={"type": "regex", "value": r"^\$"},
    )


def saved_panes(path: Path) -> dict[str, dict[str, Any]]:
    """The saved panes of the first tab of the first workspace, by pane number."""
    data = json.loads(path.read_text(encoding="utf-8"))
    panes: dict[str, dict[str, Any]] = data["workspaces"][0]["tabs"][0]["panes"]
    return panes


def wait_saved(path: Path, field: str) -> dict[str, dict[str, Any]]:
    """Wait until pane 1 of the session file has ``field``; the saved panes."""

    def seen() -> dict[str, dict[str, Any]] | None:
        panes = saved_panes(path)
        return panes if field in panes["1"] else None

    return wait_until(seen, WAIT, what=f"{field} saved")


def foreground(sim: Simulator, pane: str) -> list[list[str]]:
    """The argv of the pane's foreground processes (a fake pi is ``python [-S] …/pi ARGS``)."""
    info = api(sim, "pane.process_info", pane_id=pane)["process_info"]
    commands = []
    for process in info.get("foreground_processes", []):
        argv = process.get("argv") or []
        script = argv[2:] if argv[1:2] == ["-S"] else argv[1:]
        commands.append([Path(script[0]).name, *script[1:]] if script else argv)
    return commands


@dataclass
class Story:
    """What the three starts of one session showed."""

    started: dict[str, Any]
    saved_before: dict[str, dict[str, Any]]
    restored_at_once: dict[str, Any]
    restored: dict[str, Any]
    listed: list[dict[str, Any]]
    planner_after: tuple[str, str]
    planner_pane_after: dict[str, Any]
    commands: dict[str, list[list[str]]]
    prompted: dict[str, Any]
    saved_after: dict[str, dict[str, Any]]
    plain_reviewer: tuple[str, str]
    saved_plain: dict[str, dict[str, Any]]


def _story(root: Path) -> Story:
    home, work = root / "home", root / "work"
    home.mkdir()
    work.mkdir()
    settings: dict[str, Any] = {
        **SETTINGS,
        "socket_path": root / "herdr.sock",
        "base_env": {"HOME": str(home), "PATH": "/usr/bin:/bin"},
    }
    session_json = root / "session.json"

    sim = Simulator(**settings).start()
    try:
        left = api(sim, "workspace.create", cwd=str(work))["root_pane"]["pane_id"]
        right = api(sim, "pane.split", target_pane_id=left, direction="right")["pane"]["pane_id"]
        assert (left, right) == ("w1:p1", "w1:p2")
        for pane in (left, right):
            wait_prompt(sim, pane)
        api(sim, "agent.start", name="reviewer", kind="pi", pane_id=left)
        api(sim, "pane.send_input", pane_id=right, text="pi", keys=["Enter"])
        started = wait_agent(sim, "reviewer", interactive_ready=True, agent="pi")
        wait_agent(sim, right, agent="pi", agent_status="idle")
        api(sim, "agent.rename", target=right, name="planner")

        def both_saved() -> dict[str, dict[str, Any]] | None:
            panes = saved_panes(session_json)
            ready = all(
                "agent_session" in panes[n] and "agent_name" in panes[n] for n in ("1", "2")
            )
            return panes if ready else None

        saved_before = wait_until(both_saved, WAIT, what="both names saved")
        stopped = subprocess.run(
            [str(sim.cli_path), "server", "stop"],
            env={
                "PATH": "/usr/bin:/bin",
                "HOME": str(home),
                "HERDR_SOCKET_PATH": str(sim.socket_path),
            },
            capture_output=True,
            text=True,
            timeout=30 * SCALE,
            check=False,
        )
        assert stopped.returncode == 0, stopped.stderr
        assert sim.wait_stopped(15 * SCALE)
    finally:
        sim.stop()

    sim = Simulator(**settings).start()
    try:
        restored_at_once = agent(sim, "reviewer")
        restored = wait_agent(sim, "reviewer", agent="pi", agent_status="idle")
        wait_agent(sim, right, agent="pi", agent_status="idle")
        listed = api(sim, "agent.list")["agents"]
        planner_after = failure(call, sim.socket_path, "agent.get", {"target": "planner"})
        planner_pane_after = agent(sim, right)
        commands = {pane: foreground(sim, pane) for pane in (left, right)}
        prompted = api(sim, "agent.prompt", target="reviewer", text="after the restart")
        saved_after = saved_panes(session_json)
    finally:
        sim.stop()

    sim = Simulator(**settings, resume_agents_on_restore=False).start()
    try:
        plain_reviewer = failure(call, sim.socket_path, "agent.get", {"target": "reviewer"})
        # the next save no longer has the name: it is gone for good, as in Herdr
        api(sim, "pane.rename", pane_id=left, label="plain")
        saved_plain = wait_saved(session_json, "label")
    finally:
        sim.stop()

    return Story(
        started=started,
        saved_before=saved_before,
        restored_at_once=restored_at_once,
        restored=restored,
        listed=listed,
        planner_after=planner_after,
        planner_pane_after=planner_pane_after,
        commands=commands,
        prompted=prompted,
        saved_after=saved_after,
        plain_reviewer=plain_reviewer,
        saved_plain=saved_plain,
    )


@pytest.fixture(scope="module")
def story() -> Iterator[Story]:
    """One run of the story for the module (three starts of one session)."""
    root = Path(tempfile.mkdtemp(prefix="hsn-", dir="/tmp"))
    try:
        yield _story(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_session_file_keeps_the_managed_name_with_its_kind(story: Story) -> None:
    pane = story.saved_before["1"]
    assert (pane["agent_name"], pane["managed_agent_kind"]) == ("reviewer", "pi")
    assert pane["agent_session"]["source"] == "herdr:pi"


def test_session_file_keeps_an_unmanaged_name_without_a_kind(story: Story) -> None:
    pane = story.saved_before["2"]
    assert pane["agent_name"] == "planner"
    assert "managed_agent_kind" not in pane


def test_restored_managed_agent_is_found_by_name_in_the_same_pane(story: Story) -> None:
    assert story.restored["pane_id"] == story.started["pane_id"] == "w1:p1"
    assert story.restored["name"] == "reviewer"
    assert story.restored["agent"] == "pi"
    assert story.restored["terminal_id"] != story.started["terminal_id"]


def test_restored_managed_agent_is_active_at_once(story: Story) -> None:
    # Herdr's restore_managed_agent: active, not pending, before the resumed pi is seen
    for info in (story.restored_at_once, story.restored):
        assert info["name"] == "reviewer"
        assert info.get("interactive_ready") is True
        assert "launch_pending" not in info


def test_restored_managed_agent_is_listed_by_name(story: Story) -> None:
    named = {info["pane_id"]: info.get("name") for info in story.listed}
    assert named == {"w1:p1": "reviewer", "w1:p2": None}


def test_restored_managed_agent_runs_herdrs_resume_plan(story: Story) -> None:
    session = story.saved_before["1"]["agent_session"]["value"]
    assert story.commands["w1:p1"] == [["pi", "--session", session]]


def test_restored_managed_agent_takes_prompts(story: Story) -> None:
    # agent.prompt refuses a pending launch (agent_not_ready); the restored one is active
    assert story.prompted["type"] == "agent_prompted"
    assert story.prompted["agent"]["name"] == "reviewer"


def test_restored_managed_agent_is_saved_again(story: Story) -> None:
    pane = story.saved_after["1"]
    assert (pane["agent_name"], pane["managed_agent_kind"]) == ("reviewer", "pi")


def test_unmanaged_name_does_not_survive_the_restart(story: Story) -> None:
    assert story.planner_after == ("agent_not_found", "agent target planner not found")
    # the pane's pi is resumed all the same, without a name
    assert story.planner_pane_after["agent"] == "pi"
    assert "name" not in story.planner_pane_after
    session = story.saved_before["2"]["agent_session"]["value"]
    assert story.commands["w1:p2"] == [["pi", "--session", session]]
    assert "agent_name" not in story.saved_after["2"]


def test_resume_turned_off_drops_the_managed_name(story: Story) -> None:
    assert story.plain_reviewer == ("agent_not_found", "agent target reviewer not found")
    assert "agent_name" not in story.saved_plain["1"]
    assert "managed_agent_kind" not in story.saved_plain["1"]
    # the session reference stays for a later start
    assert story.saved_plain["1"]["agent_session"] == story.saved_before["1"]["agent_session"]


def test_pending_launch_is_not_saved(short_dir: Path) -> None:
    home = short_dir / "home"
    home.mkdir()
    settings = {**SETTINGS, "agent_start_settle": 60.0}
    sim = Simulator(
        socket_path=short_dir / "herdr.sock",
        base_env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        **settings,
    ).start()
    try:
        pane = api(sim, "workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
        wait_prompt(sim, pane)
        started = api(sim, "agent.start", name="reviewer", kind="pi", pane_id=pane)["agent"]
        assert started["launch_pending"] is True
        api(sim, "pane.rename", pane_id=pane, label="saved-after-start")
        saved = wait_saved(short_dir / "session.json", "label")["1"]
        assert agent(sim, "reviewer")["launch_pending"] is True
        assert "agent_name" not in saved
        assert "managed_agent_kind" not in saved
    finally:
        sim.stop()
