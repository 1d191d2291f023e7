"""``herdr-sim replay``: send a cassette's requests again and compare the answers.

The records are walked in the order they were recorded, across connections: an ``open``
connects, a ``send`` sends the recorded line (its ids rewritten recorded→replayed), a
``recv`` waits — bounded: the replay's timeout plus however long Herdr took to send that
line in the recording — for the connection's next line and compares it with the recorded
one, a client ``close`` hangs up. Each connection is read on its own thread, so a
subscription opened before a split is live when the split is sent (its acknowledgement was
waited for first) and a ``*.wait*`` request can block while other connections go on; a
subscription is read to the recorded number of lines, no further.

Every answer is compared after :mod:`.normalise`; each :class:`Difference` names the
connection, which of its answers, the method, the field path and both values.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.client.poll import Deadline
from orchestrator.client.wire import connect

from .format import Cassette, Header, Record
from .normalise import MISSING, IdMap, Rules, differences

_CHUNK = 65536
#: how much of a value a difference shows
_SHOWN = 300


@dataclass(frozen=True)
class Difference:
    """One field of one answer that differs."""

    conn: int
    #: which line Herdr sent on this connection, from 1 (an answer, or a subscription's
    #: acknowledgement then its events)
    answer: int
    method: str
    path: str
    recorded: Any
    replayed: Any

    def render(self) -> str:
        """One line for a person (and a bug report)."""
        return (
            f"{self.method} (connection {self.conn}, line {self.answer}): {self.path}: "
            f"recorded {_show(self.recorded)}, replayed {_show(self.replayed)}"
        )


def _show(value: Any) -> str:
    text = value if value == MISSING else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


@dataclass
class ReplayReport:
    """What a replay found: every difference, and per method the answers that matched and
    that differed."""

    header: Header
    differences: list[Difference] = field(default_factory=list)
    #: method -> [answers matched, answers differed]
    methods: dict[str, list[int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No difference."""
        return not self.differences

    def count(self, method: str, differed: bool) -> None:
        """Count one compared answer of ``method``."""
        self.methods.setdefault(method, [0, 0])[1 if differed else 0] += 1

    def table(self) -> str:
        """The per-method table, in Markdown (fit to paste into a bug report), with the
        Herdr version the cassette was recorded from."""
        h = self.header
        lines = [
            (
                f"Recorded from Herdr {h.upstream_version or '?'} (protocol "
                f"{h.upstream_protocol if h.upstream_protocol is not None else '?'}) by "
                f"{h.recorder} at {h.recorded_at}"
            ),
            "",
            "| method | matched | differed |",
            "| --- | ---: | ---: |",
        ]
        for method in sorted(self.methods):
            matched, differed = self.methods[method]
            lines.append(f"| {method} | {matched} | {differed} |")
        return "\n".join(lines)


class _Connection:
    """One replayed connection: its socket and the lines Herdr sent on it so far."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.method = "(no request)"
        self.sent_at = 0.0
        self.answers_read = 0
        self.lines: list[Any] = []
        self.closed = False
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True, name="herdr-replay")
        self._thread.start()

    def _read(self) -> None:
        pending = b""
        try:
            while chunk := self.sock.recv(_CHUNK):
                pending += chunk
                while (newline := pending.find(b"\n")) >= 0:
                    self._add(pending[:newline])
                    pending = pending[newline + 1 :]
        except OSError:
            pass
        with self._ready:
            self.closed = True
            self._ready.notify_all()

    def _add(self, data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        with self._ready:
            self.lines.append(value)
            self._ready.notify_all()

    def line(self, index: int, timeout: float) -> Any:
        """Herdr's ``index``-th line (from 0), :data:`MISSING` when the connection closed
        or ``timeout`` passed first."""
        deadline = Deadline(timeout)
        with self._ready:
            while len(self.lines) <= index and not self.closed:
                remaining = deadline.left()
                if remaining <= 0:
                    break
                self._ready.wait(remaining)
            return self.lines[index] if len(self.lines) > index else MISSING

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self._thread.join(5.0)


def replay(
    cassette: Cassette,
    socket_path: Path,
    *,
    rules: Rules | None = None,
    replay_dirs: tuple[str, ...] = (),
    timeout: float = 10.0,
    pace: bool = True,
) -> ReplayReport:
    """Replay ``cassette`` against the Herdr at ``socket_path`` (see the module doc).

    ``replay_dirs`` are the replaying server's runtime directories (normalised like the
    recording's); ``timeout`` bounds each wait for a line beyond the time it took in the
    recording. With ``pace`` no connection opens and no line is sent earlier than it was
    in the recording (counted from the first record): a client that polled, or gave a
    shell time to start, gets that time again; without it each step follows the one
    before at once.
    """
    rules = rules or Rules()
    report = ReplayReport(cassette.header)
    ids = IdMap()
    conns: dict[int, _Connection] = {}
    start = time.monotonic()
    zero = cassette.records[0].t if cassette.records else 0.0
    try:
        for record in cassette.records:
            if pace and record.direction in ("open", "send"):
                ahead = (record.t - zero) - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)  # the recorded client's own pause
            _step(record, conns, socket_path, ids, rules, report, cassette, replay_dirs, timeout)
    finally:
        for conn in conns.values():
            conn.close()
    return report


def _step(
    record: Record,
    conns: dict[int, _Connection],
    socket_path: Path,
    ids: IdMap,
    rules: Rules,
    report: ReplayReport,
    cassette: Cassette,
    replay_dirs: tuple[str, ...],
    timeout: float,
) -> None:
    if record.direction == "open":
        try:
            conns[record.conn] = _Connection(connect(socket_path, timeout))
        except OSError as exc:
            report.differences.append(
                Difference(record.conn, 0, "(connect)", "(connection)", "connected", str(exc))
            )
        return
    conn = conns.get(record.conn)
    if conn is None:
        return  # its open failed (reported) or the cassette never opened it
    if record.direction == "send":
        _send(conn, record, ids)
    elif record.direction == "recv":
        index = conn.answers_read
        conn.answers_read += 1
        waited = timeout + max(record.t - conn.sent_at, 0.0)
        replayed = conn.line(index, waited)
        recorded = record.line if record.raw is None else record.raw
        if isinstance(recorded, dict) and isinstance(replayed, dict):
            ids.learn(recorded, replayed)
            recorded = ids.rewrite(recorded)
        found = list(
            differences(
                rules.normalise(recorded, cassette.header.runtime_dirs),
                rules.normalise(replayed, replay_dirs),
            )
        )
        if replayed == MISSING:
            found = [("(line)", recorded, MISSING)]
        report.count(conn.method, bool(found))
        report.differences.extend(
            Difference(record.conn, index + 1, conn.method, path, rec, rep)
            for path, rec, rep in found
        )
    elif record.by in ("client", "recorder"):
        conn.close()
        del conns[record.conn]


def _send(conn: _Connection, record: Record, ids: IdMap) -> None:
    if record.raw is not None:
        text = record.raw
        conn.method = "(not JSON)"
    else:
        line = record.line
        if isinstance(line, dict):
            line = {
                key: ids.rewrite(value) if key == "params" else value for key, value in line.items()
            }
            method = line.get("method")
            conn.method = method if isinstance(method, str) else "(no method)"
        text = json.dumps(line, ensure_ascii=False)
    conn.sent_at = record.t
    with contextlib.suppress(OSError):  # Herdr hung up first: the missing answer says so
        conn.sock.sendall(text.encode() + (b"" if record.partial else b"\n"))


def replay_on_simulator(
    cassette: Cassette, *, rules: Rules | None = None, timeout: float = 10.0, pace: bool = True
) -> ReplayReport:
    """Replay ``cassette`` against a fresh embedded simulator (stopped afterwards)."""
    from ..simulator import Simulator

    directory = Path(tempfile.mkdtemp(prefix="herdr-replay-"))
    try:
        with Simulator(socket_path=directory / "herdr.sock", persist=False) as sim:
            home = sim.config.base_env.get("HOME", str(Path.home()))
            dirs = (str(directory), str(directory.resolve()), str(sim.runtime_dir), home)
            return replay(
                cassette, sim.socket_path, rules=rules, replay_dirs=dirs, timeout=timeout, pace=pace
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)
