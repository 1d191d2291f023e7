"""Recording the reports an agent sends: to an in-process simulator, or to a bare socket.

:class:`ReportLog` sees every report line a simulator reads on its socket, malformed ones
too, together with the answer it wrote, or none when the connection was dropped. It hangs
on the simulator's public taps: the ``request`` wire tap tells when a request that parses
was read (before faults, so a report held by a slow socket keeps its reading time and is
marked faulted), and the exchange tap gives every connection's first line as read and its
answer.

:class:`SocketRecorder` listens on a Unix socket and records whatever is sent to it,
answering ``ok`` like Herdr: the "outside Herdr" runs point a sloppy integration at it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.client.poll import Deadline

if TYPE_CHECKING:
    from ..simulator import Simulator

__all__ = ["REPORT_METHODS", "Report", "ReportLog", "SocketRecorder"]

#: the requests an agent integration sends (reference §5.3/§5.4)
REPORT_METHODS = (
    "pane.report_agent",
    "pane.report_agent_session",
    "pane.release_agent",
    "pane.clear_agent_authority",
)


@dataclass
class Report:
    """One report request as the server read it, and its answer."""

    index: int
    #: seconds since the check started, when the request line was read
    t: float
    #: the checker's phase at that moment (``run1``, ``run2``, ``restore`` ...)
    phase: str
    method: str
    params: dict[str, Any]
    raw: str
    #: a fault (slow or refused socket) was armed when the line was read
    faulted: bool = False
    #: the answer envelope; None while unanswered or when the connection was dropped
    response: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """Answered with a result."""
        return self.response is not None and "result" in self.response

    @property
    def error(self) -> str | None:
        """The error code of the answer, if it was an error."""
        if self.response is None or "error" not in self.response:
            return None
        return str(self.response["error"].get("code"))

    def get(self, name: str) -> Any:
        """A raw request parameter (None when absent)."""
        return self.params.get(name)

    @property
    def source(self) -> str | None:
        """``source``, when it is a string."""
        value = self.params.get("source")
        return value if isinstance(value, str) else None

    @property
    def seq(self) -> int | None:
        """``seq``, when it is an integer."""
        value = self.params.get("seq")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def state(self) -> str | None:
        """``state`` of a ``pane.report_agent``."""
        value = self.params.get("state")
        return value if isinstance(value, str) else None

    @property
    def resume_argv(self) -> list[str] | None:
        """``resume_argv`` when present and a list."""
        value = self.params.get("resume_argv")
        return value if isinstance(value, list) else None

    def answer(self) -> str:
        """``ok``, ``error <code>: <message>``, or ``no answer``."""
        if self.response is None:
            return "no answer (connection dropped)" if self.faulted else "no answer"
        if "result" in self.response:
            return "ok"
        err = self.response.get("error") or {}
        return f"error {err.get('code')}: {err.get('message')}"

    def describe(self) -> str:
        """The report in one line, as evidence."""
        shown = {k: v for k, v in self.params.items() if k != "pane_id" and v is not None}
        params = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in shown.items())
        fault = " [socket faulted]" if self.faulted else ""
        return f"[{self.phase}] #{self.index} {self.method} {params} -> {self.answer()}{fault}"

    def to_json(self) -> dict[str, Any]:
        """The report for the JSON output."""
        return {
            "index": self.index,
            "t": round(self.t, 3),
            "phase": self.phase,
            "method": self.method,
            "params": self.params,
            "faulted": self.faulted,
            "response": self.response,
        }


class ReportLog:
    """Every report request the simulators it is attached to received, in reading order."""

    def __init__(self, t0: float | None = None) -> None:
        self.t0 = time.monotonic() if t0 is None else t0
        self.phase = ""
        self.fault_active = False
        self.reports: list[Report] = []
        self._cond = threading.Condition()
        #: reports read (seen by the request tap) whose exchange has not ended yet
        self._open: list[tuple[dict[str, Any], Report]] = []

    def now(self) -> float:
        """Seconds since the check started."""
        return time.monotonic() - self.t0

    def attach(self, sim: Simulator) -> None:
        """Record the reports ``sim`` reads (attach before :meth:`Simulator.start`, so the
        reports of agents resumed by a restore are seen too)."""
        sim.wire_taps.append(self._on_wire)
        sim.exchange_taps.append(self._on_exchange)

    def _new(self, data: dict[str, Any], raw: str) -> Report:
        """Append a report read now (the caller holds the lock)."""
        params = data.get("params")
        report = Report(
            index=len(self.reports),
            t=self.now(),
            phase=self.phase,
            method=str(data["method"]),
            params=params if isinstance(params, dict) else {},
            raw=raw,
            faulted=self.fault_active,
        )
        self.reports.append(report)
        self._cond.notify_all()
        return report

    def _on_wire(self, kind: str, line: dict[str, Any]) -> None:
        """A request that parsed, seen when it is read (before faults and dispatch): its
        time, phase and fault state are those of that moment."""
        if kind != "request" or line.get("method") not in REPORT_METHODS:
            return
        with self._cond:
            report = self._new(line, json.dumps(line, ensure_ascii=False))
            self._open.append((line, report))

    def _on_exchange(self, first: bytes, answer: dict[str, Any] | None) -> None:
        """A connection's first line as read and its answer (None: it got none)."""
        raw = first.decode("utf-8", errors="replace").rstrip("\n")
        try:
            data = json.loads(raw)
        except ValueError:
            return
        if not isinstance(data, dict) or data.get("method") not in REPORT_METHODS:
            return
        with self._cond:
            # a request that parsed was recorded when read; one that did not (bad params,
            # bad UTF-8) is answered at once, or not at all, so now is its reading time
            report = next((r for seen, r in self._open if seen == data), None)
            if report is None:
                report = self._new(data, raw)
            else:
                self._open = [(seen, r) for seen, r in self._open if r is not report]
                report.raw = raw
            report.response = answer
            self._cond.notify_all()

    def snapshot(self) -> list[Report]:
        """The reports so far (a copy of the list)."""
        with self._cond:
            return list(self.reports)

    def mark(self) -> int:
        """The index the next report will get."""
        with self._cond:
            return len(self.reports)

    def wait_for(
        self, predicate: Callable[[Report], bool], *, since: int, timeout: float
    ) -> Report | None:
        """The first report from index ``since`` on that matches, waiting at most
        ``timeout`` seconds."""
        deadline = Deadline(timeout)

        def found() -> Report | None:
            for report in self.reports[since:]:
                if predicate(report):
                    return report
            return None

        with self._cond:
            while True:
                hit = found()
                if hit is not None:
                    return hit
                left = deadline.left()
                if left <= 0:
                    return None
                self._cond.wait(min(left, 0.1))


class SocketRecorder:
    """A Unix socket that records every line sent to it and answers like Herdr (``ok``)."""

    def __init__(self, path: Path, t0: float) -> None:
        self.path = path
        self.t0 = t0
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        self._sock.listen(16)
        self._sock.settimeout(1.0)  # a bound only: close() wakes the accept
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="herdr-recorder", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._stop.is_set():  # close()'s own connection
                conn.close()
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2.0)
            data = b""
            with contextlib.suppress(OSError):
                while b"\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            text = data.decode("utf-8", errors="replace").split("\n", 1)[0]
            with self._lock:
                self.lines.append((time.monotonic() - self.t0, text))
            request_id = ""
            with contextlib.suppress(ValueError, AttributeError):
                request_id = str(json.loads(text).get("id", ""))
            answer = {"id": request_id, "result": {"type": "ok"}}
            with contextlib.suppress(OSError):
                conn.sendall((json.dumps(answer) + "\n").encode())

    def seen(self) -> list[tuple[float, str]]:
        """Every line received so far, with its time."""
        with self._lock:
            return list(self.lines)

    def close(self) -> None:
        """Stop listening and remove the socket. A connection of its own wakes the serving
        thread out of ``accept`` (closing the socket does not, and its timeout made every
        check wait for it)."""
        self._stop.set()
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as poke:
            poke.connect(str(self.path))
        self._thread.join(2.0)
        self._sock.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
