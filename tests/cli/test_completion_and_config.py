"""``herdr completion <shell>`` and ``herdr config check``, as Herdr answers them.

Herdr: ``src/cli/completion.rs`` (shells, usage and exit codes; its scripts come from
clap_complete, ours from the CLI's command table) and ``src/cli.rs`` ``config_check`` with
``src/config/io.rs`` ``Config::load`` (the diagnostics and their wording).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from herdr_sim.herdr_cli.completion import SHELLS, script
from tests.cli.conftest import Run

USAGE = "usage: herdr completion <bash|elvish|fish|powershell|zsh>\n"


@pytest.mark.parametrize(
    ("argv", "code", "err"),
    [
        ((), 2, USAGE),
        (("help",), 0, USAGE),
        (("bash", "zsh"), 2, USAGE),
        (("tcsh",), 2, "unknown shell: tcsh\n" + USAGE),
    ],
)
def test_completion_usage_is_herdrs(
    cli: Callable[..., Run], argv: tuple[str, ...], code: int, err: str
) -> None:
    assert cli("completion", *argv) == Run(code, "", err)


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_prints_a_script_for_every_shell(cli: Callable[..., Run], shell: str) -> None:
    run = cli("completions", shell)  # Herdr's alias
    assert run.code == 0 and run.err == ""
    assert run.out == script(shell)
    assert "workspace" in run.out and "--no-focus" in run.out


def complete(path: Path, *words: str) -> list[str]:
    """What the bash script offers for the last of ``words`` (the word being typed)."""
    line = " ".join(f"'{w}'" for w in words)
    command = (
        f"source {path}; COMP_WORDS=(herdr {line}); COMP_CWORD={len(words)}; _herdr; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", command], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_bash_script_completes_commands_and_options(tmp_path: Path) -> None:
    path = tmp_path / "herdr.bash"
    path.write_text(script("bash"))
    assert complete(path, "wo") == ["workspace", "worktree"]
    assert complete(path, "--session", "s", "pane", "sp") == ["split"]
    assert "--no-focus" in complete(path, "workspace", "create", "--")
    assert complete(path, "terminal", "session", "") == ["control", "observe", "--help"]


# -- config check -------------------------------------------------------------------------------


@pytest.fixture
def config_file(clean_env: Path) -> Path:
    clean_env.mkdir(parents=True, exist_ok=True)
    return clean_env / "config.toml"


def test_no_config_file_is_ok(cli: Callable[..., Run], config_file: Path) -> None:
    assert cli("config", "check") == Run(0, "config: ok\n", "")


def test_a_valid_config_is_ok(cli: Callable[..., Run], config_file: Path) -> None:
    config_file.write_text(
        'onboarding = false\n[ui.toast]\ndelivery = "off"\n[keys]\nprefix = "ctrl+b"\n'
    )
    assert cli("config", "check") == Run(0, "config: ok\n", "")


def test_unknown_sections_and_keys_are_named(cli: Callable[..., Run], config_file: Path) -> None:
    config_file.write_text(
        "mystery = 1\n[toast]\nx = 1\n[extras]\ny = 2\n[ui]\nzzz = 1\nsidebar_width = 30\n"
        '"odd key" = 1\n[ui.toast]\nnope = 3\n'
    )
    assert cli("config", "check") == Run(
        1,
        "config: issues found\n"
        "unknown config section [toast]; did you mean [ui.toast]? ignoring section\n"
        "unknown config section [extras]; ignoring section\n"
        "unknown config key mystery; ignoring key\n"
        'unknown config key ui."odd key"; ignoring key\n'
        "unknown config key ui.toast.nope; ignoring key\n"
        "unknown config key ui.zzz; ignoring key\n",
        "",
    )


def test_a_value_of_the_wrong_type_fails_the_whole_file(
    cli: Callable[..., Run], config_file: Path
) -> None:
    config_file.write_text('[ui]\nsidebar_width = "wide"\nbogus = 1\n')
    run = cli("config", "check")
    assert run.code == 1
    assert run.out.startswith("config: issues found\nconfig parse error: invalid type: string")
    assert run.out.endswith("; using defaults\n") and run.out.count("\n") == 2


def test_not_toml_and_unreadable_use_the_defaults(
    cli: Callable[..., Run], config_file: Path
) -> None:
    config_file.write_text("onboarding = \n")
    run = cli("config", "check")
    assert run.code == 1 and run.out.startswith("config: issues found\nconfig parse error: ")
    config_file.unlink()
    config_file.mkdir()
    assert cli("config", "check") == Run(
        1,
        "config: issues found\nconfig read error: Is a directory (os error 21); using defaults\n",
        "",
    )


def test_herdr_config_path_names_the_file(
    cli: Callable[..., Run], config_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "other.toml"
    elsewhere.write_text("[nope]\n")
    monkeypatch.setenv("HERDR_CONFIG_PATH", str(elsewhere))
    run = cli("config", "check")
    assert run.out == "config: issues found\nunknown config section [nope]; ignoring section\n"


def test_config_usage(cli: Callable[..., Run], config_file: Path) -> None:
    assert cli("config", "check", "help") == Run(0, "", "usage: herdr config check\n")
    assert cli("config", "check", "x") == Run(2, "", "usage: herdr config check\n")
    assert cli("config").code == 2
    assert cli("config", "help").code == 0


# -- what the CLI refuses on its own is recorded -----------------------------------------------


def test_a_report_refused_before_the_socket_is_recorded_for_the_check(
    cli: Callable[..., Run], fake: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from herdr_sim.persist.cli_refusals import REFUSALS_VARIABLE, read

    log = tmp_path / "refusals.jsonl"
    monkeypatch.setenv(REFUSALS_VARIABLE, str(log))
    monkeypatch.setenv("HERDR_PANE_ID", "w1:p1")
    argv = ("pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a", "--state")
    assert cli(*argv, "busy").code == 1  # refused locally: nothing sent
    assert cli(*argv, "idle").code == 0  # sent: not a refusal
    assert cli(*argv[:-3]).code == 2  # a usage error (no --agent, no --state) is one too
    recorded = read(log)
    assert [(r["argv"][-1], r["exit"], r["pane_id"]) for r in recorded] == [
        ("busy", 1, "w1:p1"),
        ("s", 2, "w1:p1"),
    ]
    assert "invalid pane agent state: busy" in recorded[0]["error"]
