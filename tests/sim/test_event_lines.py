"""An event fanned out to many ``events.subscribe`` streams is encoded once, and what one
stream delivers in a round reaches its socket in one write (herdr_sim/event_lines.py): with
fifty subscribers, an encode and a write per subscriber per event was most of the
simulator's loop at the event benchmark's p99."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.wire.event_lines import EncodedLines
from tests.sim.test_output_subscription_reads import PROMPT, _Stream

STREAMS = 5


def test_one_event_is_encoded_once_and_a_round_is_one_write(
    sim: Simulator, api: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    pane = api("workspace.create")["root_pane"]["pane_id"]
    api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    # the same kind twice: each subscription has its own cursor, so every stream delivers
    # the event twice in one round
    subs = [{"type": "pane.created"}, {"type": "pane.created"}]
    streams = [_Stream(str(sim.socket_path), subs) for _ in range(STREAMS)]
    encoded: Counter[str] = Counter()
    writes: Counter[int] = Counter()
    real_dumps, real_write = json.dumps, asyncio.StreamWriter.write

    def counting_dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        if isinstance(obj, dict) and obj.get("event") == "pane_created":
            encoded[obj["data"]["pane"]["pane_id"]] += 1
        return real_dumps(obj, *args, **kwargs)

    def counting_write(writer: asyncio.StreamWriter, data: bytes) -> None:
        if b'"event":"pane_created"' in data:
            writes[id(writer)] += 1
        real_write(writer, data)

    try:
        for stream in streams:
            assert stream.line()["result"] == {"type": "subscription_started"}
        monkeypatch.setattr(json, "dumps", counting_dumps)
        monkeypatch.setattr(asyncio.StreamWriter, "write", counting_write)
        new = api("pane.split", target_pane_id=pane, direction="right")["pane"]["pane_id"]
        for stream in streams:
            lines = [stream.line(), stream.line()]
            assert [line["data"]["pane"]["pane_id"] for line in lines] == [new, new]
        monkeypatch.undo()
        assert encoded == {new: 1}
        assert sorted(writes.values()) == [1] * STREAMS
    finally:
        for stream in streams:
            stream.sock.close()


def test_encoded_lines_follow_identity_not_equality() -> None:
    """A cached line is reused only for the very same event object."""
    calls: list[dict[str, Any]] = []

    def encode(line: dict[str, Any]) -> bytes:
        calls.append(line)
        return json.dumps(line).encode() + b"\n"

    lines = EncodedLines(encode, size=2)
    first = {"event": "a"}
    assert lines.line(first) == lines.line(first) == b'{"event": "a"}\n'
    assert len(calls) == 1
    lines.line({"event": "a"})  # equal, another object: encoded again
    lines.line({"event": "b"})  # pushes the first one out of a cache of two
    lines.line(first)
    assert len(calls) == 4


def test_streams_matching_one_pane_state_get_one_envelope(
    sim: Simulator, api: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pane.output_matched`` is built per stream from a shared read; the envelope is shared
    too, so the server encodes it once for all of them (the `sleep` holds the screen still
    while the streams poll it)."""
    pane = api("workspace.create")["root_pane"]["pane_id"]
    api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    match = {"type": "regex", "value": r"^MARK\d+$"}
    sub = {"type": "pane.output_matched", "pane_id": pane, "source": "visible", "match": match}
    streams = [_Stream(str(sim.socket_path), [sub]) for _ in range(STREAMS)]
    encoded: Counter[str] = Counter()
    real_dumps = json.dumps

    def counting_dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        if isinstance(obj, dict) and obj.get("event") == "pane.output_matched":
            encoded[obj["data"]["matched_line"]] += 1
        return real_dumps(obj, *args, **kwargs)

    try:
        for stream in streams:
            assert stream.line()["result"] == {"type": "subscription_started"}
        monkeypatch.setattr(json, "dumps", counting_dumps)
        api("pane.send_text", pane_id=pane, text="clear; echo MARK$((6*7)); sleep 3\r")
        for stream in streams:
            assert stream.line()["data"]["matched_line"] == "MARK42"
        monkeypatch.undo()
        assert encoded == {"MARK42": 1}
    finally:
        for stream in streams:
            stream.sock.close()
