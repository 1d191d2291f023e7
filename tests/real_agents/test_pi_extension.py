"""The project's pi extension on its own: loaded by the pinned Node (which runs TypeScript),
driven with pi's events by a stand-in ``pi`` object, reporting to a recording socket. Shows
the wire requests exactly — order, ``seq``, the session reference, coalescing, the retry —
which the end-to-end tests in ``test_pi.py`` see only through Herdr's state."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.real_agents.pi import EXTENSION_ASSET
from pytest_herdr.real_agents import require_pi

pytestmark = pytest.mark.real_agent

HARNESS = """
import extension from %(asset)s;
const handlers = {};
extension({ on: (name, handler) => { handlers[name] = handler; } });
let idle = true;
const ctx = {
  mode: process.env.PI_MODE,
  isIdle: () => idle,
  sessionManager: { getSessionFile: () => process.env.SESSION_FILE, getSessionId: () => "sid-1" },
};
const gapMs = Number(process.env.GAP_MS);
for (const [name, event, nowIdle] of JSON.parse(process.argv[2])) {
  idle = nowIdle;
  if (handlers[name]) handlers[name](event, ctx);
  if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
}
"""


class Recorder:
    """A Unix socket that records every request line; ``silent`` first lines get no reply."""

    def __init__(self, path: Path, silent: int = 0) -> None:
        self.path = path
        self.silent = silent
        self.lines: list[dict[str, Any]] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(16)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            with connection:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if not data:
                    continue
                request = json.loads(data)
                self.lines.append(request)
                if len(self.lines) > self.silent:
                    answer = {"id": request["id"], "result": {"type": "ok"}}
                    connection.sendall(json.dumps(answer).encode() + b"\n")

    def close(self) -> None:
        # The serving thread may be blocked in accept(): closing the socket under it would
        # leave it blocked on a descriptor number the next socket of this process reuses (a
        # later test's fake LLM listener once lost pi's request to it). Shut the socket down
        # first, which ends that accept() (EINVAL on Linux), then close it once the thread
        # has returned.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the recorder's thread did not stop"
        self.sock.close()


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Any]:
    node = require_pi().bin_dir / "node"
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS % {"asset": json.dumps(str(EXTENSION_ASSET))})
    recorders: list[Recorder] = []

    def drive(
        events: list[tuple[str, dict[str, Any], bool]], *, silent: int = 0, **env: str
    ) -> list[dict[str, Any]]:
        recorder = Recorder(tmp_path / f"herdr-{len(recorders)}.sock", silent)
        recorders.append(recorder)
        full_env = {
            "PATH": os.environ.get("PATH", ""), "HERDR_ENV": "1",
            "HERDR_SOCKET_PATH": str(recorder.path), "HERDR_PANE_ID": "w1:p1", "PI_MODE": "tui",
            "SESSION_FILE": "/sessions/s.jsonl", "GAP_MS": "100", **env,
        }  # fmt: skip
        done = subprocess.run(
            [str(node), str(harness), json.dumps(events)],
            env=full_env, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return recorder.lines

    yield drive
    for recorder in recorders:
        recorder.close()


TURN = [
    ("session_start", {"reason": "startup"}, True),
    ("agent_start", {}, False),
    ("agent_settled", {}, True),
]


def test_a_session_and_a_turn_are_reported_in_order_with_growing_seq(run: Any) -> None:
    lines = run(TURN)
    assert [(r["method"], r["params"].get("state")) for r in lines] == [
        ("pane.report_agent_session", None),
        ("pane.report_agent", "idle"),
        ("pane.report_agent", "working"),
        ("pane.report_agent", "idle"),
    ]  # (the turn's session report is left out: the session file did not change)
    first = lines[0]["params"]
    assert first == {
        "pane_id": "w1:p1", "source": "herdr:pi", "agent": "pi", "seq": first["seq"],
        "agent_session_path": "/sessions/s.jsonl", "session_start_source": "startup",
    }  # fmt: skip
    seqs = [r["params"]["seq"] for r in lines]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert all(r["params"]["agent_session_path"] == "/sessions/s.jsonl" for r in lines)
    assert len({r["id"] for r in lines}) == len(lines)


def test_states_superseded_before_they_were_sent_are_dropped(run: Any) -> None:
    # all events in one go (no turn of the event loop between them): while the session
    # report is on its way, idle → working → idle rewrite the one pending state request
    lines = run(TURN, GAP_MS="0")
    assert [(r["method"], r["params"].get("state")) for r in lines] == [
        ("pane.report_agent_session", None),
        ("pane.report_agent", "idle"),
    ]


def test_a_dialog_reports_blocked_with_its_title_then_working(run: Any) -> None:
    lines = run([
        ("session_start", {"reason": "startup"}, True),
        ("agent_start", {}, False),
        ("ui_prompt_start", {"kind": "confirm", "title": "Allow rm?"}, False),
        ("ui_prompt_end", {}, False),
    ])  # fmt: skip
    states = [(r["params"].get("state"), r["params"].get("message")) for r in lines[1:]]
    assert states == [("idle", None), ("working", None), ("blocked", "Allow rm?"),
                      ("working", None)]  # fmt: skip


def test_a_request_without_an_answer_is_sent_once_more(run: Any) -> None:
    lines = run(TURN[:1], silent=1)
    assert [r["method"] for r in lines] == [
        "pane.report_agent_session", "pane.report_agent_session", "pane.report_agent"
    ]  # fmt: skip
    assert lines[0] == lines[1]  # the same request, the same id and seq


def test_outside_herdr_or_outside_the_terminal_ui_nothing_is_sent(run: Any) -> None:
    assert run(TURN, HERDR_ENV="0") == []
    assert run(TURN, PI_MODE="print") == []


def test_a_session_without_a_file_is_reported_by_its_id(run: Any) -> None:
    lines = run(TURN[:1], SESSION_FILE="")
    assert lines[0]["params"]["agent_session_id"] == "sid-1"
    assert "agent_session_path" not in lines[0]["params"]


def test_resume_is_passed_on_and_reload_is_not(run: Any) -> None:
    resumed = run([("session_start", {"reason": "resume"}, True)])
    assert resumed[0]["params"]["session_start_source"] == "resume"
    reloaded = run([("session_start", {"reason": "reload"}, True)])
    assert "session_start_source" not in reloaded[0]["params"]
