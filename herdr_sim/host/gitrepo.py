"""Git as Herdr's worktree actions use it: repository facts and ``git worktree`` commands.

The facts (which repository a path is in, its key and name, whether the checkout is a linked
worktree, its branch) are read from the files the way Herdr's
``src/workspace/git/discovery.rs`` reads them. The commands are the ones Herdr's
``src/worktree.rs`` runs (``git -C <repo> worktree list --porcelain`` / ``add`` /
``remove``, ``show-ref --verify --quiet``), with Herdr's error texts. Every command is an
argv list (no shell ever sees a branch name or a path), runs as an asyncio subprocess so the
simulator's loop keeps serving other clients, and is killed when it outlives its time bound
(Herdr runs git on a thread without one).

Git runs without a terminal prompt and in the C locale, so it never waits for credentials
and its messages are the English ones Herdr recognises (``contains modified or untracked
files``); variables that would point git at another repository (``GIT_DIR`` …) are dropped.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from herdr_sim.host.places import git_dir_of, git_repo_root

__all__ = [
    "ExistingWorktree",
    "GitFailure",
    "GitSpace",
    "absolute_user_path",
    "add_worktree",
    "branch_slug",
    "canonical",
    "checkout_branch",
    "generated_branch",
    "git_env",
    "git_space",
    "is_dirty_remove_error",
    "list_worktrees",
    "parse_worktree_porcelain",
    "remove_worktree",
]

#: Herdr's namespace for generated branch names and the fallback path slug.
_PREFIX = "worktree"
_ADJECTIVES = ("brave", "calm", "clear", "green", "lucky", "quiet", "rapid", "silver")
_NOUNS = ("river", "cloud", "field", "forest", "harbor", "meadow", "stone", "valley")
#: Variables that would make git act on another repository than the one named by ``-C``.
_REPO_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


class GitFailure(Exception):
    """A git command that failed; the message is what Herdr reports (git's own text)."""


@dataclass(frozen=True)
class GitSpace:
    """Herdr's ``GitSpaceMetadata`` of a path inside a work tree."""

    #: the canonical common git dir: one key for a repository and all its worktrees
    key: str
    #: the canonical checkout root
    checkout_key: str
    repo_name: str
    repo_root: Path
    is_linked_worktree: bool


@dataclass(frozen=True)
class ExistingWorktree:
    """One entry of ``git worktree list --porcelain``."""

    path: Path
    branch: str | None
    is_bare: bool
    is_detached: bool
    is_prunable: bool


def canonical(path: Path) -> Path:
    """``fs::canonicalize`` or the path itself (Herdr's ``canonical_or_original``)."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return path


def _common_dir(git_dir: Path) -> Path:
    """The common git dir a (linked) git dir's ``commondir`` file names, else itself."""
    try:
        text = (git_dir / "commondir").read_text(errors="replace").strip()
    except OSError:
        return git_dir
    target = Path(text)
    return target if target.is_absolute() else git_dir / target


def git_space(path: Path) -> GitSpace | None:
    """The repository facts of ``path``, or None when it is not inside a git work tree."""
    root = git_repo_root(str(path))
    if root is None:
        return None
    git_dir = git_dir_of(root)
    if git_dir is None:
        return None
    git_dir = canonical(git_dir)
    common = canonical(_common_dir(git_dir))
    # a `.git` common dir is named after its checkout; any other after itself
    named = common.parent if common.name == ".git" else common
    return GitSpace(
        key=str(common),
        checkout_key=str(canonical(root)),
        repo_name=named.name or "repo",
        repo_root=root,
        is_linked_worktree=git_dir != common,
    )


def checkout_branch(checkout: Path) -> str | None:
    """The branch a checkout has checked out (None when detached or unreadable)."""
    root = git_repo_root(str(checkout))
    git_dir = git_dir_of(root) if root is not None else None
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_text(errors="replace").strip()
    except OSError:
        return None
    branch = head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""
    return branch or None


def generated_branch(seed: int) -> str:
    """Herdr's name for a worktree created without ``branch``: ``worktree/<adj>-<noun>-<hex>``."""
    adjective = _ADJECTIVES[seed % len(_ADJECTIVES)]
    noun = _NOUNS[(seed // len(_ADJECTIVES)) % len(_NOUNS)]
    return f"{_PREFIX}/{adjective}-{noun}-{seed & 0xFFFF:04x}"


def branch_slug(branch: str) -> str:
    """The directory name of a branch's default checkout: ASCII alphanumerics lowercased,
    every other run of characters one ``-``, no ``-`` at either end."""
    out: list[str] = []
    for char in branch:
        if char.isascii() and char.isalnum():
            out.append(char.lower())
        elif not out or out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-") or _PREFIX


def is_dirty_remove_error(message: str) -> bool:
    """Whether ``git worktree remove`` refused because the checkout has changes."""
    lower = message.lower()
    return "contains modified or untracked files" in lower and "use --force to delete it" in lower


def _not_a_worktree_error(message: str) -> bool:
    lower = message.lower()
    return "is not a working tree" in lower or "is not a worktree" in lower


def parse_worktree_porcelain(text: str) -> list[ExistingWorktree]:
    """Entries of ``git worktree list --porcelain`` (blank-line separated records)."""
    entries: list[ExistingWorktree] = []
    for record in text.split("\n\n"):
        path: Path | None = None
        branch: str | None = None
        bare = detached = prunable = False
        for line in record.splitlines():
            if line.startswith("worktree "):
                path = Path(line.removeprefix("worktree "))
            elif line.startswith("branch "):
                branch = line.removeprefix("branch ").removeprefix("refs/heads/")
            elif line == "detached":
                detached = True
            elif line == "bare":
                bare = True
            elif line.startswith("prunable"):
                prunable = True
        if path is not None:
            entries.append(ExistingWorktree(path, branch, bare, detached, prunable))
    return entries


@dataclass(frozen=True)
class _Run:
    returncode: int
    stdout: str
    stderr: str


def git_env(base: Mapping[str, str]) -> dict[str, str]:
    """The environment git runs with: the server's, made non-interactive and English."""
    env = {key: value for key, value in base.items() if key not in _REPO_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env


async def _git(args: Sequence[str], env: Mapping[str, str], timeout: float) -> _Run:
    """Run ``git ARGS`` (an argv, never a shell) with a time bound; GitFailure if it cannot
    start or outlives ``timeout`` (it is killed then)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        raise GitFailure(str(exc)) from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise GitFailure(f"git {' '.join(args[2:4])} timed out after {timeout:g}s") from None
    code = proc.returncode if proc.returncode is not None else -1
    return _Run(code, out.decode(errors="replace"), err.decode(errors="replace"))


def _message(run: _Run, what: str) -> str:
    """Herdr's report of a failed command: stderr, else stdout, else the status."""
    text = run.stderr.strip() or run.stdout.strip()
    return text or f"{what} failed with status exit status: {run.returncode}"


async def _checked(args: Sequence[str], env: Mapping[str, str], timeout: float) -> None:
    run = await _git(args, env, timeout)
    if run.returncode != 0:
        raise GitFailure(_message(run, "git"))


async def list_worktrees(
    repo_root: Path, env: Mapping[str, str], timeout: float
) -> list[ExistingWorktree]:
    """The repository's worktrees (``git worktree list --porcelain``)."""
    run = await _git(["-C", str(repo_root), "worktree", "list", "--porcelain"], env, timeout)
    if run.returncode != 0:
        raise GitFailure(run.stderr.strip() or _message(run, "git worktree list"))
    return parse_worktree_porcelain(run.stdout)


async def _branch_exists(
    repo_root: Path, branch: str, env: Mapping[str, str], timeout: float
) -> bool:
    run = await _git(
        ["-C", str(repo_root), "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"],
        env,
        timeout,
    )
    if run.returncode in (0, 1):
        return run.returncode == 0
    raise GitFailure(_message(run, "git show-ref"))


async def add_worktree(
    repo_root: Path,
    path: Path,
    branch: str,
    base: str,
    env: Mapping[str, str],
    timeout: float,
) -> None:
    """Check ``branch`` out at ``path``: the existing local branch, else a new one from
    ``base`` (Herdr's ``run_worktree_add_command``); the parent directory is created."""
    try:
        await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    except OSError as exc:
        raise GitFailure(str(exc)) from None
    if await _branch_exists(repo_root, branch, env, timeout):
        args = ["-C", str(repo_root), "worktree", "add", str(path), branch]
    else:
        args = ["-C", str(repo_root), "worktree", "add", "-b", branch, str(path), base]
    await _checked(args, env, timeout)


async def _common_worktrees_dir(
    repo_root: Path, env: Mapping[str, str], timeout: float
) -> Path | None:
    run = await _git(["-C", str(repo_root), "rev-parse", "--git-common-dir"], env, timeout)
    text = run.stdout.strip()
    if run.returncode != 0 or not text:
        return None
    common = Path(text)
    return (common if common.is_absolute() else repo_root / common) / "worktrees"


def _leftover_gitdir(path: Path) -> Path | None:
    """The git dir a checkout's ``.git`` file names (None: no such regular file)."""
    marker = path / ".git"
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        text = marker.read_text(errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    return canonical(gitdir if gitdir.is_absolute() else path / gitdir)


async def remove_worktree(
    repo_root: Path, path: Path, force: bool, env: Mapping[str, str], timeout: float
) -> None:
    """``git worktree remove [--force]``; with ``force``, a checkout git no longer knows is
    deleted when it is a leftover of this repository (Herdr's remove-with-recovery)."""
    args = ["-C", str(repo_root), "worktree", "remove", *(["--force"] if force else []), str(path)]
    try:
        await _checked(args, env, timeout)
    except GitFailure as failure:
        if not (force and _not_a_worktree_error(str(failure))):
            raise
        expected = canonical(path)
        known = await list_worktrees(repo_root, env, timeout)
        if any(canonical(entry.path) == expected for entry in known):
            raise
        if await asyncio.to_thread(path.exists):
            # only a checkout whose `.git` still points into this repository is deleted
            gitdir = await asyncio.to_thread(_leftover_gitdir, path)
            worktrees = await _common_worktrees_dir(repo_root, env, timeout)
            if gitdir is None or worktrees is None:
                raise
            if not gitdir.is_relative_to(await asyncio.to_thread(canonical, worktrees)):
                raise
            try:
                await asyncio.to_thread(shutil.rmtree, path)
            except OSError as exc:
                raise GitFailure(
                    f"{failure}; failed to remove leftover checkout {path}: {exc}"
                ) from None


def absolute_user_path(text: str, home: str | None) -> Path | None:
    """``~`` / ``~/…`` expanded with ``home``; None when the result is not absolute."""
    if home and (text == "~" or text.startswith("~/")):
        text = home + text[1:]
    path = Path(text)
    return path if path.is_absolute() else None
