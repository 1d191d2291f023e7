"""The global ``--machine`` prefix before any SSH: parsing, allowed commands, resolution.

Each refusal is Herdr's (``src/cli/target.rs``): ``error: <message>`` on stderr, exit 2, and
no ``ssh`` started. The catalog names a target that does not exist, so a command that got
as far as SSH would fail differently (exit 1): every exit 2 here proves the refusal came
first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Run

ID_A = "0123456789abcdef0123456789abcdef"
ID_B = "fedcba9876543210fedcba9876543210"
ID_C = "00000000000000000000000000000001"
COMBINED = (
    "--machine cannot be combined with other launch options; it uses the saved machine's session"
)
UNKNOWN = "unknown machine '{}'; use `herdr machine list`"


@pytest.fixture(autouse=True)
def catalog(clean_env: Path) -> Path:
    """``box`` (enabled), ``off`` (disabled), and two profiles both labelled ``twin``."""

    def entry(pid: str, label: str, enabled: bool = True) -> dict[str, object]:
        return {
            "id": pid,
            "label": label,
            "target": "nowhere.invalid",
            "session": "default",
            "enabled": enabled,
        }

    path = clean_env / "state" / "client" / "endpoints.json"
    path.parent.mkdir(parents=True)
    profiles = [entry(ID_A, "box"), entry(ID_B, "off", enabled=False)]
    profiles += [entry(ID_C, "twin"), entry("0" * 31 + "2", "twin")]
    path.write_text(json.dumps({"version": 1, "ssh": profiles}))
    # an empty ssh config of our own: ssh never reads the user's ~/.ssh/config here
    (clean_env / "ssh").mkdir()
    (clean_env / "ssh" / "config").write_text("")
    return path


def refused(run: Run, message: str) -> None:
    assert run == Run(2, "", f"error: {message}\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--machine",), "missing value for --machine"),
        (("--machine=",), "--machine requires a saved machine label or profile ID"),
        (("--machine", " ", "pane", "list"), "--machine requires a saved machine label or"),
        (("--machine", "--help"), "--machine requires a saved machine label or profile ID"),
        (("--machine", "-box", "pane", "list"), "--machine requires a saved machine label or"),
        (("--machine", "box"), "usage: herdr --machine <label-or-id> <command>"),
        (("--machine", "box", "--"), "usage: herdr --machine <label-or-id> <command>"),
        (
            ("--machine", "box", "--machine", "off", "pane", "list"),
            "--machine can only be specified once",
        ),
        (
            ("--machine", "box", "--session", "s", "pane", "list"),
            COMBINED,
        ),
        (
            ("--session", "s", "--machine=box", "pane", "list"),
            COMBINED,
        ),
        (
            ("--remote", "host", "--machine", "box", "pane", "list"),
            COMBINED,
        ),
    ],
)
def test_prefix_parse_errors(cli: Callable[..., Run], argv: tuple[str, ...], message: str) -> None:
    run = cli(*argv)
    assert run.code == 2
    assert run.err.startswith(f"error: {message}"), run


@pytest.mark.parametrize(
    "command",
    [
        ("update",),
        ("config", "reset-keys"),
        ("machine", "list"),
        ("session", "delete", "default"),
        ("server", "live-handoff"),
        ("agent", "attach", "w1:p1"),
        ("agent", "explain", "--file", "x.json"),
        ("agent", "explain", "w1:p1", "--file=x.json"),
        ("terminal", "attach", "w1:p1"),
        ("plugin", "install", "./p"),
        ("integration", "install", "pi"),
        ("api", "schema", "--output", "s.json"),
        ("status", "client"),
        ("status",),
    ],
)
def test_local_commands_are_not_forwarded(
    cli: Callable[..., Run], command: tuple[str, ...]
) -> None:
    pair = f"{command[0]} {command[1] if len(command) > 1 else ''}"
    refused(
        cli("--machine", "box", *command),
        f"`{pair}` is not an API-backed machine command; "
        "--machine does not run local management commands or attach a TUI",
    )


def test_after_the_command_word_machine_is_payload(cli: Callable[..., Run]) -> None:
    """``--machine=box`` after ``pane get`` is the pane id, sent to the local socket."""
    run = cli("pane", "get", "--machine=box")
    assert run.code == 1
    assert json.loads(run.err)["error"]["code"] == "server_not_running"


def test_resolution_errors(cli: Callable[..., Run]) -> None:
    refused(
        cli("--machine", "nope", "pane", "list"), "unknown machine 'nope'; use `herdr machine list`"
    )
    refused(
        cli("--machine", "BOX", "pane", "list"), "unknown machine 'BOX'; use `herdr machine list`"
    )
    refused(cli("--machine", "off", "pane", "list"), "machine 'off' is disabled")
    refused(cli("--machine", ID_B, "pane", "list"), f"machine '{ID_B}' is disabled")
    refused(
        cli("--machine", "twin", "pane", "list"),
        "machine label 'twin' is ambiguous; use its profile ID",
    )


def test_help_is_printed_locally_without_a_catalog(cli: Callable[..., Run], catalog: Path) -> None:
    catalog.unlink()
    run = cli("--machine", "nowhere", "pane", "list", "--help")
    assert run.code == 0 and "pane list" in run.out


def test_remote_worktree_paths_must_be_absolute(cli: Callable[..., Run]) -> None:
    run = cli("--machine", "box", "worktree", "create", "--path", "../other")
    assert run == Run(
        1,
        "",
        "Error: Custom { kind: InvalidInput, error: "
        '"remote worktree paths must be absolute or start with ~/" }\n',
    )
    run = cli("--machine", ID_A, "worktree", "list", "--cwd", "rel/dir")
    assert run.code == 1 and "remote worktree paths must be absolute" in run.err


def test_remote_plugin_link_paths_must_be_absolute(cli: Callable[..., Run]) -> None:
    """The path is the remote machine's: never expanded or made absolute here."""
    run = cli("--machine", "box", "plugin", "link", "./my-plugin")
    assert run == Run(
        1, "", 'Error: Custom { kind: Other, error: "remote plugin link paths must be absolute" }\n'
    )


def test_local_pane_id_means_nothing_on_a_machine(
    cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_PANE_ID", "w1:p1")
    assert cli("--machine", "box", "pane", "layout", "--current") == Run(
        2, "", "--current requires HERDR_PANE_ID\n"
    )


def test_an_unreachable_machine_fails_with_the_label(cli: Callable[..., Run]) -> None:
    """A selector that resolves reaches ssh; the failure names the machine, exit 1."""
    run = cli("--machine", "box", "pane", "list")
    assert run.code == 1
    assert run.err.startswith("Error: Custom { kind: Other, error: \"machine 'box': "), run
    assert "nowhere.invalid" in run.err


def test_top_level_help_names_machines(cli: Callable[..., Run]) -> None:
    out = cli("--help").out
    assert "herdr machine <subcommand>" in out and "--machine <label-or-id>" in out
