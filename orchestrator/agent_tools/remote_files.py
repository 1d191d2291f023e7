"""One seam for a task's files: here, or on a machine reached over SSH.

Why: a task's files — ``result.md``, the inbox, pi's session file — and the git repository
its diff is computed in live where the task runs. On this host (or a machine that shares
its paths, ``sharedFilesystem``) they are read directly; on a machine that has only an SSH
target (``machineTargets``) they must be read over SSH, since Herdr's ``--machine`` forwards
API calls and nothing else. :class:`RemoteFiles` is the one interface both sides offer:

* ``read_bounded(path, limit, offset=, tail=)`` → ``BoundedRead``, with the
  rules of ``core.safe_fs.read_bounded``: a missing file is ``FileNotFoundError``; a symbolic
  link, a FIFO, a directory is ``UnsafeFile``; never more than ``limit`` bytes;
* ``exists(path)``, ``is_dir(path)``, ``is_regular_file(path)`` (a link is not),
  ``list_dir(path)`` (names);
* ``write_atomic(path, data)``: a complete private file renamed over ``path`` (its directory
  made 0700 when missing); a link at ``path`` is replaced, never written through;
* ``run(argv, env=…, limit=…)`` → :class:`Ran`: a program (git) run with an argv, its output
  bounded, under a timeout.

:class:`LocalFiles` is this host. :class:`SshFiles` runs OpenSSH's ``ssh`` with an argv
(never a local shell) and an explicit ``-F <config>`` (never ``~/.ssh``'s defaults), Herdr's
non-interactive options (``BatchMode``, strict host keys, a connect timeout), ``--`` before
the target (a target is never taken for an option; one starting with ``-`` is refused), and
the remote command as one string of ``shlex.quote``-d words: the remote side's shell only ever
sees our fixed script and quoted arguments. Reads run a fixed POSIX ``sh`` script that refuses
a link or a non-regular file and cuts the output with ``head``/``tail -c`` on the remote, so no
read is unbounded. The ``ssh`` process gets :func:`~orchestrator.client.child_env.child_env`'s
environment (no secrets). On the remote the type check and the read are two steps: a child
that swaps the file for a link in between makes us read a file of the account it already
runs as (what it could have copied into ``result.md`` itself), nothing more.

A failure to reach the machine (``ssh`` exit 255, a timeout) is :class:`RemoteUnavailable`:
it says nothing about the remote state (a command may have run), so callers report what is
known and never take it for "not applied".
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shlex
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from orchestrator.client.child_env import child_env
from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.client.file_trust.private_files import BoundedRead, UnsafeFile
from orchestrator.client.poll import Deadline
from orchestrator.core.config import Config, check_ssh_target

#: seconds a command on the machine (one read, one git call) may take
DEFAULT_TIMEOUT = 60.0
#: output kept from a command run through :meth:`RemoteFiles.run` unless told otherwise
DEFAULT_OUTPUT_LIMIT = 16 << 20
#: stderr kept from any command (the reason of a failure, not a log)
_STDERR_LIMIT = 64 << 10
#: ``ssh``'s own exit code for a connection or protocol error
SSH_FAILED = 255
#: OpenSSH options for a call nobody can answer a prompt for (Herdr's non-interactive set)
SSH_OPTIONS: tuple[str, ...] = (
    "BatchMode=yes",
    "NumberOfPasswordPrompts=0",
    "StrictHostKeyChecking=yes",
    "ConnectTimeout=10",
    "ConnectionAttempts=1",
    "ServerAliveInterval=15",
    "ServerAliveCountMax=4",
    "ForwardAgent=no",
    "ClearAllForwardings=yes",
)

# The remote read: $1 path, $2 limit, $3 offset, $4 "tail" or "head". Exit 2: missing,
# 3: a link, 4: not a regular file. The first output line is the file's size.
_READ_SCRIPT = (
    'p=$1; if [ -L "$p" ]; then exit 3; fi; if [ ! -e "$p" ]; then exit 2; fi; '
    'if [ ! -f "$p" ]; then exit 4; fi; size=$(wc -c < "$p") || exit 5; '
    "printf '%s\\n' $size; "
    'if [ "$4" = tail ]; then tail -c "$2" -- "$p"; '
    'else tail -c "+$(($3 + 1))" -- "$p" | head -c "$2"; fi'
)
# $1 path: exit 0 when it exists (a dangling link counts), 1 when not
_EXISTS_SCRIPT = 'if [ -e "$1" ] || [ -L "$1" ]; then exit 0; fi; exit 1'
# $1 path: exit 0 for a regular file that is not a link
_REGULAR_SCRIPT = 'if [ -f "$1" ] && [ ! -L "$1" ]; then exit 0; fi; exit 1'
# $1 directory: its entries, one a line (``ls -q``: a control character in a name shows as
# ``?``); exit 2 when it is not a directory (or is a link to one)
_LIST_SCRIPT = 'if [ ! -d "$1" ] || [ -L "$1" ]; then exit 2; fi; cd -- "$1" && ls -A1 -q .'


# $1 path, $2 its size, the data on stdin: a private temp file (noclobber: O_EXCL, a planted
# link fails) renamed over $1 in its directory, created 0700 when missing, only when all $2
# bytes arrived (a connection lost mid-stream ends cat's input early: nothing is replaced).
# Exit 3: the directory is a link or not a directory; 4: $1 is a directory; 6: the write,
# the size check or the rename failed.
_WRITE_SCRIPT = (
    'umask 077; p=$1; d=$(dirname -- "$p"); n=$(basename -- "$p"); '
    'mkdir -p -- "$d" 2>/dev/null; if [ -L "$d" ] || [ ! -d "$d" ]; then exit 3; fi; '
    'if [ -d "$p" ] && [ ! -L "$p" ]; then exit 4; fi; t="$d/.$n.$$.tmp"; set -C; '
    'cat > "$t" || { rm -f -- "$t"; exit 6; }; got=$(wc -c < "$t"); '
    'if [ "$got" -ne "$2" ]; then rm -f -- "$t"; exit 6; fi; '
    'if [ -L "$p" ]; then rm -f -- "$p"; fi; '
    'mv -f -- "$t" "$p" || { rm -f -- "$t"; exit 6; }'
)


class RemoteUnavailable(OSError):
    """The machine could not be reached, or did not answer in time; its state is unknown.

    Raised with the message alone (no errno), so ``str()`` is the sentence itself."""


@dataclass(frozen=True)
class Ran:
    """A finished command: exit code, stdout (at most the limit), stderr (bounded)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    #: stdout went past the limit; the rest was not read
    truncated: bool = False

    @property
    def reason(self) -> str:
        """The last line of stderr (or the exit code): what a failure message names."""
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {self.returncode}"


def run_bounded(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    limit: int,
    stdin: bytes | None = None,
) -> Ran:
    """Run ``argv`` (no shell), keep at most ``limit`` bytes of stdout; kill it at ``timeout``.
    ``stdin`` is fed to it (from a thread, so a program that writes first cannot block us).

    Raises ``FileNotFoundError`` when the program is missing and ``TimeoutError`` when it
    outlived ``timeout`` (it is killed)."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    feeder = None
    if stdin is not None:
        assert proc.stdin is not None
        feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
        feeder.start()
    out: list[bytes] = []
    err: list[bytes] = []
    sizes = {"out": 0, "err": 0}
    truncated = False
    deadline = Deadline(timeout)
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        try:
            while sel.get_map():
                left = deadline.left()
                if left <= 0:
                    proc.kill()
                    proc.wait()
                    raise TimeoutError(f"{argv[0]} did not finish within {timeout:g}s")
                for key, _ in sel.select(min(left, 1.0)):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    name = str(key.data)
                    bound = limit if name == "out" else _STDERR_LIMIT
                    room = bound - sizes[name]
                    if len(chunk) > room and name == "out":
                        truncated = True
                    if room > 0:
                        (out if name == "out" else err).append(chunk[:room])
                        sizes[name] += min(room, len(chunk))
                    if truncated:
                        # enough: stop the program rather than read what we would drop
                        proc.kill()
                        for registered in list(sel.get_map().values()):
                            sel.unregister(registered.fileobj)
                        break
        except BaseException:
            # whatever ends the read (a timeout, an interrupt, a failed read) ends the program
            # too: it is never left running nor unwaited
            proc.kill()
            proc.wait()
            raise
        finally:
            proc.stdout.close()
            proc.stderr.close()
    returncode = proc.wait()
    if feeder is not None:
        feeder.join(timeout=1.0)
    return Ran(returncode, b"".join(out), b"".join(err), truncated)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write ``data`` to a child's stdin and close it; a child that exited early is fine."""
    with contextlib.suppress(OSError):
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


class RemoteFiles(Protocol):
    """Files and programs where a task runs (this host, or a machine over SSH)."""

    @property
    def machine(self) -> str:
        """The machine's label (``local`` for this host)."""
        ...

    def read_bounded(
        self, path: str, limit: int, *, offset: int = 0, tail: bool = False
    ) -> BoundedRead: ...

    def exists(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def is_regular_file(self, path: str) -> bool: ...

    def list_dir(self, path: str) -> list[str]: ...

    def write_atomic(self, path: str, data: bytes) -> None: ...

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> Ran: ...


@dataclass(frozen=True)
class LocalFiles:
    """This host's files (also a machine in ``sharedFilesystem``)."""

    machine: str = "local"
    timeout: float = DEFAULT_TIMEOUT
    pass_env: tuple[str, ...] = ()

    def read_bounded(
        self, path: str, limit: int, *, offset: int = 0, tail: bool = False
    ) -> BoundedRead:
        return safe_fs.read_bounded(path, limit, offset=offset, tail=tail)

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def is_dir(self, path: str) -> bool:
        return Path(path).is_dir()

    def is_regular_file(self, path: str) -> bool:
        return safe_fs.is_regular_file(path)

    def write_atomic(self, path: str, data: bytes) -> None:
        safe_fs.write_atomic(path, data)

    def list_dir(self, path: str) -> list[str]:
        if Path(path).is_symlink():
            raise UnsafeFile(errno.ELOOP, f"{path} is a symbolic link", path)
        return sorted(entry.name for entry in Path(path).iterdir())

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> Ran:
        full = child_env(os.environ, self.pass_env)
        full.update(env or {})
        return run_bounded(argv, env=full, timeout=self.timeout, limit=limit)


@dataclass(frozen=True)
class SshFiles:
    """A machine's files over SSH: ``ssh -F <ssh_config> … -- <target> <quoted argv>``."""

    machine: str
    target: str
    #: the OpenSSH client configuration to use (``-F``); the user's ``~/.ssh/config`` is not read
    ssh_config: Path
    timeout: float = DEFAULT_TIMEOUT
    ssh: str = "ssh"

    def __post_init__(self) -> None:
        problem = check_ssh_target(self.target)
        if problem:
            raise ValueError(f"SSH target {self.target!r} for machine {self.machine!r}: {problem}")

    def ssh_argv(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> list[str]:
        """The local argv: ``ssh`` with our options and the remote command as quoted words
        (``env NAME=value …`` in front when ``env`` is given: ssh passes no environment)."""
        words = list(argv)
        if env:
            words = ["env", *(f"{k}={v}" for k, v in env.items()), *words]
        remote = " ".join(shlex.quote(word) for word in words)
        options = [item for option in SSH_OPTIONS for item in ("-o", option)]
        return [self.ssh, "-F", str(self.ssh_config), *options, "-T", "--", self.target, remote]

    def _ssh(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limit: int = DEFAULT_OUTPUT_LIMIT,
        stdin: bytes | None = None,
    ) -> Ran:
        try:
            ran = run_bounded(
                self.ssh_argv(argv, env),
                env=child_env(os.environ),
                timeout=self.timeout,
                limit=limit,
                stdin=stdin,
            )
        except TimeoutError as exc:
            raise RemoteUnavailable(f"machine {self.machine!r} over SSH: {exc}") from None
        except FileNotFoundError:
            raise RemoteUnavailable(
                f"ssh is not installed (needed for machine {self.machine!r})"
            ) from None
        if ran.returncode == SSH_FAILED:
            raise RemoteUnavailable(f"machine {self.machine!r} over SSH: {ran.reason}")
        return ran

    def _sh(self, script: str, *args: str, limit: int = DEFAULT_OUTPUT_LIMIT) -> Ran:
        return self._ssh(["sh", "-c", script, "sh", *args], limit=limit)

    def read_bounded(
        self, path: str, limit: int, *, offset: int = 0, tail: bool = False
    ) -> BoundedRead:
        _absolute(path)
        limit = max(0, int(limit))
        mode = "tail" if tail else "head"
        ran = self._sh(_READ_SCRIPT, path, str(limit), str(max(0, int(offset))), mode,
                       limit=limit + 32)  # fmt: skip
        if ran.returncode == 2:
            raise FileNotFoundError(errno.ENOENT, f"{path} does not exist on {self.machine}", path)
        if ran.returncode in (3, 4):
            kind = "a symbolic link" if ran.returncode == 3 else "not a regular file"
            raise UnsafeFile(errno.EINVAL, f"{path} on {self.machine} is {kind}", path)
        if ran.returncode != 0:
            raise OSError(errno.EIO, f"reading {path} on {self.machine} failed: {ran.reason}")
        head, _, data = ran.stdout.partition(b"\n")
        try:
            size = int(head.strip())
        except ValueError:
            raise OSError(errno.EIO, f"reading {path} on {self.machine}: no size") from None
        data = data[:limit]
        start = max(0, size - len(data)) if tail else max(0, min(int(offset), size))
        return BoundedRead(data, size, start)

    def exists(self, path: str) -> bool:
        _absolute(path)
        return self._sh(_EXISTS_SCRIPT, path, limit=0).returncode == 0

    def is_dir(self, path: str) -> bool:
        _absolute(path)
        return self._sh('[ -d "$1" ]', path, limit=0).returncode == 0

    def is_regular_file(self, path: str) -> bool:
        _absolute(path)
        return self._sh(_REGULAR_SCRIPT, path, limit=0).returncode == 0

    def list_dir(self, path: str) -> list[str]:
        _absolute(path)
        ran = self._sh(_LIST_SCRIPT, path)
        if ran.returncode == 2:
            raise NotADirectoryError(errno.ENOTDIR, f"{path} on {self.machine}", path)
        if ran.returncode != 0 or ran.truncated:
            raise OSError(errno.EIO, f"listing {path} on {self.machine} failed: {ran.reason}")
        return sorted(name for name in ran.stdout.decode("utf-8", "replace").split("\n") if name)

    def write_atomic(self, path: str, data: bytes) -> None:
        _absolute(path)
        ran = self._ssh(
            ["sh", "-c", _WRITE_SCRIPT, "sh", path, str(len(data))], limit=0, stdin=data
        )
        if ran.returncode in (3, 4):
            what = "its directory is not a directory" if ran.returncode == 3 else "it is one"
            raise UnsafeFile(errno.EINVAL, f"{path} on {self.machine}: {what}: not written", path)
        if ran.returncode != 0:
            raise OSError(errno.EIO, f"writing {path} on {self.machine} failed: {ran.reason}")

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> Ran:
        return self._ssh(argv, env=env, limit=limit)


def files_for(config: Config, machine: str) -> RemoteFiles:
    """Where a task on ``machine`` keeps its files: this host for the local machine and for
    one in ``sharedFilesystem`` (:class:`LocalFiles`), over SSH for one with only a
    ``machineTargets`` entry (:class:`SshFiles` with ``sshConfig``). Raises ``ValueError``
    naming the fix for a machine with neither, or an SSH target without ``sshConfig``."""
    if machine in ("", "local") or machine in config.shared_filesystem:
        return LocalFiles(machine or "local", pass_env=config.pass_env)
    target = config.machine_targets.get(machine)
    if target is None:
        raise ValueError(
            f"machine {machine!r} has no file access: list it in sharedFilesystem or give "
            "it an SSH target in machineTargets"
        )
    if config.ssh_config is None:
        raise ValueError(
            f"machine {machine!r} is reached over SSH ({target}) but sshConfig is not set: "
            "name the OpenSSH client configuration to use (the user's ~/.ssh is not read)"
        )
    return SshFiles(machine, target, config.ssh_config)


def task_files(config: Config, machine: str) -> RemoteFiles:
    """Where a task's files and repository are read: :func:`files_for`; a machine the
    configuration no longer gives file access keeps this host's view (the paths its record
    holds are this host's)."""
    try:
        return files_for(config, machine)
    except ValueError:
        return LocalFiles(machine)


def _absolute(path: str) -> None:
    """A remote path must be absolute: there is no current directory to resolve it in."""
    if not path.startswith("/"):
        raise ValueError(f"a path on a remote machine must be absolute, got {path!r}")


__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "DEFAULT_TIMEOUT",
    "SSH_FAILED",
    "SSH_OPTIONS",
    "LocalFiles",
    "Ran",
    "RemoteFiles",
    "RemoteUnavailable",
    "SshFiles",
    "check_ssh_target",
    "files_for",
    "run_bounded",
    "task_files",
]
