"""A throwaway SSH host on a loopback port that fronts a simulator: a saved machine for tests.

Herdr's ``--machine`` runs the real OpenSSH client against a real SSH server. To test that
path without another computer, :class:`SshHost` starts OpenSSH's own ``sshd`` on
``127.0.0.1`` with everything in one private directory: a freshly generated host key and
user key, an ``authorized_keys`` with only that user key, and a ``known_hosts`` with only
that host key (so the client's strict host key checking is real). Sessions on it see
``HOME`` and ``HERDR_SIM_CONFIG_DIR`` of the "remote machine" (``SetEnv``), so the remote
command Herdr sends, ``"$HOME/.local/bin/herdr" --session <s> remote-api-bridge``, runs
the simulator's CLI against the simulator behind it.

:meth:`SshHost.client_config` is the ``ssh_config`` block a client needs (identity, port,
known hosts, no agent); the simulator's CLI reads it from ``<config dir>/ssh/config``
(:mod:`herdr_sim.herdr_cli.ssh_bridge`), so nothing ever reads or writes ``~/.ssh``.

``sshd`` must run with an absolute path, and as root it needs its privilege separation
directory (``/run/sshd``, made by the Debian service scripts, which do not run in a
container): :meth:`SshHost.start` creates that empty directory when it is missing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.client.poll import Deadline

__all__ = ["SshHost", "SshHostUnavailable", "find_sshd"]

#: Where Debian (and most systems) install sshd; it is not on an ordinary user's PATH.
_SSHD_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin")
_PRIVSEP_DIR = Path("/run/sshd")


class SshHostUnavailable(RuntimeError):
    """OpenSSH's server or key generator is not installed (or sshd would not start)."""


def find_sshd() -> str | None:
    """The absolute path of ``sshd``, or ``None``."""
    path = os.pathsep.join([*_SSHD_DIRS, os.environ.get("PATH", "")])
    return shutil.which("sshd", path=path)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _keygen(path: Path, comment: str) -> None:
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        raise SshHostUnavailable("ssh-keygen is not installed (Debian: openssh-client)")
    subprocess.run(
        [keygen, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )


@dataclass
class SshHost:
    """One ``sshd`` on ``127.0.0.1`` whose sessions run as a remote simulator machine.

    ``remote_home`` gets ``.local/bin/herdr`` (the remote Herdr); ``remote_config_dir`` is
    the remote simulator's ``HERDR_SIM_CONFIG_DIR``. ``directory`` holds the keys, the
    server's configuration and its log.
    """

    directory: Path
    remote_home: Path
    remote_config_dir: Path
    alias: str = "herdr-sim-machine"
    port: int = 0
    user: str = field(default_factory=lambda: pwd.getpwuid(os.getuid()).pw_name)
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def host_key(self) -> Path:
        """The server's private host key (its ``.pub`` is what ``known_hosts`` trusts)."""
        return self.directory / "host_ed25519"

    @property
    def user_key(self) -> Path:
        """The client's private key (the only key ``authorized_keys`` accepts)."""
        return self.directory / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        """The client's ``known_hosts``: this server's host key only."""
        return self.directory / "known_hosts"

    @property
    def log_path(self) -> Path:
        """``sshd``'s log (``-e``: its messages go to stderr, kept here)."""
        return self.directory / "sshd.log"

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def prepare(self) -> None:
        """Generate the keys and files (once); safe to call again."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.host_key.exists():
            _keygen(self.host_key, "herdr-sim machine host key")
        if not self.user_key.exists():
            _keygen(self.user_key, "herdr-sim machine user key")
        authorized = self.directory / "authorized_keys"
        authorized.write_text(self.user_key.with_suffix(".pub").read_text())
        authorized.chmod(0o600)
        self.remote_home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.remote_config_dir.mkdir(mode=0o700, parents=True, exist_ok=True)

    def trust_host_key(self, public_key_line: str | None = None) -> None:
        """Write ``known_hosts`` for this server: its real key, or ``public_key_line``
        (another key, for a test of a host key that does not match)."""
        key = public_key_line or self.host_key.with_suffix(".pub").read_text().strip()
        key = " ".join(key.split()[:2])
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {key}\n")
        self.known_hosts.chmod(0o600)

    def _server_config(self) -> Path:
        config = self.directory / "sshd_config"
        lines = [
            "ListenAddress 127.0.0.1",
            f"Port {self.port}",
            f"HostKey {self.host_key}",
            f"PidFile {self.directory / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.directory / 'authorized_keys'}",
            f"AllowUsers {self.user}",
            "AuthenticationMethods publickey",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "StrictModes no",
            "UsePAM no",
            "PermitUserEnvironment no",
            "AllowTcpForwarding no",
            "AllowAgentForwarding no",
            "AllowStreamLocalForwarding no",
            "X11Forwarding no",
            "PermitTTY no",
            "PrintMotd no",
            "MaxStartups 64:30:128",
            "LogLevel INFO",
            f"SetEnv HOME={self.remote_home} HERDR_SIM_CONFIG_DIR={self.remote_config_dir}",
        ]
        config.write_text("\n".join(lines) + "\n")
        config.chmod(0o600)
        return config

    def start(self, timeout: float = 10.0) -> None:
        """Start ``sshd`` (on a new free port unless one was chosen) and wait until it listens."""
        sshd = find_sshd()
        if sshd is None:
            raise SshHostUnavailable("sshd is not installed (Debian: openssh-server)")
        self.prepare()
        if os.geteuid() == 0 and not _PRIVSEP_DIR.is_dir():
            _PRIVSEP_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
        attempts = 3 if self.port == 0 else 1
        for _attempt in range(attempts):
            if attempts > 1:
                self.port = _free_port()
            config = self._server_config()
            if not self.known_hosts.exists():
                self.trust_host_key()
            with self.log_path.open("ab") as log:
                self._proc = subprocess.Popen(
                    [sshd, "-D", "-e", "-f", str(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            if self._wait_listening(timeout):
                if attempts > 1:
                    self.trust_host_key()
                return
            self.stop()
        log_text = self.log_path.read_text(errors="replace")[-2000:]
        raise SshHostUnavailable(f"sshd did not start on 127.0.0.1:{self.port}: {log_text}")

    def _wait_listening(self, timeout: float) -> bool:
        """Wait (bounded) until the port accepts connections, or the server died."""
        deadline = Deadline(timeout)
        while not deadline.expired():
            if self._proc is None or self._proc.poll() is not None:
                return False
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1.0),
            ):
                return True
            time.sleep(0.02)
        return False

    def stop(self) -> None:
        """Stop the server and end every connection it serves (bounded), as when the
        machine's SSH server dies: ``sshd`` gives each connection a process of its own
        session, which outlives the listener unless it is ended too."""
        from herdr_sim.host.procfs import descendants, start_ticks

        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            sessions = [(p.pid, start_ticks(p.pid)) for p in descendants(proc.pid)]
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            for pid, ticks in sessions:
                if ticks is not None and start_ticks(pid) == ticks:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def client_config(self) -> str:
        """The ``ssh_config`` block naming this server as ``alias``."""
        lines = [
            f"Host {self.alias}",
            "  HostName 127.0.0.1",
            f"  Port {self.port}",
            f"  User {self.user}",
            f"  IdentityFile {self.user_key}",
            "  IdentitiesOnly yes",
            "  IdentityAgent none",
            f"  UserKnownHostsFile {self.known_hosts}",
            "  GlobalKnownHostsFile /dev/null",
            "  CheckHostIP no",
            "  UpdateHostKeys no",
            "  LogLevel ERROR",
        ]
        return "\n".join(lines) + "\n"

    def install_remote_herdr(self) -> Path:
        """Put the simulator's ``herdr`` at ``<remote home>/.local/bin/herdr``."""
        from herdr_sim.host.cli_install import install_cli

        return install_cli(self.remote_home / ".local" / "bin")

    def link_session(self, socket_path: Path, session: str = "default") -> None:
        """Make ``session`` on the remote machine reach the simulator at ``socket_path``
        (a symlink where the remote CLI resolves that session's socket)."""
        base = self.remote_config_dir
        if session != "default":
            base = base / "sessions" / session
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        link = base / "herdr.sock"
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        link.symlink_to(socket_path)
