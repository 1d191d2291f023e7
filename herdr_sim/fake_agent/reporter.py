"""Lifecycle reports to Herdr's socket, sent in the background like the official integrations.

One connection per request, one JSON line, and any reply counts as delivered. Like pi's
extension: a 500 ms first attempt and one retry with 1500 ms, ``seq`` starting at
``ms * 1000`` and growing by one per report sent, and only the newest pending state report is
sent (older pending ones are dropped). Sending happens on a daemon thread, so the agent's
screen never waits for Herdr.
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
from typing import Any

__all__ = ["Reporter", "herdr_env", "rand36"]

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def rand36(length: int = 11) -> str:
    """A random base-36 string, as ``Math.random().toString(36)`` gives the pi extension."""
    return "".join(random.choice(_ALPHABET) for _ in range(length))


def herdr_env(env: dict[str, str] | os._Environ[str] | None = None) -> tuple[str, str] | None:
    """``(socket_path, pane_id)`` when running inside Herdr (``HERDR_ENV=1`` and both set)."""
    source = os.environ if env is None else env
    if source.get("HERDR_ENV") != "1":
        return None
    sock = source.get("HERDR_SOCKET_PATH", "")
    pane = source.get("HERDR_PANE_ID", "")
    if not sock or not pane:
        return None
    return sock, pane


class Reporter:
    """An ordered background queue of requests to one Herdr socket."""

    def __init__(
        self,
        socket_path: str,
        *,
        id_prefix: str,
        timeouts: tuple[float, ...] = (0.5, 1.5),
        seq_start: int | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.id_prefix = id_prefix
        self.timeouts = timeouts
        self._seq = seq_start if seq_start is not None else int(time.time() * 1000) * 1000
        self._queue: list[tuple[str, dict[str, Any], bool, threading.Event]] = []
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="herdr-reporter", daemon=True)
        self._thread.start()

    def next_seq(self) -> int:
        """The next report number (the first is the start value plus one)."""
        self._seq += 1
        return self._seq

    def send(self, method: str, params: dict[str, Any], *, state: bool = False) -> threading.Event:
        """Queue a request; a ``state`` request replaces any pending state request.

        ``params`` may hold ``"seq": None``: the number is filled in when it is sent, so
        the numbers of sent reports are consecutive. The returned event is set once the
        request is on its way (or was dropped for a newer state, or the reporter closed).
        """
        taken = threading.Event()
        with self._cond:
            if self._closed:
                taken.set()
                return taken
            if state:
                for item in self._queue:
                    if item[2]:
                        item[3].set()
                self._queue = [item for item in self._queue if not item[2]]
            self._queue.append((method, params, state, taken))
            self._cond.notify_all()
        return taken

    def flush(self, timeout: float) -> bool:
        """Wait until every queued request was attempted; False if ``timeout`` ran out."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self, timeout: float = 2.0) -> None:
        """Send what is queued (bounded by ``timeout``), then stop."""
        self.flush(timeout)
        with self._cond:
            self._closed = True
            for item in self._queue:
                item[3].set()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._queue) or self._closed)
                if not self._queue:
                    return
                method, params, _, taken = self._queue.pop(0)
                self._busy = True
                taken.set()
            try:
                self._deliver(method, params)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _request(self, method: str, params: dict[str, Any]) -> bytes:
        ms = int(time.time() * 1000)
        body = dict(params)
        if "seq" in body and body["seq"] is None:
            body["seq"] = self.next_seq()
        kind = "session:" if method == "pane.report_agent_session" else ""
        if self.id_prefix.startswith("herdr:pi"):
            request_id = f"{self.id_prefix}:{kind}{ms}:{rand36()}"
        else:
            request_id = f"{self.id_prefix}:{ms}:{random.randrange(1_000_000):06d}"
        line = {"id": request_id, "method": method, "params": body}
        return (json.dumps(line) + "\n").encode()

    def _deliver(self, method: str, params: dict[str, Any]) -> None:
        data = self._request(method, params)
        for timeout in self.timeouts:
            if self._attempt(data, timeout):
                return

    def _attempt(self, data: bytes, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(timeout)
                conn.connect(self.socket_path)
                conn.sendall(data)
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                return bool(conn.recv(4096))
        except OSError:
            return False
