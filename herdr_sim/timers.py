"""Herdr's timers as one simulator runs them: the configured values times the time scale.

Agent tests spend most of their time in Herdr's own clocks (the 3 s settle delay of
``agent.start``, the 300 ms prompt submit delay, the 500 ms detection tick behind the
idle-shell safety net …). ``SimulatorConfig.time_scale`` runs all of them faster by one
factor, so their order, and what a test means, stays: at 0.1 the settle delay is still ten
times the submit delay and still ends before the first prompt is typed.

Every place in the simulator that waits on one of Herdr's clocks reads it from
:func:`effective` (through ``SimulatorConfig.timers()``), so the scale is applied here once.
Not scaled: what a client gives (a request's ``timeout_ms`` is the client's time, and
``agent.start``'s bounds 3000 < ``timeout_ms`` ≤ 300000 stay Herdr's), Herdr's waits
without a timeout (they wait forever in Herdr too), the simulator's own limits that guard
real processes (``git_timeout``, the pty's exit grace) and everything the pane processes do
in their own time — a shell's start-up, a real agent's start-up and turns. The fake agents
are the simulator's, so they scale their scripted delays by the same factor (they read it
from :data:`TIME_SCALE_ENV`); an agent of your own sees the variable too and may do the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Protocol

from orchestrator.client.protocol.startup import DEFAULT_TIMEOUT_MS

__all__ = [
    "ACQUIRE_REPROBE",
    "ACQUISITION_WINDOW",
    "AGENT_START_TIMEOUT",
    "RECHECK_IDENTIFIED",
    "TIME_SCALE_ENV",
    "Timers",
    "check_time_scale",
    "effective",
]


class TimerSource(Protocol):
    """What :func:`effective` reads: a :class:`~herdr_sim.config.SimulatorConfig` (named by
    shape, not imported: the config imports this module)."""

    time_scale: float


#: the variable the simulator sets in its panes when the time scale is not 1 (the factor)
TIME_SCALE_ENV = "HERDR_SIM_TIME_SCALE"
#: ``agent.start``'s deadline when the request gives no ``timeout_ms`` (Herdr: 30 s)
AGENT_START_TIMEOUT = DEFAULT_TIMEOUT_MS / 1000
#: How long after a foreground change a non-agent job is still re-probed (Herdr: 8 s).
ACQUISITION_WINDOW = 8.0
#: Least time between two probes of a job that is not an agent yet (while acquiring).
ACQUIRE_REPROBE = 0.02
#: Re-probe interval of an identified agent (Herdr: 5 s).
RECHECK_IDENTIFIED = 5.0


@dataclass(frozen=True)
class Timers:
    """The seconds one simulator waits on each of Herdr's clocks (already scaled)."""

    agent_start_settle: float
    agent_start_timeout: float
    agent_prompt_submit_delay: float
    agent_prompt_stall_timeout: float
    first_line_timeout: float
    detection_interval: float
    detection_debounce: float
    detection_idle_hold: float
    acquisition_window: float
    acquire_reprobe: float
    recheck_identified: float


def check_time_scale(value: float) -> float:
    """``value`` if it is a usable time scale (a finite number > 0), else ``ValueError``
    (``TypeError`` for what is no number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"time_scale must be a number > 0, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"time_scale must be a finite number > 0, got {value!r}")
    return float(value)


def effective(config: TimerSource) -> Timers:
    """``config``'s timers times its ``time_scale`` (the config's fields are Herdr's time)."""
    scale = check_time_scale(config.time_scale)
    unscaled = {
        "agent_start_timeout": AGENT_START_TIMEOUT,
        "acquisition_window": ACQUISITION_WINDOW,
        "acquire_reprobe": ACQUIRE_REPROBE,
        "recheck_identified": RECHECK_IDENTIFIED,
    }
    values = {
        f.name: unscaled[f.name] if f.name in unscaled else float(getattr(config, f.name))
        for f in fields(Timers)
    }
    return Timers(**{name: value * scale for name, value in values.items()})
