"""The `herdr` entry point: global arguments, dispatch, and the exit-code contract.

The order of the checks follows real Herdr's ``main``: arguments that are not valid
UTF-8, then a global ``--machine`` prefix (:mod:`~herdr_sim.herdr_cli.machine_target`; the
command then runs on a saved SSH machine, see docs/simulator/machines.md), then
``--session`` (removed from anywhere before a literal ``--``) and socket resolution, then
per-group dispatch, then the top-level flags (``--help``, ``--version``) and the
unknown-option/unknown-command errors. Commands raise the exceptions of
:mod:`herdr_sim.herdr_cli.errors`; this module alone turns them into output and exit codes.

Only :mod:`sys` and :mod:`os` are imported up front; each command group is imported when
the command line names it, which keeps ``herdr pane list`` fast enough to run from every
agent hook.
"""

from __future__ import annotations

import os
import sys

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .client import Context

__all__ = ["main"]

_GROUPS = (
    "workspace",
    "worktree",
    "tab",
    "pane",
    "agent",
    "notification",
    "api",
    "status",
    "session",
    "plugin",
)
_UNSUPPORTED_GROUPS = {
    "channel": "there are no update channels",
}
_KNOWN_FLAGS = frozenset(
    {
        "--no-session",
        "--session",
        "--remote",
        "--remote-keybindings",
        "--machine",
        "--version",
        "-V",
        "--default-config",
        "--skill",
        "--help",
        "-h",
    }
)
_KNOWN_COMMANDS = frozenset(
    {
        "server",
        "client",
        "remote-client-bridge",
        "remote-api-bridge",
        "machine",
        "update",
        "status",
        "config",
        "channel",
        "workspace",
        "worktree",
        "pane",
        "session",
        "integration",
    }
)


def _fail_global(message: str) -> int:
    """Herdr's answer to a bad global argument: ``error: ...`` plus a hint, exit 2."""
    from .output import write_err

    write_err(f"error: {message}")
    write_err("run 'herdr --help' for usage")
    return 2


def _strip_session(args: list[str]) -> tuple[list[str], str | None]:
    """Remove ``--session NAME`` / ``--session=NAME`` before the first literal ``--``."""
    cleaned: list[str] = []
    session: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            cleaned.extend(args[index:])
            break
        if arg == "--session":
            if index + 1 >= len(args):
                raise ValueError("missing value for --session")
            session = args[index + 1]
            index += 2
            continue
        if arg.startswith("--session="):
            session = arg.removeprefix("--session=")
        else:
            cleaned.append(arg)
        index += 1
    return cleaned, session


def main(argv: list[str] | None = None) -> int:
    """Run one `herdr` command line (without the program name); return the exit code."""
    from .errors import FatalError, ProtocolMismatchReported, ServerNotRunningError, UsageError
    from .output import CliExit, dumps, write_err

    args = list(sys.argv[1:] if argv is None else argv)
    transport = sys.modules.get(f"{__package__}.transport")
    if transport is not None:  # one command line per call (tests run several in-process)
        transport.attempted = False  # type: ignore[attr-defined]
    try:
        return _run(args, os.environ)
    except UsageError as err:
        write_err(err.message)
        _refused(args, 2, err.message)
        return 2
    except ServerNotRunningError as err:
        write_err(dumps(err.response, sort_keys=False))
        return 1
    except ProtocolMismatchReported:
        return 1
    except FatalError as err:
        write_err(f"Error: {err.debug}")
        _refused(args, 1, err.display)
        return 1
    except CliExit as exit_:
        return exit_.code
    except BrokenPipeError:
        # Herdr panics when stdout is closed under it (exit 101); do the same, minus the
        # interpreter's noise about flushing a dead pipe at exit.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115, PTH123 - lives until exit
        return 101


def _refused(args: list[str], code: int, message: str) -> None:
    """Record a command line refused here, before any server was tried (inside a
    simulator's pane): the integration check names it, as nothing of it reached the server.
    A failure after a connection or an ``ssh`` was tried is the transport's, not a refusal."""
    from herdr_sim.persist.cli_refusals import REFUSALS_VARIABLE, record

    if REFUSALS_VARIABLE not in os.environ:
        return
    transport = sys.modules.get(f"{__package__}.transport")
    if getattr(transport, "attempted", False) or f"{__package__}.ssh_bridge" in sys.modules:
        return
    record(os.environ, args, code, message)


def _run(args: list[str], env: Mapping[str, str]) -> int:
    for index, arg in enumerate(args, start=1):
        if any("\udc80" <= ch <= "\udcff" for ch in arg):
            return _fail_global(f"argument {index} is not valid UTF-8")

    if any(arg == "--machine" or arg.startswith("--machine=") for arg in args):
        remote = _run_on_machine(args, env)
        if remote is not None:
            return remote

    from orchestrator.client.socket_paths import (
        SessionNameError,
        normalize_session_name,
        resolve_socket,
    )

    if args[:2] == ["session", "attach"] and not (
        len(args) > 2 and args[2] in ("help", "--help", "-h")
    ):
        if len(args) != 3:
            return _fail_global("usage: herdr session attach <name>")
        try:
            normalize_session_name(args[2])
        except SessionNameError as err:
            return _fail_global(str(err))
        return _unsupported("session attach", "it opens the terminal UI")

    try:
        args, session = _strip_session(args)
        socket = resolve_socket(session, env)
    except (ValueError, SessionNameError) as err:
        return _fail_global(str(err))
    if any(arg == "--remote" or arg.startswith("--remote=") for arg in args):
        return _unsupported("--remote", "remote attach over SSH is not simulated")

    from .client import Context as _Context

    ctx = _Context(env, socket)
    command = args[0] if args else None
    if command is not None:
        # Help is printed only for a --help/-h; the help tree is not loaded otherwise.
        if "--help" in args or "-h" in args:
            from .help import print_requested_help

            if print_requested_help(args):
                return 0
        handled = _dispatch(ctx, command, args[1:])
        if handled is not None:
            return handled
    return _fallback(args)


def _run_on_machine(args: list[str], env: Mapping[str, str]) -> int | None:
    """A ``--machine`` command line (``None`` when ``--machine`` is not a global prefix)."""
    from herdr_sim.machines.endpoints import CatalogError, EndpointCatalog

    from .client import Context as _Context
    from .errors import FatalError
    from .machine_target import (
        MachineUsageError,
        RemoteSocket,
        parse_machine_prefix,
        resolve_machine,
        validate_machine_command,
    )
    from .output import rust_custom_error, rust_debug_str, write_err
    from .ssh_bridge import SshBridge

    try:
        parsed = parse_machine_prefix(args)
        if parsed is None:
            return None
        selector, command = parsed
        validate_machine_command(command)
        if "--help" in command or "-h" in command:
            from .help import print_requested_help

            if print_requested_help(command):
                return 0
        try:
            profiles = EndpointCatalog.load_profiles(env).ssh
        except CatalogError as err:
            raise FatalError(rust_custom_error(rust_debug_str(str(err))), str(err)) from None
        profile = resolve_machine(profiles, selector)
    except MachineUsageError as err:
        write_err(f"error: {err}")
        return 2
    # No implicit current pane on another server: a local HERDR_PANE_ID means nothing there.
    remote_env = {key: value for key, value in env.items() if key != "HERDR_PANE_ID"}
    bridge = SshBridge(profile, remote_env)
    ctx = _Context(remote_env, RemoteSocket(profile, remote_env), bridge)
    try:
        handled = _dispatch(ctx, command[0], command[1:])
        return handled if handled is not None else _fallback(command)
    finally:
        bridge.close()


def _dispatch(ctx: Context, command: str, rest: list[str]) -> int | None:
    """Run a command group; ``None`` when the command line is not a CLI command."""
    if command in _GROUPS:
        # `__import__` rather than importlib.import_module: no extra module to load.
        name = f"{__package__}.commands.{command}"
        __import__(name)
        code: int = sys.modules[name].run(ctx, rest)
        return code
    if command == "server":
        if rest and rest[0] == "--handoff-import":
            return None
        from .commands import server

        if not rest:
            return server.run_foreground(ctx)
        return server.run(ctx, rest)
    if command == "machine":
        from .commands import machine

        return machine.run(ctx, rest)
    if command == "remote-api-bridge":
        from .commands import remote_api_bridge

        return remote_api_bridge.run(ctx, rest)
    if command == "terminal":
        from .commands import terminal

        return terminal.run(ctx, rest)
    if command in ("completion", "completions"):
        from .completion import run as completion

        return completion(rest)
    if command == "config":
        from .commands import config

        return config.run(ctx, rest)
    if command == "integration":
        from .commands import integration

        return integration.run(ctx, rest)
    if command in _UNSUPPORTED_GROUPS:
        return _unsupported(command, _UNSUPPORTED_GROUPS[command])
    return None


def _unsupported(command: str, reason: str) -> int:
    from .commands.unsupported import unsupported

    return unsupported(command, reason)


def _fallback(args: list[str]) -> int:
    """What Herdr does with a command line that is not a CLI subcommand."""
    from .output import write_err, write_out

    first = args[0] if args else None
    if first in ("server", "client", "remote-client-bridge"):
        return _unsupported(first, "the simulator's server is started by herdr-sim, not herdr")
    if first == "update":
        return _unsupported("update", "the simulator cannot update itself")
    if any(arg in ("--help", "-h") for arg in args):
        from .help import print_top_level_help

        print_top_level_help()
        return 0
    if any(arg in ("--version", "-V") for arg in args):
        from herdr_sim._version import HERDR_VERSION

        write_out(f"herdr {HERDR_VERSION}\n")
        return 0
    if any(arg in ("--default-config", "--skill") for arg in args):
        flag = next(arg for arg in args if arg in ("--default-config", "--skill"))
        return _unsupported(flag, "the simulator ships no Herdr config or skill file")
    for arg in args:
        name = arg.partition("=")[0]
        if arg.startswith("-") and name not in _KNOWN_FLAGS:
            write_err(f"unknown option: {arg}")
            write_err("run 'herdr --help' for usage")
            return 2
        if not arg.startswith("-") and arg not in _KNOWN_COMMANDS:
            write_err(f"unknown command: {arg}")
            write_err("run 'herdr --help' for usage")
            return 2
    return _unsupported("(no command)", "it starts the terminal UI")
