"""Where the `herdr` CLI (and the simulator server) finds its API socket.

Real Herdr resolves its socket from, in order: an explicit ``--session NAME`` on the command
line, ``HERDR_SOCKET_PATH``, ``HERDR_SESSION``, and finally the default session. The same
rules apply here, but under the simulator's own configuration directory so that a test
machine's real Herdr (``~/.config/herdr``) is never touched:

* ``$HERDR_SIM_CONFIG_DIR`` if set, else ``$XDG_CONFIG_HOME/herdr-sim``, else
  ``~/.config/herdr-sim``;
* the default session's socket is ``<dir>/herdr.sock``;
* a named session ``NAME`` lives in ``<dir>/sessions/NAME/herdr.sock``.

The functions take the environment as a mapping instead of reading ``os.environ`` so the
server and the tests can resolve paths for an environment other than their own. The module
imports only :mod:`os` and :mod:`pathlib` because the CLI imports it on every invocation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "DEFAULT_SESSION_NAME",
    "ResolvedSocket",
    "SessionNameError",
    "client_socket_path_for",
    "config_dir",
    "normalize_session_name",
    "resolve_socket",
    "session_dir",
    "session_socket_path",
    "validate_session_name",
]

#: The name that always means "the default session" (no sessions/ sub-directory).
DEFAULT_SESSION_NAME = "default"
#: Environment variables with the same meaning as in real Herdr.
SOCKET_PATH_ENV = "HERDR_SOCKET_PATH"
SESSION_ENV = "HERDR_SESSION"
CLIENT_SOCKET_PATH_ENV = "HERDR_CLIENT_SOCKET_PATH"
#: The simulator-only override of the configuration directory.
CONFIG_DIR_ENV = "HERDR_SIM_CONFIG_DIR"
#: The directory name used below ``$XDG_CONFIG_HOME`` (real Herdr uses ``herdr``).
APP_DIR_NAME = "herdr-sim"
_MAX_SESSION_NAME_BYTES = 64


class SessionNameError(ValueError):
    """A session name that real Herdr would reject; ``str(err)`` is Herdr's exact message."""


def validate_session_name(name: str) -> None:
    """Raise :class:`SessionNameError` unless ``name`` is a valid Herdr session name.

    The rules (1-64 bytes, not ``.``/``..``, only ASCII letters, digits, ``.``, ``_``,
    ``-``) keep a session name safe to use as a directory name.
    """
    if not name:
        raise SessionNameError("session name cannot be empty")
    if len(name.encode("utf-8", "surrogateescape")) > _MAX_SESSION_NAME_BYTES:
        raise SessionNameError(
            f"session name cannot be longer than {_MAX_SESSION_NAME_BYTES} bytes"
        )
    if name in (".", ".."):
        raise SessionNameError("session name cannot be . or ..")
    if not all(ch.isascii() and (ch.isalnum() or ch in "._-") for ch in name):
        raise SessionNameError(
            "session name may only contain ASCII letters, numbers, '.', '_' and '-'"
        )


def normalize_session_name(name: str) -> str | None:
    """Validate ``name``; return ``None`` for the default session, else the name itself."""
    if name == DEFAULT_SESSION_NAME:
        return None
    validate_session_name(name)
    return name


def config_dir(env: Mapping[str, str]) -> Path:
    """The simulator's configuration directory for ``env`` (see the module docstring).

    As in real Herdr, a set-but-empty ``XDG_CONFIG_HOME`` still counts as set.
    """
    override = env.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg is not None:
        return Path(xdg) / APP_DIR_NAME
    home = env.get("HOME")
    base = Path(home) if home else Path.home()
    return base / ".config" / APP_DIR_NAME


def session_dir(name: str | None, env: Mapping[str, str]) -> Path:
    """The data directory of session ``name`` (``None`` or ``"default"``: the default one)."""
    base = config_dir(env)
    if name is None or name == DEFAULT_SESSION_NAME:
        return base
    return base / "sessions" / name


def session_socket_path(name: str | None, env: Mapping[str, str]) -> Path:
    """The API socket of session ``name`` (``None`` or ``"default"``: the default session)."""
    return session_dir(name, env) / "herdr.sock"


def client_socket_path_for(name: str | None, env: Mapping[str, str]) -> Path:
    """The TUI client socket next to a session's API socket (``herdr-client.sock``)."""
    return session_dir(name, env) / "herdr-client.sock"


def active_session_name(env: Mapping[str, str]) -> str | None:
    """``HERDR_SESSION`` when it names a valid non-default session, else ``None``."""
    name = env.get(SESSION_ENV)
    if name is None or name == DEFAULT_SESSION_NAME:
        return None
    try:
        validate_session_name(name)
    except SessionNameError:
        return None
    return name


class ResolvedSocket(NamedTuple):
    """The outcome of socket resolution, with what the CLI's messages need to know.

    ``session`` is the active named session (``None`` for the default one), ``explicit``
    says whether it came from ``--session`` (which beats ``HERDR_SOCKET_PATH``), and
    ``override`` is the ``HERDR_SOCKET_PATH`` value when that variable chose the path.
    """

    path: Path
    session: str | None
    explicit: bool
    override: str | None
    env: Mapping[str, str]

    @property
    def attach_command(self) -> str:
        """The command that starts or attaches the active session, as Herdr words it."""
        return f"herdr session attach {self.session}" if self.session else "herdr"

    @property
    def stop_command(self) -> str:
        """The command that stops the active session's server."""
        return f"herdr session stop {self.session}" if self.session else "herdr server stop"

    def startup_command(self) -> str:
        """The command named in ``server_not_running``: the session's own one only when the
        socket is that session's socket, plain ``herdr`` for an unrelated override."""
        if self.path == session_socket_path(self.session, self.env):
            return self.attach_command
        return "herdr"

    def restart_guidance(self) -> str:
        """The stop-then-restart advice appended to a ``protocol_mismatch`` message."""
        if self.override is not None:
            stop = f"{SOCKET_PATH_ENV}={self.override} herdr server stop"
            restart = f"Run `{stop}`, then restart Herdr with the same socket override."
        else:
            restart = f"Run `{self.stop_command}`, then run `{self.attach_command}` again."
        return (
            "Stop the old server to use the new version.\nStopping exits pane processes.\n"
            + restart
        )

    def client_socket_path(self) -> Path:
        """The TUI client socket that ``herdr server stop`` also waits on."""
        if self.explicit:
            return client_socket_path_for(self.session, self.env)
        override = self.env.get(SOCKET_PATH_ENV)
        if override is not None:
            api = Path(override)
            stem = api.stem if api.name else "herdr"
            return api.parent / f"{stem}-client.sock"
        legacy = self.env.get(CLIENT_SOCKET_PATH_ENV)
        if legacy is not None:
            return Path(legacy)
        return client_socket_path_for(self.session, self.env)


def resolve_socket(argv_session: str | None, env: Mapping[str, str]) -> ResolvedSocket:
    """Resolve the API socket for a command line's ``--session`` value and ``env``.

    Raises :class:`SessionNameError` for an invalid ``--session`` value, or for an invalid
    ``HERDR_SESSION`` when it is the deciding input (a ``HERDR_SOCKET_PATH`` makes an
    invalid ``HERDR_SESSION`` irrelevant, exactly as in Herdr).
    """
    if argv_session is not None:
        name = normalize_session_name(argv_session)
        resolved_env = dict(env)
        if name is None:
            resolved_env.pop(SESSION_ENV, None)
        else:
            resolved_env[SESSION_ENV] = name
        return ResolvedSocket(
            session_socket_path(name, resolved_env), name, True, None, resolved_env
        )
    override = env.get(SOCKET_PATH_ENV)
    if override is not None:
        return ResolvedSocket(Path(override), active_session_name(env), False, override, env)
    session_value = env.get(SESSION_ENV)
    if session_value is not None:
        name = normalize_session_name(session_value)
        return ResolvedSocket(session_socket_path(name, env), name, False, None, env)
    return ResolvedSocket(session_socket_path(None, env), None, False, None, env)


def environ() -> Mapping[str, str]:
    """The process environment (a seam so callers need not import :mod:`os` themselves)."""
    return os.environ
