"""The HOME a simulator's panes see: the one place that decides it.

Herdr's panes inherit the server's environment, HOME included, so an agent in a pane keeps
its state where it always does (``~/.pi/agent``, ``~/.claude``, ``~/.codex``,
``~/.config/opencode``, ``~/.local/share/opencode``). The simulator's *fake* agents write
that kind of state too, and a fake pi's sessions in the user's real ``~/.pi`` are listed by
the user's real pi. So while the fakes are on a simulator's panes' PATH, the panes get a
sandbox HOME of that simulator instead, and the variables that would steer an agent's state
elsewhere (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``PI_CODING_AGENT_DIR``, the XDG base
directories, ...) are left out, so they resolve inside the sandbox too. With the fakes off
(``--no-fake-agents``: the real agents run) the panes see the server's HOME, as in Herdr.

The sandbox lives beside the socket (``agent-home`` beside a ``herdr.sock``, else
``<stem>.agent-home``), like ``session.json``: a restarted simulator on the same socket
finds the sessions its fakes saved, so restored resume commands work. The agents' config
directories are created in it, as installing the agents would (``herdr integration install``
wants them, as in Herdr). ``integration.install`` writes into this same HOME.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from orchestrator.client.file_trust.ownership import (
    FOREIGN_OWNER,
    NOT_DIRECTORY,
    WRITABLE,
    ownership_problem,
)

__all__ = [
    "AGENT_CONFIG_DIRS",
    "AGENT_STATE_VARS",
    "AgentHomeError",
    "default_agent_home",
    "pane_base_env",
    "prepare_agent_home",
]

#: variables that point an agent's state (or an XDG base directory, where opencode keeps
#: its) somewhere other than under HOME: left out of a sandboxed pane's environment
AGENT_STATE_VARS = (
    "PI_CODING_AGENT_DIR",
    "PI_CONFIG_DIR",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "OPENCODE_CONFIG_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
)

#: the config directories installing each fake agent's real counterpart creates (relative
#: to HOME); Herdr's ``integration install`` refuses when they are missing
AGENT_CONFIG_DIRS = (".pi/agent", ".claude", ".codex", ".config/opencode")


_UNTRUSTED_BECAUSE = {
    NOT_DIRECTORY: "is not a directory",
    FOREIGN_OWNER: "belongs to another user",
    WRITABLE: "is writable by other users",
}


class AgentHomeError(RuntimeError):
    """The sandbox HOME cannot be trusted (another user's, a symlink, writable by others)."""


def default_agent_home(socket_path: Path) -> Path:
    """The sandbox HOME of the simulator listening on ``socket_path``."""
    name = "agent-home" if socket_path.stem == "herdr" else f"{socket_path.stem}.agent-home"
    return socket_path.with_name(name)


def prepare_agent_home(path: Path) -> Path:
    """Create the sandbox (0700) with the agents' config directories; refuse one that is
    not a directory of this user that only this user may write (never follow a symlink)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    problem = ownership_problem(path.lstat(), kind="directory")
    if problem is not None:
        raise AgentHomeError(f"agent home {path} {_UNTRUSTED_BECAUSE[problem]}")
    for relative in AGENT_CONFIG_DIRS:
        (path / relative).mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def pane_base_env(base: Mapping[str, str], agent_home: Path | None) -> dict[str, str]:
    """The server environment a pane inherits: ``base`` itself without a sandbox, else
    ``base`` with HOME the sandbox and :data:`AGENT_STATE_VARS` left out."""
    env = dict(base)
    if agent_home is None:
        return env
    for name in AGENT_STATE_VARS:
        env.pop(name, None)
    env["HOME"] = str(agent_home)
    return env
