"""The real agents' screens in a pane that already holds output, recorded for the fakes.

Each real agent starts below 60 numbered lines of earlier output; :func:`observe` records
what a client of the pane sees (the history, the screen, the alternate screen, the input
box's row) while it runs and after it exits. The observations are checked in as
``screens/<kind>.json``; this test holds the real agent to its file (so the file stays the
real agent's behaviour), and ``tests/sim/test_fake_agent_screen_fidelity.py`` holds the
fake of the same kind to it. ``PYTEST_HERDR_RECORD_SCREENS=1`` rewrites the files from the
real agents instead. Marker ``real_agent``.

The agents run in a short directory (:func:`tests.agent_screens.short_directory`): Codex
wraps its status row, which names the working directory, so under pytest's long temporary
paths its input row would sit a row higher than in a project of an ordinary path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from herdr_sim.fake_llm import FakeLLM
from pytest_herdr.fixtures import ServerFactory
from pytest_herdr.real_agents import RealAgents
from tests.agent_screens import RECORDS, fill, observe, recorded, short_directory, terminal_model
from tests.real_agents.observed import MANIFESTS

pytestmark = pytest.mark.real_agent

RECORD_ENV = "PYTEST_HERDR_RECORD_SCREENS"


@pytest.fixture
def agents(herdr_fake_llm: FakeLLM, herdr_server_factory: ServerFactory) -> Iterator[RealAgents]:
    """``herdr_real_agent``, its agents' projects and homes in a short directory."""
    with short_directory() as directory:
        yield RealAgents(herdr_fake_llm, herdr_server_factory, directory)


@pytest.mark.parametrize("kind", ["pi", "claude", "codex"])
def test_the_real_agents_screen_in_a_pane_with_earlier_output(
    agents: RealAgents, kind: str
) -> None:
    real = agents.start(kind, manifests=MANIFESTS, before=fill)
    seen = observe(real.pane, kind, terminal_model(real.server, real.pane))
    if os.environ.get(RECORD_ENV) == "1":
        RECORDS.mkdir(exist_ok=True)
        (RECORDS / f"{kind}.json").write_text(json.dumps(seen, indent=2) + "\n")
    assert seen == recorded(kind)
