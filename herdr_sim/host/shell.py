"""The command line and environment of the shell a simulated pane runs.

Real Herdr starts the user's shell (``$SHELL``, falling back to ``/bin/sh``)
with a fixed set of variables layered on top of the server's environment
(reference §8).  Tests need more than that: a prompt, line editing and locale
that look the same on every machine, so that screen captures and
``wait_for_output`` patterns are stable.  The default here is therefore a bash
with a shipped rcfile and no user startup files; ``ShellConfig`` switches to a
chosen shell or to the user's own login shell when fidelity to a real setup
matters more than determinism.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orchestrator.client.file_trust.private_files import write_atomic

__all__ = [
    "BASHRC_NAME",
    "DETERMINISTIC_PROMPT",
    "ShellConfig",
    "pane_command",
    "pane_env",
    "validate_env",
]

BASHRC_NAME = "bashrc"
"""File name of the deterministic rcfile inside the runtime directory."""

DETERMINISTIC_PROMPT = "$ "
"""The primary prompt of the deterministic shell, as it appears on screen."""

# Sourced by `bash --noprofile --rcfile THIS -i` instead of ~/.bashrc. Each line
# removes one source of machine-to-machine variation in what the pane shows.
_BASHRC = r"""# Written by herdr_sim.host.shell: the deterministic pane shell's startup file.
# Readline's init file is read on first use; pointing it at /dev/null keeps
# the user's ~/.inputrc (key bindings, colours) out of the pane.
INPUTRC=/dev/null
bind 'set enable-bracketed-paste off' 2>/dev/null
bind 'set bell-style none' 2>/dev/null
bind 'set colored-stats off' 2>/dev/null
bind 'set colored-completion-prefix off' 2>/dev/null
PS1='$ '
PS2='> '
PS4='+ '
unset PS0 PROMPT_COMMAND PROMPT_DIRTRIM TMOUT MAILCHECK MAILPATH LS_COLORS
# History stays in memory (so Up recalls commands) but is never written.
unset HISTFILE
HISTSIZE=1000
# `!` in typed text must not trigger history expansion.
set +o histexpand
"""

_rcfile_lock = threading.Lock()

# Inherited variables that tell a program it runs inside another agent or
# terminal session.  A pane is a fresh terminal, so these would mislead the
# programs started in it (Herdr 0.9.2 drops them for the same reason; 0.9.3's
# `apply_pane_terminal_env` in src/pane.rs also drops iTerm2's LC_TERMINAL pair).
_DROPPED_EXACT = frozenset(
    {
        "CODEX_THREAD_ID",
        "CODEX_SANDBOX",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "CODEX_MANAGED_BY_NPM",
        "CLAUDECODE",
        "TMUX",
        "TMUX_PANE",
        "STY",
        "WINDOW",
        "TERM_SESSION_ID",
        "ITERM_SESSION_ID",
        "WT_SESSION",
        "KITTY_WINDOW_ID",
        "WEZTERM_PANE",
        "ZELLIJ",
        "ZELLIJ_PANE_ID",
        "ZELLIJ_SESSION_NAME",
        "LC_TERMINAL",
        "LC_TERMINAL_VERSION",
        "TERM_PROGRAM_VERSION",
    }
)
_DROPPED_PREFIXES = ("CLAUDE_CODE_",)

_PANE_TERMINAL_ENV = {
    "TERM": "xterm-256color",
    "COLORTERM": "truecolor",
    "TERM_PROGRAM": "herdr",
}

_DETERMINISTIC_ENV = {
    "NO_COLOR": "1",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}


@dataclass(frozen=True)
class ShellConfig:
    """Which shell a pane runs.

    ``shell=None, user_shell=False`` (the default) is the deterministic bash.
    ``shell=PATH`` runs that program with no arguments, the way Herdr runs a
    configured shell on Linux.  ``user_shell=True`` runs it (or ``$SHELL``
    when ``shell`` is unset) as a login shell, so the user's profile and rc
    files apply exactly as in their own terminal.
    """

    shell: str | None = None
    user_shell: bool = False


def _write_rcfile(runtime_dir: Path) -> Path:
    """Write the rcfile (0600, atomically) unless an identical one exists.

    The runtime directory is created 0700 if missing.  Replacing it atomically
    (:func:`~orchestrator.client.file_trust.private_files.write_atomic`) means a
    shell starting concurrently never sources a half-written file.
    """
    path = runtime_dir / BASHRC_NAME
    content = _BASHRC.encode()
    with _rcfile_lock:
        try:
            if path.read_bytes() == content:
                return path
        except OSError:
            pass
        write_atomic(path, content, sync=False, own_link_parent=True)  # rewritten if lost
    return path


def pane_command(config: ShellConfig, runtime_dir: Path) -> list[str]:
    """The argv a new pane starts.

    For the deterministic shell this also writes ``runtime_dir/bashrc``.
    Raises ``FileNotFoundError`` if bash is not installed; a configured shell
    is not checked here, since spawning it reports a missing program anyway.
    """
    if config.user_shell:
        program = config.shell or os.environ.get("SHELL", "").strip() or "/bin/sh"
        # `-l` is understood by sh, dash, bash, zsh and fish; on a tty the
        # shell is interactive as well, which together is the login-interactive
        # start a terminal emulator gives its first shell.
        return [program, "-l"]
    if config.shell is not None:
        return [config.shell]
    bash = shutil.which("bash")
    if bash is None:
        raise FileNotFoundError("bash is required for the deterministic pane shell")
    rcfile = _write_rcfile(runtime_dir)
    return [bash, "--noprofile", "--rcfile", str(rcfile), "-i"]


def _is_dropped(key: str) -> bool:
    return key in _DROPPED_EXACT or key.startswith(_DROPPED_PREFIXES)


def _prepend_path(path: str | None, directory: str) -> str:
    entries = path.split(os.pathsep) if path else os.defpath.split(os.pathsep)
    if entries and entries[0] == directory:
        return os.pathsep.join(entries)
    return os.pathsep.join([directory, *entries])


def pane_env(
    *,
    base: Mapping[str, str],
    caller_env: Mapping[str, str],
    herdr_env: Mapping[str, str],
    cli_dir: Path | None,
    deterministic: bool,
    herdr_version: str | None = None,
) -> dict[str, str]:
    """The environment of a pane's process, layered as reference §8 describes.

    Layers, later wins: ``base`` (the server's environment, minus inherited
    agent and terminal-session markers), the deterministic defaults
    (``NO_COLOR``, C.UTF-8 locale), the pane terminal identity (``TERM``,
    ``COLORTERM``, ``TERM_PROGRAM=herdr`` and, given ``herdr_version``,
    ``TERM_PROGRAM_VERSION``), ``caller_env`` (the request's ``env``)
    and finally ``herdr_env`` (``HERDR_*``).  Herdr applies its terminal
    variables before the caller's, so a request may override ``TERM``; only
    the ``HERDR_*`` variables always win.  ``cli_dir`` goes first on ``PATH`` so the
    simulator's ``herdr`` CLI shadows any real one.
    """
    env = {key: value for key, value in base.items() if not _is_dropped(key)}
    if deterministic:
        env.update(_DETERMINISTIC_ENV)
    env.update(_PANE_TERMINAL_ENV)
    if herdr_version is not None:
        env["TERM_PROGRAM_VERSION"] = herdr_version
    env.update(caller_env)
    env.update(herdr_env)
    if cli_dir is not None:
        env["PATH"] = _prepend_path(env.get("PATH"), str(cli_dir))
    return env


def validate_env(env: Mapping[str, str]) -> str | None:
    """Herdr's ``invalid_env`` check: the error message, or ``None`` if valid.

    Herdr checks each entry in turn (key empty, key with ``=``, key with NUL,
    value with NUL) and reports the first problem; the messages match its
    wording so clients that show them see the same text.
    """
    for key, value in env.items():
        if not key:
            return "env key must not be empty"
        if "=" in key:
            return f"env key {key} must not contain '='"
        if "\0" in key:
            return "env key must not contain NUL bytes"
        if "\0" in value:
            return f"env value for {key} must not contain NUL bytes"
    return None
