"""The SSH path of ``--machine``: the real OpenSSH client, ``remote-api-bridge`` on the far end.

Herdr 0.9.1 forwards a ``--machine`` command by running ``ssh`` non-interactively to the
saved target with the remote command ``exec <remote herdr> --session <s>
remote-api-bridge``, which pipes its standard input and output to the remote server's API
socket; over that pipe the CLI speaks the ordinary socket protocol (one request, one
reply line). This module does the same with the real ``ssh`` binary:

* options: Herdr's non-interactive set (``BatchMode``, no password prompts, strict host
  key checking, a 10 s connect timeout, one attempt, keep-alives) and ``-T``;
* ``-F <config dir>/ssh/config`` when that file exists: the simulator's stand-in for the
  user's ``~/.ssh/config`` (which Herdr's managed config includes), so tests name their
  own identities, ports and ``known_hosts`` without touching ``~/.ssh``;
* the remote Herdr is ``"$HOME/.local/bin/herdr"``, where Herdr installs it;
* before the first request the bridge is started and checked (``remote-api-bridge
  --check`` must print ``herdr-api-bridge-v1``); a failure there is ``machine '<label>':
  <error>``, a failure of a request ``machine '<label>' (session <s>): <error>``.

Each request runs one ``ssh`` (Herdr 0.9.1 also runs one per call; 0.9.2 reuses
connections). No value of a request is ever put into the remote shell command: the target
is a separate argument after ``--`` (and cannot start with ``-``), the session name is
validated, and the request travels on standard input.
"""

from __future__ import annotations

import contextlib
import os
import subprocess

from orchestrator.client.socket_paths import child_path, config_dir_str

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from herdr_sim.machines.endpoints import SavedMachine

__all__ = [
    "BRIDGE_CHECK_MARKER",
    "NONINTERACTIVE_OPTIONS",
    "REMOTE_HERDR",
    "BridgeError",
    "SshBridge",
    "interactive_check",
    "probe",
    "ssh_command",
]

#: What ``herdr remote-api-bridge --check`` prints.
BRIDGE_CHECK_MARKER = "herdr-api-bridge-v1"
#: Where Herdr installs itself on a POSIX remote (expanded by the remote shell).
REMOTE_HERDR = '"$HOME/.local/bin/herdr"'
#: Herdr's options for background (non-interactive) SSH.
NONINTERACTIVE_OPTIONS = (
    "-o",
    "BatchMode=yes",
    "-o",
    "NumberOfPasswordPrompts=0",
    "-o",
    "StrictHostKeyChecking=yes",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ConnectionAttempts=1",
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=4",
)
#: How long a finished exchange waits for ``ssh`` to exit before it is killed.
_EXIT_GRACE_SECONDS = 10.0
#: The master outlives its command by at most this when the command is killed before its
#: ``-O exit`` (Herdr uses ``yes``; a bound keeps a killed CLI from leaving it forever).
_CONTROL_PERSIST = "ControlPersist=60"
#: How long authentication (the connection master) may take: ConnectTimeout plus margin.
_MASTER_TIMEOUT_SECONDS = 60.0
_HOST_KEY_HINT = "saved machines use strict host key checking; verify the host key with ssh first"


class BridgeError(Exception):
    """The bridge could not carry a request; ``str()`` is the unwrapped reason."""


def ssh_config_path(env: Mapping[str, str]) -> str | None:
    """``<config dir>/ssh/config`` when it exists (the stand-in for ``~/.ssh/config``).

    ``ssh -F`` runs what the file says (a ``ProxyCommand``, a ``LocalCommand``) and, unlike
    its default ``~/.ssh/config``, does not check who owns it: so, as the machine catalog
    is, a config that is a symlink, another user's, or writable by group or others is
    refused (:class:`BridgeError`) and never passed to ``ssh``.
    """
    import stat

    from orchestrator.client.file_trust.ownership import FOREIGN_OWNER, ownership_problem

    path = child_path(child_path(config_dir_str(env), "ssh"), "config")
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise BridgeError(f"ssh config {path} is a symlink: refusing to use it")
    if not stat.S_ISREG(info.st_mode):
        return None  # a directory or a device there: no config
    problem = ownership_problem(info, kind="file")
    if problem == FOREIGN_OWNER:
        raise BridgeError(f"ssh config {path} is owned by another user: refusing to use it")
    if problem is not None:
        raise BridgeError(f"ssh config {path} is writable by other users: refusing to use it")
    return path


def _quote(word: str) -> str:
    """POSIX shell quoting for a word (session names are validated; this is belt and braces)."""
    if word and all(ch.isascii() and (ch.isalnum() or ch in "._-/") for ch in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _ssh_options(env: Mapping[str, str], interactive: bool, control: list[str]) -> list[str]:
    argv = ["ssh"]
    config = ssh_config_path(env)
    if config is not None:
        argv += ["-F", config]
    if not interactive:
        argv += NONINTERACTIVE_OPTIONS
    return argv + control


def ssh_command(
    target: str,
    remote_command: str,
    env: Mapping[str, str],
    *,
    interactive: bool = False,
    control: list[str] | None = None,
) -> list[str]:
    """The argv of ``ssh`` running ``remote_command`` on ``target`` (``control``: options
    that make it a client of a connection master)."""
    return [*_ssh_options(env, interactive, control or []), "-T", "--", target, remote_command]


def bridge_command(session: str) -> str:
    """The remote command of a request: ``exec <herdr> --session <s> remote-api-bridge``."""
    return f"exec {REMOTE_HERDR} --session {_quote(session)} remote-api-bridge"


def check_command() -> str:
    """The remote command of the probe: ``<herdr> remote-api-bridge --check``."""
    return f"{REMOTE_HERDR} remote-api-bridge --check"


def _ssh_failure(stderr: bytes, returncode: int | None) -> str:
    """What ``ssh`` (or the remote command) said, as one line, with Herdr's host-key hint."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line and not line.startswith("@")]
    reason = lines[-1] if lines else f"ssh exited with status {returncode}"
    if "host key" in reason.lower() or "host identification" in reason.lower():
        reason = f"{reason} ({_HOST_KEY_HINT})"
    return reason


def _child_env(env: Mapping[str, str]) -> dict[str, str]:
    """The ``ssh`` child's environment: the caller's, without the simulator's socket choice."""
    return {k: v for k, v in env.items() if k not in ("HERDR_SOCKET_PATH", "HERDR_SESSION")}


def _finish(proc: subprocess.Popen[bytes]) -> bytes:
    """Close our end, wait (bounded) for ``ssh`` to exit, and return its stderr."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=_EXIT_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    err = proc.stderr.read() if proc.stderr is not None else b""
    if proc.stdout is not None:
        proc.stdout.close()
    if proc.stderr is not None:
        proc.stderr.close()
    return err


class SshBridge:
    """Requests to one saved machine's session, each over its own ``ssh`` exec.

    Like Herdr 0.9.2, one command's execs share one SSH connection: :meth:`start` opens a
    connection master (``-M``, ``ControlPersist``) on a control socket in a private
    temporary directory, and :meth:`close` sends it ``-O exit``.
    """

    def __init__(self, profile: SavedMachine, env: Mapping[str, str]) -> None:
        self.profile = profile
        self.env = env
        self.started = False
        self._control_dir: str | None = None

    @property
    def _control(self) -> list[str]:
        if self._control_dir is None:
            return []
        return ["-S", f"{self._control_dir}/ctl", "-o", "ControlMaster=no"]

    def _spawn(self, remote_command: str) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                ssh_command(self.profile.target, remote_command, self.env, control=self._control),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_child_env(self.env),
                close_fds=True,
            )
        except OSError as err:
            raise BridgeError(f"failed to run ssh: {err}") from None

    def start(self) -> None:
        """Check, once, that the remote Herdr has the API bridge (``--check``)."""
        if self.started:
            return
        self._open_master()
        proc = self._spawn(check_command())
        assert proc.stdout is not None
        out = proc.stdout.read(4096)
        err = _finish(proc)
        if proc.returncode == 0 and out.decode("utf-8", "replace").strip() == BRIDGE_CHECK_MARKER:
            self.started = True
            return
        if proc.returncode == 255:
            raise BridgeError(_ssh_failure(err, proc.returncode))
        detail = _ssh_failure(err, proc.returncode)
        raise BridgeError(
            f"remote Herdr at {REMOTE_HERDR} does not support machine API forwarding "
            f"({detail}); install or update Herdr 0.9.1 or newer on that machine"
        )

    def _open_master(self) -> None:
        """Authenticate once and leave a connection master for this command's execs."""
        import tempfile

        self._control_dir = tempfile.mkdtemp(prefix="herdr-ssh-")
        log_path = f"{self._control_dir}/master.log"
        argv = [
            *_ssh_options(self.env, False, []),
            *("-S", f"{self._control_dir}/ctl", "-M", "-o", _CONTROL_PERSIST, "-f", "-N"),
            *("--", self.profile.target),
        ]
        try:
            with open(log_path, "wb") as log:  # noqa: PTH123 - no pathlib in the CLI
                done = subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    env=_child_env(self.env),
                    timeout=_MASTER_TIMEOUT_SECONDS,
                    check=False,
                )
        except (OSError, subprocess.TimeoutExpired) as err:
            self.close()
            raise BridgeError(f"failed to run ssh: {err}") from None
        if done.returncode != 0:
            with open(log_path, "rb") as log:  # noqa: PTH123
                reason = _ssh_failure(log.read(), done.returncode)
            self.close()
            raise BridgeError(reason)

    def close(self) -> None:
        """Stop the connection master (bounded) and remove its private directory."""
        control_dir, self._control_dir = self._control_dir, None
        self.started = False
        if control_dir is None:
            return
        import shutil

        if os.path.exists(f"{control_dir}/ctl"):  # noqa: PTH110
            argv = [
                *_ssh_options(self.env, False, []),
                *("-S", f"{control_dir}/ctl", "-O", "exit", "--", self.profile.target),
            ]
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    env=_child_env(self.env),
                    timeout=_EXIT_GRACE_SECONDS,
                    check=False,
                )
        shutil.rmtree(control_dir, ignore_errors=True)

    def exchange(self, payload: bytes) -> bytes:
        """Send one request line through ``remote-api-bridge`` and return the reply line."""
        self.start()
        proc = self._spawn(bridge_command(self.profile.session))
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(payload)
            proc.stdin.flush()
        except OSError:
            pass  # ssh died; its stderr says why
        # The bridge must stay open until the reply arrives: the server abandons a request
        # whose client hung up, exactly as for a local socket client.
        line = proc.stdout.readline()
        err = _finish(proc)
        if not line:
            raise BridgeError(_ssh_failure(err, proc.returncode))
        return line


def probe(profile: SavedMachine, env: Mapping[str, str]) -> None:
    """A fresh non-interactive check: the bridge answers and the session's server pongs."""
    from .transport import BadResponse, EmptyResponse, decode_reply, encode_request

    bridge = SshBridge(profile, env)
    try:
        bridge.start()
        reply = decode_reply(bridge.exchange(encode_request("api-client:status", "ping", {})))
    except (EmptyResponse, BadResponse) as err:
        raise BridgeError(f"unexpected reply from the remote server: {err}") from None
    finally:
        bridge.close()
    result = reply.get("result") if isinstance(reply, dict) else None
    if not isinstance(result, dict) or result.get("type") != "pong":
        raise BridgeError(f"unexpected reply from the remote server: {reply!r}")


def interactive_check(profile: SavedMachine, env: Mapping[str, str]) -> None:
    """``machine reconnect``: ``ssh`` with the terminal attached (authentication prompts,
    MFA), running the bridge check; never installs or starts anything."""
    argv = ssh_command(profile.target, check_command(), env, interactive=True)
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, env=_child_env(env), check=False)
    except OSError as err:
        raise BridgeError(f"failed to run ssh: {err}") from None
    answer = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or answer != BRIDGE_CHECK_MARKER:
        raise BridgeError(f"ssh check failed with status {done.returncode}")
