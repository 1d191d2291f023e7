"""Session saves run off the simulator's loop, in order, coalesced, and the last one is
awaited at stop (herdr_sim/persist/session_saver.py): a save on the loop held every client while
100 agents started at once. Each test holds the first write back (a gate) to show what the
loop does meanwhile; on the former code the loop itself was stuck in that write."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call
from herdr_sim.persist import session as persist
from tests.contract.test_persistence import start
from tests.waits import SCALE, wait_until

WAIT = 10 * SCALE


class Gate:
    """``persist.write_json`` recording each session written, the first one held back
    until :meth:`open` (the file is written when released)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.released = threading.Event()
        self.writes: list[dict[str, Any]] = []
        real = persist.write_json

        def held(path: Path, data: dict[str, Any]) -> None:
            self.writes.append(data)
            if len(self.writes) == 1:
                assert self.released.wait(WAIT), "the gate was never opened"
            real(path, data)

        monkeypatch.setattr(persist, "write_json", held)

    def open(self) -> None:
        self.released.set()


@pytest.fixture
def sim(short_dir: Path) -> Iterator[Simulator]:
    simulator = start(short_dir)
    yield simulator
    simulator.stop()


def _labels(data: dict[str, Any]) -> list[str | None]:
    """The workspace labels of a saved session, in order (Herdr's ``custom_name``)."""
    return [ws.get("custom_name") for ws in data["workspaces"]]


class Worker(threading.Thread):
    """A request made from another thread (its answer waits for a save); keeps its error."""

    def __init__(self, action: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.action = action
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.action()
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_the_loop_serves_while_a_save_is_written_and_saves_keep_order(
    sim: Simulator, short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sim.socket_path
    gate = Gate(monkeypatch)
    first = Worker(lambda: call(path, "workspace.create", {"label": "one"}))
    wait_until(lambda: gate.writes, WAIT, what="the first save to start")
    # the first save is stuck: the loop still serves, and two more changes are made, each
    # answered once a save holding it is written
    later = [
        Worker(lambda: call(path, "workspace.rename", {"workspace_id": "w1", "label": "two"})),
        Worker(lambda: call(path, "workspace.create", {"label": "other"})),
    ]

    def labels_now() -> list[str | None]:
        return [ws["label"] for ws in call(path, "workspace.list", {})["workspaces"]]

    wait_until(lambda: labels_now() == ["two", "other"], WAIT, what="both changes")
    assert first.is_alive()  # its answer waits for the save of its change
    gate.open()
    for thread in (first, *later):
        thread.join(WAIT)
        assert not thread.is_alive() and thread.error is None, thread.error
    # the first snapshot, then one snapshot of the newest state: nothing older after it
    assert [_labels(data) for data in gate.writes] == [["one"], ["two", "other"]]
    assert _labels(json.loads((short_dir / "session.json").read_text())) == ["two", "other"]


def test_a_change_made_just_before_stop_is_saved(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = start(short_dir)
    path = sim.socket_path
    gate = Gate(monkeypatch)
    try:
        Worker(lambda: call(path, "workspace.create", {"label": "early"}))
        wait_until(lambda: gate.writes, WAIT, what="the first save to start")
        # answered, or cut by the stop like any request in flight: its change is saved
        Worker(lambda: call(path, "workspace.rename", {"workspace_id": "w1", "label": "last"}))
        wait_until(
            lambda: (
                call(path, "workspace.get", {"workspace_id": "w1"})["workspace"]["label"] == "last"
            ),
            WAIT,
            what="the rename",
        )
        stopping = Worker(sim.stop)
        wait_until(lambda: sim.runtime.stopping, WAIT, what="the stop to begin")
        gate.open()
        stopping.join(WAIT)
        assert not stopping.is_alive() and stopping.error is None, stopping.error
    finally:
        gate.open()
        sim.stop()
    assert _labels(json.loads((short_dir / "session.json").read_text())) == ["last"]
    assert _labels(gate.writes[-1]) == ["last"]


def test_a_request_that_changes_nothing_saved_writes_nothing(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typing into a pane is a mutating request, but the saved session is the same: it is
    answered without waiting for a write, and none is made."""
    path = sim.socket_path
    pane = call(path, "workspace.create", {"label": "one"})["root_pane"]["pane_id"]
    gate = Gate(monkeypatch)
    gate.open()
    call(path, "pane.send_text", {"pane_id": pane, "text": "true"})
    call(path, "workspace.rename", {"workspace_id": "w1", "label": "two"})
    assert [_labels(data) for data in gate.writes] == [["two"]]


def test_close_waits_out_a_write_whose_callback_is_still_queued(tmp_path: Path) -> None:
    """A stop can begin the instant a write finishes, before the write's done-callback has
    run (a stop scheduled from another thread just then): awaiting a done future does not
    yield to the loop, so ``close`` must, or it spins for ever and the stop never ends (the
    former code: a 30 s teardown, and a thread at 100% CPU for the rest of the run)."""
    import asyncio

    from herdr_sim.persist.session_saver import SessionSaver

    path = tmp_path / "session.json"
    saved: list[Any] = []

    async def scenario() -> None:
        saver = SessionSaver(path, lambda: {"workspaces": []})
        writing = asyncio.get_running_loop().create_future()
        saver._writing = writing  # a write in flight, as _start leaves it
        writing.add_done_callback(lambda done: saver._written_callback(done, 0))
        writing.set_result(None)  # finished; its callback only queued
        await saver.close(final=True)
        saved.append(json.loads(path.read_text()))

    thread = threading.Thread(target=asyncio.run, args=(scenario(),), daemon=True)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive(), "close() spun on a finished write without yielding"
    assert saved == [{"workspaces": []}]
