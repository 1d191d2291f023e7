"""An in-process SSH server (asyncssh) for machines without OpenSSH's ``sshd``.

:class:`herdr_sim.machines.host.SshHost` runs the real ``sshd``; where that is not installed
(a developer machine without root, say), :class:`InProcessSshHost` serves the same
arrangement from a thread of this process with asyncssh, a maintained SSH library: the same
generated host and user keys, ``authorized_keys`` and ``known_hosts`` (the client's strict
host key checking is as real as with ``sshd``), public-key authentication only, and each
exec request run as ``/bin/sh -c <command>`` with the remote machine's ``HOME`` and
``HERDR_SIM_CONFIG_DIR``, its standard streams piped to the SSH channel. No shells, no PTYs,
no forwarding. The client is still the real ``ssh``.

asyncssh is an optional dependency (the ``dev`` and ``machines`` extras); this module is
imported only when such a host is asked for.

Algorithms: the server offers and accepts ed25519 alone (host key, user key, signatures), the
keys :class:`SshHost` generates; nothing here touches DSA, which cryptography deprecates.
asyncssh itself still names cryptography's DSA classes while it is imported, which makes
cryptography (51 and later) warn on every import. That warning concerns asyncssh's module, not
anything this server does, so it is silenced for that import alone (by message, category and
module), never globally: a test run with warnings as errors keeps seeing every other one.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

from cryptography.utils import CryptographyDeprecationWarning

with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore",
        message="DSA is deprecated",
        category=CryptographyDeprecationWarning,
        module=r"asyncssh\.",
    )
    import asyncssh

from herdr_sim.machines.host import SshHost, SshHostUnavailable

__all__ = ["InProcessSshHost"]

#: The one signature algorithm the server accepts from a client (the keys
#: :meth:`SshHost.prepare` generates are ed25519; with only that host key, it is also the one
#: host key algorithm the server offers).
ALGORITHMS = ("ssh-ed25519",)

#: What ``sshd`` gives a session's PATH by default (Debian).
_SESSION_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


async def _copy_in(source: asyncssh.SSHReader[bytes], sink: asyncio.StreamWriter) -> None:
    """The channel's input to the command's stdin; EOF closes the stdin."""
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    except (OSError, asyncssh.Error):
        pass
    finally:
        sink.close()


async def _copy_out(source: asyncio.StreamReader, sink: asyncssh.SSHWriter[bytes]) -> None:
    """One of the command's outputs to the channel, until the command closes it."""
    while chunk := await source.read(65536):
        try:
            sink.write(chunk)
            await sink.drain()
        except (OSError, asyncssh.Error):
            return


class _Server(asyncssh.SSHServer):
    """Public keys only (checked against ``authorized_client_keys``); tracks connections."""

    def __init__(self, host: InProcessSshHost) -> None:
        self._host = host
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._host.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._host.connections.discard(self._conn)

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False


@dataclass
class InProcessSshHost(SshHost):
    """:class:`SshHost` with asyncssh on a thread of this process instead of ``sshd``."""

    connections: set[asyncssh.SSHServerConnection] = field(default_factory=set, repr=False)
    #: the commands running for sessions, and their handler tasks (ended by :meth:`stop`)
    _children: set[asyncio.subprocess.Process] = field(default_factory=set, repr=False)
    _handlers: set[asyncio.Task[None]] = field(default_factory=set, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _listener: Any = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        """Whether the server is listening."""
        return self._listener is not None

    async def _handle(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        command = process.command
        if not command:
            process.stderr.write(b"this test host runs commands only\n")
            process.exit(1)
            return
        env = {
            "PATH": _SESSION_PATH,
            "HOME": str(self.remote_home),
            "HERDR_SIM_CONFIG_DIR": str(self.remote_config_dir),
            "USER": self.user,
            "LOGNAME": self.user,
            "SHELL": "/bin/sh",
        }
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(self.remote_home),
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        task = asyncio.current_task()
        assert task is not None
        self._children.add(proc)
        self._handlers.add(task)
        feed = asyncio.ensure_future(_copy_in(process.stdin, proc.stdin))
        try:
            await asyncio.gather(
                _copy_out(proc.stdout, process.stdout), _copy_out(proc.stderr, process.stderr)
            )
            code = await proc.wait()
        finally:
            feed.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feed
            self._children.discard(proc)
            self._handlers.discard(task)
        with contextlib.suppress(OSError, asyncssh.Error):
            process.exit(code)

    def start(self, timeout: float = 10.0) -> None:
        """Listen on ``127.0.0.1`` (a free port unless one was chosen) from a new thread."""
        self.prepare()
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="inprocess-sshd", daemon=True)
        self._thread.start()

        async def listen() -> asyncssh.SSHAcceptor:
            return await asyncssh.listen(
                host="127.0.0.1",
                port=self.port,
                server_host_keys=[str(self.host_key)],
                signature_algs=list(ALGORITHMS),
                authorized_client_keys=str(self.directory / "authorized_keys"),
                server_factory=lambda: _Server(self),
                process_factory=self._handle,
                encoding=None,
                allow_pty=False,
                agent_forwarding=False,
                x11_forwarding=False,
            )

        try:
            self._listener = asyncio.run_coroutine_threadsafe(listen(), loop).result(timeout)
        except Exception as exc:
            self.stop()
            raise SshHostUnavailable(f"in-process SSH server did not start: {exc}") from exc
        self.port = self._listener.sockets[0].getsockname()[1]
        self.trust_host_key()

    def stop(self) -> None:
        """Stop listening and close every connection (bounded); stop the thread."""
        loop, listener = self._loop, self._listener
        self._listener = None
        if loop is None:
            return

        async def close() -> None:
            if listener is not None:
                listener.close()
                await listener.wait_closed()
            for child in list(self._children):
                with contextlib.suppress(ProcessLookupError):
                    child.terminate()
            for conn in list(self.connections):
                conn.close()
            if self._handlers:
                await asyncio.wait(list(self._handlers), timeout=5)
            for conn in list(self.connections):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(conn.wait_closed(), 5)

        if loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        if not loop.is_running():
            loop.close()
        self._loop, self._thread = None, None
