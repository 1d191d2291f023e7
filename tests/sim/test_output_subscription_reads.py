"""A ``pane.output_matched`` subscription reads its pane only when the pane changed (issue
17): a stream polls all its subscriptions each time any of its panes prints, and re-reading
and re-matching every quiet pane on each of those polls was most of the simulator's work
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
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Reads made by output subscriptions, by pane id (the simulator runs in this process)."""
    counted: Counter[str] = Counter()
    real = pane_io.read_pane

    def counting(rt: Any, ref: Any, *args: Any) -> dict[str, Any]:
        counted[ref.pane_id] += 1
        return real(rt, ref, *args)

    monkeypatch.setattr(subscriptions, "read_pane", counting)
    return counted


def test_a_quiet_pane_is_not_reread_while_another_pane_prints(
    sim: Simulator, api: Callable[..., dict[str, Any]], reads: Counter[str]
) -> None:
    created = api("workspace.create")
    quiet = created["root_pane"]["pane_id"]
    busy = api("pane.split", target_pane_id=quiet, direction="right")["pane"]["pane_id"]
    for pane in (quiet, busy):
        api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    subs = [
        {
            "type": "pane.output_matched",
            "pane_id": pane,
            "source": "visible",
            "match": {"type": "regex", "value": r"^TICK\d+$"},
        }
        for pane in (quiet, busy)
    ]
    stream = _Stream(str(sim.socket_path), subs)
    try:
        assert stream.line()["result"] == {"type": "subscription_started"}
        wait_until(lambda: reads[quiet] >= 1, 10, what="the first poll")
        # the busy pane shows TICK<n> forty times, each on a cleared screen (so each is an
        # edge), with a moment between them so the stream polls in between
        api(
            "pane.send_text",
            pane_id=busy,
            text="for i in $(seq 40); do clear; echo TICK$i; sleep 0.02; clear; sleep 0.02; done\r",
        )
        first = stream.line()
        assert first["event"] == "pane.output_matched"
        assert first["data"]["pane_id"] == busy
        wait_until(
            lambda: "TICK40" in api("pane.read", pane_id=busy, source="visible")["read"]["text"],
            20,
            what="the last tick",
        )
        wait_until(lambda: reads[busy] >= 20, 10, what="the busy pane's polls")
        # every one of those polls also polled the quiet pane's subscription; it read the
        # pane once, at the start (its prompt redrawn by nothing since)
        assert reads[quiet] <= 2, (reads[quiet], reads[busy])
    finally:
        stream.sock.close()
