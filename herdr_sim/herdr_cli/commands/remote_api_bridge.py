"""`herdr remote-api-bridge [--check]`: the far end of ``--machine``, stdio <-> API socket.

A saved machine's ``--machine`` command runs ``ssh <target> exec <herdr> --session <s>
remote-api-bridge`` (see :mod:`herdr_sim.herdr_cli.ssh_bridge`). This command connects
to that session's API socket and copies bytes both ways until either side ends: the
client's request arrives on standard input, the server's reply leaves on standard output.
When standard input ends the connection is closed (the client is gone, and the server
abandons an unanswered request exactly as for a local client that hung up); when the
server closes, the bridge exits after writing what it sent. ``--check`` prints
``herdr-api-bridge-v1``: the probe Herdr runs before using a machine.
"""

from __future__ import annotations

import os
import select

from .. import transport
from ..output import rust_os_error_display, write_err, write_out
from ..ssh_bridge import BRIDGE_CHECK_MARKER

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..client import Context

__all__ = ["run"]

_USAGE = "usage: herdr remote-api-bridge [--check]"
_CHUNK = 65536


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr remote-api-bridge``."""
    if args == ["--check"]:
        write_out(BRIDGE_CHECK_MARKER + "\n")
        return 0
    if args:
        write_err(_USAGE)
        return 2
    try:
        sock = transport.connect(ctx.socket_path)
    except (transport.ServerNotRunning, transport.IoFailure) as err:
        write_err(
            f"failed to connect to remote Herdr API socket {ctx.socket_path}: "
            f"{rust_os_error_display(err.os_error)}"
        )
        return 1
    try:
        _pump(sock.fileno())
    finally:
        sock.close()
    return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _pump(sock_fd: int) -> None:
    """Copy stdin -> socket and socket -> stdout until stdin or the socket ends."""
    stdin, stdout = 0, 1
    while True:
        readable, _, _ = select.select([stdin, sock_fd], [], [])
        if sock_fd in readable:
            try:
                data = os.read(sock_fd, _CHUNK)
            except OSError:
                return
            if not data:
                return
            _write_all(stdout, data)
        if stdin in readable:
            data = os.read(stdin, _CHUNK)
            if not data:
                return
            try:
                _write_all(sock_fd, data)
            except OSError:
                return
