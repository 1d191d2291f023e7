"""Process detection: which agent runs in a pane, from its foreground job.

The pure cases are Herdr's own (names, wrapped scripts, job priorities, the
``HERDR_AGENT`` hint, the exit decision).  The live cases run real programs in
the deterministic pane shell on a pty: copies of ``sleep`` named like agents,
``exec -a``, interpreter scripts (``node …/pi``, ``python3 …/hermes``) and
the environment hint, then Ctrl-C back to the shell prompt (agent exit).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from herdr_sim.detection.process import (
    ForegroundJob,
    ForegroundProcess,
    ProcessAgent,
    detect_agent_process,
    foreground_shell_agent_action,
    identify_agent_in_job,
    normalized_process_name,
    parse_agent_env_hint,
    probe_foreground_process,
)
from herdr_sim.host.pty import PtyProcess
from herdr_sim.host.shell import ShellConfig, pane_command, pane_env
from tests.waits import wait_until


def proc(pid: int, name: str, *argv: str) -> ForegroundProcess:
    return ForegroundProcess(pid=pid, name=name, argv=argv or None)


def job(pgid: int, *processes: ForegroundProcess) -> ForegroundJob:
    return ForegroundJob(pgid, processes)


# -- names and wrapped scripts (Herdr's cases) ---------------------------------------------------


@pytest.mark.parametrize(
    ("process", "expected"),
    [
        (proc(1, "claude", "claude"), "claude"),
        (proc(1, "cursor-agent", "cursor-agent"), "cursor-agent"),
        (proc(1, "kiro-cli", "kiro-cli", "chat"), "kiro-cli"),
        (proc(1, "node", "node", "/usr/lib/node_modules/.bin/pi"), "pi"),
        (proc(1, "node", "node", "--require", "x.js", "/opt/codex"), "codex"),
        (proc(1, "node", "node", "-e", "require('pi')"), "node"),
        (proc(1, "bun", "bun", "--", "/opt/bin/opencode"), "opencode"),
        (
            proc(1, "python3.12", "/nix/bin/python3.12", "/nix/bin/hermes", "--resume", "s"),
            "hermes",
        ),
        (proc(1, "python3", "python3", "-m", "hermes"), "python3"),
        (proc(1, "bash", "bash", "./codex"), "codex"),
        (proc(1, "sh", "sh", "-c", "claude"), "sh"),
        (proc(1, ".codex-wrapped", "/etc/profiles/per-user/u/bin/codex", "--model", "x"), "codex"),
        (
            proc(
                1,
                "node",
                "node",
                "/usr/lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js",
            ),
            "pi",
        ),
        (proc(1, "vim", "vim", "notes.txt"), "vim"),
    ],
    ids=lambda value: value.name if isinstance(value, ForegroundProcess) else str(value),
)
def test_process_names_and_wrapped_scripts(process: ForegroundProcess, expected: str) -> None:
    assert normalized_process_name(process) == expected


def test_node_wrapped_qwen_and_windows_cursor_install() -> None:
    for argv in (
        ("node", "/home/user/.fnm/bin/qwen"),
        (
            "node.exe",
            r"C:\Users\u\AppData\Roaming\npm\node_modules\@qwen-code\qwen-code\dist\index.js",
        ),
    ):
        assert identify_agent_in_job(job(123, proc(123, "MainThread", *argv))) == ("qwen", "qwen")
    base = r"C:\Users\u\AppData\Local\cursor-agent\versions\2026.08.11-e8db854"
    cursor = proc(123, "node.exe", base + r"\node.exe", base + r"\index.js")
    assert identify_agent_in_job(job(123, cursor)) == ("cursor", "cursor")
    not_cursor = proc(123, "node.exe", base + r"\node.exe", base + r"\scripts\postinstall.js")
    assert identify_agent_in_job(job(123, not_cursor)) is None


def test_job_prefers_a_recognized_leader_then_the_best_member() -> None:
    mcp = proc(43, "node", "node", "/tmp/mcp/bin/codex")
    assert identify_agent_in_job(job(42, proc(42, "claude", "claude"), mcp)) == (
        "claude",
        "claude",
    )
    assert identify_agent_in_job(job(42, proc(42, "bash", "bash"), mcp)) == ("codex", "codex")
    assert identify_agent_in_job(job(123, mcp, proc(2, "bash", "bash"))) == ("codex", "codex")
    assert identify_agent_in_job(job(42, proc(42, "bash", "bash"))) is None


def test_environment_hint_takes_the_first_record() -> None:
    assert parse_agent_env_hint(b"PATH=/bin\0HERDR_AGENT=claude\0TERM=xterm\0") == "claude"
    assert parse_agent_env_hint(b"HERDR_AGENT=codex") == "codex"
    assert parse_agent_env_hint(b"HERDR_AGENT=kiro-cli\0") == "kiro"
    assert parse_agent_env_hint(b"HERDR_AGENT=not-an-agent\0HERDR_AGENT=pi\0") is None
    assert parse_agent_env_hint(b"PATH=/bin\0") is None


def test_exit_decision_follows_herdr() -> None:
    assert foreground_shell_agent_action(None, None, True, False) == "observe_probe"
    assert foreground_shell_agent_action("pi", "pi", False, False) == "observe_probe"
    assert foreground_shell_agent_action("pi", None, False, False) == "observe_probe"
    assert foreground_shell_agent_action("pi", None, True, False) == "report_process_exit"
    assert foreground_shell_agent_action("pi", None, True, True) == "clear_agent"
    assert foreground_shell_agent_action("pi", "pi", False, True) == "report_replacement_process"
    assert foreground_shell_agent_action("pi", "codex", False, True) == "observe_probe"


# -- live processes in a pane shell ---------------------------------------------------------------


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """Copies of ``sleep`` named like agents, and agent-named scripts."""
    directory = tmp_path / "bin"
    directory.mkdir()
    sleep = shutil.which("sleep")
    assert sleep is not None
    for name in ("pi", "claude", "codex", "opencode", "cursor-agent", "kiro-cli"):
        shutil.copy(sleep, directory / name)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "pi").write_text("setTimeout(() => {}, 30000);\n", encoding="utf-8")
    (scripts / "hermes").write_text("import time\ntime.sleep(30)\n", encoding="utf-8")
    return directory


@pytest.fixture
def shell(tmp_path: Path, bin_dir: Path) -> Iterator[PtyProcess]:
    env = pane_env(
        base={"PATH": f"{bin_dir}:{os.environ.get('PATH', os.defpath)}", "HOME": str(tmp_path)},
        caller_env={},
        herdr_env={"HERDR_ENV": "1"},
        cli_dir=None,
        deterministic=True,
    )
    process = PtyProcess.spawn(
        pane_command(ShellConfig(), tmp_path), cwd=str(tmp_path), env=env, cols=80, rows=24
    )
    try:
        yield process
    finally:
        process.terminate_sync(timeout=2.0)


def run(shell: PtyProcess, command: str) -> ProcessAgent:
    """Type a command line and wait until an agent is in the foreground."""
    os.write(shell.master_fd, command.encode() + b"\n")
    return wait_until(
        lambda: detect_agent_process(shell.foreground_pgid(), shell.pid), what=command
    )


def interrupt(shell: PtyProcess) -> None:
    """Ctrl-C and wait for the shell to be back in the foreground."""
    os.write(shell.master_fd, b"\x03")
    wait_until(lambda: shell.foreground_pgid() == shell.pid, what="shell in foreground")


def test_executable_names_map_to_agent_kinds(shell: PtyProcess) -> None:
    expected = {
        "pi": "pi",
        "claude": "claude",
        "codex": "codex",
        "opencode": "opencode",
        "cursor-agent": "cursor",
        "kiro-cli": "kiro",
    }
    found = {}
    for executable, kind in expected.items():
        run(shell, f"{executable} 30")

        def execed(name: str = executable) -> ProcessAgent | None:
            # The job can be probed between fork and exec (comm still "bash" while the
            # command line already reads the new program): wait for the exec to finish.
            probe = detect_agent_process(shell.foreground_pgid(), shell.pid)
            return probe if probe is not None and probe.process_name == name else None

        agent = wait_until(execed, what=f"{executable} exec'd")
        found[executable] = agent.agent
        assert agent.process_name == executable
        assert agent.process_group_id == shell.foreground_pgid() != shell.pid
        assert not agent.foreground_is_pane_shell
        assert kind == agent.agent
        interrupt(shell)
    assert found == expected


def test_agent_exit_returns_the_pane_to_its_shell(shell: PtyProcess) -> None:
    assert run(shell, "pi 30").agent == "pi"
    interrupt(shell)
    probe = probe_foreground_process(shell.pid, shell.foreground_pgid())
    assert probe.agent is None
    assert probe.foreground_is_pane_shell
    assert probe.process_group_id == shell.pid
    assert detect_agent_process(shell.foreground_pgid(), shell.pid) is None
    action = foreground_shell_agent_action("pi", probe.agent, probe.foreground_is_pane_shell, False)
    assert action == "report_process_exit"


def test_plain_programs_and_the_idle_shell_are_not_agents(shell: PtyProcess) -> None:
    assert detect_agent_process(shell.foreground_pgid(), shell.pid) is None
    os.write(shell.master_fd, b"sleep 30\n")
    wait_until(lambda: shell.foreground_pgid() != shell.pid, what="sleep in foreground")
    assert detect_agent_process(shell.foreground_pgid(), shell.pid) is None


def test_exec_a_renamed_argv0_is_recognized(shell: PtyProcess) -> None:
    agent = run(shell, "bash -c 'exec -a claude sleep 30'")
    assert (agent.agent, agent.process_name) == ("claude", "claude")


def test_interpreter_scripts_are_recognized(shell: PtyProcess, tmp_path: Path) -> None:
    if shutil.which("node") is not None:
        assert run(shell, f"node {tmp_path}/scripts/pi").agent == "pi"
        interrupt(shell)
    agent = run(shell, f"python3 {tmp_path}/scripts/hermes")
    assert (agent.agent, agent.process_name) == ("hermes", "hermes")


def test_environment_hint_names_the_agent_and_wins_over_the_name(shell: PtyProcess) -> None:
    assert run(shell, "HERDR_AGENT=codex sleep 30").agent == "codex"
    interrupt(shell)
    hinted = run(shell, "HERDR_AGENT=claude-code pi 30")
    assert (hinted.agent, hinted.process_name) == ("claude", "claude")
