"""The JSON-lines bridge from the TypeScript pi extension to :class:`ManagedChild`.

Why: the protocol rules live once, in Python (:mod:`orchestrator.managed.child`); the pi
extension (node) must not write mailbox records or take the mailbox ``flock`` itself. So it
starts ``$PI_HERDSMAN_PYTHON -m orchestrator.managed.child_cli`` once per pi session, with
the child's environment, keeps it open, and talks to it one JSON request per line on stdin,
one JSON answer per line on stdout:

========================================================  =======================================
request                                                   answer
========================================================  =======================================
``{"op":"hello","piSessionId","piSessionFile","cwd",      checks the env, writes the first
"pid"}``                                                  state: ``{"ok":true,"label",
                                                          "definition","allowedDefinitions"}``
``{"op":"poll"}``                                         ``{"ok":true,"actions":[{"do","text",
                                                          "id"}]}`` (records consumed)
``{"op":"event","event":"turn_start"|"tool_start"|        ``{"ok":true}``
"tool_end"|"session_file","path"?}``
``{"op":"event","event":"turn_end","assistantText"}``     ``{"ok":true,"result":"completed"|
                                                          "failed"|null}``
``{"op":"event","event":"compact","reason"}``             ``{"ok":true,"retired","cancel"}``
                                                          (pi's compaction; :meth:`ManagedChild.
                                                          context_pressure`)
``{"op":"ask","question"}``                               ``{"ok":true,"askId"}`` or an error
========================================================  =======================================

A failure answers ``{"ok":false,"error":{"category","message",…}}`` (the structured error
of :mod:`orchestrator.managed.errors`). A line that is not a JSON object, names no known
op, has wrong field types or is too long gets such an error answer; the bridge never exits
on bad input. End of input exits 0.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from orchestrator.managed.child import ManagedChild
from orchestrator.managed.env import ChildIdentity
from orchestrator.managed.errors import ManagedAgentError

__all__ = ["LINE_LIMIT_BYTES", "Bridge", "main"]

#: one request line at most (a turn_end carries the final text; a result is ≤ 4 MiB)
LINE_LIMIT_BYTES = 8 << 20

_EVENTS = ("turn_start", "tool_start", "tool_end", "session_file", "turn_end", "compact")


def _error(category: str, message: str, operation: str = "bridge") -> dict[str, Any]:
    return {
        "ok": False,
        "error": ManagedAgentError(category, message, operation=operation).to_dict(),  # type: ignore[arg-type]
    }


def _field(request: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = request.get(key)
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise ManagedAgentError(
            "invalid_request", f"field {key!r} is missing or of the wrong type", operation="bridge"
        )
    return value


def _optional_str(request: Mapping[str, Any], key: str) -> str | None:
    value = request.get(key)
    if value is not None and not isinstance(value, str):
        raise ManagedAgentError(
            "invalid_request", f"field {key!r} is not a string or null", operation="bridge"
        )
    return value


class Bridge:
    """Answers bridge requests over one :class:`ManagedChild` (made at ``hello``)."""

    def __init__(
        self,
        env: Mapping[str, str],
        *,
        child_factory: Callable[[ChildIdentity], ManagedChild] = ManagedChild,
    ) -> None:
        self.env = env
        self.child: ManagedChild | None = None
        self._factory = child_factory

    def answer_line(self, line: bytes | str) -> dict[str, Any]:
        """The answer to one request line (never raises for bad input)."""
        try:
            request = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error("invalid_request", "request is not JSON")
        if not isinstance(request, dict):
            return _error("invalid_request", "request is not a JSON object")
        try:
            return self.answer(request)
        except ManagedAgentError as exc:
            return {"ok": False, "error": exc.to_dict()}
        except OSError as exc:
            return _error("internal_failure", f"I/O failure: {exc}")
        except Exception as exc:  # the bridge answers; it never dies of a request
            return _error("internal_failure", f"unexpected {type(exc).__name__}: {exc}")

    def _child(self, op: str) -> ManagedChild:
        if self.child is None:
            raise ManagedAgentError(
                "invalid_request", f"{op} before hello: say hello first", operation="bridge"
            )
        return self.child

    def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "hello":
            if self.child is not None:
                raise ManagedAgentError(
                    "invalid_request", "hello was already said", operation="bridge"
                )
            session_file = _optional_str(request, "piSessionFile")
            session_id = _field(request, "piSessionId", str)
            cwd = _field(request, "cwd", str)
            pid = _field(request, "pid", int)
            identity = ChildIdentity.from_env(self.env)
            child = self._factory(identity)
            child.hello(pi_session_id=session_id, pi_session_file=session_file, cwd=cwd, pid=pid)
            self.child = child
            return {
                "ok": True,
                "label": identity.label,
                "definition": identity.definition,
                "allowedDefinitions": list(identity.allowed_definitions),
            }
        if op == "poll":
            actions = self._child("poll").poll()
            return {"ok": True, "actions": [a.to_json() for a in actions]}
        if op == "event":
            child = self._child("event")
            event = request.get("event")
            if event not in _EVENTS:
                raise ManagedAgentError(
                    "invalid_request",
                    f"unknown event {event!r}; one of {', '.join(_EVENTS)}",
                    operation="bridge",
                )
            if event == "turn_end":
                text = _optional_str(request, "assistantText")
                return {"ok": True, "result": child.turn_end(text)}
            if event == "compact":
                retired, cancel = child.context_pressure(_field(request, "reason", str))
                return {"ok": True, "retired": retired, "cancel": cancel}
            if event == "turn_start":
                child.turn_start()
            elif event == "tool_start":
                child.tool_start()
            elif event == "tool_end":
                child.tool_end()
            else:
                child.session_file(_field(request, "path", str))
            return {"ok": True}
        if op == "ask":
            question = _field(request, "question", str)
            return {"ok": True, "askId": self._child("ask").ask(question)}
        raise ManagedAgentError(
            "invalid_request",
            f"unknown op {op!r}; one of hello, poll, event, ask",
            operation="bridge",
        )


def serve(stdin: IO[bytes], stdout: IO[bytes], env: Mapping[str, str]) -> int:
    """Answer every line of ``stdin`` on ``stdout`` until end of input; 0."""
    bridge = Bridge(env)
    while True:
        line = stdin.readline(LINE_LIMIT_BYTES + 1)
        if not line:
            return 0
        if len(line) > LINE_LIMIT_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest of the oversized line
                rest = stdin.readline(1 << 16)
                if not rest or rest.endswith(b"\n"):
                    break
            answer = _error("invalid_request", f"request line over {LINE_LIMIT_BYTES} bytes")
        elif not line.strip():
            continue
        else:
            answer = bridge.answer_line(line)
        stdout.write(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
        stdout.flush()


def main() -> int:
    return serve(sys.stdin.buffer, sys.stdout.buffer, os.environ)


if __name__ == "__main__":
    sys.exit(main())
