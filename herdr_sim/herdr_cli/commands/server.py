"""`herdr server ...` and the stop procedure shared with `herdr session stop`.

Stopping is not a normal request: Herdr sends ``server.stop`` without the protocol guard
(an old server must still be stoppable), then waits up to 15 s, polling every 25 ms, until
neither the API socket nor the TUI client socket accepts connections. A caller that gets
exit 0 can therefore start a new server on the same path immediately.
"""

from __future__ import annotations

import errno
import os
import time

from .. import transport
from ..client import Context
from ..errors import UsageError
from ..output import dumps, print_response, rust_os_error_display, write_err, write_out
from ._common import unknown_subcommand

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["StopFailed", "is_running_at", "run", "run_foreground", "stop_sockets"]

STOP_TIMEOUT = 15.0
_STOP_POLL = 0.025
_STOP_REQUEST = b'{"id":"cli:session:stop","method":"server.stop","params":{}}\n'
#: Errors after which Herdr stops waiting for the reply and just watches the sockets.
_WAITABLE_ERRNOS = frozenset(
    {errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.ETIMEDOUT, errno.EAGAIN}
)


class StopFailed(Exception):
    """Stopping failed; ``str(err)`` is Herdr's plain-text message."""


def is_running_at(path: str) -> bool:
    """Whether something accepts connections at ``path`` (Herdr's liveness probe)."""
    if not os.path.lexists(path):
        return False
    try:
        sock = transport.connect(path)
    except transport.TransportError:
        return False
    sock.close()
    return True


def _send_stop(path: str, label: str, deadline: float) -> dict[str, Any] | None:
    """Send ``server.stop``; the decoded reply, or ``None`` when none arrives in time."""
    try:
        sock = transport.connect(path)
    except (transport.ServerNotRunning, transport.IoFailure) as err:
        raise StopFailed(
            f"{label} is not running or cannot be reached at {path}: "
            f"{rust_os_error_display(err.os_error)}"
        ) from None
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(max(remaining, 0.001))
        sock.sendall(_STOP_REQUEST)
        line = transport.read_line(sock)
    except TimeoutError:
        return None
    except OSError as err:
        if err.errno in _WAITABLE_ERRNOS:
            return None
        raise StopFailed(rust_os_error_display(err)) from None
    finally:
        sock.close()
    if not line:
        return None
    try:
        reply = transport.loads(line.decode("utf-8", "replace"))
    except ValueError as err:
        raise StopFailed(str(err)) from None
    return reply if isinstance(reply, dict) else None


def stop_sockets(socket_path: str, watched: list[str], label: str) -> None:
    """Stop the server at ``socket_path`` and wait until every ``watched`` socket is dead."""
    # own deadline: the herdr CLI loads no module beyond its own (start-up speed), and the
    # same deadline also bounds the stop request's socket exchange
    deadline = time.monotonic() + STOP_TIMEOUT
    reply = _send_stop(socket_path, label, deadline)
    if reply is not None and "error" in reply:
        raise StopFailed(dumps(reply["error"]))
    while time.monotonic() < deadline:
        if not any(is_running_at(path) for path in watched):
            return
        time.sleep(min(_STOP_POLL, max(deadline - time.monotonic(), 0)))
    reachable = [path for path in watched if is_running_at(path)]
    if reachable:
        raise StopFailed(
            f"{label} did not stop within {int(STOP_TIMEOUT * 1000)}ms; "
            f"sockets are still reachable at {', '.join(reachable)}"
        )


_HELP = (
    "herdr server commands:",
    "  herdr server                run a simulator in the foreground on this session's socket",
    "  herdr server stop           stop the server behind the API socket",
    "  herdr server live-handoff   hand live panes to a new server (not in the simulator)",
    "  herdr server reload-config  ask the running server to reload its config",
    "  herdr server agent-manifests [--json]  print agent detection manifest status",
    "  herdr server update-agent-manifests [--json]  download manifests (not in the simulator)",
    "  herdr server reload-agent-manifests  reload agent detection manifests",
)


def run_foreground(ctx: Context) -> int:
    """``herdr server``: run a simulator in the foreground where Herdr's headless server
    would listen (``src/main.rs`` → ``server::headless::run_server``): the socket this
    command line resolves to (``--session``, ``HERDR_SOCKET_PATH``, ``HERDR_SESSION``, the
    default), stopping on SIGINT, SIGTERM and SIGHUP (Herdr's ``ctrlc`` handler with its
    ``termination`` feature) or ``herdr server stop``. The simulator replaces this process
    (same pid), so the signals a test suite sends reach it; it is ``herdr-sim serve`` with
    Herdr's ready and "already running" messages."""
    import sys

    from herdr_sim.host.cli_install import package_parent

    from .unsupported import unsupported

    if ctx.is_remote:
        return unsupported("server", "a saved machine's server is started on that machine")
    socket_path = ctx.socket.socket_path
    env = dict(ctx.env)
    root = str(package_parent())
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    argv = [sys.executable, "-m", "herdr_sim", "serve", "--socket", socket_path, "--herdr-server"]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, argv, env)
    except OSError as err:
        write_err(f"error: cannot start the simulator: {err}")
    return 1


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr server <subcommand>`` (``herdr server`` alone is handled by app)."""
    sub, rest = args[0], args[1:]
    if sub == "stop":
        if rest:
            raise UsageError("usage: herdr server stop")
        if ctx.is_remote:
            return _stop_remote(ctx)
        watched = [ctx.socket.socket_path, ctx.socket.client_socket()]
        try:
            stop_sockets(ctx.socket.socket_path, watched, "server")
        except StopFailed as err:
            write_err(str(err))
            return 1
        return 0
    if sub == "reload-config":
        if rest:
            raise UsageError("usage: herdr server reload-config")
        return ctx.print_method("cli:server:reload-config", "server.reload_config", {})
    if sub == "reload-agent-manifests":
        if rest:
            raise UsageError("usage: herdr server reload-agent-manifests")
        return ctx.print_method(
            "cli:server:reload-agent-manifests", "server.reload_agent_manifests", {}
        )
    if sub == "agent-manifests":
        if rest not in ([], ["--json"]):
            raise UsageError("usage: herdr server agent-manifests [--json]")
        response = ctx.send("cli:server:agent-manifests", "server.agent_manifests", {})
        if rest or (isinstance(response, dict) and "error" in response):
            return print_response(response)
        write_out(_manifest_status(response))
        return 0
    from .unsupported import unsupported

    if sub == "live-handoff":
        return unsupported("server live-handoff", "there is no server binary to hand off to")
    if sub == "update-agent-manifests":
        return unsupported(
            "server update-agent-manifests", "it downloads detection manifests from herdr.dev"
        )
    return unknown_subcommand(sub, _HELP)


def _stop_remote(ctx: Context) -> int:
    """``--machine … server stop``: ``server.stop`` through the bridge, no protocol guard.

    The remote sockets cannot be watched from here, so the reply is the answer: an error
    envelope is printed (exit 1), a success is silent (exit 0).
    """
    reply = ctx.send_unchecked("cli:session:stop", "server.stop", {})
    if isinstance(reply, dict) and "error" in reply:
        write_err(dumps(reply["error"]))
        return 1
    return 0


def _manifest_status(response: Any) -> str:
    result = response.get("result") if isinstance(response, dict) else None
    result = result if isinstance(result, dict) else {}
    last_check = result.get("last_check_unix")
    last_result = result.get("last_result")
    lines = [
        f"last check: {last_check if isinstance(last_check, int) and last_check >= 0 else 'never'}",
        f"result: {last_result if isinstance(last_result, str) else 'not checked'}",
        "",
    ]
    manifests = result.get("manifests")
    for manifest in manifests if isinstance(manifests, list) else []:
        item = manifest if isinstance(manifest, dict) else {}

        def text(key: str, default: str, item: dict[str, Any] = item) -> str:
            value = item.get(key)
            return value if isinstance(value, str) else default

        shadowing = item.get("local_override_shadowing_remote") is True
        error = item.get("remote_update_error")
        marker = "!" if shadowing else ("x" if isinstance(error, str) else " ")
        lines.append(
            f"{marker} {text('agent', '-'):<9} {text('source_kind', '-'):<14} "
            f"active {text('active_version', '-'):<14} "
            f"remote {text('cached_remote_version', '-'):<14} "
            f"{text('remote_update_result', 'not checked')}"
        )
        warning = item.get("warning")
        if isinstance(error, str):
            lines.append(f"  {error}")
        elif shadowing:
            lines.append("  local override shadows cached remote rules")
        elif isinstance(warning, str):
            lines.append(f"  {warning}")
    return "".join(line + "\n" for line in lines)
