"""``herdr integration install|uninstall|status``: run in the CLI process, as Herdr's
(``src/cli/integration.rs``): no server is asked, the paths resolve against this process's
environment. In a simulator's pane that is the panes' HOME (the fakes' sandbox); the
simulator's integrations are never written into the user's own home (see
herdr_sim/integrations/)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..client import Context

__all__ = ["run"]

_NAMES = (
    "pi|omp|claude|codex|copilot|devin|droid|kimi|opencode|kilo|hermes|qodercli|qwen|cursor"
    "|mastracode|grok"
)
_SUPPORTED = (
    "pi, omp, claude, codex, copilot, devin, droid, kimi, opencode, kilo, hermes, qodercli, "
    "qwen, cursor, mastracode, antigravity-cli, grok"
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr integration ...``; Herdr's exit codes (usage 2, failure 1)."""
    sub = args[0] if args else None
    if sub == "install" or sub == "uninstall":
        return _act(ctx, sub, args[1:])
    if sub == "status":
        return _status(ctx, args[1:])
    _help()
    return 0 if sub in ("help", "--help", "-h") else 2


def _target(args: list[str], action: str) -> str | None:
    from ..output import write_err

    if len(args) != 1:
        write_err(f"usage: herdr integration {action} <{_NAMES}>")
        return None
    from herdr_sim.integrations import TARGETS

    wanted = "antigravity_cli" if args[0] == "antigravity-cli" else args[0]
    if wanted not in {t.name for t in TARGETS}:
        write_err(f"unknown integration target: {args[0]}")
        write_err(f"currently supported: {_SUPPORTED}")
        return None
    return wanted


def _act(ctx: Context, action: str, args: list[str]) -> int:
    from ..output import write_err, write_out

    name = _target(args, action)
    if name is None:
        return 2
    from herdr_sim.integrations import install, uninstall

    try:
        messages = (install if action == "install" else uninstall)(name, ctx.env)
    except OSError as exc:
        write_err(str(exc) if exc.errno is None else f"{exc.strerror} (os error {exc.errno})")
        return 1
    write_out("".join(f"{message}\n" for message in messages))
    return 0


def _status(ctx: Context, args: list[str]) -> int:
    from ..output import write_err, write_out

    if args not in ([], ["--outdated-only"]):
        write_err("usage: herdr integration status [--outdated-only]")
        return 2
    from herdr_sim.integrations import TARGETS, state_of, version_in

    lines: list[str] = []
    outdated: list[str] = []
    for entry in TARGETS:
        try:
            state, path = state_of(entry, ctx.env)
        except OSError:
            continue
        version = version_in(path) if state != "not_installed" else None
        shown = f"v{version}" if version is not None else "legacy"
        if state == "not_installed":
            text = "not installed"
        elif state == "current":
            text = f"current ({shown})"
        elif version is not None and version >= entry.version:
            text = f"needs repair ({shown})"
        else:
            text = f"outdated ({shown} < v{entry.version})"
        if state == "outdated":
            outdated.append(entry.label)
        lines.append(f"{entry.label}: {text} ({path})\n")
    if args:
        if outdated:
            commands = [f"herdr integration install {label}" for label in outdated]
            joined = (
                commands[0]
                if len(commands) == 1
                else f"{', '.join(commands[:-1])} and {commands[-1]}"
            )
            write_err(f"installed herdr integrations need updating; run {joined}.")
        return 0
    write_out("".join(lines))
    return 0


def _help() -> None:
    from herdr_sim.integrations import TARGETS

    from ..output import write_err

    lines = ["herdr integration commands:"]
    for action in ("install", "uninstall"):
        lines += [f"  herdr integration {action} {t.label}" for t in TARGETS]
    lines.append("  herdr integration status [--outdated-only]")
    for line in lines:
        write_err(line)
