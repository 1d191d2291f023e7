"""Usage errors: exact messages, exit codes, and no contact with the server."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from tests.cli.fake_herdr import FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run

USAGE_ERRORS: list[tuple[list[str], str]] = [
    (["pane", "read", "w1:p1", "--source", "bogus"], "invalid read source: bogus"),
    (["pane", "read"], ("usage: herdr pane read <pane_id> [--source visible|recent|"
     "recent-unwrapped|detection] [--lines N] [--format text|ansi] [--ansi] [--raw]")),
    (["pane", "read", "w1:p1", "--lines", "-1"], "invalid value for --lines: -1"),
    (["pane", "read", "a", "b"], "unexpected argument: b"),
    (["pane", "read", "a", "--bogus"], "unknown option: --bogus"),
    (["pane", "wait-output", "w1:p1"], "missing required --match or --regex"),
    (["pane", "wait-output", "w1:p1", "--match", "a", "--regex", "b"],
     "--match and --regex are mutually exclusive"),
    (["pane", "get"], "usage: herdr pane get <pane_id>"),
    (["pane", "list", "--workspace"], "missing value for --workspace"),
    (["pane", "split", "--direction", "left"], "invalid split direction: left"),
    (["pane", "split", "--direction", "down", "--ratio", "NaN"], "invalid ratio: NaN"),
    (["pane", "split", "--direction", "down", "--ratio", " 0.5"], "invalid ratio:  0.5"),
    (["pane", "split", "--direction", "down", "--current"], "--current requires HERDR_PANE_ID"),
    (["pane", "input", "--current", "--right-click", "pane"], "--current requires HERDR_PANE_ID"),
    (["pane", "layout", "--current"], "--current requires HERDR_PANE_ID"),
    (["pane", "input", "a", "--pane", "b", "--right-click", "pane"],
     "provide only one pane selector"),
    (["pane", "zoom", "--on", "--off"], "provide only one of --toggle, --on, or --off"),
    (["pane", "neighbor", "--direction", "north"],
     "invalid pane direction: north (expected left, right, up, or down)"),
    (["pane", "focus", "--direction", "north"],
     "usage: herdr pane focus --direction left|right|up|down [--pane ID|--current]"),
    (["pane", "resize", "--direction", "up", "--amount", "x"], "invalid amount: x"),
    (["pane", "move", "w1:p1", "--target-pane", "w1:p2"], ("usage: herdr pane move <pane_id> "
     "--tab <tab_id> --split right|down [--target-pane ID] [--ratio FLOAT] [--focus|--no-focus]"
     "\n       herdr pane move <pane_id> --new-tab [--workspace ID] [--label TEXT] "
     "[--focus|--no-focus]\n       herdr pane move <pane_id> --new-workspace [--label TEXT] "
     "[--tab-label TEXT] [--focus|--no-focus]")),
    (["pane", "swap", "--direction", "left", "--source-pane", "a", "--target-pane", "b"],
     ("usage: herdr pane swap --direction left|right|up|down [--pane ID|--current]\n"
     "       herdr pane swap --source-pane ID --target-pane ID")),
    (["pane", "report-agent", "w1:p1", "--source", "  ", "--agent", "a", "--state", "idle"],
     "missing required --source"),
    (["pane", "report-agent", "w1:p1", "--source", "s", "--state", "idle"],
     "missing required --agent"),
    (["pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a"],
     "missing required --state"),
    (["pane", "report-agent", "w1:p1", "--source", "s", "--bogus", "x"], "unknown option: --bogus"),
    (["pane", "report-metadata", "w1:p1", "--source", "s"],
     "missing metadata field to set or clear"),
    (["pane", "report-metadata", "w1:p1", "--source", "s", "--title", "t", "--clear-title"],
     "cannot set and clear the same metadata field"),
    (["pane", "report-metadata", "w1:p1", "--source", "s", "--state-label", "Sleepy=z"],
     "unknown state label: sleepy"),
    (["pane", "report-metadata", "w1:p1", "--source", "s", "--token", "novalue"],
     "token must use NAME=VALUE"),
    (["workspace", "create", "--env", "NOEQUALS"], "env must use KEY=VALUE"),
    (["workspace", "create", "--env", "=v"], "env key must not be empty"),
    (["workspace", "report-metadata", "w1", "--source", "s"], "missing token to set or clear"),
    (["workspace", "list", "extra"], "usage: herdr workspace list"),
    (["tab", "rename", "w1:t1"], "usage: herdr tab rename <tab_id> <label>"),
    (["agent", "prompt", "r"], "agent prompt requires text"),
    (["agent", "prompt", "r", "hi", "--until", "idle"], "--until requires --wait"),
    (["agent", "prompt", "r", "hi", "--timeout", "5"], "--timeout requires --wait"),
    (["agent", "prompt", "r", "hi", "--wait", "--until"], "--until requires at least one status"),
    (["agent", "wait", "r", "--until", "finished"],
     "invalid agent status: finished (expected idle, working, blocked, done, or unknown)"),
    (["agent", "wait", "r", "--timeout", "soon"], "invalid value for --timeout: soon"),
    (["agent", "rename", "r"], "usage: herdr agent rename <target> <name>|--clear"),
    (["agent", "start", "n", "--kind", "vim", "--pane", "w1:p1"],
     "unsupported interactive agent kind: vim"),
    (["agent", "start", "n", "--pane", "w1:p1"], "missing required --kind"),
    (["agent", "start", "n", "--kind", "pi", "--pane", "--", "x"], "missing value for --pane"),
    (["agent", "explain", "a", "--agent", "pi"], "--agent is only valid with --file"),
    (["notification", "show", "T", "--sound", "loud"],
     "invalid sound: loud (expected none, done, or request)"),
    (["api", "schema", "--output"], "missing value for --output"),
    (["session", "stop"], "usage: herdr session stop <name> [--json]"),
    (["status", "server", "extra"], "usage: herdr status server [--json]"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"), USAGE_ERRORS, ids=[" ".join(case[0]) for case in USAGE_ERRORS]
)
def test_usage_errors_exit_2_without_contacting_the_server(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str], message: str
) -> None:
    run = cli(*argv)
    assert run.code == 2
    assert run.out == ""
    assert run.err == message + "\n"
    assert fake.requests == []


RUST_ERRORS: list[tuple[list[str], str]] = [
    (["pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a", "--state", "done"],
     "invalid pane agent state: done (expected idle, working, blocked, or unknown)"),
    (["pane", "report-agent", "w1:p1", "--seq", "abc"], "invalid value for --seq: abc"),
    (["pane", "release-agent", "w1:p1", "--seq", "1.5"], "invalid value for --seq: 1.5"),
    (["agent", "read", "r", "--source", "bogus"], "invalid read source: bogus"),
    (["agent", "read", "r", "--lines", "4294967296"], "invalid value for --lines: 4294967296"),
    (["workspace", "report-metadata", "w1", "--ttl-ms", "x"], "invalid value for --ttl-ms: x"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"), RUST_ERRORS, ids=[" ".join(case[0]) for case in RUST_ERRORS]
)
def test_value_errors_herdr_propagates_exit_1_as_rust_errors(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str], message: str
) -> None:
    run = cli(*argv)
    assert run.code == 1
    assert run.err == f'Error: Custom {{ kind: Other, error: "{message}" }}\n'
    assert fake.requests == []


def test_group_without_subcommand_prints_its_commands_and_exits_2(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    run = cli("pane")
    assert run.code == 2
    assert run.err_lines[0] == "herdr pane commands:"
    assert "  herdr pane run <pane_id> <command>" in run.err_lines
    assert cli("agent", "help").code == 0
    assert fake.requests == []


def test_terminal_help_is_herdrs_to_the_last_line(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    """Herdr's ``print_terminal_help`` (``src/cli.rs``) ends with the detach keys."""
    for argv, code in ((("terminal",), 2), (("terminal", "help"), 0), (("terminal", "x"), 2)):
        run = cli(*argv)
        assert run.code == code
        assert run.err_lines == [
            "herdr terminal commands:",
            "  herdr terminal attach <terminal_id> [--takeover]",
            "  herdr terminal session control <target> [--takeover] [--cols N] [--rows N]",
            "  herdr terminal session observe <target> [--cols N] [--rows N]",
            "  herdr terminal title set <title>",
            "  herdr terminal title clear",
            "  detach from direct attach with ctrl+b q; send literal ctrl+b with ctrl+b ctrl+b",
        ]
    assert fake.requests == []


def test_subcommand_help_goes_to_stdout_only_right_after_the_path(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    helped = cli("agent", "wait", "--help")
    assert helped.code == 0
    assert "Usage: herdr agent wait <target>" in helped.out
    # After a positional argument `--help` is just an argument again.
    not_help = cli("agent", "wait", "r", "--help")
    assert not_help.code == 0
    assert not_help.err == ("usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]\n")
    assert fake.requests == []


def test_top_level_flags_and_unknown_commands(cli: Callable[..., Run], fake: FakeHerdr) -> None:
    assert cli("--version").out == "herdr 0.9.2\n"
    assert cli("-V").code == 0
    assert cli("--help").out.startswith("herdr ")
    unknown = cli("frobnicate")
    assert (unknown.code, unknown.err) == (
        2,
        "unknown command: frobnicate\nrun 'herdr --help' for usage\n",
    )
    bad_flag = cli("--frob=1")
    assert bad_flag.err == "unknown option: --frob=1\nrun 'herdr --help' for usage\n"
    assert fake.requests == []


@pytest.mark.parametrize(
    "argv",
    [
        ["agent", "attach", "reviewer"],
        ["session", "attach", "work"],
        ["plugin", "install", "owner/repo", "--yes"],
        ["terminal", "attach", "term_1"],
        ["server", "--handoff-import", "/tmp/x.sock", "token"],  # `server` alone runs one
        ["server", "live-handoff"],
        [],
    ],
)
def test_unsimulated_commands_fail_clearly(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str]
) -> None:
    run = cli(*argv)
    assert run.code == 2
    assert "not supported by the Herdr simulator" in run.err
    assert fake.requests == []


def test_session_flag_is_only_global_before_double_dash(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.result("pane.get", {"type": "pane_info", "pane": {"terminal_id": "term_1"}})
    fake.result("agent.start", {"type": "agent_started", "agent": {"terminal_id": "term_2"}})
    cli("agent", "start", "n", "--kind", "pi", "--pane", "w1:p1", "--", "--session", "x")
    start = next(r for r in fake.operations() if r["method"] == "agent.start")
    assert start["params"]["args"] == ["--session", "x"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--session"], "error: missing value for --session"),
        (["--session=../x", "pane", "list"],
         "error: session name may only contain ASCII letters, numbers, '.', '_' and '-'"),
        (["--session", "", "pane", "list"], "error: session name cannot be empty"),
        (["session", "attach"], "error: usage: herdr session attach <name>"),
    ],
)  # fmt: skip
def test_bad_global_session_arguments(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str], message: str
) -> None:
    run = cli(*argv)
    assert run.code == 2
    assert run.err == f"{message}\nrun 'herdr --help' for usage\n"
    assert fake.requests == []


def test_invalid_herdr_session_env_fails_only_without_socket_override(
    fake: FakeHerdr, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_SESSION", "bad/name")
    assert cli("pane", "list").code == 0
    monkeypatch.delenv("HERDR_SOCKET_PATH")
    run = cli("pane", "list")
    assert run.code == 2
    assert run.err.startswith("error: session name may only contain")


@pytest.mark.parametrize(
    "argv",
    [
        ["agent", "wait", "--help"],
        ["terminal", "session", "control", "-h"],
        ["pane", "-h"],
        ["status", "server", "--help"],
        ["session", "attach", "--help"],
    ],
)
def test_help_paths_succeed_on_stdout(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str]
) -> None:
    run = cli(*argv)
    assert run.code == 0
    assert run.err == ""
    assert f"Usage: herdr {' '.join(a for a in argv if not a.startswith('-'))}" in run.out
    assert fake.requests == []


@pytest.mark.parametrize(("word", "code"), [("help", 0), ("x", 2)])
def test_terminal_session_help_prints_both_usages(
    fake: FakeHerdr, cli: Callable[..., Run], word: str, code: int
) -> None:
    # Herdr's `terminal_session` (src/cli.rs): help words exit 0, anything else 2
    run = cli("terminal", "session", word)
    assert (run.code, run.out) == (code, "")
    assert run.err == (
        "usage: herdr terminal session control <target> [--takeover] [--cols N] [--rows N]\n"
        "usage: herdr terminal session observe <target> [--cols N] [--rows N]\n"
    )
    assert fake.requests == []


def test_removed_commands_are_rejected_like_herdr(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    wait = cli("wait", "output", "w1:p1", "--match", "ready")
    assert wait.code == 2
    assert "unknown command: wait" in wait.err
    send = cli("agent", "send", "reviewer", "hello")
    assert send.code == 2
    assert "herdr agent send-keys" in send.err
    assert fake.requests == []
