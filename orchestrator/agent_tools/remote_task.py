"""What a task on a machine reached only over SSH (``machineTargets``) needs at spawn.

Why: such a machine shares no paths with this host. Its task's files — the envelope the
agent reads, ``result.md``, the inbox, message files — must live on the machine, in a
directory the configuration names (``machineArtifactDirs``: there is no default, since no
path of this host means anything there), and its ``cwd`` is a path there: it is resolved on
the machine (``cd`` + ``pwd -P``, symlinks followed), and ``allowCwd``'s roots are compared
with that resolved path as written (this host cannot resolve the machine's links in them).
The files travel through :mod:`.remote_files` (``SshFiles``); a machine in
``sharedFilesystem`` or this host needs none of this.
"""

from __future__ import annotations

import errno
from pathlib import PurePosixPath

from orchestrator.agent_tools.remote_files import (
    RemoteFiles,
    RemoteUnavailable,
    SshFiles,
    files_for,
)
from orchestrator.client.file_trust.private_files import UnsafeFile
from orchestrator.core.config import LOCAL_MACHINE, Config, GateError

# $1 directory: its path with every symlink resolved (exit 1 when it is no directory there)
_RESOLVE_SCRIPT = 'cd -- "$1" 2>/dev/null || exit 1; pwd -P'
# $1 artifact directory: reserve the next message number in $1/messages (made 0700 when
# missing; exit 3 when it is a link or no directory) by creating its marker ``.NNN.seq``
# with noclobber (O_EXCL), as :func:`.control._next_seq` does here; prints the number
_SEQ_SCRIPT = (
    'umask 077; d="$1/messages"; mkdir -p -- "$d" 2>/dev/null; '
    'if [ -L "$d" ] || [ ! -d "$d" ]; then exit 3; fi; cd -- "$d" || exit 3; '
    "n=$(ls -A1 . | grep -c '[.]seq$'); n=$((n + 1)); set -C; "
    'while ! : > ".$(printf %03d "$n").seq" 2>/dev/null; do n=$((n + 1)); '
    'if [ "$n" -gt 99999 ]; then exit 4; fi; done; echo "$n"'
)


def over_ssh(config: Config, machine: str) -> bool:
    """Whether a task on ``machine`` keeps its files on the machine, reached over SSH."""
    return (
        machine != LOCAL_MACHINE
        and machine not in config.shared_filesystem
        and machine in config.machine_targets
    )


def ssh_files(config: Config, machine: str) -> SshFiles:
    """The machine's files over SSH, or :class:`GateError` naming what the configuration
    lacks (``sshConfig``, ``machineArtifactDirs``)."""
    try:
        files = files_for(config, machine)
    except ValueError as exc:
        raise GateError("MACHINE_NO_FILE_ACCESS", str(exc), field="machine") from None
    assert isinstance(files, SshFiles)
    artifact_root(config, machine)
    return files


def artifact_root(config: Config, machine: str) -> str:
    """The directory on ``machine`` holding its tasks' artifact directories."""
    root = config.machine_artifact_dirs.get(machine)
    if root is None:
        raise GateError(
            "MACHINE_NO_ARTIFACT_DIR",
            f"machine {machine!r} is reached over SSH, so its tasks' files live there: name "
            "the directory for them in machineArtifactDirs (an absolute path on that machine, "
            f'e.g. {machine} = "/home/me/.local/state/herdr-agents")',
            field="machine",
        )
    return root


def task_artifact_dir(config: Config, machine: str, task_id: str) -> str:
    """``<machineArtifactDirs[machine]>/<taskId>`` (created by the first write there)."""
    return str(PurePosixPath(artifact_root(config, machine)) / task_id)


def reserve_message_seq(files: RemoteFiles, artifact_dir: str) -> int:
    """The next message number of a task on a machine over SSH, reserved there (two sends at
    once never share one). Raises ``OSError`` (:class:`RemoteUnavailable` among them)."""
    ran = files.run(["sh", "-c", _SEQ_SCRIPT, "sh", artifact_dir], limit=64)
    if ran.returncode == 3:
        raise UnsafeFile(
            errno.EINVAL, f"{artifact_dir}/messages on {files.machine} is not a directory"
        )
    text = ran.stdout.decode("ascii", "replace").strip()
    if ran.returncode != 0 or not text.isdigit():
        raise OSError(errno.EIO, f"no message number on {files.machine}: {ran.reason}")
    return int(text)


def resolve_cwd(config: Config, files: RemoteFiles, cwd: str) -> str:
    """``cwd`` resolved on the machine, inside ``allowCwd``; :class:`GateError` otherwise
    (``CWD_NOT_FOUND``, ``CWD_NOT_ALLOWED``, ``MACHINE_UNAVAILABLE`` when it cannot be asked)."""
    try:
        ran = files.run(["sh", "-c", _RESOLVE_SCRIPT, "sh", cwd], limit=1 << 16)
    except RemoteUnavailable as exc:
        raise GateError("MACHINE_UNAVAILABLE", str(exc), field="machine") from None
    resolved = ran.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    if ran.returncode != 0 or not resolved.startswith("/") or ran.truncated:
        raise GateError(
            "CWD_NOT_FOUND",
            f"cwd {cwd!r} is not a directory on machine {files.machine!r}",
            field="cwd",
        )
    if not config.allow_cwd:
        return resolved
    path = PurePosixPath(resolved)
    roots = [PurePosixPath(str(root)) for root in config.allow_cwd]
    if any(path == root or path.is_relative_to(root) for root in roots):
        return resolved
    via = f" (resolves to {resolved!r})" if resolved != cwd else ""
    allowed = ", ".join(str(root) for root in roots)
    raise GateError(
        "CWD_NOT_ALLOWED",
        f"cwd {cwd!r} on machine {files.machine!r}{via} is outside allowCwd ({allowed})",
        field="cwd",
    )


__all__ = [
    "artifact_root",
    "over_ssh",
    "reserve_message_seq",
    "resolve_cwd",
    "ssh_files",
    "task_artifact_dir",
]
