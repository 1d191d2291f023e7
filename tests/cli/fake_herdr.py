"""A recording fake Herdr socket server for testing the CLI in isolation.

Herdr's own CLI tests work the same way: a thread owns a Unix socket, answers ``ping``
with a configurable protocol, and records every request line, so a test can assert the
exact request a command line produced, or that *no* operation was sent at all. Replies
are scripted per method; anything unscripted gets ``{"type": "ok"}``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["CLOSE", "FakeHerdr", "Reply"]

#: A reply that closes the connection without writing anything.
CLOSE = object()
Reply = dict[str, Any] | str | object
Handler = Callable[[dict[str, Any]], Reply]


class FakeHerdr:
    """A scripted, recording Herdr API server on ``path`` (one request per connection)."""

    def __init__(self, path: Path, *, protocol: int = 22, version: str = "0.9.2") -> None:
        self.path = path
        self.protocol = protocol
        self.version = version
        self.capabilities: dict[str, Any] = {
            "live_handoff": True,
            "detached_server_daemon": True,
            "endpoint_protocol_generation": 1,
        }
        #: Every decoded request, pings included, in arrival order.
        self.requests: list[dict[str, Any]] = []
        #: The raw request lines, byte-exact.
        self.lines: list[bytes] = []
        self._scripts: dict[str, list[Reply] | Handler] = {}
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._shutdown_after_reply = False
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ------------------------------------------------------------------------

    def reply(self, method: str, *replies: Reply) -> None:
        """Answer ``method`` with ``replies`` in turn; the last one repeats.

        A ``dict`` is sent as JSON with its ``id`` filled in when it has none; a ``str`` is
        sent as a raw line; :data:`CLOSE` hangs up without replying.
        """
        self._scripts[method] = list(replies)

    def handle(self, method: str, handler: Handler) -> None:
        """Answer ``method`` by calling ``handler(request)``."""
        self._scripts[method] = handler

    def result(self, method: str, result: dict[str, Any]) -> None:
        """Shorthand: answer ``method`` with a success ``result``."""
        self.reply(method, {"result": result})

    def error(self, method: str, code: str, message: str) -> None:
        """Shorthand: answer ``method`` with an error envelope."""
        self.reply(method, {"error": {"code": code, "message": message}})

    def stop_on_server_stop(self) -> None:
        """Behave like Herdr on ``server.stop``: reply ``ok``, then remove the socket."""
        self._shutdown_after_reply = True

    # -- inspection -----------------------------------------------------------------------

    def operations(self) -> list[dict[str, Any]]:
        """The recorded requests other than the guard's pings."""
        with self._lock:
            return [request for request in self.requests if request.get("method") != "ping"]

    def methods(self) -> list[str]:
        """The method of every recorded request, pings included."""
        with self._lock:
            return [str(request.get("method")) for request in self.requests]

    def wait_for(self, method: str, timeout: float) -> bool:
        """Block until a ``method`` request has arrived (or ``timeout`` seconds pass)."""
        with self._arrived:
            return self._arrived.wait_for(
                lambda: any(r.get("method") == method for r in self.requests), timeout
            )

    def only_operation(self) -> dict[str, Any]:
        """The single non-ping request; fails the test when there is not exactly one."""
        operations = self.operations()
        assert len(operations) == 1, f"expected one operation, got {operations}"
        return operations[0]

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeHerdr:
        """Bind the socket (mode 0600) and serve in a daemon thread."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        self.path.chmod(0o600)
        listener.listen(16)
        listener.settimeout(1.0)  # a bound only: close() wakes the accept
        self._listener = listener
        self._thread = threading.Thread(target=self._serve, name="fake-herdr", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and remove the socket file. A connection of its own wakes the
        serving thread out of ``accept`` (a timeout there made every test's teardown wait
        for it: 48 ms a test, most of a CLI test's time)."""
        self._stop.set()
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as poke:
            poke.connect(str(self.path))  # refused once the server stopped by itself
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._listener is not None:
            self._listener.close()
        if self.path.exists():
            self.path.unlink()

    def _serve(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._stop.is_set():  # close()'s own connection
                conn.close()
                return
            with conn:
                conn.settimeout(5)
                stop_now = self._serve_one(conn)
            if stop_now:
                # Unlink first: once the listener is closed the CLI sees "refused" and may
                # return before a late unlink, failing a check that the socket is gone.
                self.path.unlink()
                self._listener.close()
                return

    def _serve_one(self, conn: socket.socket) -> bool:
        data = b""
        while not data.endswith(b"\n"):
            try:
                chunk = conn.recv(65536)
            except OSError:
                return False
            if not chunk:
                return False
            data += chunk
        request = json.loads(data)
        with self._arrived:
            self.lines.append(data)
            self.requests.append(request)
            self._arrived.notify_all()
        reply = self._reply_for(request)
        if reply is CLOSE:
            return False
        if isinstance(reply, dict):
            body = {"id": request.get("id", ""), **reply}
            line = json.dumps(body) + "\n"
        else:
            line = str(reply) + "\n"
        try:
            conn.sendall(line.encode())
        except OSError:
            return False  # the client went away, as a killed CLI does
        return request.get("method") == "server.stop" and self._shutdown_after_reply

    def _reply_for(self, request: dict[str, Any]) -> Reply:
        method = str(request.get("method"))
        script = self._scripts.get(method)
        if callable(script):
            return script(request)
        if script:
            return script.pop(0) if len(script) > 1 else script[0]
        if method == "ping":
            return {
                "result": {
                    "type": "pong",
                    "version": self.version,
                    "protocol": self.protocol,
                    "capabilities": self.capabilities,
                }
            }
        return {"result": {"type": "ok"}}
