"""Agent-integration conformance: Herdr's integration guide as an executable checklist.

:func:`check_integration` runs any agent command outside Herdr and in a pane of an
in-process simulator, records every report it makes, drives it (a prompt, a question, a
session change, a slow and a refused socket, an exit, a restart, a restore) and judges each
rule of the guide with evidence. ``herdr-sim check-integration -- <agent command>`` is the
same from a shell. Import-light: nothing starts until :func:`check_integration` is called.
See ``docs/pytest-plugin/integration-checks.md``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import defaults
from .report import Evidence, IntegrationReport, RootCause, RuleResult

__all__ = [
    "RULE_IDS",
    "Evidence",
    "IntegrationReport",
    "RootCause",
    "RuleResult",
    "check_integration",
]

#: every rule, in checklist order
RULE_IDS = (
    "outside-herdr",
    "states",
    "seq",
    "source",
    "turn",
    "blocked",
    "resume",
    "release",
    "non-blocking",
    "restore",
)


def check_integration(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    settings: Mapping[str, Any] | None = None,
    agent_env: Mapping[str, str] | None = None,
    prompt: str = defaults.PROMPT,
    question_prompt: str | None = defaults.QUESTION_PROMPT,
    answer: str = defaults.ANSWER,
    new_session_prompt: str | None = defaults.NEW_SESSION_PROMPT,
    exit_keys: Sequence[str] = defaults.EXIT_KEYS,
    timeout: float = 10.0,
    rules: Iterable[str] | None = None,
    wire_taps: Sequence[Callable[[str, dict[str, Any]], None]] = (),
) -> IntegrationReport:
    """Check the agent started by ``argv`` against Herdr's integration guide.

    ``cwd``: where the agent runs (default: a fresh temporary directory). ``settings``:
    :class:`~herdr_sim.config.SimulatorConfig` overrides (the socket and ``persist`` are the
    checker's). ``agent_env``: extra environment for the agent (over ``os.environ``, whose
    ``HERDR_*`` variables are dropped). ``prompt``: an ordinary prompt; ``question_prompt``:
    one that makes the agent ask the user (None: the ``blocked`` rule is skipped), answered
    with ``answer``; ``new_session_prompt``: makes the agent switch to a new session in the
    same process (None: only restarts exercise re-reported resume commands);
    ``exit_keys``: what exits the agent, each item a Herdr key name (``Enter``,
    ``ctrl+d``) or else literal text. The defaults drive ``herdr-sim fake-agent``.
    ``timeout`` bounds every wait. ``rules``: check only these rule ids (and run only the
    phases they need). ``wire_taps``: shown every wire line of the check's simulators, as
    ``Simulator.wire_taps`` (the pytest plugin's contract checker is one).
    """
    from . import causes
    from .driver import CheckOptions, drive
    from .rules import judge

    chosen = list(RULE_IDS) if rules is None else [r for r in RULE_IDS if r in set(rules)]
    unknown = set(rules or ()) - set(RULE_IDS)
    if unknown:
        raise ValueError(f"unknown rule(s): {', '.join(sorted(unknown))}")
    if not argv:
        raise ValueError("no agent command given")
    options = CheckOptions(
        argv=list(argv),
        cwd=None if cwd is None else Path(cwd),
        settings=dict(settings or {}),
        agent_env=dict(agent_env or {}),
        timeout=timeout,
        rules=frozenset(chosen),
        prompt=prompt,
        question_prompt=question_prompt,
        answer=answer,
        new_session_prompt=new_session_prompt,
        exit_keys=tuple(exit_keys),
        wire_taps=tuple(wire_taps),
    )
    started = time.monotonic()
    seen = drive(options)
    cause, results = causes.apply(causes.find(seen), seen, judge(seen, chosen))
    return IntegrationReport(
        command=list(argv),
        cwd=seen.cwd,
        rules=results,
        root_cause=cause,
        reports=[report.to_json() for report in seen.log.snapshot()],
        timeline=list(seen.timeline),
        duration=time.monotonic() - started,
    )
