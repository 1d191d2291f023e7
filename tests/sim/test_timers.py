"""The time scale of Herdr's timers (``SimulatorConfig.time_scale``, herdr_sim/timers.py):
one factor for every Herdr-side delay and default wait, applied in one place, their order
kept; a bad factor fails when the simulator is made; the pane processes (the fake agents)
learn it from ``HERDR_SIM_TIME_SCALE``."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import RequestFailed
from herdr_sim.config import SimulatorConfig
from herdr_sim.fake_agent.app import time_scale_of
from herdr_sim.timers import TIME_SCALE_ENV, Timers
from tests.waits import SCALE, wait_until

pytestmark = pytest.mark.herdr_sim_only

#: Herdr's values (seconds), with where Herdr keeps them
HERDRS = {
    "agent_start_settle": 3.0,  # AGENT_START_SETTLE_DELAY
    "agent_start_timeout": 30.0,  # agent.start without timeout_ms
    "agent_prompt_submit_delay": 0.3,  # AGENT_PROMPT_SUBMIT_DELAY
    "agent_prompt_stall_timeout": 5.0,  # AGENT_PROMPT_EFFECT_TIMEOUT_MS
    "first_line_timeout": 5.0,  # INITIAL_REQUEST_TIMEOUT
    "detection_interval": 0.5,
    "detection_debounce": 0.05,
    "detection_idle_hold": 0.3,
    "acquisition_window": 8.0,
    "acquire_reprobe": 0.02,
    "recheck_identified": 5.0,
}


def test_at_one_every_timer_is_herdrs() -> None:
    timers = SimulatorConfig().timers()
    assert dataclasses.asdict(timers) == HERDRS
    assert {f.name for f in dataclasses.fields(Timers)} == set(HERDRS)


@pytest.mark.parametrize("scale", [0.1, 0.01, 2.0])
def test_every_timer_scales_by_the_same_factor_and_keeps_its_order(scale: float) -> None:
    timers = dataclasses.asdict(SimulatorConfig(time_scale=scale).timers())
    for name, value in HERDRS.items():
        assert math.isclose(timers[name], value * scale), name
    assert sorted(HERDRS, key=HERDRS.__getitem__) == sorted(timers, key=timers.__getitem__)


def test_a_set_timer_is_scaled_too_and_the_fields_stay_in_herdrs_time() -> None:
    config = SimulatorConfig(agent_start_settle=0.2, time_scale=0.1)
    assert config.timers().agent_start_settle == pytest.approx(0.02)
    assert config.agent_start_settle == 0.2


@pytest.mark.parametrize("scale", [0, -1.0, math.nan, math.inf, True, "0.1"])
def test_a_bad_time_scale_fails_when_the_simulator_is_made(scale: object, tmp_path: Path) -> None:
    with pytest.raises((TypeError, ValueError), match="time_scale"):
        Simulator(socket_path=tmp_path / "h.sock", time_scale=scale)


@pytest.mark.parametrize(
    ("env", "scale"),
    [({}, 1.0), ({TIME_SCALE_ENV: "0.1"}, 0.1), ({TIME_SCALE_ENV: "x"}, 1.0),
     ({TIME_SCALE_ENV: "0"}, 1.0), ({TIME_SCALE_ENV: "inf"}, 1.0)],
)  # fmt: skip
def test_the_fake_agents_read_the_scale_from_their_environment(
    env: dict[str, str], scale: float
) -> None:
    assert time_scale_of(env) == scale


def scale_in_pane(api: Callable[..., dict[str, Any]]) -> str:
    """What ``$HERDR_SIM_TIME_SCALE`` is in a new pane's shell."""
    pane = api("workspace.create", cwd="/", focus=True)["root_pane"]["pane_id"]
    text = f'echo "S=${{{TIME_SCALE_ENV}-unset}}"'
    api("pane.send_input", pane_id=pane, text=text, keys=["Enter"])
    match = {"type": "regex", "value": r"^S=\S+$"}
    matched = api("pane.wait_for_output", pane_id=pane, source="recent", match=match,
                  timeout_ms=10_000)  # fmt: skip
    line: str = matched["matched_line"]
    return line


@pytest.mark.sim_settings(time_scale=0.1)
def test_panes_get_the_scale(api: Callable[..., dict[str, Any]]) -> None:
    assert scale_in_pane(api) == "S=0.1"


def test_at_one_the_panes_environment_is_herdrs(api: Callable[..., dict[str, Any]]) -> None:
    assert scale_in_pane(api) == "S=unset"


@pytest.mark.sim_settings(time_scale=0.1, fake_agents=False)
def test_agent_starts_default_deadline_runs_at_the_scale(
    api: Callable[..., dict[str, Any]],
) -> None:
    # no pi on PATH: the launch stays pending until its deadline, Herdr's 30 s without a
    # timeout_ms, here 3 s; then the name is cleared
    pane = api("workspace.create", cwd="/", focus=True)["root_pane"]["pane_id"]
    started = time.monotonic()
    api("agent.start", name="a", kind="pi", pane_id=pane)

    def named() -> bool:
        try:
            return bool(api("agent.get", target="a")["agent"]["launch_pending"])
        except RequestFailed as exc:
            if exc.code != "agent_not_found":
                raise
            return False

    assert named()
    wait_until(lambda: not named(), timeout=25.0, what="the launch's deadline")
    assert 3.0 <= time.monotonic() - started < 25.0 * SCALE
