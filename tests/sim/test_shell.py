"""The pane shell's command line, rcfile and environment (``herdr_sim.host.shell``)."""

from __future__ import annotations

import asyncio
import os
import re
import stat
import typing as t
from pathlib import Path

import pytest

from herdr_sim.host.pty import PtyProcess
from herdr_sim.host.shell import BASHRC_NAME, ShellConfig, pane_command, pane_env, validate_env

WAIT = float(os.environ.get("HERDR_TEST_WAIT", "10"))

# -- pane_command --------------------------------------------------------------------------------


def test_deterministic_command_uses_a_private_rcfile(tmp_path: Path) -> None:
    runtime_dir = tmp_path / "rt"
    argv = pane_command(ShellConfig(), runtime_dir)
    rcfile = runtime_dir / BASHRC_NAME
    assert Path(argv[0]).name == "bash"
    assert argv[1:] == ["--noprofile", "--rcfile", str(rcfile), "-i"]
    assert stat.S_IMODE(rcfile.stat().st_mode) == 0o600
    assert stat.S_IMODE(runtime_dir.stat().st_mode) == 0o700
    text = rcfile.read_text()
    assert "PS1='$ '" in text
    assert "PS2='> '" in text
    assert "unset HISTFILE" in text
    assert "enable-bracketed-paste off" in text
    assert not [p.name for p in runtime_dir.iterdir() if p.name != BASHRC_NAME]  # no temp left


def test_rcfile_is_written_once(tmp_path: Path) -> None:
    pane_command(ShellConfig(), tmp_path)
    rcfile = tmp_path / BASHRC_NAME
    before = rcfile.stat()
    pane_command(ShellConfig(), tmp_path)
    after = rcfile.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_a_tampered_rcfile_is_replaced(tmp_path: Path) -> None:
    rcfile = tmp_path / BASHRC_NAME
    rcfile.write_text("PS1='evil> '\n")
    rcfile.chmod(0o644)
    pane_command(ShellConfig(), tmp_path)
    assert "PS1='$ '" in rcfile.read_text()
    assert stat.S_IMODE(rcfile.stat().st_mode) == 0o600


class CommandCase(t.NamedTuple):
    test_id: str
    config: ShellConfig
    shell_env: str | None
    expected: list[str]


COMMAND_CASES = [
    CommandCase("configured-shell", ShellConfig(shell="/bin/zsh"), "/bin/fish", ["/bin/zsh"]),
    CommandCase("user-shell", ShellConfig(user_shell=True), "/bin/fish", ["/bin/fish", "-l"]),
    CommandCase("user-shell-unset", ShellConfig(user_shell=True), None, ["/bin/sh", "-l"]),
    CommandCase("user-shell-blank", ShellConfig(user_shell=True), "  ", ["/bin/sh", "-l"]),
    CommandCase(
        "user-shell-configured",
        ShellConfig(shell="/bin/dash", user_shell=True),
        "/bin/fish",
        ["/bin/dash", "-l"],
    ),
]


@pytest.mark.parametrize(
    list(CommandCase._fields), COMMAND_CASES, ids=[c.test_id for c in COMMAND_CASES]
)
def test_non_deterministic_commands(
    test_id: str,
    config: ShellConfig,
    shell_env: str | None,
    expected: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if shell_env is None:
        monkeypatch.delenv("SHELL", raising=False)
    else:
        monkeypatch.setenv("SHELL", shell_env)
    assert pane_command(config, tmp_path) == expected
    assert not (tmp_path / BASHRC_NAME).exists()  # only the deterministic shell needs it


def test_missing_bash_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError):
        pane_command(ShellConfig(), tmp_path)


# -- pane_env ------------------------------------------------------------------------------------


def test_layers_base_then_caller_then_herdr() -> None:
    env = pane_env(
        base={"A": "base", "B": "base", "HERDR_PANE_ID": "base", "PATH": "/usr/bin"},
        caller_env={"B": "caller", "HERDR_PANE_ID": "caller", "C": "caller"},
        herdr_env={"HERDR_PANE_ID": "w1:p1", "HERDR_ENV": "1"},
        cli_dir=None,
        deterministic=False,
    )
    assert env["A"] == "base"
    assert env["B"] == "caller"
    assert env["C"] == "caller"
    assert env["HERDR_PANE_ID"] == "w1:p1"
    assert env["HERDR_ENV"] == "1"
    assert env["PATH"] == "/usr/bin"


def test_terminal_identity_is_set_and_a_caller_may_override_it() -> None:
    env = pane_env(
        base={"TERM": "xterm-kitty", "COLORTERM": "24bit", "TERM_PROGRAM": "iTerm.app"},
        caller_env={},
        herdr_env={},
        cli_dir=None,
        deterministic=False,
    )
    assert (env["TERM"], env["COLORTERM"], env["TERM_PROGRAM"]) == (
        "xterm-256color",
        "truecolor",
        "herdr",
    )
    # Herdr 0.9 names itself with its version too (src/pane.rs apply_pane_terminal_env, as
    # read at v0.9.3); 0.8.2 set neither variable
    assert "TERM_PROGRAM_VERSION" not in env
    env = pane_env(
        base={"TERM_PROGRAM_VERSION": "3.5"},
        caller_env={},
        herdr_env={},
        cli_dir=None,
        deterministic=False,
        herdr_version="0.9.2",
    )
    assert (env["TERM_PROGRAM"], env["TERM_PROGRAM_VERSION"]) == ("herdr", "0.9.2")
    # Herdr applies TERM/COLORTERM before the request's env, so the request wins.
    env = pane_env(
        base={}, caller_env={"TERM": "dumb"}, herdr_env={}, cli_dir=None, deterministic=False
    )
    assert env["TERM"] == "dumb"


def test_inherited_session_markers_are_dropped() -> None:
    markers = {
        "CODEX_THREAD_ID": "t",
        "CLAUDECODE": "1",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_CODE_SSE_PORT": "1234",
        "TMUX": "/tmp/tmux-0/default,1,0",
        "TMUX_PANE": "%1",
        "STY": "1.pts-0",
        "TERM_SESSION_ID": "w0t0p0",
        "TERM_PROGRAM_VERSION": "3.5",
        "LC_TERMINAL": "iTerm2",
        "LC_TERMINAL_VERSION": "3.5",
    }
    env = pane_env(
        base={**markers, "KEEP": "yes", "CLAUDE_CONFIG_DIR": "/cfg"},
        caller_env={"TMUX_PANE": "explicit"},
        herdr_env={},
        cli_dir=None,
        deterministic=False,
    )
    assert env["KEEP"] == "yes"
    assert env["CLAUDE_CONFIG_DIR"] == "/cfg"  # configuration, not a session marker
    assert env["TMUX_PANE"] == "explicit"  # asked for by the request: kept
    assert not (set(markers) - {"TMUX_PANE"}) & set(env)


class PathCase(t.NamedTuple):
    test_id: str
    base_path: str | None
    caller_path: str | None
    expected: str


PATH_CASES = [
    PathCase("prepended", "/usr/bin:/bin", None, "/sim/bin:/usr/bin:/bin"),
    PathCase("caller-path-too", "/usr/bin", "/opt/bin", "/sim/bin:/opt/bin"),
    PathCase("already-first", "/sim/bin:/usr/bin", None, "/sim/bin:/usr/bin"),
    PathCase("no-path", None, None, "/sim/bin:" + os.defpath),
]


@pytest.mark.parametrize(list(PathCase._fields), PATH_CASES, ids=[c.test_id for c in PATH_CASES])
def test_cli_dir_goes_first_on_path(
    test_id: str, base_path: str | None, caller_path: str | None, expected: str
) -> None:
    env = pane_env(
        base={} if base_path is None else {"PATH": base_path},
        caller_env={} if caller_path is None else {"PATH": caller_path},
        herdr_env={},
        cli_dir=Path("/sim/bin"),
        deterministic=False,
    )
    assert env["PATH"] == expected


def test_deterministic_defaults_sit_under_the_callers_env() -> None:
    env = pane_env(
        base={"LANG": "fr_FR.UTF-8", "LC_ALL": "fr_FR.UTF-8"},
        caller_env={"LANG": "de_DE.UTF-8"},
        herdr_env={},
        cli_dir=None,
        deterministic=True,
    )
    assert env["NO_COLOR"] == "1"
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["LANG"] == "de_DE.UTF-8"
    plain = pane_env(
        base={"LANG": "fr_FR.UTF-8"}, caller_env={}, herdr_env={}, cli_dir=None, deterministic=False
    )
    assert plain["LANG"] == "fr_FR.UTF-8"
    assert "NO_COLOR" not in plain
    assert "LC_ALL" not in plain


def test_inputs_are_not_mutated() -> None:
    base = {"PATH": "/usr/bin", "CLAUDECODE": "1"}
    caller = {"X": "1"}
    herdr = {"HERDR_ENV": "1"}
    pane_env(base=base, caller_env=caller, herdr_env=herdr, cli_dir=Path("/b"), deterministic=True)
    assert base == {"PATH": "/usr/bin", "CLAUDECODE": "1"}
    assert caller == {"X": "1"}
    assert herdr == {"HERDR_ENV": "1"}


# -- validate_env --------------------------------------------------------------------------------


class EnvCase(t.NamedTuple):
    test_id: str
    env: dict[str, str]
    message: str | None


ENV_CASES = [
    EnvCase("valid", {"A": "1", "B_2": "", "lower": "x=y"}, None),
    EnvCase("empty", {}, None),
    EnvCase("empty-key", {"": "v"}, "env key must not be empty"),
    EnvCase("equals-in-key", {"BAD=KEY": "v"}, "env key BAD=KEY must not contain '='"),
    EnvCase("nul-in-key", {"BAD\0KEY": "v"}, "env key must not contain NUL bytes"),
    EnvCase("nul-in-value", {"K": "a\0b"}, "env value for K must not contain NUL bytes"),
]


@pytest.mark.parametrize(list(EnvCase._fields), ENV_CASES, ids=[c.test_id for c in ENV_CASES])
def test_validate_env(test_id: str, env: dict[str, str], message: str | None) -> None:
    assert validate_env(env) == message


# -- the deterministic shell, for real -----------------------------------------------------------


async def _transcript(home: Path, lines: list[bytes], until: bytes) -> bytes:
    """Run the deterministic shell, type ``lines`` after the first prompt, collect output."""
    env = pane_env(
        base={"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home)},
        caller_env={},
        herdr_env={"HERDR_ENV": "1"},
        cli_dir=None,
        deterministic=True,
    )
    proc = PtyProcess.spawn(
        pane_command(ShellConfig(), home / "rt"), cwd=str(home), env=env, cols=80, rows=24
    )
    output = bytearray()
    changed = asyncio.Event()

    def on_output(data: bytes) -> None:
        output.extend(data)
        changed.set()

    async def wait_for(pattern: bytes) -> None:
        while re.search(pattern, output) is None:
            changed.clear()
            await changed.wait()

    proc.attach(asyncio.get_running_loop(), on_output, lambda _code: None)
    try:
        await asyncio.wait_for(wait_for(rb"\$ "), WAIT)
        for line in lines:
            proc.write(line)
        await asyncio.wait_for(wait_for(until), WAIT)
    finally:
        await proc.terminate()
    return bytes(output)


def test_deterministic_shell_prompt_is_plain(tmp_path: Path) -> None:
    # A user inputrc that turns bracketed paste on must not reach the pane.
    (tmp_path / ".inputrc").write_text("set enable-bracketed-paste on\n")
    (tmp_path / ".bashrc").write_text("PS1='user> '\n")
    out = asyncio.run(_transcript(tmp_path, [b"echo E$((1+1))\n"], rb"E2\r\n\$ "))
    assert out.startswith(b"$ ")
    assert b"\x1b" not in out  # no bracketed-paste toggles, no colour
    assert b"user> " not in out


def test_deterministic_shell_settings(tmp_path: Path) -> None:
    lines = [
        (
            b'echo "hist=[${HISTFILE-unset}] nc=[$NO_COLOR] lc=[$LC_ALL]"'
            b' "pc=[${PROMPT_COMMAND-unset}]"\n'
        ),
        b"echo hi!there\n",
        b"echo 'con\n",
        b"tinued'\n",
    ]
    out = asyncio.run(_transcript(tmp_path, lines, rb"con\r\ntinued\r\n\$ "))
    assert b"hist=[unset] nc=[1] lc=[C.UTF-8] pc=[unset]" in out
    assert b"\r\nhi!there\r\n" in out  # no history expansion of `!`
    assert b"\r\n> tinued'" in out  # PS2
