"""A ``pane.output_matched`` subscription reads its pane only when the pane changed, and
subscriptions asking the same question of the same pane state share one read and match
(issue 17): a stream polls all its subscriptions each time any of its panes prints, and
re-reading and re-matching every pane, once per stream, was most of the simulator's work
with fifty subscribers. The edge rule (an event on the change from no match to a match) is
kept; ``tests/contract/test_events.py`` covers it on the wire."""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.methods import pane_io, subscriptions
from tests.waits import SCALE, wait_until

PROMPT = {"type": "regex", "value": r"^\$ ?$"}
TICKS = (
    "for i in $(seq 40); do clear; echo TICK$i; sleep 0.02; clear; sleep 0.02; done;"
    " printf 'TICKS-%s\\n' DONE\r"  # not "TICKS-DONE" as typed: the echo is no sign
)

#: (terminal, its change count) → reads of that terminal state by output subscriptions
Reads = Counter[tuple[int, int]]


class _Stream:
    """One ``events.subscribe`` connection, read line by line."""

    def __init__(self, path: str, subs: list[dict[str, Any]]) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10 * SCALE)
        self.sock.connect(path)
        request = {"id": "s", "method": "events.subscribe", "params": {"subscriptions": subs}}
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        self.buffer = b""

    def line(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            assert chunk, "the stream closed"
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\n")
        value: dict[str, Any] = json.loads(raw)
        return value


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """Reads made by output subscriptions (the simulator runs in this process)."""
    counted: Reads = Counter()
    real = pane_io.read_terminal

    def counting(terminal: Any, *args: Any) -> tuple[str, bool]:
        counted[id(terminal), terminal.changes] += 1
        return real(terminal, *args)

    monkeypatch.setattr(subscriptions, "read_terminal", counting)
    return counted


def _sub(pane: str) -> dict[str, Any]:
    match = {"type": "regex", "value": r"^TICK\d+$"}
    return {"type": "pane.output_matched", "pane_id": pane, "source": "visible", "match": match}


def _two_panes(sim: Simulator, api: Callable[..., dict[str, Any]]) -> tuple[str, str, int, int]:
    """A quiet and a busy pane at their prompt, and their terminals' ids."""
    quiet = api("workspace.create")["root_pane"]["pane_id"]
    busy = api("pane.split", target_pane_id=quiet, direction="right")["pane"]["pane_id"]
    for pane in (quiet, busy):
        api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    rt = sim.runtime

    def terminal(pane: str) -> int:
        ref = rt.session.find_pane(pane)
        assert ref is not None
        return id(rt.processes[ref.pane.key].terminal)

    return quiet, busy, terminal(quiet), terminal(busy)


def _of(reads: Reads, terminal: int) -> int:
    return sum(count for (which, _), count in reads.items() if which == terminal)


def _ticks_shown(api: Callable[..., dict[str, Any]], busy: str) -> None:
    """Every TICK printed (each on a cleared screen, so each is an edge): the line after the
    loop is on the screen. (The last TICK itself shows for 20 ms only, which a poll of the
    screen could miss: CI once waited 20 s for it.)"""
    wait_until(
        lambda: "TICKS-DONE" in api("pane.read", pane_id=busy, source="visible")["read"]["text"],
        20,
        what="the line after the last tick",
    )


def test_a_quiet_pane_is_not_reread_while_another_pane_prints(
    sim: Simulator, api: Callable[..., dict[str, Any]], reads: Reads
) -> None:
    quiet, busy, quiet_terminal, busy_terminal = _two_panes(sim, api)
    stream = _Stream(str(sim.socket_path), [_sub(quiet), _sub(busy)])
    try:
        assert stream.line()["result"] == {"type": "subscription_started"}
        wait_until(lambda: _of(reads, quiet_terminal) >= 1, 10, what="the first poll")
        api("pane.send_text", pane_id=busy, text=TICKS)
        first = stream.line()
        assert first["event"] == "pane.output_matched"
        assert first["data"]["pane_id"] == busy
        assert first["data"]["read"]["pane_id"] == busy
        _ticks_shown(api, busy)
        wait_until(lambda: _of(reads, busy_terminal) >= 20, 10, what="the busy pane's polls")
        # every one of those polls also polled the quiet pane's subscription; it read each
        # state of that pane once (the first one, and any late redraw of its prompt after
        # the split resized it), not once per poll
        quiet_states = [count for (which, _), count in reads.items() if which == quiet_terminal]
        assert max(quiet_states) == 1, reads
        assert len(quiet_states) <= 5, reads
    finally:
        stream.sock.close()


def test_streams_watching_one_pane_share_each_read(
    sim: Simulator, api: Callable[..., dict[str, Any]], reads: Reads
) -> None:
    _, busy, _, busy_terminal = _two_panes(sim, api)
    streams = [_Stream(str(sim.socket_path), [_sub(busy)]) for _ in range(5)]
    try:
        for stream in streams:
            assert stream.line()["result"] == {"type": "subscription_started"}
        api("pane.send_text", pane_id=busy, text=TICKS)
        for stream in streams:  # each stream still gets its own edge events
            event = stream.line()
            assert event["event"] == "pane.output_matched"
            assert event["data"]["matched_line"].startswith("TICK")
        _ticks_shown(api, busy)
        states = {state: count for state, count in reads.items() if state[0] == busy_terminal}
        assert len(states) >= 10, states  # the five streams polled many states...
        assert max(states.values()) == 1, states  # ...and each state was read once
    finally:
        for stream in streams:
            stream.sock.close()
