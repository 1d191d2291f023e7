"""`herdr machine ...`: the saved SSH machines, as Herdr 0.9.2's ``src/cli/machine.rs``.

``list``/``add``/``rename``/``remove``/``enable``/``disable`` read and write the catalog
(:mod:`herdr_sim.machines.endpoints`) with Herdr's messages and exit codes: usage errors
exit 2, an unknown profile exits 1 (``machine profile <id> was not found``), a catalog
that cannot be read escapes as ``Error: ...`` (exit 1). ``status`` and ``reconnect``
(0.9.2) check machines over SSH.

What differs, because the simulator cannot install software on another machine: ``add``
"prepares" the remote by checking that its Herdr answers ``remote-api-bridge --check``
and that the session's server is running, and says why it did not save the machine
otherwise; it never installs, updates or starts anything. ``status`` and ``reconnect``
print the simulator's own row shapes (Herdr's are not documented; docs/simulator/
fidelity.md). Changes are not pushed to open TUI clients: the simulator has none.
"""

from __future__ import annotations

import json

from herdr_sim.machines.endpoints import (
    CatalogError,
    EndpointCatalog,
    SavedMachine,
    parse_profile_id,
)

from ..client import Context
from ..errors import FatalError
from ..output import rust_custom_error, rust_debug_str, write_err, write_out

__all__ = ["run"]

_HELP = (
    "Usage:",
    "  herdr machine list [--json]",
    "  herdr machine status [<label-or-id>] [--json]",
    "  herdr machine reconnect <label-or-id>",
    (
        "  herdr machine add <ssh-target> [--label <label>] [--remote-session <name>] "
        "[--remote-desktop]"
    ),
    "  herdr machine rename <profile-id> --label <label>",
    "  herdr machine remove <profile-id>",
    "  herdr machine enable <profile-id>",
    "  herdr machine disable <profile-id>",
    "",
    "Add checks that the remote Herdr answers and its server runs before saving.",
    "Removing or disabling a machine leaves its remote sessions running.",
    (
        "Saved machines contain a label, SSH target, explicit Herdr session, enabled state, "
        "and desktop hosting choice."
    ),
    "SSH credentials and key material remain owned by OpenSSH.",
)
_ADD_USAGE = (
    "usage: herdr machine add <ssh-target> [--label <label>] [--remote-session <name>] "
    "[--remote-desktop]"
)
_RENAME_USAGE = "usage: herdr machine rename <profile-id> --label <label>"


def _fatal(message: str) -> FatalError:
    return FatalError(rust_custom_error(rust_debug_str(message)), message)


def _load(ctx: Context) -> EndpointCatalog:
    try:
        return EndpointCatalog.load(ctx.env)
    except CatalogError as err:
        raise _fatal(str(err)) from None


def _store(ctx: Context, catalog: EndpointCatalog, *, selection: bool = False) -> None:
    try:
        catalog.store(ctx.env)
        if selection:
            catalog.store_selection(ctx.env)
    except CatalogError as err:
        raise _fatal(str(err)) from None


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr machine <subcommand>``."""
    sub = args[0] if args else None
    rest = args[1:]
    if sub == "list":
        return _list(ctx, rest)
    if sub == "status":
        return _status(ctx, rest)
    if sub == "reconnect":
        return _reconnect(ctx, rest)
    if sub == "add":
        return _add(ctx, rest)
    if sub == "rename":
        return _rename(ctx, rest)
    if sub == "remove":
        return _remove(ctx, rest)
    if sub in ("enable", "disable"):
        return _set_enabled(ctx, rest, sub == "enable")
    if sub in ("help", "--help", "-h"):
        write_out("\n".join(_HELP) + "\n")
        return 0
    write_err("\n".join(_HELP))
    return 2


# -- list ---------------------------------------------------------------------------------------


def _list(ctx: Context, args: list[str]) -> int:
    if args not in ([], ["--json"]):
        write_err("usage: herdr machine list [--json]")
        return 2
    catalog = _load(ctx)
    rows = [
        {
            "id": p.id,
            "label": p.label,
            "target": p.target,
            "session": p.session,
            "enabled": p.enabled,
            "selected": catalog.selected_profile == p.id,
            "windows_desktop": p.windows_desktop,
        }
        for p in catalog.ssh
    ]
    if args:
        write_out(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    elif not rows:
        write_out("No saved SSH machines.\n")
    else:
        for row in rows:
            state = "enabled" if row["enabled"] else "disabled"
            write_out(f"{row['id']}\t{row['label']}\t{row['target']}\t{row['session']}\t{state}\n")
    return 0


# -- add / rename / remove / enable / disable -------------------------------------------------


def _expand_equals(args: list[str], names: tuple[str, ...]) -> list[str]:
    """``--name=value`` -> ``--name value`` for the named options (Herdr's expand_equals_args)."""
    out: list[str] = []
    for arg in args:
        name, eq, value = arg.partition("=")
        if eq and name in names:
            out += [name, value]
        else:
            out.append(arg)
    return out


def _parse_add(args: list[str]) -> tuple[str, str | None, str, bool]:
    """``(target, label, session, windows_desktop)``; raises ``ValueError`` with the message."""
    args = _expand_equals(args, ("--label", "--remote-session"))
    target: str | None = None
    values: dict[str, str] = {}
    desktop = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--label", "--remote-session"):
            if index + 1 >= len(args):
                raise ValueError(f"missing value for {arg}")
            if arg in values:
                raise ValueError(f"{arg} can only be specified once")
            values[arg] = args[index + 1]
            index += 2
            continue
        if arg == "--remote-desktop":
            if desktop:
                raise ValueError("--remote-desktop can only be specified once")
            desktop = True
        elif not arg.startswith("-") and target is None:
            target = arg
        else:
            raise ValueError(f"unknown machine add option: {arg}")
        index += 1
    if target is None:
        raise ValueError(_ADD_USAGE)
    return target, values.get("--label"), values.get("--remote-session", "default"), desktop


def _default_label(target: str) -> str:
    """The SSH host of ``target`` (Herdr 0.9.2's default label)."""
    authority = target.removeprefix("ssh://")
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        return host[1:].partition("]")[0] or host
    return host.partition(":")[0] or host


def _add(ctx: Context, args: list[str]) -> int:
    try:
        target, label, session, desktop = _parse_add(args)
    except ValueError as err:
        write_err(str(err))
        return 2
    label = label if label is not None else _default_label(target)
    try:
        candidate = _load(ctx).add(label, target, session, desktop)
    except CatalogError as err:
        write_err(f"error: {err}")
        return 2
    from ..ssh_bridge import BridgeError, probe

    try:
        probe(candidate, ctx.env)
    except BridgeError as err:
        write_err(f"error: {err}; machine was not saved")
        write_err(
            f"Check `ssh {target}` works non-interactively and start Herdr's server there "
            f"(session {session}); the simulator never installs or starts it."
        )
        return 1
    try:
        catalog = EndpointCatalog.load(ctx.env)
    except CatalogError as err:
        raise _fatal(f"remote prepared, but machine was not saved: {err}") from None
    try:
        saved = catalog.add(label, target, session, desktop)
    except CatalogError as err:
        write_err(f"error: {err}")
        return 2
    try:
        catalog.store(ctx.env)
    except CatalogError as err:
        raise _fatal(f"remote prepared, but machine was not saved: {err}") from None
    write_out(f"Saved SSH machine {saved.id}. Remote server is ready.\n")
    write_out("Open Herdr clients connect automatically.\n")
    return 0


def _profile_id(raw: str) -> str | None:
    try:
        return parse_profile_id(raw)
    except CatalogError as err:
        write_err(f"error: {err}")
        return None


def _rename(ctx: Context, args: list[str]) -> int:
    args = _expand_equals(args, ("--label",))
    if len(args) != 3 or args[1] != "--label":
        write_err(_RENAME_USAGE)
        return 2
    profile_id = _profile_id(args[0])
    if profile_id is None:
        return 2
    catalog = _load(ctx)
    try:
        found = catalog.rename(profile_id, args[2])
    except CatalogError as err:
        write_err(f"error: {err}")
        return 2
    if not found:
        write_err(f"machine profile {profile_id} was not found")
        return 1
    _store(ctx, catalog)
    write_out(f"Renamed SSH machine {profile_id}.\n")
    return 0


def _one_id(args: list[str], usage: str) -> str | None:
    if len(args) != 1:
        write_err(usage)
        return None
    return _profile_id(args[0])


def _remove(ctx: Context, args: list[str]) -> int:
    profile_id = _one_id(args, "usage: herdr machine remove <profile-id>")
    if profile_id is None:
        return 2
    catalog = _load(ctx)
    before = catalog.selected_profile
    if not catalog.remove(profile_id):
        write_err(f"machine profile {profile_id} was not found")
        return 1
    _store(ctx, catalog, selection=catalog.selected_profile != before)
    write_out(f"Removed SSH machine {profile_id}.\n")
    return 0


def _set_enabled(ctx: Context, args: list[str], enabled: bool) -> int:
    action = "enable" if enabled else "disable"
    profile_id = _one_id(args, f"usage: herdr machine {action} <profile-id>")
    if profile_id is None:
        return 2
    catalog = _load(ctx)
    before = catalog.selected_profile
    if not catalog.set_enabled(profile_id, enabled):
        write_err(f"machine profile {profile_id} was not found")
        return 1
    _store(ctx, catalog, selection=catalog.selected_profile != before)
    write_out(f"{'Enabled' if enabled else 'Disabled'} SSH machine {profile_id}.\n")
    return 0


# -- status / reconnect -------------------------------------------------------------------------


def _select(ctx: Context, selector: str) -> SavedMachine | None:
    """The profile ``selector`` names (id, then unique label; disabled ones too)."""
    profiles = _load(ctx).ssh
    profile = next((p for p in profiles if p.id == selector), None)
    if profile is not None:
        return profile
    matches = [p for p in profiles if p.label == selector]
    if len(matches) == 1:
        return matches[0]
    if matches:
        write_err(f"error: machine label '{selector}' is ambiguous; use its profile ID")
    else:
        write_err(f"error: unknown machine '{selector}'; use `herdr machine list`")
    return None


def _status(ctx: Context, args: list[str]) -> int:
    json_out = "--json" in args
    rest = [arg for arg in args if arg != "--json"]
    if len(rest) > 1 or args.count("--json") > 1 or any(a.startswith("-") for a in rest):
        write_err("usage: herdr machine status [<label-or-id>] [--json]")
        return 2
    if rest:
        chosen = _select(ctx, rest[0])
        if chosen is None:
            return 2
        profiles = [chosen]
    else:
        profiles = _load(ctx).ssh
    from ..ssh_bridge import BridgeError, probe

    rows = []
    for profile in profiles:
        error: str | None = None
        if profile.enabled:
            try:
                probe(profile, ctx.env)
            except BridgeError as err:
                error = str(err)
        rows.append(
            {
                "id": profile.id,
                "label": profile.label,
                "target": profile.target,
                "session": profile.session,
                "enabled": profile.enabled,
                "reachable": profile.enabled and error is None,
                "error": error,
            }
        )
    if json_out:
        write_out(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not rows:
        write_out("No saved SSH machines.\n")
    for row in rows:
        state = "reachable" if row["reachable"] else "unreachable"
        if not row["enabled"]:
            state = "disabled"
        detail = f"\t{row['error']}" if row["error"] else ""
        write_out(f"{row['id']}\t{row['label']}\t{state}{detail}\n")
    return 0


def _reconnect(ctx: Context, args: list[str]) -> int:
    if len(args) != 1 or args[0].startswith("-"):
        write_err("usage: herdr machine reconnect <label-or-id>")
        return 2
    profile = _select(ctx, args[0])
    if profile is None:
        return 2
    from ..ssh_bridge import BridgeError, interactive_check, probe

    try:
        interactive_check(profile, ctx.env)
        probe(profile, ctx.env)
    except BridgeError as err:
        write_err(f"error: machine '{profile.label}': {err}")
        return 1
    write_out(f"SSH machine {profile.id} is reachable.\n")
    return 0
