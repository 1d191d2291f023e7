"""Where a new pane's shell starts and what a workspace is called automatically.

Both are Herdr rules that depend on the filesystem, so they live here rather than in the
pure model: a cwd that is not an existing directory starts the shell in HOME (Herdr's pty
layer does that, and the workspace is still created), and a workspace without a custom
label is named after its git repository, ``~`` for HOME, or the cwd's last component.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def home_of(env: Mapping[str, str]) -> str:
    """HOME of an environment, ``/`` when unset."""
    return env.get("HOME") or "/"


def launch_dir(cwd: str, env: Mapping[str, str], server_env: Mapping[str, str]) -> str:
    """The directory the shell really starts in: ``cwd`` if it exists, else HOME.

    The request's own ``env`` HOME wins over the server's, as it would in the child.
    """
    if cwd and Path(cwd).is_dir():
        return cwd
    return env.get("HOME") or home_of(server_env)


def git_dir_of(root: Path) -> Path | None:
    """The git dir a checkout root's ``.git`` names (the directory, or a ``gitdir:`` file's
    target), or None when ``root`` has no ``.git``."""
    marker = root / ".git"
    if marker.is_dir():
        return marker
    if marker.is_file():
        try:
            text = marker.read_text(errors="replace").strip()
        except OSError:
            return None
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else root / target
    return None


def git_repo_root(cwd: str) -> Path | None:
    """The nearest directory at or above ``cwd`` whose ``.git`` names a git dir with HEAD."""
    if not cwd:
        return None
    start = Path(cwd)
    current = start if start.is_dir() else start.parent
    for candidate in (current, *current.parents):
        git_dir = git_dir_of(candidate)
        if git_dir is not None and (git_dir / "HEAD").is_file():
            return candidate
    return None


def auto_label(cwd: str, home: str) -> str:
    """Herdr's automatic workspace label for ``cwd`` on a server whose HOME is ``home``."""
    root = git_repo_root(cwd)
    if root is not None and root.name:
        return root.name
    if cwd and Path(cwd) == Path(home):
        return "~"
    return Path(cwd).name if cwd and Path(cwd).name else cwd
