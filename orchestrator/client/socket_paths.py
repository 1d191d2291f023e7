"""Where the `herdr` CLI (and the simulator server) finds its API socket.

Real Herdr resolves its socket from, in order: an explicit ``--session NAME`` on the command
line, ``HERDR_SOCKET_PATH``, ``HERDR_SESSION``, and finally the default session. The same
rules apply here, but under the simulator's own configuration directory so that a test
machine's real Herdr (``~/.config/herdr``) is never touched:

* ``$HERDR_SIM_CONFIG_DIR`` if set, else ``$XDG_CONFIG_HOME/herdr-sim``, else
  ``~/.config/herdr-sim``;
* unless ``HERDR_SIM_HERDR_PATHS=1`` asks for Herdr's own directory, ``herdr`` in place of
  ``herdr-sim`` (``$XDG_CONFIG_HOME/herdr``, ``~/.config/herdr``): for a machine with no real
  Herdr (CI), where clients that hard-code Herdr's socket path must find the simulator. It
  is a choice made explicitly, never a fallback;
* the default session's socket is ``<dir>/herdr.sock``;
* a named session ``NAME`` lives in ``<dir>/sessions/NAME/herdr.sock``.

The functions take the environment as a mapping instead of reading ``os.environ`` so the
server and the tests can resolve paths for an environment other than their own.

The CLI imports this module on every invocation, and :mod:`pathlib` (with the
:mod:`urllib.parse` and :mod:`ipaddress` it drags in) would cost more than the rest of a
``herdr pane list``. So the work is done on strings, normalised exactly as
:class:`pathlib.PurePosixPath` would render them (the ``*_str`` functions, what the CLI
uses), and the ``Path``-returning functions other callers use import :mod:`pathlib` only
when called.
"""

from __future__ import annotations

import os

# `typing` is not imported at run time (see herdr_sim/__init__.py); mypy treats this name
# specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "DEFAULT_SESSION_NAME",
    "HERDR_PATHS_ENV",
    "ResolvedSocket",
    "SessionNameError",
    "child_path",
    "client_socket_path_for",
    "client_socket_str_for",
    "config_dir",
    "config_dir_str",
    "normalize_path",
    "normalize_session_name",
    "resolve_socket",
    "session_dir",
    "session_dir_str",
    "session_socket_path",
    "session_socket_str",
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
#: ``HERDR_SIM_HERDR_PATHS=1``: use Herdr's own directory name, :data:`HERDR_APP_DIR_NAME`
HERDR_PATHS_ENV = "HERDR_SIM_HERDR_PATHS"
HERDR_APP_DIR_NAME = "herdr"
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


# -- string paths, rendered as pathlib renders them ---------------------------------------------


def _root(path: str) -> str:
    """The anchor ``PurePosixPath`` keeps: exactly two leading slashes stay ``//``."""
    if not path.startswith("/"):
        return ""
    return "//" if path.startswith("//") and not path.startswith("///") else "/"


def normalize_path(path: str) -> str:
    """``str(PurePosixPath(path))``: no empty or ``.`` components, ``.`` when nothing is left.

    ``..`` is kept (it is not resolved, exactly as in :mod:`pathlib`).
    """
    parts = [part for part in path.split("/") if part and part != "."]
    return (_root(path) + "/".join(parts)) or "."


def child_path(base: str, name: str) -> str:
    """``str(PurePosixPath(base) / name)`` for a normalised ``base`` and a one-component
    ``name`` (no slash, not ``.``)."""
    if base == ".":
        return name
    if base.endswith("/"):  # the root, "/" or "//"
        return base + name
    return f"{base}/{name}"


def _parent_and_name(path: str) -> tuple[str, str]:
    """``(str(p.parent), p.name)`` of ``p = PurePosixPath(path)`` for a normalised ``path``."""
    root = _root(path)
    rest = path[len(root) :]
    if not rest or rest == ".":
        return path, ""
    slash = rest.rfind("/")
    if slash < 0:
        return root or ".", rest
    return root + rest[:slash], rest[slash + 1 :]


def _stem(name: str) -> str:
    """``PurePosixPath.stem`` of a final component ``name``."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _home() -> str:
    """``str(Path.home())``: ``$HOME`` of this process, else the password database."""
    home = os.path.expanduser("~")  # noqa: PTH111 - pathlib costs the CLI milliseconds
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return normalize_path(home)


def config_dir_str(env: Mapping[str, str]) -> str:
    """The simulator's configuration directory for ``env`` (see the module docstring).

    As in real Herdr, a set-but-empty ``XDG_CONFIG_HOME`` still counts as set.
    """
    override = env.get(CONFIG_DIR_ENV)
    if override:
        return normalize_path(override)
    name = HERDR_APP_DIR_NAME if env.get(HERDR_PATHS_ENV) == "1" else APP_DIR_NAME
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg is not None:
        return child_path(normalize_path(xdg), name)
    home = env.get("HOME")
    base = normalize_path(home) if home else _home()
    return child_path(child_path(base, ".config"), name)


def session_dir_str(name: str | None, env: Mapping[str, str]) -> str:
    """The data directory of session ``name`` (``None`` or ``"default"``: the default one)."""
    base = config_dir_str(env)
    if name is None or name == DEFAULT_SESSION_NAME:
        return base
    return child_path(child_path(base, "sessions"), name)


def session_socket_str(name: str | None, env: Mapping[str, str]) -> str:
    """The API socket of session ``name`` (``None`` or ``"default"``: the default session)."""
    return child_path(session_dir_str(name, env), "herdr.sock")


def client_socket_str_for(name: str | None, env: Mapping[str, str]) -> str:
    """The TUI client socket next to a session's API socket (``herdr-client.sock``)."""
    return child_path(session_dir_str(name, env), "herdr-client.sock")


# -- the same as Path objects, for the server side and the tests ------------------------------


def config_dir(env: Mapping[str, str]) -> Path:
    """:func:`config_dir_str` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(config_dir_str(env))


def session_dir(name: str | None, env: Mapping[str, str]) -> Path:
    """:func:`session_dir_str` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(session_dir_str(name, env))


def session_socket_path(name: str | None, env: Mapping[str, str]) -> Path:
    """:func:`session_socket_str` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(session_socket_str(name, env))


def client_socket_path_for(name: str | None, env: Mapping[str, str]) -> Path:
    """:func:`client_socket_str_for` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(client_socket_str_for(name, env))


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


class ResolvedSocket:
    """The outcome of socket resolution, with what the CLI's messages need to know.

    ``socket_path`` is the API socket (normalised as :mod:`pathlib` renders it; ``path``
    is the same as a :class:`~pathlib.Path`). ``session`` is the active named session
    (``None`` for the default one), ``explicit`` says whether it came from ``--session``
    (which beats ``HERDR_SOCKET_PATH``), and ``override`` is the ``HERDR_SOCKET_PATH``
    value when that variable chose the path.
    """

    __slots__ = ("env", "explicit", "override", "session", "socket_path")

    def __init__(
        self,
        socket_path: str,
        session: str | None,
        explicit: bool,
        override: str | None,
        env: Mapping[str, str],
    ) -> None:
        self.socket_path = socket_path
        self.session = session
        self.explicit = explicit
        self.override = override
        self.env = env

    def __repr__(self) -> str:
        return (
            f"ResolvedSocket(socket_path={self.socket_path!r}, session={self.session!r}, "
            f"explicit={self.explicit!r}, override={self.override!r})"
        )

    @property
    def path(self) -> Path:
        """The API socket as a :class:`~pathlib.Path`."""
        from pathlib import Path

        return Path(self.socket_path)

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
        if self.socket_path == session_socket_str(self.session, self.env):
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

    def client_socket(self) -> str:
        """The TUI client socket that ``herdr server stop`` also waits on."""
        if self.explicit:
            return client_socket_str_for(self.session, self.env)
        override = self.env.get(SOCKET_PATH_ENV)
        if override is not None:
            parent, name = _parent_and_name(normalize_path(override))
            stem = _stem(name) if name else "herdr"
            return child_path(parent, f"{stem}-client.sock")
        legacy = self.env.get(CLIENT_SOCKET_PATH_ENV)
        if legacy is not None:
            return normalize_path(legacy)
        return client_socket_str_for(self.session, self.env)

    def client_socket_path(self) -> Path:
        """:meth:`client_socket` as a :class:`~pathlib.Path`."""
        from pathlib import Path

        return Path(self.client_socket())


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
            session_socket_str(name, resolved_env), name, True, None, resolved_env
        )
    override = env.get(SOCKET_PATH_ENV)
    if override is not None:
        path = normalize_path(override)
        return ResolvedSocket(path, active_session_name(env), False, override, env)
    session_value = env.get(SESSION_ENV)
    if session_value is not None:
        name = normalize_session_name(session_value)
        return ResolvedSocket(session_socket_str(name, env), name, False, None, env)
    return ResolvedSocket(session_socket_str(None, env), None, False, None, env)


def environ() -> Mapping[str, str]:
    """The process environment (a seam so callers need not import :mod:`os` themselves)."""
    return os.environ
