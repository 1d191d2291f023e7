"""``herdr-sim record`` and ``herdr-sim replay`` end to end: a recorded session replays
clean, a changed answer is named, secrets stay out, a cut-off cassette is refused, two
interleaved clients keep their order."""

from __future__ import annotations

import json
import os
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.cassette.format import CassetteError, load
from herdr_sim.cassette.proxy import RecordingProxy
from herdr_sim.cassette.replay import replay_on_simulator
from herdr_sim.client import call, request
from herdr_sim.command import main
from herdr_sim.persist.redaction import REDACTED
from orchestrator.client.wire import connect, encode_request
from tests.waits import wait_until

from .sessions import basic_session, interleaved_session


def records(path: Path) -> list[dict[str, Any]]:
    """A cassette's lines as JSON objects (header first, end record last)."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def rewrite(path: Path, records_: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records_))


def replay_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["replay", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def start_recorder(upstream: Path, proxy: Path, cassette: Path) -> subprocess.Popen[str]:
    """``herdr-sim record`` as a process of its own, as a user runs it, once it listens.

    Its socket file exists a moment before it accepts connections (bound, then listening),
    so it is waited for by the line the recorder prints once it listens: a client that
    connected as soon as the file appeared was refused under load."""
    argv = [sys.executable, "-m", "herdr_sim", "record", "--upstream", str(upstream)]
    recorder = subprocess.Popen(
        [*argv, "--socket", str(proxy), "--out", str(cassette)], stderr=subprocess.PIPE, text=True
    )
    assert recorder.stderr is not None
    ready, _, _ = select.select([recorder.stderr], [], [], 20)
    line = recorder.stderr.readline() if ready else "(nothing in 20 s)"
    if f"{proxy} -> {upstream}" not in line:
        recorder.kill()
        recorder.communicate(timeout=20)
        pytest.fail(f"herdr-sim record did not start: {line}")
    return recorder


@pytest.fixture
def recorded(sim: Simulator, short_dir: Path) -> Path:
    """The acceptance session recorded through a proxy in front of ``sim``."""
    cassette = short_dir / "basic.jsonl"
    with RecordingProxy(sim.socket_path, short_dir / "p" / "proxy.sock", cassette) as proxy:
        basic_session(proxy.socket_path)
    return cassette


@pytest.mark.slow
def test_the_record_command_proxies_a_session_that_replays_clean(
    sim: Simulator, short_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`herdr-sim record` (a real subprocess, stopped by SIGINT) records the acceptance
    session; `herdr-sim replay` on a fresh simulator finds no difference (exit 0)."""
    proxy = short_dir / "p" / "proxy.sock"
    cassette = short_dir / "session.jsonl"
    recorder = start_recorder(sim.socket_path, proxy, cassette)
    try:
        ids = basic_session(proxy)
    finally:
        recorder.send_signal(signal.SIGINT)
        _, err = recorder.communicate(timeout=20)
    assert recorder.returncode == 0, err
    assert not proxy.exists()
    lines = records(cassette)
    assert lines[0]["upstream"] == {"version": sim.config.version, "protocol": 22}
    assert lines[-1]["end"] is True
    methods = [r["line"]["method"] for r in lines[1:-1] if r["dir"] == "send"]
    assert methods == [
        "events.subscribe",
        "workspace.create",
        "pane.split",
        "pane.send_text",
        "pane.wait_for_output",
        "workspace.list",
        "pane.list",
        "pane.get",
        "pane.close",
    ]
    assert ids["pane"] == "w1:p2"
    code, out = replay_cli(capsys, str(cassette), "--report")
    assert code == 0, out
    assert "| workspace.create | 1 | 0 |" in out
    assert "| events.subscribe | 5 | 0 |" in out  # the ack and four events


def test_a_changed_answer_is_named_with_its_method_and_field(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = records(recorded)
    create = next(
        r
        for r in lines[1:-1]
        if r["dir"] == "recv" and r["line"].get("result", {}).get("type") == "workspace_created"
    )
    create["line"]["result"]["workspace"]["label"] = "beta"
    rewrite(recorded, lines)
    code, out = replay_cli(capsys, str(recorded))
    assert code == 1, out
    assert (
        'workspace.create (connection 2, line 1): result.workspace.label: recorded "beta", ' in out
    )
    assert 'replayed "alpha"' in out
    # the field named is the only difference: the subscription's event was not changed
    assert out.count("recorded") == 1
    code, out = replay_cli(capsys, str(recorded), "--ignore", "result.workspace.label")
    assert code == 0, out


def test_ids_the_server_named_are_mapped_from_recorded_to_replayed(
    sim: Simulator, short_dir: Path
) -> None:
    """Recorded where a workspace already existed (so the session's is `w2`, its panes
    `w2:p…`), replayed on a fresh simulator (where they are `w1`): no difference, because
    the create answer taught the map and later requests were rewritten with it."""
    call(sim.socket_path, "workspace.create", {"cwd": "/"})
    cassette = short_dir / "shifted.jsonl"
    with RecordingProxy(sim.socket_path, short_dir / "p" / "proxy.sock", cassette) as proxy:
        ids = basic_session(proxy.socket_path)
    assert ids["workspace"] == "w2"
    report = replay_on_simulator(load(cassette))
    # workspace.list holds the workspace made before recording: that one differs, and
    # only there; every id of the session itself was mapped
    # The workspace made before recording really is a difference (the list holds it, the
    # new workspace is second and unfocused there); no id is one: each was mapped, and the
    # requests naming the split pane reached the replayed one (else pane_not_found).
    assert not [d.render() for d in report.differences if d.path.endswith("_id")]
    for method in ("pane.split", "pane.send_text", "pane.wait_for_output", "pane.get"):
        assert report.methods[method] == [1, 0], (method, report.methods)
    assert any(d.path == "result.workspaces[1]" for d in report.differences)


def test_secrets_are_redacted_unless_kept(sim: Simulator, short_dir: Path) -> None:
    token = "sk-ant-" + "Q" * 30
    params = {"cwd": "/", "env": {"API_TOKEN": "hunter2-value"}, "label": f"key {token}"}
    redacted, kept = short_dir / "redacted.jsonl", short_dir / "kept.jsonl"
    for cassette, keep in ((redacted, False), (kept, True)):
        proxy_path = short_dir / f"p-{keep}" / "proxy.sock"
        with RecordingProxy(sim.socket_path, proxy_path, cassette, keep_secrets=keep) as proxy:
            call(proxy.socket_path, "workspace.create", params)
    text = redacted.read_text()
    assert "hunter2-value" not in text and token not in text
    sent = next(r for r in records(redacted) if r.get("dir") == "send")["line"]["params"]
    assert sent["env"] == {"API_TOKEN": REDACTED}
    assert sent["label"] == f"key {REDACTED}"
    assert records(redacted)[0]["redacted"] is True
    # the answer echoes the label: redacted in what Herdr sent back too
    assert token not in json.dumps([r for r in records(redacted) if r.get("dir") == "recv"])
    assert "hunter2-value" in kept.read_text() and token in kept.read_text()
    assert records(kept)[0]["redacted"] is False
    for cassette in (redacted, kept):
        assert stat.S_IMODE(cassette.stat().st_mode) == 0o600


def test_a_planted_symlink_at_the_cassette_path_is_not_followed(
    sim: Simulator, short_dir: Path
) -> None:
    target = short_dir / "victim.txt"
    target.write_text("keep me\n")
    cassette = short_dir / "planted.jsonl"
    cassette.symlink_to(target)
    with pytest.raises(OSError, match="symbolic links"):  # ELOOP: O_NOFOLLOW
        RecordingProxy(sim.socket_path, short_dir / "p" / "proxy.sock", cassette).start()
    assert target.read_text() == "keep me\n"
    fifo = short_dir / "fifo.jsonl"
    os.mkfifo(fifo)
    # ENXIO: a FIFO nobody reads is not opened for writing (one being read: not regular)
    with pytest.raises(OSError, match="No such device"):
        RecordingProxy(sim.socket_path, short_dir / "q" / "proxy.sock", fifo).start()
    directory = short_dir / "dir.jsonl"
    directory.mkdir()
    with pytest.raises(OSError, match="Is a directory"):
        RecordingProxy(sim.socket_path, short_dir / "r" / "proxy.sock", directory).start()
    # a regular file of ours is replaced, and narrowed to 0600
    mine = short_dir / "mine.jsonl"
    mine.write_text("old\n")
    mine.chmod(0o644)
    RecordingProxy(sim.socket_path, short_dir / "s" / "proxy.sock", mine).start().stop()
    assert stat.S_IMODE(mine.stat().st_mode) == 0o600
    assert load(mine).records == ()


def test_an_unfinished_request_is_recorded_as_such(sim: Simulator, short_dir: Path) -> None:
    """A wait still open when the recorder stops: its connection's close record says the
    recorder closed it with the request unanswered, and the cassette is complete."""
    cassette = short_dir / "unfinished.jsonl"
    root = call(sim.socket_path, "workspace.create", {"cwd": "/"})["root_pane"]["pane_id"]
    proxy = RecordingProxy(sim.socket_path, short_dir / "p" / "proxy.sock", cassette).start()
    sock = connect(proxy.socket_path, 10)
    try:
        params = {
            "pane_id": root,
            "source": "recent",
            "match": {"type": "substring", "value": "never-printed"},
            "timeout_ms": 60_000,
        }
        sock.sendall(encode_request("w", "pane.wait_for_output", params))
        server = sim.socket_server
        assert server is not None
        wait_until(lambda: server.in_flight > 0, what="the wait in flight")
        proxy.stop()
    finally:
        sock.close()
    close = [r for r in records(cassette) if r.get("dir") == "close"]
    assert close == [
        {"conn": 1, "dir": "close", "t": close[0]["t"], "by": "recorder", "unfinished": True}
    ]
    assert load(cassette).records[-1].unfinished


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (lambda text: text[: text.rindex('{"end"')], "no end record"),
        (lambda text: text[: len(text) // 2], "cut off"),
        (lambda text: "", "empty"),
        (lambda text: "not json\n", "line 1 is not JSON"),
        (lambda text: text.replace('"dir":"recv"', '"dir":"sideways"', 1), "direction"),
    ],
)
def test_an_unreadable_cassette_exits_2(
    recorded: Path, capsys: pytest.CaptureFixture[str], cut: Any, message: str
) -> None:
    recorded.write_text(cut(recorded.read_text()))
    with pytest.raises(CassetteError, match=message):
        load(recorded)
    code, out = replay_cli(capsys, str(recorded))
    assert code == 2
    assert message in out


def test_a_missing_cassette_exits_2(short_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = replay_cli(capsys, str(short_dir / "nowhere.jsonl"))
    assert code == 2 and "cannot read" in out


def test_two_interleaved_clients_keep_their_order(
    sim: Simulator, short_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Client A's wait is answered only after client B's whole exchange: the cassette holds
    them interleaved, and the replay (which must send B's input while A's wait is open, or
    A's answer never comes) is clean."""
    cassette = short_dir / "two.jsonl"
    server = sim.socket_server
    assert server is not None
    with RecordingProxy(sim.socket_path, short_dir / "p" / "proxy.sock", cassette) as proxy:
        interleaved_session(
            proxy.socket_path,
            lambda: wait_until(lambda: server.in_flight > 0, what="A's wait in flight"),
        )
    order = [
        (r["conn"], r["dir"], r["line"].get("id"))
        for r in records(cassette)[1:-1]
        if r["dir"] in ("send", "recv")
    ]
    a_sent, a_answered = order.index((2, "send", "a1")), order.index((2, "recv", "a1"))
    b_sent, b_answered = order.index((3, "send", "b1")), order.index((3, "recv", "b1"))
    assert a_sent < b_sent < b_answered < a_answered, order
    code, out = replay_cli(capsys, str(cassette), "--report")
    assert code == 0, out
    assert "| pane.wait_for_output | 1 | 0 |" in out


def test_replay_against_a_given_socket(
    recorded: Path, short_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--socket` replays against a running server instead of an embedded one."""
    with Simulator(socket_path=short_dir / "other" / "herdr.sock", persist=False) as other:
        assert request(other.socket_path, "ping")["result"]["type"] == "pong"
        code, out = replay_cli(capsys, str(recorded), "--socket", str(other.socket_path))
    assert code == 0, out
    code, out = replay_cli(capsys, str(recorded), "--socket", str(short_dir / "none.sock"))
    assert code == 2 and "cannot connect" in out


def test_a_subscription_is_replayed_to_its_recorded_count(recorded: Path) -> None:
    """The subscription's four events all come back, each compared."""
    report = replay_on_simulator(load(recorded))
    assert report.ok, [d.render() for d in report.differences]
    assert report.methods["events.subscribe"] == [1 + 4, 0]  # the ack, then four events


def test_sigterm_finishes_the_cassette_too(sim: Simulator, short_dir: Path) -> None:
    proxy, cassette = short_dir / "p" / "proxy.sock", short_dir / "term.jsonl"
    recorder = start_recorder(sim.socket_path, proxy, cassette)
    try:
        assert request(proxy, "ping")["result"]["type"] == "pong"
    finally:
        recorder.send_signal(signal.SIGTERM)
        _, err = recorder.communicate(timeout=20)
    assert recorder.returncode == 0, err
    cassette_ = load(cassette)
    assert [r.direction for r in cassette_.records] == ["open", "send", "recv", "close"]
    assert stat.S_IMODE(cassette.stat().st_mode) == 0o600


def test_no_upstream_is_an_error_not_an_empty_cassette(short_dir: Path) -> None:
    argv = ["record", "--upstream", str(short_dir / "none.sock"), "--socket"]
    code = main([*argv, str(short_dir / "p" / "x.sock"), "--out", str(short_dir / "c.jsonl")])
    assert code == 1
    assert not (short_dir / "c.jsonl").exists()


def test_replay_keeps_the_recorded_pace_unless_fast(sim: Simulator, short_dir: Path) -> None:
    """A client that paused between two requests (polling, giving a shell time) gets that
    pause again; ``pace=False`` (``--fast``) drops it. The pause is written into the
    cassette: the second connection's records moved 0.4 s later."""
    cassette = short_dir / "paced.jsonl"
    with RecordingProxy(sim.socket_path, short_dir / "p" / "proxy.sock", cassette) as proxy:
        request(proxy.socket_path, "ping", request_id="first")
        request(proxy.socket_path, "ping", request_id="second")
    lines = records(cassette)
    for record in lines[1:]:
        if record.get("conn") == 2 or record.get("end"):
            record["t"] += 0.4
    rewrite(cassette, lines)
    paced = load(cassette)
    started = time.monotonic()
    assert replay_on_simulator(paced).ok
    assert time.monotonic() - started >= 0.4
    assert replay_on_simulator(paced, pace=False).methods["ping"] == [2, 0]
