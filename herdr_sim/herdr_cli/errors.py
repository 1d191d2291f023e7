"""The ways a `herdr` command can end early, mirroring how real Herdr's CLI ends.

Real Herdr distinguishes four kinds of early exit, and clients rely on the difference:

* usage errors: a plain message on stderr, exit 2 (:class:`UsageError`);
* ``server_not_running``: one JSON line on stderr, exit 1 (:class:`ServerNotRunningError`);
* ``protocol_mismatch``: one JSON line, already printed when raised, exit 1
  (:class:`ProtocolMismatchReported`);
* anything else that escapes Rust's ``main``: ``Error: <Debug>`` on stderr, exit 1
  (:class:`FatalError`), for instance ``pane report-agent --state done``.

Command code raises these; only :func:`herdr_sim.herdr_cli.app.main` turns them into output
and exit codes, so every command prints each failure exactly once.
"""

from __future__ import annotations

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "FatalError",
    "ProtocolMismatchReported",
    "ServerNotRunningError",
    "UsageError",
]


class UsageError(Exception):
    """A command line Herdr rejects before contacting the server: message, exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FatalError(Exception):
    """An error that real Herdr lets escape ``main``; printed as ``Error: {debug}``.

    ``display`` is the error's ``Display`` text, which ``agent start`` embeds in its
    ``agent_start_transport_failed`` message.
    """

    def __init__(self, debug: str, display: str) -> None:
        super().__init__(display)
        self.debug = debug
        self.display = display


class ServerNotRunningError(Exception):
    """No server at the socket; ``response`` is the ``server_not_running`` envelope."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(response["error"]["message"])
        self.response = response


class ProtocolMismatchReported(Exception):
    """The server speaks another protocol; the error line has already been printed."""
