"""The orchestrator's logging: one logger per module, the task id on every agent-tool record.

Why: the orchestrator decides things a user later has to explain — a spawn that stopped at
one of its steps, a completion verdict, a gate's refusal, the socket given up for the CLI —
and those decisions are worth a record. A library must not configure logging itself: the
package's logger gets a :class:`logging.NullHandler` here, which every module that logs
imports (so nothing is printed unless the application says so) and ``herdr-orchestrator mcp`` calls
:func:`configure` to log to *stderr* (stdout carries the MCP stdio protocol).

Every record of the agent tools carries ``task_id`` (``"-"`` while a call has none yet):
the handlers bind the task they work on with :func:`bind_task`, and :func:`task_logger`'s
adapter stamps it, so a log filtered on one task tells its whole story. ``run_given`` scopes
the binding to one call (:func:`task_scope`), so one call's task never leaks into the next.

Never log a secret: prompts, agent args and environment values stay out of every record
(the rule of :mod:`orchestrator.core.result`: :func:`~orchestrator.core.result.redacted`
stands in for a value when its presence matters).
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TextIO, TypeVar

from orchestrator.client.untrusted_text import LINE_SEPARATORS, control_pattern

__all__ = [
    "CONTROL_CHARACTERS",
    "FORMAT",
    "NO_TASK",
    "TaskLogger",
    "bind_task",
    "configure",
    "current_task",
    "printable",
    "scoped",
    "task_logger",
    "task_scope",
]

# a library never prints on its own: records go nowhere unless the application configures
# logging (``herdr-orchestrator mcp --log-level`` does, to stderr: :func:`configure`)
logging.getLogger("orchestrator").addHandler(logging.NullHandler())

#: ``task_id`` of a record made before the call knew its task (or outside any call)
NO_TASK = "-"
#: the stderr format of :func:`configure`
FORMAT = "%(asctime)s %(levelname)s %(name)s [task %(task_id)s] %(message)s"

#: what a log line must never carry raw: C0 and C1 controls, DEL, and Unicode's line and
#: paragraph separators (each can end a line or rewrite what a terminal shows)
CONTROL_CHARACTERS = control_pattern(also=LINE_SEPARATORS)

P = ParamSpec("P")
R = TypeVar("R")

_TASK: ContextVar[str | None] = ContextVar("orchestrator_task_id", default=None)


def printable(text: str) -> str:
    """``text`` safe to log: every control character (line breaks, escapes, separators)
    written as its ``\\xNN``/``\\uNNNN`` escape and a backslash doubled, so whatever a request
    carries (a ``%0a`` decoded in its path) stays inside its own log line and reads back
    unambiguously."""
    return CONTROL_CHARACTERS.sub(_escaped, text.replace("\\", "\\\\"))


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def current_task() -> str:
    """The task id bound in this call (:data:`NO_TASK` when none)."""
    return _TASK.get() or NO_TASK


def bind_task(task_id: str | None) -> None:
    """Bind ``task_id`` for the rest of the current call (:func:`task_scope` undoes it)."""
    _TASK.set(task_id)


@contextmanager
def task_scope(task_id: str | None = None) -> Iterator[None]:
    """Run a block with its own task binding, restored afterwards."""
    token = _TASK.set(task_id)
    try:
        yield
    finally:
        _TASK.reset(token)


def scoped(handler: Callable[P, R]) -> Callable[P, R]:
    """``handler`` run in its own :func:`task_scope`: the task it binds ends with the call
    (the agent tools' table wraps every handler, so a direct call leaks nothing either)."""

    @functools.wraps(handler)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with task_scope():
            return handler(*args, **kwargs)

    return run


class TaskLogger(logging.LoggerAdapter[logging.Logger]):
    """A module's logger whose records carry ``task_id`` (given in ``extra``, else bound)."""

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        extra = dict(kwargs.get("extra") or {})
        extra.setdefault("task_id", current_task())
        kwargs["extra"] = extra
        return msg, kwargs


def task_logger(name: str) -> TaskLogger:
    """The logger of module ``name`` (pass ``__name__``) for the agent tools."""
    return TaskLogger(logging.getLogger(name), {})


class _TaskDefault(logging.Filter):
    """Give records from outside the agent tools a ``task_id`` too, so :data:`FORMAT` works."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "task_id"):
            record.task_id = current_task()
        return True


def configure(level: str | int = "WARNING", stream: TextIO | None = None) -> logging.Handler:
    """Send the ``orchestrator`` loggers' records at ``level`` and above to ``stream``
    (default: stderr, never stdout) in :data:`FORMAT`; returns the handler it added."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(_TaskDefault())
    root = logging.getLogger("orchestrator")
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler
