"""Git side of a task: isolated worktrees, the baseline at spawn time, and the task's diff.

* **Isolated tasks** (``isolated: true``) get ``git worktree add -b dsh/<taskId> <path>
  <base>`` from the repository that contains the caller's cwd; the base commit is resolved
  and recorded, so the diff later is against exactly what the agent started from.
* **Non-isolated tasks** work in a plain cwd that may already be dirty. :func:`snapshot`
  records the HEAD commit AND a tree of the working directory as it was at spawn time
  (tracked changes and untracked files, written to the object store through a temporary
  index, no ref and no change to the user's index). The diff is taken against that tree,
  so edits the user had made before the task started are not blamed on the agent. Without a
  snapshot tree the diff falls back to the commit.
* **The diff includes untracked files** (new files are most of an agent's work): the working
  directory is staged into a TEMPORARY index (a copy of the real one, so unchanged files are
  not re-hashed), written as a tree and diffed against the base. Snapshots and diffs of one
  working tree asked for at the same time share that tree when it was taken after each of
  them asked (:mod:`.tree_runs`): a fleet spawned in one repository takes two, not twenty.
  Files matched by ``.gitignore`` are left out, as git would. Binary files show as "Binary
  files … differ". The patch is cut at ``max_bytes`` on a line boundary and ``truncated``
  says so; ``bytes`` is the full size.
* **Removing a worktree** refuses a dirty one unless ``force``. The branch ``dsh/<taskId>``
  is deleted only if it still points at the base commit (the agent committed nothing), so
  committed work is never lost by a cleanup; a branch with commits is kept and reported.

Every git call runs with a fixed environment (no pager, no prompts, C locale, no external
diff or textconv drivers) so user configuration cannot change what the tools see.

**The repository's configuration runs none of its code.** A task repository is not trusted:
its ``.git/config`` (which the child, or whoever handed us the directory, can edit) may name
programs git runs on its own — an fsmonitor, clean/smudge/process filters, hooks
(``post-checkout`` on ``worktree add``, ``reference-transaction``...), external diff and
textconv drivers, a pager. Every git call (:func:`_git_argv`) passes, on the command line
where it outranks every config file, ``core.fsmonitor=false``, ``core.hooksPath=/dev/null``,
``core.pager=cat`` and, for each filter driver any config defines (listed with ``git config``,
which runs nothing, once per operation right before its first command that may touch file
content: a tree's ``add`` and ``write-tree`` share one lookup, a few milliseconds apart;
``rev-parse``, which never reads content, and a diff of two trees, which reads no working
file, skip it), empty
``clean``/``smudge``/``process`` commands and ``required=false``
(a driver whose name holds ``=`` cannot be overridden with ``-c``: git is then not run at all,
``GIT_UNSAFE_CONFIG``);
diffs add ``--no-ext-diff --no-textconv``. The user's global and system configuration are
still read (``safe.directory``, identity): they are the user's and the administrator's own,
and the command-line overrides win over them too. ``GIT_*`` variables of our environment are
dropped so none of them re-enables anything.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.client.child_env import child_env

from .remote_files import LocalFiles, RemoteFiles, RemoteUnavailable
from .tree_runs import TreeRuns

__all__ = [
    "BRANCH_PREFIX",
    "DEFAULT_MAX_DIFF_BYTES",
    "Baseline",
    "Diff",
    "Removal",
    "Worktree",
    "WorktreeError",
    "branch_for",
    "create_worktree",
    "diff",
    "dirty_files",
    "main_repository",
    "remove_worktree",
    "repo_root",
    "snapshot",
]

BRANCH_PREFIX = "dsh/"
DEFAULT_MAX_DIFF_BYTES = 512 * 1024
GIT_TIMEOUT = 60.0
#: bytes of a patch read back from another machine (a local diff is read whole)
REMOTE_PATCH_LIMIT = 64 * 1024 * 1024
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: this process's shared working-tree snapshots (a run is three git commands at most)
_TREES = TreeRuns(wait_s=3 * GIT_TIMEOUT + 10)


class WorktreeError(Exception):
    """A git operation for a task failed; ``code`` is stable, ``message`` is for humans."""

    def __init__(self, code: str, message: str, *, stderr: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.stderr = stderr

    def to_json(self) -> dict[str, Any]:
        """The error as a tool returns it."""
        return {"code": self.code, "message": self.message}


#: the environment every git call gets on top of ours (over SSH: all it gets, via ``env``)
_GIT_FIXED_ENV: Mapping[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",
}


def _remote(files: RemoteFiles | None) -> RemoteFiles | None:
    """``files`` when git must run on another machine; None for this host."""
    return None if files is None or isinstance(files, LocalFiles) else files


def _git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in child_env(os.environ).items() if not k.startswith("GIT_")}
    env.update(_GIT_FIXED_ENV)
    if extra:
        env.update(extra)
    return env


#: Settings given on every git command line (they outrank every config file).
_SAFE_CONFIG = (
    "core.quotepath=false",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "gc.auto=0",
    "maintenance.auto=false",
)


def _filter_drivers(cwd: str | Path, files: RemoteFiles | None = None) -> list[str]:
    """The filter driver names any config (repository, user, system) defines for ``cwd``."""
    argv = ["git", "-C", str(cwd), "config", "--null", "--name-only", "--get-regexp", r"^filter\."]
    remote = _remote(files)
    if remote is not None:
        # unlike a local failure (no git, no config: nothing to disable), a machine we cannot
        # ask is not a machine without drivers: RemoteUnavailable goes up
        stdout = remote.run(argv, env=_GIT_FIXED_ENV).stdout
    else:
        try:
            stdout = subprocess.run(
                argv, capture_output=True, env=_git_env(), timeout=GIT_TIMEOUT, check=False
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return []
    names: list[str] = []
    for key in stdout.decode("utf-8", "replace").split("\0"):
        name = key[len("filter.") : key.rfind(".")] if key.startswith("filter.") else ""
        if name and name not in names:
            names.append(name)
    return names


#: Subcommands that never read or write file content, so no filter driver can run in them:
#: their per-call ``git config`` lookup of filter drivers is skipped (issue 17: it was half
#: the git processes of a snapshot, and twenty spawns at once ran hundreds). Not
#: ``write-tree``: it re-hashes racily clean entries, which runs the clean filter (the
#: hostile-repository test catches it).
_NO_CONTENT = frozenset({"rev-parse"})


def _git_argv(
    cwd: str | Path,
    *args: str,
    files: RemoteFiles | None = None,
    drivers: Sequence[str] | None = None,
) -> list[str]:
    """``git`` with the settings that keep the repository's own programs from running;
    ``drivers``: the filter drivers one operation looked up for all its commands (None: look
    them up for this command)."""
    argv = ["git"]
    for setting in _SAFE_CONFIG:
        argv += ["-c", setting]
    if args and args[0] in _NO_CONTENT:
        drivers = []
    elif drivers is None:
        drivers = _filter_drivers(cwd, files)
    for name in drivers:
        if "=" in name:  # ``-c`` splits at the first "=": such a driver cannot be disabled
            raise WorktreeError(
                "GIT_UNSAFE_CONFIG",
                f"the repository configures a filter driver named {name!r}, which cannot be "
                "disabled: git is not run on it",
            )
        for var, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            argv += ["-c", f"filter.{name}.{var}={value}"]
    return [*argv, "-C", str(cwd), *args]


def _git(
    cwd: str | Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    code: str = "GIT_FAILED",
    files: RemoteFiles | None = None,
    drivers: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    remote = _remote(files)
    if remote is None:
        done = _git_local(cwd, args, env, drivers)
    else:
        done = _git_remote(remote, cwd, args, env, drivers)
    if check and done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        reason = detail[-1] if detail else f"exit code {done.returncode}"
        raise WorktreeError(code, f"git {args[0]} failed: {reason}", stderr=done.stderr)
    return done


def _git_remote(
    files: RemoteFiles,
    cwd: str | Path,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    drivers: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """git on the machine ``files`` reaches; its output decoded as the local one's is."""
    argv = _git_argv(cwd, *args, files=files, drivers=drivers)
    ran = files.run(argv, env={**_GIT_FIXED_ENV, **(env or {})})
    if ran.returncode == 127:
        raise WorktreeError("GIT_MISSING", f"git is not installed on machine {files.machine!r}")
    return subprocess.CompletedProcess(
        argv,
        ran.returncode,
        ran.stdout.decode("utf-8", "replace"),
        ran.stderr.decode("utf-8", "replace"),
    )


def _git_local(
    cwd: str | Path,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    drivers: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    try:
        argv = _git_argv(cwd, *args, drivers=drivers)
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=_git_env(env),
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError as exc:
        raise WorktreeError("GIT_MISSING", "git is not installed (not on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise WorktreeError(
            "GIT_FAILED", f"git {args[0]} timed out after {GIT_TIMEOUT:g}s"
        ) from exc
    return done


def repo_root(cwd: str | Path, *, files: RemoteFiles | None = None) -> Path:
    """The top of the working tree that contains ``cwd`` (on the machine ``files`` reaches,
    this host by default); a clear error when there is none."""
    path = Path(cwd)
    remote = _remote(files)
    if not (path.is_dir() if remote is None else remote.is_dir(str(path))):
        where = "" if remote is None else f" on machine {remote.machine!r}"
        raise WorktreeError(
            "CWD_NOT_FOUND", f"cwd {path} does not exist or is not a directory{where}"
        )
    done = _git(path, "rev-parse", "--show-toplevel", check=False, files=files)
    if done.returncode != 0 or not done.stdout.strip():
        raise WorktreeError(
            "NOT_A_GIT_REPO",
            f"cwd {path} is not inside a git repository; an isolated task needs one "
            "(run `git init` and commit, or spawn without isolated)",
            stderr=done.stderr,
        )
    return Path(done.stdout.strip())


def _commit(cwd: str | Path, rev: str, files: RemoteFiles | None = None) -> str:
    done = _git(
        cwd, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False, files=files
    )
    if done.returncode != 0:
        if rev == "HEAD":
            raise WorktreeError(
                "NO_COMMITS", f"the repository at {cwd} has no commits yet; commit something first"
            )
        raise WorktreeError("BAD_BASE", f"{rev!r} is not a commit in the repository at {cwd}")
    return done.stdout.strip()


def branch_for(task_id: str) -> str:
    """``dsh/<taskId>``, refusing ids that would make an unsafe or invalid branch name."""
    if _TASK_ID.fullmatch(task_id) is None or ".." in task_id or task_id.endswith((".lock", ".")):
        raise WorktreeError("INVALID_TASK_ID", f"task id {task_id!r} cannot name a git branch")
    return BRANCH_PREFIX + task_id


# -- baselines and worktrees -------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """What a task's diff is measured against (store it in the task record)."""

    repo: str
    cwd: str
    commit: str
    tree: str | None = None
    """The working directory's tree at spawn time (dirty and untracked files included)."""

    def to_json(self) -> dict[str, Any]:
        """For the task record."""
        return {"repo": self.repo, "cwd": self.cwd, "commit": self.commit, "tree": self.tree}


@dataclass(frozen=True)
class Worktree:
    """An isolated task's worktree."""

    repo: str
    path: str
    branch: str
    base_commit: str

    def to_json(self) -> dict[str, Any]:
        """For the task record."""
        return {
            "repo": self.repo,
            "path": self.path,
            "branch": self.branch,
            "baseCommit": self.base_commit,
        }


@dataclass(frozen=True)
class _Place:
    """Where an operation's git commands run, asked of git once (:func:`_locate`)."""

    top: Path
    """The top of the working tree."""
    index: str
    """The real index file's absolute path."""
    head: str | None
    """The commit HEAD names (None when not asked for)."""


def _locate(cwd: str | Path, files: RemoteFiles | None, *, head: bool) -> _Place:
    """The working tree's top, its index file and (``head``) HEAD's commit, from ONE
    ``rev-parse`` (three before: a snapshot or a diff of twenty parallel tasks started sixty
    processes for it). When that one fails or answers something unexpected, the questions are
    asked one by one, so every error is the one :func:`repo_root` and :func:`_commit` give."""
    asked = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-path", "index"]
    if head:
        asked.append("HEAD^{commit}")
    done = _git(cwd, *asked, check=False, files=files)
    lines = done.stdout.split("\n")
    answers = 3 if head else 2
    if done.returncode == 0 and len(lines) == answers + 1 and lines[-1] == "":
        top, index = lines[0], lines[1]
        commit = lines[2] if head else None
        if top and index and (commit is None or re.fullmatch(r"[0-9a-f]{40,64}", commit)):
            return _Place(Path(top), index, commit)
    root = repo_root(cwd, files=files)
    commit = _commit(root, "HEAD", files) if head else None
    real = _git(
        root, "rev-parse", "--path-format=absolute", "--git-path", "index", files=files
    ).stdout.strip()
    return _Place(root, real, commit)


def _temporary_index(place: _Place, files: RemoteFiles | None = None) -> tuple[str, Path]:
    """A copy of the working tree's index in a private temporary directory (on the machine
    ``files`` reaches: there ``mktemp -d`` makes it and ``cp -p`` copies, mtime kept)."""
    real = place.index
    remote = _remote(files)
    if remote is not None:
        made = remote.run(["mktemp", "-d"], limit=4096)
        path = made.stdout.decode("utf-8", "replace").strip()
        if made.returncode != 0 or not path.startswith("/"):
            raise WorktreeError(
                "GIT_FAILED", f"mktemp -d failed on {remote.machine}: {made.reason}"
            )
        remote_index = f"{path}/index"
        if remote.exists(real):
            copied = remote.run(["cp", "-p", "--", real, remote_index], limit=4096)
            if copied.returncode != 0:
                _remove_scratch(Path(path), files)
                raise WorktreeError("GIT_FAILED", f"copying the index failed: {copied.reason}")
        return remote_index, Path(path)
    scratch = Path(tempfile.mkdtemp(prefix="dsh-index-"))
    index = scratch / "index"
    if Path(real).exists():
        # copy2 keeps the index's mtime: git checks an entry by content when its mtime is not
        # older than the index file ("racily clean"); a fresh mtime on the copy would make a
        # same-size edit from the second the index was written look clean.
        shutil.copy2(real, index)
    return str(index), scratch


def _remove_scratch(scratch: Path, files: RemoteFiles | None = None) -> None:
    remote = _remote(files)
    if remote is None:
        shutil.rmtree(scratch, ignore_errors=True)
        return
    # a temporary directory left on a machine we lost: nothing more to do
    with contextlib.suppress(RemoteUnavailable):
        remote.run(["rm", "-rf", "--", str(scratch)], limit=4096)


def _stage_all(
    top: Path, index: str, drivers: Sequence[str], files: RemoteFiles | None = None
) -> None:
    env = {"GIT_INDEX_FILE": index}
    _git(top, "add", "-A", "--", ".", env=env, files=files, drivers=drivers)


def _working_tree(place: _Place, files: RemoteFiles | None = None) -> str:
    """The tree object of the working directory right now (tracked + untracked); here,
    shared with concurrent askers of the same working tree (:mod:`.tree_runs`), on another
    machine taken for this caller alone."""
    if _remote(files) is not None:
        return _take_tree(place, files)
    return _TREES.tree((str(place.top), place.index), lambda: _take_tree(place, None))


def _take_tree(place: _Place, files: RemoteFiles | None) -> str:
    """One run: the index copied, the filter drivers looked up, ``add -A``, ``write-tree``."""
    top = place.top
    index, scratch = _temporary_index(place, files)
    try:
        drivers = _filter_drivers(top, files)
        _stage_all(top, index, drivers, files)
        env = {"GIT_INDEX_FILE": index}
        return _git(top, "write-tree", env=env, files=files, drivers=drivers).stdout.strip()
    finally:
        _remove_scratch(scratch, files)


def snapshot(cwd: str | Path, *, tree: bool = True, files: RemoteFiles | None = None) -> Baseline:
    """Record the baseline of a non-isolated task in ``cwd`` at spawn time (on the machine
    ``files`` reaches; there ``cwd`` must be absolute and is kept as given).

    Four git processes with ``tree`` (one ``rev-parse``, the filter lookup, ``add`` and
    ``write-tree``), one without: the filter drivers are looked up once for the whole
    snapshot, not before each command. Snapshots of one working tree asked for at the same
    time share the last three (:mod:`.tree_runs`)."""
    place = _locate(cwd, files, head=True)
    assert place.head is not None
    return Baseline(
        repo=str(place.top),
        cwd=str(Path(cwd).resolve()) if _remote(files) is None else str(cwd),
        commit=place.head,
        tree=_working_tree(place, files) if tree else None,
    )


def create_worktree(
    cwd: str | Path, task_id: str, path: str | Path, base: str = "HEAD"
) -> Worktree:
    """``git worktree add -b dsh/<taskId> <path> <base>`` in the repository containing ``cwd``.

    ``base`` is resolved to a commit first (relative to ``cwd``'s repository), so the record
    holds the exact starting point even if ``base`` was a moving name like ``HEAD`` or
    ``main``. Refuses an existing branch and a non-empty target path.
    """
    branch = branch_for(task_id)
    top = repo_root(cwd)
    commit = _commit(top, base)
    target = Path(path)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise WorktreeError(
            "PATH_EXISTS", f"worktree path {target} already exists and is not empty"
        )
    exists = _git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
    if exists.returncode == 0:
        raise WorktreeError("BRANCH_EXISTS", f"branch {branch} already exists in {top}")
    target.parent.mkdir(parents=True, exist_ok=True)
    _git(top, "worktree", "add", "--quiet", "-b", branch, str(target), commit)
    return Worktree(repo=str(top), path=str(target.resolve()), branch=branch, base_commit=commit)


# -- the diff -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Diff:
    """The task's changes as a unified patch, possibly truncated."""

    patch: str
    truncated: bool
    bytes: int
    """Size of the whole patch in bytes (before truncation)."""
    files: tuple[tuple[str, str], ...]
    """``(status, path)`` per changed file: ``A`` added, ``M`` modified, ``D`` deleted, …"""
    base: str

    def to_json(self) -> dict[str, Any]:
        """The ``diff`` part of an ``AgentResult``."""
        return {
            "patch": self.patch,
            "truncated": self.truncated,
            "bytes": self.bytes,
            "files": [{"status": s, "path": p} for s, p in self.files],
            "base": self.base,
        }


def _cut(data: bytes, max_bytes: int) -> tuple[str, bool]:
    if len(data) <= max_bytes:
        return data.decode("utf-8", "replace"), False
    head = data[:max_bytes]
    newline = head.rfind(b"\n")
    if newline >= 0:
        head = head[: newline + 1]
    return head.decode("utf-8", "ignore"), True


_DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")


def diff(
    cwd: str | Path,
    base: str | Baseline | Worktree,
    *,
    max_bytes: int = DEFAULT_MAX_DIFF_BYTES,
    paths: Sequence[str] = (),
    files: RemoteFiles | None = None,
) -> Diff:
    """Everything that differs between ``base`` and the working directory of ``cwd`` now.

    ``base`` is a commit-ish, a :class:`Baseline` (its snapshot tree when it has one) or a
    :class:`Worktree` (its base commit). Committed, staged, unstaged and untracked changes
    all count; the user's own index is never touched. With ``files`` for another machine
    git runs there (over SSH) and the patch comes back here; at most
    :data:`REMOTE_PATCH_LIMIT` bytes of git's output are read (``bytes`` is then the part of
    the patch that was read).
    """
    if isinstance(base, Baseline):
        against = base.tree or base.commit
    elif isinstance(base, Worktree):
        against = base.base_commit
    else:
        against = base
    place = _locate(cwd, files, head=False)
    top = place.top
    remote = _remote(files)
    limit = ["--", *paths] if paths else []
    if remote is None:
        return _local_diff(place, against, limit, max_bytes)
    index, scratch = _temporary_index(place, files)
    env = {"GIT_INDEX_FILE": index}
    try:
        drivers = _filter_drivers(top, files)
        _stage_all(top, index, drivers, files)
        # on another machine: its own temporary index, then ONE diff gives the file list and
        # the patch (``--raw -z`` records, a NUL, the patch)
        asked = ("diff", "--cached", "--raw", "-z", "-p", *_DIFF_FLAGS, against, *limit)
        argv = _git_argv(top, *asked, files=files, drivers=drivers)
        ran = remote.run(
            argv, env={**_GIT_FIXED_ENV, **env}, limit=max(REMOTE_PATCH_LIMIT, max_bytes + 1)
        )
        # cut at the limit: the program was stopped, what was read is the patch's head
        code = 0 if ran.truncated else ran.returncode
        done = subprocess.CompletedProcess(argv, code, ran.stdout, ran.stderr)
    finally:
        _remove_scratch(scratch, files)
    return _diff_result(done, against, max_bytes)


def _local_diff(place: _Place, against: str, limit: list[str], max_bytes: int) -> Diff:
    """The diff here: the working tree's tree object now (shared with concurrent snapshots and
    diffs of the same working tree) against ``against``, two trees in ONE ``diff --raw -z -p``
    (file list and patch). Two trees only: no working-tree file is read, so no filter can
    run and the diff needs no driver lookup."""
    now = _working_tree(place)
    asked = ("diff", "--raw", "-z", "-p", *_DIFF_FLAGS, against, now, *limit)
    argv = _git_argv(place.top, *asked, drivers=())
    try:
        done = subprocess.run(
            argv, capture_output=True, env=_git_env(), timeout=GIT_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise WorktreeError("GIT_FAILED", f"git diff timed out after {GIT_TIMEOUT:g}s") from exc
    return _diff_result(done, against, max_bytes)


def _diff_result(done: subprocess.CompletedProcess[bytes], against: str, max_bytes: int) -> Diff:
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise WorktreeError("GIT_FAILED", f"git diff failed: {reason}")
    changed, patch = _split_raw(done.stdout)
    text, truncated = _cut(patch, max(0, int(max_bytes)))
    return Diff(patch=text, truncated=truncated, bytes=len(patch), files=changed, base=against)


def _split_raw(out: bytes) -> tuple[tuple[tuple[str, str], ...], bytes]:
    """``(status, path)`` per file and the patch, from ``git diff --raw -z -p``'s output:
    records ``:<modes> <ids> <status>\\0<path>\\0``, then one NUL, then the patch."""
    changed: list[tuple[str, str]] = []
    at = 0
    while at < len(out) and out[at : at + 1] == b":":
        meta_end = out.find(b"\0", at)
        path_end = out.find(b"\0", meta_end + 1) if meta_end >= 0 else -1
        if path_end < 0:  # a record cut by a read limit: no patch follows
            return tuple(changed), b""
        status = out[at:meta_end].rsplit(b" ", 1)[-1].decode("ascii", "replace")
        changed.append((status, out[meta_end + 1 : path_end].decode("utf-8", "replace")))
        at = path_end + 1
    if changed and out[at : at + 1] == b"\0":
        at += 1
    return tuple(changed), out[at:]


# -- removal ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Removal:
    """What :func:`remove_worktree` did."""

    removed: bool
    branch: str
    branch_deleted: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        """For the tool result."""
        return {
            "removed": self.removed,
            "branch": self.branch,
            "branchDeleted": self.branch_deleted,
            "reason": self.reason,
        }


def dirty_files(path: str | Path) -> list[str]:
    """``git status --porcelain`` lines of the worktree (untracked files included)."""
    out = _git(path, "status", "--porcelain", "--untracked-files=all").stdout
    return [line for line in out.splitlines() if line.strip()]


def main_repository(worktree_path: str | Path, fallback: str) -> str:
    """The main repository of a linked worktree (``--git-common-dir``'s parent), asked with
    the same hardened git as every other call here; ``fallback`` when git cannot say."""
    try:
        done = _git(
            worktree_path, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False
        )
    except WorktreeError:
        return fallback
    if done.returncode != 0 or not done.stdout.strip():
        return fallback
    return str(Path(done.stdout.strip()).parent)


def remove_worktree(worktree: Worktree, *, force: bool = False) -> Removal:
    """Remove an isolated task's worktree; refuse a dirty one unless ``force``.

    The branch is deleted only when it still points at the base commit; otherwise it is kept
    (it holds the agent's commits) and ``reason`` says so. A worktree directory that is
    already gone is pruned from git's bookkeeping and reported as removed.
    """
    repo = Path(worktree.repo)
    target = Path(worktree.path)
    if target.exists():
        if not force:
            dirty = dirty_files(target)
            if dirty:
                shown = ", ".join(line[3:] for line in dirty[:5])
                more = f" and {len(dirty) - 5} more" if len(dirty) > 5 else ""
                raise WorktreeError(
                    "WORKTREE_DIRTY",
                    f"worktree {target} has uncommitted changes ({shown}{more}); "
                    "pass force to discard them",
                )
        args = ["worktree", "remove", *(["--force", "--force"] if force else []), str(target)]
        _git(repo, *args)
    else:
        _git(repo, "worktree", "prune")
    tip = _git(
        repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{worktree.branch}", check=False
    )
    if tip.returncode != 0:
        return Removal(True, worktree.branch, False, "worktree removed; branch already gone")
    if tip.stdout.strip() != worktree.base_commit:
        return Removal(
            True,
            worktree.branch,
            False,
            f"worktree removed; branch {worktree.branch} kept: it has commits beyond the base",
        )
    _git(repo, "branch", "-D", "--quiet", worktree.branch)
    return Removal(True, worktree.branch, True, "worktree and its unchanged branch removed")
