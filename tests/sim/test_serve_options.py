"""``herdr-sim serve``'s settings: Herdr's timers in milliseconds and the panes' sandbox HOME.

Each timer option names the Herdr constant it stands for (``AGENT_START_SETTLE_DELAY`` in
``src/app/agents.rs``, ``AGENT_PROMPT_SUBMIT_DELAY`` in ``src/app/api/agents.rs``,
``AGENT_PROMPT_EFFECT_TIMEOUT_MS`` in ``src/api/wait.rs``, ``INITIAL_REQUEST_TIMEOUT`` in
``src/api/server.rs``); unset, the simulator keeps Herdr's value."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from herdr_sim.command import TIMER_OPTIONS, _parser, main, serve_config
from herdr_sim.config import SimulatorConfig

pytestmark = pytest.mark.herdr_sim_only


def test_every_timer_option_sets_its_setting_in_seconds() -> None:
    words = ["serve"]
    for number, (flag, _field, _text) in enumerate(TIMER_OPTIONS, start=1):
        words += [flag, str(number * 100)]
    config = serve_config(_parser().parse_args(words))
    for number, (_flag, field, _text) in enumerate(TIMER_OPTIONS, start=1):
        assert getattr(config, field) == number / 10, field
    assert config.agent_start_settle == 0.1  # --settle-ms 100


def test_unset_timers_keep_herdrs_values() -> None:
    config = serve_config(_parser().parse_args(["serve", "--agent-home", "/x/home"]))
    defaults = SimulatorConfig()
    for _flag, field, _text in TIMER_OPTIONS:
        assert getattr(config, field) == getattr(defaults, field), field
    assert (config.agent_start_settle, config.first_line_timeout) == (3.0, 5.0)
    assert config.agent_home == Path("/x/home")


@pytest.mark.parametrize("value", ["-1", "1.5", "soon"])
def test_a_timer_must_be_whole_non_negative_milliseconds(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--settle-ms", value])
    assert exited.value.code == 2
    assert "--settle-ms" in capsys.readouterr().err


def test_help_lists_every_timer(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    assert all(flag in text for flag, _field, _text in TIMER_OPTIONS)
    assert "--agent-home" in text


def test_a_running_serve_uses_the_timer_it_was_given(short_dir: Path) -> None:
    """``--first-line-timeout-ms 200``: a client that sends nothing is dropped after
    0.2 s instead of Herdr's 5 s."""
    sock_path = short_dir / "herdr.sock"
    env = dict(os.environ, HOME=str(short_dir), HERDR_SIM_CONFIG_DIR=str(short_dir / "cfg"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "herdr_sim",
            "serve",
            "--socket",
            str(sock_path),
            "--first-line-timeout-ms",
            "200",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "listening on" in proc.stderr.readline()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(sock_path))
            # dropped (EOF) before Herdr's 5 s; still waiting after 4 s raises a timeout
            client.settimeout(4.0)
            assert client.recv(4096) == b""
    finally:
        proc.terminate()
        proc.wait(15)
        if proc.stderr is not None:
            proc.stderr.close()


def test_time_scale_sets_the_setting() -> None:
    assert serve_config(_parser().parse_args(["serve"])).time_scale == 1.0
    config = serve_config(_parser().parse_args(["serve", "--time-scale", "0.1"]))
    assert config.time_scale == 0.1
    assert config.agent_start_settle == 3.0  # the fields stay Herdr's; timers() scales them
    assert config.timers().agent_start_settle == pytest.approx(0.3)


@pytest.mark.parametrize("value", ["0", "-0.5", "nan", "inf", "fast"])
def test_time_scale_must_be_a_number_above_zero(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", f"--time-scale={value}"])
    assert exited.value.code == 2
    assert "--time-scale" in capsys.readouterr().err


def test_a_running_serve_runs_herdrs_timers_at_its_time_scale(short_dir: Path) -> None:
    """``--time-scale 0.1``: a client that sends nothing is dropped after Herdr's 5 s
    first-line timeout at a tenth, 0.5 s."""
    sock_path = short_dir / "herdr.sock"
    env = dict(os.environ, HOME=str(short_dir), HERDR_SIM_CONFIG_DIR=str(short_dir / "cfg"))
    argv = [sys.executable, "-m", "herdr_sim", "serve", "--socket", str(sock_path)]
    proc = subprocess.Popen(
        [*argv, "--time-scale", "0.1"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        assert "listening on" in proc.stderr.readline()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(sock_path))
            started = time.monotonic()
            client.settimeout(4.0)  # still waiting after 4 s raises a timeout
            assert client.recv(4096) == b""
            assert time.monotonic() - started >= 0.45  # the timer ran, a tenth as long
    finally:
        proc.terminate()
        proc.wait(15)
        if proc.stderr is not None:
            proc.stderr.close()
