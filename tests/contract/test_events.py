"""``events.subscribe`` streams and ``events.wait``: envelopes, filters, probes and errors.

Lifecycle events arrive in the underscore envelope (``pane_created``, ``data.type`` repeats
it); filtered subscriptions (``pane.output_matched``, ``pane.agent_status_changed``) use the
dot name and no ``type``. Absence of an event is proven with a sync point: a lifecycle
subscription in the same stream whose event must come next.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    Raw,
    envelope,
    hang_up,
    invalid_request,
    reply_after,
    split,
    wait_output,
)
from tests.waits import SCALE, wait_until

Line = dict[str, Any]


class Stream:
    """One raw ``events.subscribe`` connection, read line by line."""

    def __init__(self, path: Path, subscriptions: list[dict[str, Any]], rid: str = "s") -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5 * SCALE)
        self.sock.connect(str(path))
        request = {
            "id": rid,
            "method": "events.subscribe",
            "params": {"subscriptions": subscriptions},
        }
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        self.buffer = b""

    def line(self, timeout: float = 5.0) -> Line | None:
        """The next line, or None when the server closed the connection."""
        self.sock.settimeout(timeout * SCALE)
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\n")
        value: Line = json.loads(raw)
        return value

    def event(self, timeout: float = 5.0) -> Line:
        """The next line, which must exist."""
        value = self.line(timeout)
        assert value is not None, "subscription closed"
        return value

    def close(self) -> None:
        """Hang up."""
        self.sock.close()


OpenStream = Callable[..., Stream]


@pytest.fixture
def open_stream(herdr_server: HerdrServer) -> Iterator[OpenStream]:
    """``open_stream(subs, rid="s")`` → a raw :class:`Stream` (unlike the ``subscribe``
    fixture it shows error answers and closes); after the test each one is hung up and (on
    the simulator) the server has finished it."""
    streams: list[Stream] = []

    def open_(subscriptions: list[dict[str, Any]], rid: str = "s") -> Stream:
        stream = Stream(herdr_server.socket_path, subscriptions, rid)
        streams.append(stream)
        return stream

    yield open_
    if streams:
        hang_up(herdr_server.sim, *streams)


ACK = {"id": "s", "result": {"type": "subscription_started"}}


def started(stream: Stream) -> Stream:
    """Assert the ack and return the stream."""
    assert stream.event() == ACK
    return stream


def status_wait(pane_id: str, status: str, **params: Any) -> dict[str, Any]:
    """``events.wait`` params for a pane agent status match."""
    match = {"event": "pane_agent_status_changed", "pane_id": pane_id, "agent_status": status}
    return {"match_event": match, **params}


# -- events.subscribe: ack and lifecycle events ------------------------------------------------


def test_subscribe_acks_with_subscription_started(open_stream: OpenStream) -> None:
    assert open_stream([{"type": "workspace.created"}]).line() == ACK


@pytest.mark.herdr_sim_only
def test_lifecycle_events_use_the_underscore_envelope_with_data_type(
    open_stream: OpenStream, herdr_client: HerdrClient
) -> None:
    kinds = ["workspace.created", "tab.created", "pane.created", "layout.updated"]
    kinds += ["workspace.focused", "tab.focused", "pane.focused"]
    stream = started(open_stream([{"type": kind} for kind in kinds]))
    created = herdr_client.call("workspace.create", cwd="/tmp")
    events = [stream.event() for _ in kinds]
    assert sorted(event["event"] for event in events) == sorted(k.replace(".", "_") for k in kinds)
    for event in events:
        assert set(event) == {"event", "data"}  # no id on pushed lines
        assert event["data"]["type"] == event["event"]
    by_kind = {event["event"]: event["data"] for event in events}
    assert by_kind["workspace_created"]["workspace"]["workspace_id"] == "w1"
    assert by_kind["tab_created"]["tab"]["tab_id"] == "w1:t1"
    assert by_kind["pane_created"]["pane"]["pane_id"] == created["root_pane"]["pane_id"]
    assert by_kind["pane_focused"] == {
        "type": "pane_focused",
        "pane_id": "w1:p1",
        "workspace_id": "w1",
    }


@pytest.mark.herdr_sim_only
def test_only_subscribed_kinds_are_delivered(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    stream = started(open_stream([{"type": "pane.closed"}]))
    other = split(herdr_client, pane)
    herdr_client.call("pane.close", pane_id=other)
    assert stream.event() == envelope("pane_closed", pane_id=other, workspace_id="w1")


@pytest.mark.herdr_sim_only
def test_subscriptions_carry_live_events_only(
    open_stream: OpenStream, herdr_client: HerdrClient
) -> None:
    # Herdr 0.9.0's changelog (#1270): new events.subscribe subscriptions start with live
    # events only; 0.8.2 (src/api/subscriptions.rs, last_sequence: 0) replayed the retained
    # past ones first. The simulator follows 0.9.
    herdr_client.call("workspace.create", cwd="/tmp")
    stream = started(open_stream([{"type": "workspace.created"}]))
    herdr_client.call("workspace.create", cwd="/tmp")
    assert stream.event()["data"]["workspace"]["workspace_id"] == "w2"


@pytest.mark.herdr_sim_only
def test_pane_exit_emits_pane_exited(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    stream = started(open_stream([{"type": "pane.exited"}]))
    herdr_client.call("pane.send_text", pane_id=pane, text="exit\r")
    assert stream.event() == envelope("pane_exited", pane_id=pane, workspace_id="w1")


@pytest.mark.herdr_sim_only
def test_hanging_up_ends_the_subscription(
    sim: Simulator, open_stream: OpenStream, herdr_client: HerdrClient
) -> None:
    stream = started(open_stream([{"type": "workspace.created"}]))
    assert testing.connections(sim) == 1
    hang_up(sim, stream)
    assert herdr_client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"] == "w1"


# -- events.subscribe: request errors ----------------------------------------------------------


def test_unknown_subscription_type_is_invalid_request_with_empty_id(
    open_stream: OpenStream,
) -> None:
    stream = open_stream([{"type": "workspace.created"}, {"type": "pane.bogus"}])
    reply = stream.line()
    assert reply is not None
    assert "unknown variant `pane.bogus`" in invalid_request(reply)
    assert stream.line() is None


@pytest.mark.parametrize("kind", ["pane.agent_status_changed", "pane.output_matched"])
def test_filtered_subscription_without_pane_id_is_invalid_request(
    open_stream: OpenStream, kind: str
) -> None:
    sub = {"type": kind, "source": "recent", "match": {"type": "substring", "value": "x"}}
    reply = open_stream([sub]).line()
    assert reply is not None
    assert "missing field `pane_id`" in invalid_request(reply)


@pytest.mark.parametrize(
    "sub",
    [
        {"type": "pane.agent_status_changed", "pane_id": "w9:p9"},
        {"type": "pane.agent_status_changed", "pane_id": "w9:p9", "agent_status": "idle"},
        {
            "type": "pane.output_matched",
            "pane_id": "w9:p9",
            "source": "recent",
            "match": {"type": "substring", "value": "x"},
        },
    ],
)
def test_unknown_pane_answers_with_the_probe_id_and_closes(
    open_stream: OpenStream, sub: dict[str, Any]
) -> None:
    stream = open_stream([{"type": "pane.created"}, sub], rid="req-7")
    assert stream.line() == {
        "id": "req-7:sub:1:probe",
        "error": {"code": "pane_not_found", "message": "pane w9:p9 not found"},
    }
    assert stream.line() is None  # no ack, connection closed


def test_invalid_output_regex_answers_with_the_request_id_before_the_pane_probe(
    open_stream: OpenStream,
) -> None:
    sub = {
        "type": "pane.output_matched",
        "pane_id": "w9:p9",
        "source": "recent",
        "match": {"type": "regex", "value": "(unclosed"},
    }
    stream = open_stream([sub], rid="req-8")
    assert stream.line() == {
        "id": "req-8",
        "error": {
            "code": "invalid_regex",
            "message": "regex parse error:\n    (unclosed\n    ^\nerror: unclosed group",
        },
    }
    assert stream.line() is None


# -- pane.output_matched -----------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_output_matched_uses_the_dot_envelope_without_type(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    sub = {
        "type": "pane.output_matched",
        "pane_id": "w1-1",
        "source": "recent",
        "match": {"type": "regex", "value": r"^OM\d+$"},
    }
    stream = started(open_stream([sub]))
    herdr_client.call("pane.send_text", pane_id=pane, text="echo OM$((6*7))\r")
    event = stream.event()
    assert event["event"] == "pane.output_matched"
    assert set(event["data"]) == {"pane_id", "matched_line", "read"}
    assert (event["data"]["pane_id"], event["data"]["matched_line"]) == ("w1:p1", "OM42")
    read = event["data"]["read"]
    assert (read["pane_id"], read["source"], read["format"], read["revision"]) == (
        "w1:p1", "recent_unwrapped", "text", 0,
    )  # fmt: skip
    assert "OM42" in read["text"]


@pytest.mark.herdr_sim_only
def test_output_matched_fires_for_text_already_on_screen(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="echo PRE$((1))\r")
    wait_output(herdr_client.call, pane, text="PRE1", source="visible", timeout_ms=5000)
    sub = {
        "type": "pane.output_matched",
        "pane_id": pane,
        "source": "visible",
        "match": {"type": "substring", "value": "PRE1"},
    }
    stream = started(open_stream([sub]))
    assert stream.event()["data"]["matched_line"] == "PRE1"


@pytest.mark.herdr_sim_only
def test_output_matched_is_edge_triggered(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    sub = {
        "type": "pane.output_matched",
        "pane_id": pane,
        "source": "visible",
        "match": {"type": "regex", "value": r"^EDGE\d$"},
    }
    stream = started(open_stream([sub]))
    herdr_client.call("pane.send_text", pane_id=pane, text="echo EDGE$((0+1))\r")
    assert stream.event()["data"]["matched_line"] == "EDGE1"
    herdr_client.call(
        "pane.send_text", pane_id=pane, text="echo EDGE$((0+2))\r"
    )  # still matching: silent
    wait_output(herdr_client.call, pane, text="EDGE2", source="visible", timeout_ms=5000)
    herdr_client.call(
        "pane.send_keys", pane_id=pane, keys=["ctrl+l"]
    )  # no match any more: re-armed

    def cleared() -> bool:
        text = herdr_client.call("pane.read", pane_id=pane, source="visible")["read"]["text"]
        return "EDGE" not in text

    wait_until(cleared, what="a cleared screen")
    # Re-arming needs one poll of the stream to see the screen without a match, and nothing
    # observable says it happened: Herdr polls an idle stream every 100 ms
    # (CONNECTION_POLL_INTERVAL), so the cleared screen is left for several intervals. Typed
    # at once, EDGE3 could reach a poll that never saw the clear (a flake under load).
    time.sleep(0.5 * SCALE)
    herdr_client.call("pane.send_text", pane_id=pane, text="echo EDGE$((0+3))\r")
    # A second event for EDGE2 would carry EDGE1 (the first matching line), not EDGE3.
    assert stream.event()["data"]["matched_line"] == "EDGE3"


# -- pane.agent_status_changed -----------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_agent_status_changed_on_a_title_report_uses_the_dot_envelope(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    stream = started(open_stream([{"type": "pane.agent_status_changed", "pane_id": pane}]))
    herdr_client.call("pane.report_metadata", pane_id=pane, source="test:meta", title="Compiling")
    assert stream.event() == {
        "event": "pane.agent_status_changed",
        "data": {
            "pane_id": pane, "workspace_id": "w1", "agent_status": "unknown", "title": "Compiling",
        },
    }  # fmt: skip


@pytest.mark.herdr_sim_only
def test_agent_status_filter_matching_the_current_status_sends_an_initial_event(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.report_metadata", pane_id=pane, source="test:meta", title="Ready")
    sub = {"type": "pane.agent_status_changed", "pane_id": "w1-1", "agent_status": "unknown"}
    stream = started(open_stream([sub]))
    assert stream.event() == {
        "event": "pane.agent_status_changed",
        "data": {
            "pane_id": pane,
            "workspace_id": "w1",
            "agent_status": "unknown",
            "title": "Ready",
        },
    }


@pytest.mark.herdr_sim_only
def test_agent_status_filter_not_matching_sends_nothing(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    sub = {"type": "pane.agent_status_changed", "pane_id": pane, "agent_status": "working"}
    stream = started(open_stream([sub, {"type": "tab.created"}]))
    herdr_client.call(
        "pane.report_metadata", pane_id=pane, source="test:meta", title="Still unknown"
    )
    herdr_client.call("tab.create", workspace_id="w1")
    assert stream.event()["event"] == "tab_created"  # the sync point comes first


@pytest.mark.herdr_sim_only
def test_agent_status_events_are_for_the_subscribed_pane_only(
    open_stream: OpenStream, herdr_client: HerdrClient, pane: str
) -> None:
    other = split(herdr_client, pane, "down")
    stream = started(open_stream([{"type": "pane.agent_status_changed", "pane_id": pane}]))
    herdr_client.call("pane.report_metadata", pane_id=other, source="test:meta", title="Elsewhere")
    herdr_client.call("pane.report_metadata", pane_id=pane, source="test:meta", title="Here")
    assert stream.event()["data"]["title"] == "Here"


# -- events.wait -------------------------------------------------------------------------------


def test_wait_for_the_current_status_matches_immediately(
    raw: Raw, herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.report_metadata", pane_id=pane, source="test:meta", title="Now")
    started_at = time.monotonic()
    reply = raw("events.wait", **status_wait("w1-1", "unknown"))
    assert time.monotonic() - started_at < 1 * SCALE
    assert reply == {
        "id": "t",
        "result": {
            "type": "wait_matched",
            "event": {
                "event": "pane_agent_status_changed",
                "data": {
                    "type": "pane_agent_status_changed",
                    "pane_id": pane,
                    "workspace_id": "w1",
                    "agent_status": "unknown",
                    "title": "Now",
                },
            },
        },
    }


def test_wait_unmatched_times_out(raw: Raw, pane: str) -> None:
    started_at = time.monotonic()
    reply = raw("events.wait", **status_wait(pane, "idle", timeout_ms=30))
    assert reply == {
        "id": "t",
        "error": {"code": "timeout", "message": "timed out waiting for event match"},
    }
    assert time.monotonic() - started_at < 2 * SCALE


@pytest.mark.parametrize(
    "match_event",
    [
        {"event": "pane_created"},
        {"event": "workspace_created"},
        {"event": "pane_output_changed", "pane_id": "w1-1"},
        {"event": "pane_exited", "pane_id": "w1-1"},
        {"event": "tab_renamed", "tab_id": "w1:t1", "label": "x"},
    ],
)
def test_wait_on_anything_but_agent_status_is_unsupported(
    raw: Raw, match_event: dict[str, Any]
) -> None:
    assert raw("events.wait", match_event=match_event, timeout_ms=30) == {
        "id": "t",
        "error": {
            "code": "unsupported_event_wait_match",
            "message": "events.wait currently supports pane agent status matches",
        },
    }


def test_wait_unknown_match_event_is_invalid_request(raw: Raw) -> None:
    invalid_request(raw("events.wait", match_event={"event": "pane.agent_status_changed"}))


@pytest.mark.parametrize(
    "match_event",
    [
        {"event": "pane_exited"},
        {"event": "pane_output_changed"},
        {"event": "workspace_closed"},
        {"event": "tab_focused"},
        {"event": "pane_agent_detected", "agent": "pi"},
    ],
)
def test_wait_match_without_its_required_id_is_invalid_request(
    raw: Raw, match_event: dict[str, Any]
) -> None:
    # Herdr's EventMatch requires the id naming what to watch for these kinds
    invalid_request(raw("events.wait", match_event=match_event, timeout_ms=30))


@pytest.mark.herdr_sim_only
def test_wait_pane_closing_mid_wait_is_pane_not_found(
    sim: Simulator, raw: Raw, herdr_client: HerdrClient, pane: str
) -> None:
    reply = reply_after(
        sim,
        lambda: raw("events.wait", **status_wait("w1-1", "idle", timeout_ms=10_000)),
        lambda: herdr_client.call("pane.close", pane_id=pane),
    )
    assert reply == {
        "id": "t",
        "error": {"code": "pane_not_found", "message": "pane w1:p1 not found"},
    }


def test_wait_unknown_pane_answers_with_the_probe_id(raw: Raw) -> None:
    assert raw("events.wait", **status_wait("w9:p9", "idle", timeout_ms=30)) == {
        "id": "t:sub:0:probe",
        "error": {"code": "pane_not_found", "message": "pane w9:p9 not found"},
    }


def test_wait_unknown_pane_is_pane_not_found(raw: Raw) -> None:
    reply = raw("events.wait", **status_wait("w9:p9", "idle", timeout_ms=30))
    assert reply["error"] == {"code": "pane_not_found", "message": "pane w9:p9 not found"}
