"""The client's exceptions, mapped from Herdr's wire error codes.

Two families, because callers must treat them differently:

* :class:`HerdrError` — Herdr answered (or its CLI synthesized) an error envelope
  ``{"code", "message"}``. The request was refused or failed; nothing is in doubt. One
  subclass per family of codes, chosen by :func:`error_for`, so callers can catch
  "not found" without listing every ``*_not_found`` code.
* :class:`TransportError` — the exchange itself failed (connection reset, no answer, a
  timeout on our side; :class:`ProtocolError`: closed before a response line).
  ``maybe_applied`` says whether the request may have reached the server; a mutation with
  ``maybe_applied`` true must not be sent again blindly.
"""

from __future__ import annotations

from typing import ClassVar


class ClientError(Exception):
    """Base of every error this client raises."""


class HerdrError(ClientError):
    """An error envelope: Herdr's ``code`` and ``message`` (and the request id, if known)."""

    codes: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, code: str, message: str, request_id: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id


class ServerNotRunning(HerdrError):
    """No Herdr server listens at the socket (``server_not_running``). Not worth retrying:
    someone has to start Herdr."""

    codes = frozenset({"server_not_running"})


class ServerUnavailable(HerdrError):
    """The server is shutting down or its app loop did not answer (``server_unavailable``)."""

    codes = frozenset({"server_unavailable"})


class IncompatibleServer(HerdrError):
    """The server speaks another protocol version than this client (``protocol_mismatch``)."""

    codes = frozenset({"protocol_mismatch"})


class NotFound(HerdrError):
    """The target does not exist (any more): list again and pick a real id."""

    codes = frozenset(
        {
            "pane_not_found",
            "workspace_not_found",
            "tab_not_found",
            "agent_not_found",
            "agent_pane_not_found",
            "target_pane_not_found",
            "agent_name_not_found",
        }
    )


class Timeout(HerdrError):
    """A server-side wait ran out (``timeout``): read the target before waiting longer."""

    codes = frozenset({"timeout", "agent_prompt_stalled"})


class InvalidRequest(HerdrError):
    """The request was malformed or a parameter was refused: fix the call, do not repeat it."""

    codes = frozenset(
        {
            "invalid_request",
            "invalid_params",
            "invalid_regex",
            "invalid_key",
            "invalid_env",
            "invalid_agent",
            "invalid_agent_name",
            "invalid_agent_argument",
            "invalid_agent_timeout",
            "invalid_pane_swap",
            "unsupported_agent_kind",
            "unsupported_event_wait_match",
            "empty_agent_prompt",
            "usage_error",
            "invalid_cli_argument",
        }
    )


InvalidParams = InvalidRequest


class AgentNotReady(HerdrError):
    """The agent (or its pane) cannot take this now: busy, starting, blocked or gone."""

    codes = frozenset(
        {
            "agent_not_ready",
            "agent_blocked",
            "agent_not_running",
            "agent_not_idle",
            "agent_pane_busy",
            "agent_pane_unavailable",
            "agent_launch_pending",
            "agent_name_taken",
            "agent_target_ambiguous",
            "agent_start_failed",
            "agent_kind_mismatch",
            "agent_explain_unavailable",
        }
    )


_FAMILIES: tuple[type[HerdrError], ...] = (
    ServerNotRunning,
    ServerUnavailable,
    IncompatibleServer,
    NotFound,
    Timeout,
    InvalidRequest,
    AgentNotReady,
)
_BY_CODE: dict[str, type[HerdrError]] = {
    code: family for family in _FAMILIES for code in family.codes
}


def error_for(code: str, message: str, request_id: str | None = None) -> HerdrError:
    """The exception for a wire error: its family's subclass, or :class:`HerdrError`."""
    return _BY_CODE.get(code, HerdrError)(code, message, request_id)


class TransportError(ClientError):
    """The exchange failed below the protocol (I/O, no answer, our own deadline).

    ``maybe_applied`` is True once the request may have reached the server: the operation may
    have run even though no answer arrived.
    """

    def __init__(self, message: str, *, maybe_applied: bool) -> None:
        super().__init__(message)
        self.message = message
        self.maybe_applied = maybe_applied


class ProtocolError(TransportError):
    """The server closed the connection without a complete response line.

    The request had been written, so it may have been applied (``maybe_applied``).
    """

    def __init__(self, message: str = "connection closed before a response line") -> None:
        super().__init__(message, maybe_applied=True)


class ConnectFailed(TransportError):
    """The connection could not be made at all: the request was certainly not sent.

    Distinguished so :class:`~orchestrator.client.transports.AutoTransport` knows that
    falling back to the CLI cannot run anything twice.
    """

    def __init__(self, message: str, *, missing: bool) -> None:
        super().__init__(message, maybe_applied=False)
        #: the socket is absent or refuses connections (Herdr's "server not running" case)
        self.missing = missing
