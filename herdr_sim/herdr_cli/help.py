"""Help screens: ``herdr --help`` and ``herdr <command path> --help``.

Real Herdr renders subcommand help with clap. The simulator keeps the same *triggering*
rules (``--help``/``-h`` directly after a known command path prints help to stdout, exit
0; anywhere else it is an ordinary argument) and a clap-like layout, with descriptions of
its own; the text is for people, no client parses it.
"""

from __future__ import annotations

from .output import write_out

__all__ = ["command_table", "print_requested_help", "print_top_level_help"]

# Each node: (description, synopsis for leaves or None, children).
_Node = tuple[str, str | None, dict[str, "_Node"]]


def _leaf(about: str, synopsis: str = "") -> _Node:
    return (about, synopsis, {})


def _group(about: str, children: dict[str, _Node]) -> _Node:
    return (about, None, children)


_CURRENT = "[--pane ID|--current]"
_TREE: dict[str, _Node] = {
    "status": (
        "Report this CLI's version and whether a server answers on the socket",
        "[--json]",
        {
            "server": _leaf("Report only the server side", "[--json]"),
            "client": _leaf("Report only this CLI", "[--json]"),
        },
    ),
    "server": _group(
        "Control the server behind the API socket",
        {
            "stop": _leaf("Stop the server and wait until its sockets are gone"),
            "reload-config": _leaf("Ask the server to reload its configuration"),
            "agent-manifests": _leaf("Print agent detection manifest status", "[--json]"),
            "update-agent-manifests": _leaf("Download detection manifests", "[--json]"),
            "reload-agent-manifests": _leaf("Reload agent detection manifests"),
        },
    ),
    "api": _group(
        "Socket API metadata and the live session",
        {
            "snapshot": _leaf("Print the whole session state as JSON"),
            "schema": _leaf("Print or save the API's JSON schema", "[--json | --output PATH]"),
        },
    ),
    "workspace": _group(
        "Workspaces, through the socket API",
        {
            "list": _leaf("List workspaces"),
            "create": _leaf(
                "Open a new workspace",
                "[--cwd PATH] [--label TEXT] [--env KEY=VALUE]... [--focus|--no-focus]",
            ),
            "get": _leaf("Show one workspace", "<workspace_id>"),
            "focus": _leaf("Switch to a workspace", "<workspace_id>"),
            "rename": _leaf("Give a workspace a new label", "<workspace_id> <label>..."),
            "report-metadata": _leaf(
                "Set or clear workspace metadata tokens",
                "<workspace_id> --source ID [--token NAME=VALUE]... [--clear-token NAME]... "
                "[--seq N] [--ttl-ms N]",
            ),
            "close": _leaf("Close a workspace", "<workspace_id> [--group]"),
        },
    ),
    "worktree": _group(
        "Git worktrees of a workspace's repository, opened as workspaces",
        {
            "list": _leaf("List the repository's worktrees", "[--workspace ID | --cwd PATH]"),
            "create": _leaf(
                "Check a branch out as a new worktree and open it",
                "[--workspace ID | --cwd PATH] [--branch NAME] [--base REF] [--path PATH] "
                "[--label TEXT] [--focus] [--no-focus]",
            ),
            "open": _leaf(
                "Open an existing worktree as a workspace",
                "[--workspace ID | --cwd PATH] (--path PATH | --branch NAME) [--label TEXT] "
                "[--focus] [--no-focus]",
            ),
            "remove": _leaf(
                "Remove a linked worktree and close its workspace", "--workspace ID [--force]"
            ),
        },
    ),
    "tab": _group(
        "Tabs, through the socket API",
        {
            "list": _leaf("List tabs", "[--workspace ID]"),
            "create": _leaf(
                "Open a new tab",
                "[--workspace ID] [--cwd PATH] [--label TEXT] [--env KEY=VALUE]... "
                "[--focus|--no-focus]",
            ),
            "get": _leaf("Show one tab", "<tab_id>"),
            "focus": _leaf("Switch to a tab", "<tab_id>"),
            "rename": _leaf("Give a tab a new label", "<tab_id> <label>..."),
            "close": _leaf("Close a tab", "<tab_id>"),
        },
    ),
    "notification": _group(
        "Notifications",
        {
            "show": _leaf(
                "Pop up a notification",
                "<title> [--body TEXT] [--position POSITION] [--sound none|done|request]",
            )
        },
    ),
    "agent": _group(
        "Agents running in panes",
        {
            "list": _leaf("List agents"),
            "get": _leaf("Show one agent", "<target>"),
            "read": _leaf(
                "Print an agent's terminal text",
                "<target> [--source SOURCE] [--lines N] [--format text|ansi] [--ansi]",
            ),
            "send-keys": _leaf("Press keys in an agent's pane", "<target> <key>..."),
            "prompt": _leaf(
                "Type a prompt into an agent and submit it",
                "<target> <text> [--wait] [--until STATUS]... [--timeout MS]",
            ),
            "rename": _leaf("Name or unname an agent", "<target> <name>|--clear"),
            "focus": _leaf("Focus an agent's pane", "<target>"),
            "wait": _leaf(
                "Block until an agent reaches a status",
                "<target> [--until STATUS]... [--timeout MS]",
            ),
            "attach": _leaf("Attach to an agent's terminal", "<target> [--takeover]"),
            "start": _leaf(
                "Launch an agent in an idle shell pane",
                "<name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]",
            ),
            "explain": _leaf(
                "Explain how an agent's state was detected",
                "<target> [--json|--format text|json] [--verbose]",
            ),
        },
    ),
    "pane": _group(
        "Panes, through the socket API",
        {
            "list": _leaf("List panes", "[--workspace ID]"),
            "current": _leaf("Show the calling (or focused) pane", _CURRENT),
            "get": _leaf("Show one pane", "<pane_id>"),
            "layout": _leaf("Show the layout around a pane", _CURRENT),
            "process-info": _leaf("Show a pane's shell and foreground processes", _CURRENT),
            "neighbor": _leaf("Find the pane next to another", "--direction DIR " + _CURRENT),
            "edges": _leaf("Show which area edges a pane touches", _CURRENT),
            "focus": _leaf("Move focus to a neighbouring pane", "--direction DIR " + _CURRENT),
            "resize": _leaf("Move a split border", "--direction DIR [--amount FLOAT] " + _CURRENT),
            "zoom": _leaf(
                "Zoom or unzoom a pane", "[<pane_id>|--pane ID|--current] [--toggle|--on|--off]"
            ),
            "read": _leaf(
                "Print a pane's terminal text",
                "<pane_id> [--source SOURCE] [--lines N] [--format text|ansi] [--ansi] [--raw]",
            ),
            "rename": _leaf("Label or unlabel a pane", "<pane_id> <label>...|--clear"),
            "input": _leaf(
                "Route right clicks to Herdr or to the pane",
                "[<pane_id>|--pane ID|--current] --right-click herdr|pane",
            ),
            "split": _leaf(
                "Split a pane",
                "[<pane_id>|--pane ID|--current] --direction right|down [--ratio FLOAT] "
                "[--cwd PATH] [--env KEY=VALUE]... [--right-click herdr|pane] [--focus]",
            ),
            "swap": _leaf(
                "Swap two panes",
                "--direction DIR " + _CURRENT + " | --source-pane ID --target-pane ID",
            ),
            "move": _leaf(
                "Move a pane to another tab or workspace",
                "<pane_id> (--tab ID --split right|down | --new-tab | --new-workspace) ...",
            ),
            "close": _leaf("Close a pane", "<pane_id>"),
            "send-text": _leaf("Type text into a pane (no Enter)", "<pane_id> <text>..."),
            "send-keys": _leaf("Press keys in a pane", "<pane_id> <key>..."),
            "wait-output": _leaf(
                "Block until a pane shows matching text",
                "<pane_id> (--match TEXT | --regex PATTERN) [--source SOURCE] [--lines N] "
                "[--timeout MS] [--raw]",
            ),
            "report-agent": _leaf(
                "Report an agent's state for a pane",
                "<pane_id> --source ID --agent LABEL --state STATE [--message TEXT] "
                "[--seq N] [--agent-session-id ID] [--agent-session-path PATH] "
                "[-- <resume command...>]",
            ),
            "report-agent-session": _leaf(
                "Report an agent's session for a pane",
                "<pane_id> --source ID --agent LABEL [--seq N] [--agent-session-id ID] "
                "[--agent-session-path PATH] [--session-start-source SOURCE] "
                "[-- <resume command...>]",
            ),
            "release-agent": _leaf(
                "Give up a reported agent", "<pane_id> --source ID --agent LABEL [--seq N]"
            ),
            "report-metadata": _leaf(
                "Report display metadata for a pane", "<pane_id> --source ID [OPTIONS]"
            ),
            "run": _leaf("Type a command into a pane and press Enter", "<pane_id> <command>..."),
        },
    ),
    "terminal": _group(
        "The outer terminal and raw terminal streams",
        {
            "attach": _leaf("Attach to a terminal stream", "<terminal_id> [--takeover]"),
            "session": _group(
                "Drive or watch a terminal stream",
                {
                    "control": _leaf(
                        "Drive a terminal stream", "<target> [--takeover] [--cols N] [--rows N]"
                    ),
                    "observe": _leaf("Watch a terminal stream", "<target> [--cols N] [--rows N]"),
                },
            ),
            "title": _group(
                "The outer terminal's title",
                {
                    "set": _leaf("Set the title", "<title>"),
                    "clear": _leaf("Clear the title"),
                },
            ),
        },
    ),
    "config": _group(
        "The configuration file",
        {
            "check": _leaf("Validate config.toml and print diagnostics"),
            "reset-keys": _leaf("Back up config.toml and remove custom keybindings"),
        },
    ),
    "completion": _leaf("Print a shell completion script", "<bash|elvish|fish|powershell|zsh>"),
    "session": _group(
        "Named sessions (separate servers)",
        {
            "list": _leaf("List sessions", "[--json]"),
            "attach": _leaf("Open a session in the TUI", "<name>"),
            "stop": _leaf("Stop a session's server", "<name> [--json]"),
            "delete": _leaf("Delete a stopped session's files", "<name> [--json]"),
        },
    ),
}


def command_table() -> dict[tuple[str, ...], tuple[list[str], list[str]]]:
    """Every command path of this CLI (``()`` is ``herdr`` itself) with its subcommands and
    the options its synopsis names: what ``herdr completion`` completes."""
    import re

    table: dict[tuple[str, ...], tuple[list[str], list[str]]] = {
        (): (list(_TREE), ["--session", "--machine", "--version", "--help"])
    }

    def visit(path: tuple[str, ...], node: _Node) -> None:
        _about, synopsis, children = node
        options = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", synopsis or "")))
        table[path] = (list(children), [*options, "--help"])
        for name, child in children.items():
            visit((*path, name), child)

    for name, node in _TREE.items():
        visit((name,), node)
    return table


def _render(path: list[str], node: _Node) -> str:
    about, synopsis, children = node
    name = " ".join(path)
    lines = [about, ""]
    if children:
        suffix = f" {synopsis}" if synopsis else ""
        lines.append(f"Usage: {name}{suffix} [COMMAND]")
        lines += ["", "Commands:"]
        width = max(len(child) for child in children)
        lines += [f"  {child:<{width}}  {value[0]}" for child, value in children.items()]
    else:
        lines.append(f"Usage: {name} {synopsis}".rstrip())
    lines += ["", "Options:", "  -h, --help  Print help"]
    return "\n".join(lines) + "\n\n"


def print_requested_help(args: list[str]) -> bool:
    """Print help when ``--help``/``-h`` directly follows a known command path.

    ``args`` excludes the program name. Returns whether help was printed.
    """
    help_index = next((i for i, arg in enumerate(args) if arg in ("--help", "-h")), None)
    if help_index is None or help_index < 1 or "--" in args[:help_index]:
        return False
    path = ["herdr"]
    children = _TREE
    node: _Node | None = None
    for segment in args[:help_index]:
        if segment not in children:
            break
        node = children[segment]
        path.append(segment)
        children = node[2]
    if node is None or len(path) - 1 != help_index:
        return False
    write_out(_render(path, node))
    return True


def print_top_level_help() -> None:
    """``herdr --help``: what this CLI offers (stdout, exit 0)."""
    from herdr_sim._version import HERDR_VERSION

    commands = [
        ("herdr status [server|client]", "client version and server status"),
        ("herdr server stop", "stop the server behind the API socket"),
        ("herdr api <subcommand>", "API schema and live session snapshot"),
        ("herdr workspace <subcommand>", "workspaces over the socket API"),
        ("herdr worktree <subcommand>", "git worktrees over the socket API"),
        ("herdr tab <subcommand>", "tabs over the socket API"),
        ("herdr pane <subcommand>", "panes over the socket API"),
        ("herdr agent <subcommand>", "agents over the socket API"),
        ("herdr notification <subcommand>", "notifications over the socket API"),
        ("herdr session <subcommand>", "named sessions (separate servers)"),
        ("herdr plugin <subcommand>", "linked plugins, their actions, logs and panes"),
        ("herdr integration <subcommand>", "agent integrations in this HOME"),
        ("herdr machine <subcommand>", "saved SSH machines"),
        ("herdr config check", "validate config.toml"),
        ("herdr completion <shell>", "print a shell completion script"),
    ]
    lines = [
        f"herdr (simulator CLI, Herdr {HERDR_VERSION} compatible)",
        "",
        "Usage: herdr [--session <name>] <command> ...",
        "",
        "Commands:",
        *(f"  {command:<32} {description}" for command, description in commands),
        "",
        "Options:",
        "  --session <name>    Talk to a named session's server",
        "  --machine <label-or-id>  Run an API-backed command on a saved SSH machine",
        "  --version, -V       Print the version and exit",
        "  --help, -h          Show this help",
        "",
        "The TUI, remote attach and plugin install are not simulated.",
    ]
    write_out("\n".join(lines) + "\n")
