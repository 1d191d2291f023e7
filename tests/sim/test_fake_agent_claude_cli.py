"""The fake claude's command line against real Claude Code 2.1.332's.

Every expectation here was read off the installed real binary (``claude --help`` and the
command lines below run against it; docs/simulator/real-agents.md):
``tests/real_agents/test_fake_claude_cli.py`` checks the same table and messages against the
binary itself where the real-agent tier runs. Herdr's own integration starts Claude Code as
``claude`` / ``claude --resume <id>`` (``src/agent_resume.rs`` in herdrdev/herdr), and
orchestrators add their own options: a fake that refuses ``--effort`` or ``--permission-mode``
fails a client that works on Herdr.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_agent.app import main, parse_args
from herdr_sim.fake_agent.claude_flags import ClaudeUsageError, parse_claude_args

UUID = "0195b6a3-1111-7222-8333-444455556666"


def run(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:  # fmt: skip
    status = main(argv, kind="claude")
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and cwd, outside Herdr (no reports)."""
    for name in ("HERDR_ENV", "HERDR_SOCKET_PATH", "HERDR_PANE_ID", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bogus"], "error: unknown option '--bogus'\n"),
        (["--bogus=3"], "error: unknown option '--bogus=3'\n"),
        (["-x"], "error: unknown option '-x'\n"),
        (["-xyz"], "error: unknown option '-xyz'\n"),
        (["-m", "x"], "error: unknown option '-m'\n"),  # pi's short --model is no claude one
        (["--bogus", "--permission-mode", "nope"], "error: unknown option '--bogus'\n"),
        (["-p", "hi", "--bogus"], "error: unknown option '--bogus'\n"),
        # commander's "did you mean" over the visible long options
        (["--modle"], "error: unknown option '--modle'\n(Did you mean --model?)\n"),
        (["--tool"], "error: unknown option '--tool'\n(Did you mean --tools?)\n"),
        (["--resum"], "error: unknown option '--resum'\n(Did you mean --resume?)\n"),
        (["--no-verbose"], "error: unknown option '--no-verbose'\n(Did you mean --verbose?)\n"),
        (["--session"], "error: unknown option '--session'\n(Did you mean --version?)\n"),
        (["--mode"], "error: unknown option '--mode'\n(Did you mean --model?)\n"),
        (["--verbose=1"], "error: unknown option '--verbose=1'\n(Did you mean --verbose?)\n"),
        (["--yolo"], "error: unknown option '--yolo'\n"),
        (["--model"], "error: option '--model <model>' argument missing\n"),
        (["-n"], "error: option '-n, --name <name>' argument missing\n"),
        (["--effort"], "error: option '--effort <level>' argument missing\n"),
        (
            ["--permission-mode", "nope"],
            (
                "error: option '--permission-mode <mode>' argument 'nope' is invalid. Allowed "
                "choices are acceptEdits, auto, bypassPermissions, manual, dontAsk, plan.\n"
            ),
        ),
        (
            ["--input-format", "bad"],
            (
                "error: option '--input-format <format>' argument 'bad' is invalid. Allowed "
                "choices are text, stream-json.\n"
            ),
        ),
        (["--session-id", "notauuid"], "Error: Invalid session ID. Must be a valid UUID.\n"),
    ],
)
def test_refuses_what_claude_code_refuses_with_its_words_and_status_1(
    home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    # it used to answer "claude: unknown option: --bogus" with status 2, and to take pi's -m
    assert run(argv, capsys) == (1, "", message)


@pytest.mark.parametrize(
    "argv",
    [
        ["--effort", "high", "--model", "opus", "--permission-mode", "acceptEdits"],
        ["--permission-mode", "default"],  # not listed, but accepted (the fixture passes it)
        ["--permission-mode=plan", "--effort=max", "--model=sonnet"],
        ["--add-dir", "a", "b", "--allowedTools", "Bash(git *)", "Edit", "--verbose"],
        ["--allowed-tools=Bash", "--disallowed-tools", "Write", "--mcp-config", "m.json"],
        ["--resume", UUID, "--fork-session", "--name", "task"],
        ["-r", UUID, "--dangerously-skip-permissions", "--strict-mcp-config"],
        ["--session-id", UUID, "--append-system-prompt", "be brief", "--settings", "{}"],
        ["--debug", "--ide", "--chrome", "--no-chrome", "--bare", "--safe-mode", "hi"],
        ["-d", "hooks", "--max-turns", "3", "--thinking", "adaptive"],  # -d takes a filter
        ["--fallback-model", "haiku", "--setting-sources", "user,project", "--", "-not-a-flag"],
    ],
)
def test_accepts_claude_codes_options(argv: list[str]) -> None:
    parse_claude_args(argv)


def test_reads_values_the_way_commander_does() -> None:
    # a required value is the next argument whatever it looks like
    assert parse_claude_args(["--model", "-p"]).model == "-p"
    assert parse_claude_args(["--model", "-p"]).print_ is False
    # an optional one only when it is no option; a variadic one runs to the next option
    parsed = parse_claude_args(["--resume", "-p", "hi"])
    assert (parsed.resume_picker, parsed.resume, parsed.print_, parsed.prompt) == (
        True, None, True, "hi")  # fmt: skip
    assert parse_claude_args(["--add-dir", "a", "b", "do it"]).prompt is None
    assert parse_claude_args(["--add-dir", "a", "-p", "do it"]).prompt == "do it"
    # -cp is -c -p; -r<id> glues the value on
    assert (parse_claude_args(["-cp"]).continue_, parse_claude_args(["-cp"]).print_) == (
        True, True)  # fmt: skip
    assert parse_claude_args([f"-r{UUID}"]).resume == UUID
    assert parse_claude_args(["--", "--bogus"]).prompt == "--bogus"


def test_an_unknown_effort_is_a_warning_and_the_run_goes_on(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = str(Scenario().reply("fine").dump(tmp_path / "s.json"))
    status, out, err = run(["-p", "hi", "--effort", "nope", "--scenario", scenario], capsys)
    assert (status, out) == (0, "fine\n")
    assert err == (
        "Warning: Unknown --effort value 'nope' — ignoring it and using the default effort. "
        "Valid values: low, medium, high, xhigh, max.\n"
    )


def test_help_and_version_exit_0(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["--help"], capsys)
    assert status == 0 and out.startswith("Usage: claude [options] [command] [prompt]")
    assert "--permission-mode <mode>" in out and "--max-turns" not in out  # hidden stays hidden
    assert run(["-v"], capsys) == (0, "2.1.332 (Claude Code)\n", "")


def test_print_answers_on_stdout_and_writes_the_transcript(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = str(Scenario().reply("The answer is 42.").dump(tmp_path / "s.json"))
    argv = ["-p", "what is it?", "--session-id", UUID, "--permission-mode", "plan",
            "--effort", "high", "--scenario", scenario]  # fmt: skip
    assert run(argv, capsys) == (0, "The answer is 42.\n", "")
    bucket = re.sub(r"[^A-Za-z0-9]", "-", str(Path.cwd()))
    path = home / ".claude" / "projects" / bucket / f"{UUID}.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    user = next(e for e in entries if e["type"] == "user")
    assistant = next(e for e in entries if e["type"] == "assistant")
    assert (user["message"]["content"], user["permissionMode"]) == ("what is it?", "plan")
    assert assistant["effort"] == "high"


def test_print_without_a_prompt_says_so(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    read, write = os.pipe()
    os.close(write)
    stdin = os.fdopen(read)
    monkeypatch.setattr("sys.stdin", stdin)
    expected = (
        "Error: Input must be provided either through stdin or as a prompt argument when "
        "using --print\n"
    )
    with stdin:
        assert run(["-p"], capsys) == (1, "", expected)


def test_continue_takes_the_newest_conversation_here_or_exits_1(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-c"], capsys) == (1, "", "No conversation found to continue\n")
    scenario = str(Scenario().reply("one").reply("two").dump(tmp_path / "s.json"))
    assert run(["-p", "first", "--session-id", UUID, "--scenario", scenario], capsys)[0] == 0
    options = parse_args(["--continue"], "claude")
    assert options.continue_latest and options.resume is None
    assert run(["-c", "-p", "again", "--scenario", scenario], capsys)[0] == 0
    (path,) = (home / ".claude" / "projects").glob("*/*.jsonl")
    prompts = [
        e["message"]["content"] for e in map(json.loads, path.read_text().splitlines())
        if e["type"] == "user" and isinstance(e["message"]["content"], str)
    ]  # fmt: skip
    assert (path.stem, prompts) == (UUID, ["first", "again"])


def test_claude_usage_errors_are_not_the_other_fakes_usage_errors() -> None:
    # the other kinds keep their usage error (status 2); only claude speaks commander
    with pytest.raises(ClaudeUsageError):
        parse_args(["--thinking", "high"], "claude")
    assert parse_args(["--thinking", "high"], "pi").thinking == "high"
