"""The fake LLM's HTTP server: a scripted model on 127.0.0.1 that records every request.

Built on the standard library's ``ThreadingHTTPServer`` (it parses HTTP; this module only
routes and answers). Every response closes its connection, so stopping the server leaves no
idle keep-alive connection behind. It listens on loopback only: a test's model is nobody
else's business.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from orchestrator.client.poll import Deadline

from .script import Script, Turn
from .wire import API_PATHS, Answer, Digest, digest, error_body, render, stream

__all__ = ["FakeLLM", "RecordedRequest"]

HOST = "127.0.0.1"
#: the largest request body read (an agent's whole conversation fits easily)
MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake LLM received, and what it answered."""

    index: int
    method: str
    path: str
    #: ``openai-chat``, ``openai-responses``, ``anthropic``, or ``""`` for other paths
    api: str
    headers: dict[str, str]
    #: the parsed JSON body (None when it was not JSON)
    body: Any
    #: the request reduced to what scripts match on (None when it could not be read)
    digest: Digest | None
    #: the script turn that answered (its index in ``script.turns``; -1: the fallback;
    #: None: no turn, e.g. a bad request)
    turn: int | None
    status: int
    #: seconds since the server started
    at: float = field(compare=False)

    @property
    def last_user_text(self) -> str:
        """The text of the request's last user message."""
        return self.digest.last_user_text if self.digest else ""

    @property
    def tool_results(self) -> tuple[str, ...]:
        """The tool results the agent sent back after its last user message."""
        return self.digest.tool_results if self.digest else ()

    def summary(self) -> dict[str, Any]:
        """One line of the request log (what the CLI prints and failure reports show)."""
        return {
            "index": self.index, "method": self.method, "path": self.path, "api": self.api,
            "status": self.status, "turn": self.turn,
            "last_user_text": self.last_user_text[:200], "tool_results": list(self.tool_results),
        }  # fmt: skip


class FakeLLM:
    """A scripted model server: ``with FakeLLM(script) as llm: llm.openai_base_url``."""

    def __init__(self, script: Script | None = None, *, port: int = 0) -> None:
        self.script = script if script is not None else Script()
        self.port = port
        self.requests: list[RecordedRequest] = []
        self._used: set[int] = set()
        self._lock = threading.Condition()
        self._numbers = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()
        #: called with every recorded request (the CLI prints them)
        self.on_request: Callable[[RecordedRequest], None] | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> Self:
        """Listen on 127.0.0.1 (port 0: a free one) and serve on a daemon thread."""
        server = ThreadingHTTPServer((HOST, self.port), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm",
            daemon=True,
        )  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (Anthropic clients' base URL)."""
        return f"http://{HOST}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (OpenAI clients' base URL)."""
        return f"{self.url}/v1"

    # -- script --------------------------------------------------------------------------
    def set_script(self, script: Script | str | Path) -> Script:
        """Answer from now on with ``script`` (a :class:`Script` or a file), from its start."""
        loaded = script if isinstance(script, Script) else Script.load(script)
        with self._lock:
            self.script = loaded
            self._used = set()
        return loaded

    def _choose(self, request_digest: Digest) -> tuple[int, Turn]:
        """The first unused turn that fits (and use it up), else the fallback (-1)."""
        with self._lock:
            for index, turn in enumerate(self.script.turns):
                if index in self._used:
                    continue
                if turn.when.fits(request_digest.last_user_text, request_digest.tool_results):
                    if not turn.repeat:
                        self._used.add(index)
                    return index, turn
            return -1, self.script.fallback

    def _record(self, **fields: Any) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(
                index=len(self.requests), at=time.monotonic() - self._started, **fields
            )
            self.requests.append(request)
            self._lock.notify_all()
        if self.on_request is not None:
            self.on_request(request)
        return request

    # -- assertions ----------------------------------------------------------------------
    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait (bounded) until ``count`` requests are recorded; all of them so far."""
        deadline = Deadline(timeout)
        with self._lock:
            while len(self.requests) < count:
                left = deadline.left()
                if left <= 0:
                    raise TimeoutError(
                        f"fake LLM: {len(self.requests)} request(s) after {timeout}s, "
                        f"waited for {count}"
                    )
                self._lock.wait(left)
            return list(self.requests)

    @property
    def unmatched(self) -> list[RecordedRequest]:
        """Requests no script turn fitted (answered by the fallback)."""
        with self._lock:
            return [r for r in self.requests if r.turn == -1]

    def _answer(self, turn: Turn, request_digest: Digest, body: Any) -> Answer:
        number = next(self._numbers)
        prompt_chars = len(json.dumps(body)) if body is not None else 0
        output_chars = len(turn.text) + sum(
            len(c.name) + len(json.dumps(dict(c.arguments))) for c in turn.tool_calls
        )
        return Answer(
            turn=turn,
            model=request_digest.model or "fake-model",
            response_id=f"fake-{number}",
            call_ids=tuple(c.id or f"call_{number}_{i}" for i, c in enumerate(turn.tool_calls)),
            input_tokens=turn.input_tokens
            if turn.input_tokens is not None
            else max(1, prompt_chars // 4),
            output_tokens=turn.output_tokens
            if turn.output_tokens is not None
            else max(1, output_chars // 4),
        )


def _handler_for(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = llm

    return Handler


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLM
    protocol_version = "HTTP/1.1"
    server_version = "herdr-sim-fake-llm/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _record(self, api: str, body: Any, request_digest: Digest | None, turn: int | None,
                status: int) -> RecordedRequest:  # fmt: skip
        return self.fake._record(
            method=self.command,
            path=self.path,
            api=api,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            digest=request_digest,
            turn=turn,
            status=status,
        )

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].removeprefix("/v1")
        if path == "/models":
            self._record("", None, None, None, 200)
            self._send_json(200, {"object": "list", "data": [
                {"id": "fake-model", "object": "model", "created": 0, "owned_by": "herdr-sim"}
            ]})  # fmt: skip
            return
        self._record("", None, None, None, 404)
        self._send_json(404, error_body("", 404, f"fake LLM: no such path {self.path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].removeprefix("/v1")
        api = API_PATHS.get(path, "")
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit() or int(length) > MAX_BODY:
            self._record(api, None, None, None, 411)
            self._send_json(411, error_body(api, 411, "fake LLM: a Content-Length body is needed"))
            return
        raw = self.rfile.read(int(length))
        try:
            body = json.loads(raw)
        except ValueError:
            self._record(api, None, None, None, 400)
            self._send_json(400, error_body(api, 400, "fake LLM: the body is not JSON"))
            return
        if not api:
            self._record(api, body, None, None, 404)
            self._send_json(404, error_body(api, 404, f"fake LLM: no such path {self.path}"))
            return
        try:
            request_digest = digest(api, body)
        except TypeError as exc:
            self._record(api, body, None, None, 400)
            self._send_json(400, error_body(api, 400, f"fake LLM: bad {api} request: {exc}"))
            return
        index, turn = self.fake._choose(request_digest)
        status = turn.error[0] if turn.error else 200
        recorded = self._record(api, body, request_digest, index, status)
        if turn.delay:
            time.sleep(turn.delay)
        if turn.error:
            message = turn.error[1]
            if index == -1:
                message += f" (request {recorded.index}: last user message "
                message += f"{request_digest.last_user_text[:80]!r})"
            self._send_json(status, error_body(api, status, message))
            return
        answer = self.fake._answer(turn, request_digest, body)
        if not request_digest.stream:
            self._send_json(200, render(api, answer))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in stream(api, answer, request_digest):
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            self.wfile.write(frame.encode())
            self.wfile.flush()
