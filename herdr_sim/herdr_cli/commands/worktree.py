"""`herdr worktree ...`: worktree.* socket methods, by the rules of ``src/cli/worktree.rs``.

Output is always the JSON response (``--json`` is accepted and ignored, as in Herdr). Path
arguments are made absolute on the client side: ``~``/``~/…`` with this process's HOME, a
relative path joined to the current directory. ``--workspace`` and ``--cwd`` together are a
usage error, as are ``open`` without exactly one of ``--path``/``--branch`` and ``remove``
without ``--workspace``.
"""

from __future__ import annotations

import os

from ..client import Context
from ..errors import FatalError, UsageError
from ..options import Flag, Spec, Value, pick, switch
from ..output import rust_debug_str
from ._common import subcommand, unknown_subcommand

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["run"]

_LIST_USAGE = "usage: herdr worktree list [--workspace ID | --cwd PATH]"
_CREATE_USAGE = (
    "usage: herdr worktree create [--workspace ID | --cwd PATH] [--branch NAME] [--base REF] "
    "[--path PATH] [--label TEXT] [--focus] [--no-focus]"
)
_OPEN_USAGE = (
    "usage: herdr worktree open [--workspace ID | --cwd PATH] (--path PATH | --branch NAME) "
    "[--label TEXT] [--focus] [--no-focus]"
)
_REMOVE_USAGE = "usage: herdr worktree remove --workspace ID [--force]"

_HELP = (
    "herdr worktree commands:",
    "  " + _LIST_USAGE.removeprefix("usage: "),
    "  " + _CREATE_USAGE.removeprefix("usage: "),
    "  " + _OPEN_USAGE.removeprefix("usage: "),
    "  " + _REMOVE_USAGE.removeprefix("usage: "),
)


def _joined(base: str, rest: str) -> str:
    """``Path::join`` of a relative ``rest`` (no pathlib: it costs the CLI milliseconds)."""
    return f"{base.rstrip('/')}/{rest}"


def _absolute(value: str) -> str:
    """Herdr's ``normalize_path_arg``: expand ``~``, join a relative path to the cwd."""
    home = os.environ.get("HOME")
    if home and value == "~":
        value = home
    elif home and value.startswith("~/"):
        value = _joined(home, value[2:])
    return value if value.startswith("/") else _joined(os.getcwd(), value)  # noqa: PTH109


def _remote(value: str) -> str:
    """Herdr's rule for ``--machine``: the path is the remote machine's, passed unexpanded;
    it must be absolute (POSIX, UNC or a drive) or ``~``/``~/…``."""
    from ..machine_target import remote_path_is_absolute

    if remote_path_is_absolute(value) or value == "~" or value.startswith("~/"):
        return value
    message = "remote worktree paths must be absolute or start with ~/"
    raise FatalError(f"Custom {{ kind: InvalidInput, error: {rust_debug_str(message)} }}", message)


#: ``--json`` is a hidden no-op: it sets a destination no request carries.
_JSON = Flag("--json", json_noop=True)
_WORKSPACE = Value("--workspace", "workspace_id")
_FOCUS = switch("--focus", "--no-focus")


def _specs(convert: Callable[[str], str]) -> tuple[Spec, Spec, Spec]:
    """The list, create and open specs with ``convert`` for their path arguments."""
    cwd = Value("--cwd", convert=convert)
    listing = Spec(_WORKSPACE, cwd, _JSON)
    create = Spec(
        _WORKSPACE,
        cwd,
        Value("--branch"),
        Value("--base"),
        Value("--path", convert=convert),
        Value("--label"),
        *_FOCUS,
        _JSON,
        defaults={"focus": False},
    )
    opening = Spec(
        _WORKSPACE,
        cwd,
        Value("--path", convert=convert),
        Value("--branch"),
        Value("--label"),
        *_FOCUS,
        _JSON,
        defaults={"focus": False},
    )
    return listing, create, opening


_LOCAL_SPECS = _specs(_absolute)
_REMOVE = Spec(_WORKSPACE, Flag("--force"), _JSON, defaults={"force": False})


def _params(spec: Spec, args: list[str], usage: str) -> dict[str, object]:
    """Parse ``args``; the request fields in Herdr's order (``--json`` dropped)."""
    values = spec.parse(args)
    if values.get("workspace_id") is not None and values.get("cwd") is not None:
        raise UsageError(usage)
    return pick(values, *(dest for dest in spec.dests if dest != "json_noop"))


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr worktree <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    listing, create, opening = _specs(_remote) if ctx.is_remote else _LOCAL_SPECS
    if sub == "list":
        params = _params(listing, rest, _LIST_USAGE)
        return ctx.print_method("cli:worktree:list", "worktree.list", params)
    if sub == "create":
        params = _params(create, rest, _CREATE_USAGE)
        return ctx.print_method("cli:worktree:create", "worktree.create", params)
    if sub == "open":
        params = _params(opening, rest, _OPEN_USAGE)
        if ("path" in params) == ("branch" in params):
            raise UsageError(_OPEN_USAGE)
        return ctx.print_method("cli:worktree:open", "worktree.open", params)
    if sub == "remove":
        params = _params(_REMOVE, rest, _REMOVE_USAGE)
        if "workspace_id" not in params:
            raise UsageError(_REMOVE_USAGE)
        return ctx.print_method("cli:worktree:remove", "worktree.remove", params)
    return unknown_subcommand(sub, _HELP)
