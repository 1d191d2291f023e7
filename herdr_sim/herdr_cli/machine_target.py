"""The global ``--machine <label-or-id>`` prefix: parsing, the allowed commands, resolution.

Herdr 0.9.1 forwards API-backed CLI commands to a saved SSH machine
(``src/cli/target.rs``). The rules reproduced here, with Herdr's messages (all exit 2,
printed as ``error: <message>``):

* the prefix must come before the command word (after it, ``--machine`` is payload);
  given twice, without a value, with an empty value or one starting with ``-``, or
  combined with another launch option (``--session``, ``--remote``, ...) it is refused;
* only API-backed commands are forwarded (:func:`validate_machine_command`);
* the selector is an exact profile id first, then a unique case-sensitive label, and the
  profile must be enabled; there is no fallback to the local server.

A resolved command runs with a :class:`RemoteSocket` in place of the local socket, so
messages name ``machine:<id>/<session>``, and with ``HERDR_PANE_ID`` removed from the
environment: a local pane id means nothing on another server. The transport itself is
:mod:`herdr_sim.herdr_cli.ssh_bridge`.
"""

from __future__ import annotations

from orchestrator.client.socket_paths import ResolvedSocket

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from herdr_sim.machines.endpoints import SavedMachine

__all__ = [
    "MachineUsageError",
    "RemoteSocket",
    "parse_machine_prefix",
    "remote_path_is_absolute",
    "resolve_machine",
    "validate_machine_command",
]

#: Global options that take a value (so the value is skipped while looking for the command).
_VALUE_OPTIONS = ("--session", "--remote", "--remote-keybindings")
_PLUGIN_SUBCOMMANDS = ("link", "unlink", "enable", "disable", "list", "action", "log", "logs")
_SERVER_SUBCOMMANDS = ("stop", "reload-config", "agent-manifests", "reload-agent-manifests")


class MachineUsageError(Exception):
    """A ``--machine`` command line Herdr refuses: ``error: <message>``, exit 2."""


def parse_machine_prefix(args: list[str]) -> tuple[str, list[str]] | None:
    """``(selector, command args)`` for a ``--machine`` prefix, ``None`` without one.

    ``args`` excludes the program name. Raises :class:`MachineUsageError`.
    """
    index = 0
    machine: str | None = None
    other_prefix = False
    while index < len(args):
        arg = args[index]
        if arg == "--machine" or arg.startswith("--machine="):
            if machine is not None:
                raise MachineUsageError("--machine can only be specified once")
            if arg.startswith("--machine="):
                value = arg.removeprefix("--machine=")
            else:
                index += 1
                if index >= len(args):
                    raise MachineUsageError("missing value for --machine")
                value = args[index]
            if not value.strip() or value.startswith("-"):
                raise MachineUsageError("--machine requires a saved machine label or profile ID")
            machine = value
        elif arg.startswith("-") and arg != "--":
            other_prefix = True
            if arg in _VALUE_OPTIONS:
                index += 1
        else:
            break
        index += 1
    if machine is None:
        return None
    if other_prefix:
        raise MachineUsageError(
            "--machine cannot be combined with other launch options; "
            "it uses the saved machine's session"
        )
    if index >= len(args) or args[index] == "--":
        raise MachineUsageError("usage: herdr --machine <label-or-id> <command>")
    return machine, args[index:]


def validate_machine_command(args: list[str]) -> None:
    """Refuse a command ``--machine`` does not forward (local management, TUI attach)."""
    command = args[0] if args else ""
    sub = args[1] if len(args) > 1 else ""
    if command in ("workspace", "worktree", "tab", "pane", "notification"):
        supported = True
    elif command == "agent":
        explains_file = sub == "explain" and any(
            arg == "--file" or arg.startswith("--file=") for arg in args[2:]
        )
        supported = sub != "attach" and not explains_file
    elif command == "api":
        supported = sub == "snapshot"
    elif command == "status":
        supported = sub == "server"
    elif command == "plugin":
        supported = sub in _PLUGIN_SUBCOMMANDS or sub == "pane"
    elif command == "server":
        supported = sub in _SERVER_SUBCOMMANDS
    else:
        supported = False
    if not supported:
        raise MachineUsageError(
            f"`{command} {sub}` is not an API-backed machine command; "
            "--machine does not run local management commands or attach a TUI"
        )


def resolve_machine(profiles: list[SavedMachine], selector: str) -> SavedMachine:
    """The enabled profile ``selector`` names: exact id first, then a unique label."""
    profile = next((p for p in profiles if p.id == selector), None)
    if profile is None:
        matches = [p for p in profiles if p.label == selector]
        if not matches:
            raise MachineUsageError(f"unknown machine '{selector}'; use `herdr machine list`")
        if len(matches) > 1:
            raise MachineUsageError(f"machine label '{selector}' is ambiguous; use its profile ID")
        profile = matches[0]
    if not profile.enabled:
        raise MachineUsageError(f"machine '{selector}' is disabled")
    return profile


def remote_path_is_absolute(path: str) -> bool:
    """Herdr's test for a path on another machine: ``/``, ``\\\\`` or ``X:/``/``X:\\``."""
    if path.startswith(("/", "\\\\")):
        return True
    drive = len(path) >= 3 and path[0].isascii() and path[0].isalpha() and path[1] == ":"
    return drive and path[2] in "/\\"


class RemoteSocket(ResolvedSocket):
    """The "socket" of a ``--machine`` command: a saved machine's session over SSH."""

    __slots__ = ("profile",)

    def __init__(self, profile: SavedMachine, env: Mapping[str, str]) -> None:
        label = f"machine:{profile.id}/{profile.session}"
        super().__init__(label, profile.session, True, None, env)
        self.profile = profile

    def startup_command(self) -> str:
        """Forwarding never starts a remote server; the user starts it on that machine."""
        return f"herdr --session {self.profile.session}"

    def restart_guidance(self) -> str:
        """Herdr's guidance for a protocol mismatch on a saved machine."""
        return (
            f"Update Herdr and restart the server on machine '{self.profile.label}' "
            f"(session {self.profile.session}). Stopping the server exits its pane processes."
        )
