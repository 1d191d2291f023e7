"""Real agents in tests: ``herdr_fake_llm`` (a scripted model server) and ``herdr_real_agent``
(a genuine coding agent — pi, Claude Code, Codex or opencode — offline against that model, in a
pane of a simulator of its own).

The fake agents can only be as right as the project's knowledge of the real ones; these
fixtures run the real thing so that the difference shows. Everything an agent needs lives in
the test's temporary directory (its ``$PI_CODING_AGENT_DIR``, its project) except the agent
itself, installed once per machine into a cache (:mod:`herdr_sim.real_agents.install`).
Without an agent install the tests skip with the reason, except under ``CI=true``, where a
missing agent is a failure: a CI run must not pass by skipping.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from herdr_sim.real_agents import (
    REAL_KINDS,
    AgentHome,
    AgentInstallError,
    InstalledAgent,
    find_agent,
    install_agent,
    prepare_home,
)

from .agents import Agent, start_agent
from .backends import HerdrServer
from .client import WireClient
from .fixtures import ServerFactory
from .handles import Pane, Workspace
from .waits import wait_until

if TYPE_CHECKING:  # the fake LLM (http.server, ssl) is imported when a test asks for it
    from herdr_sim.fake_llm import FakeLLM, RecordedRequest, Script

__all__ = ["REAL_KINDS", "RealAgent", "RealAgents", "herdr_fake_llm", "herdr_real_agent", "in_ci"]


def in_ci() -> bool:
    """Whether this run is a CI run (``CI=true``, as CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def unavailable(reason: str) -> NoReturn:
    """Skip the test for ``reason`` — or fail it in CI, where every real-agent test must run."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: real-agent tests must run, not skip)", pytrace=False)
    pytest.skip(reason)


def require_agent(kind: str = "pi") -> InstalledAgent:
    """The installed ``kind`` agent, installing it (npm, once per machine) when it is missing.

    ``PYTEST_HERDR_NO_AGENT_INSTALL=1`` forbids the install: a missing agent is then skipped.
    """
    found = find_agent(kind)
    if found is not None:
        return found
    if os.environ.get("PYTEST_HERDR_NO_AGENT_INSTALL") == "1":
        unavailable(f"real {kind} is not installed (run `herdr-sim install-agent {kind}`)")
    try:
        return install_agent(kind)
    except AgentInstallError as exc:
        unavailable(f"real {kind} is not available: {exc}")


def require_pi() -> InstalledAgent:
    """The installed pi (see :func:`require_agent`)."""
    return require_agent("pi")


def request_log(llm: FakeLLM) -> str:
    """The fake LLM's requests, one line each, for a failure report."""
    lines = [json.dumps(r.summary()) for r in llm.requests]
    return "\n".join(lines) or "(no requests)"


@pytest.fixture
def herdr_fake_llm(request: pytest.FixtureRequest) -> Iterator[FakeLLM]:
    """A scripted fake LLM on 127.0.0.1 for this test (:class:`herdr_sim.fake_llm.FakeLLM`):
    ``herdr_fake_llm.set_script(Script().reply("hi"))``; ``.url``, ``.openai_base_url``,
    ``.requests`` (every request, parsed). A failing test's report shows the request log."""
    from herdr_sim.fake_llm import FakeLLM  # only once a test asks for it

    with FakeLLM() as llm:
        yield llm
        if getattr(request.node, "herdr_call_failed", False):
            request.node.add_report_section("teardown", "fake LLM requests", request_log(llm))


@dataclass
class RealAgent:
    """A real agent running in a pane, and everything around it."""

    agent: Agent
    kind: str
    installed: InstalledAgent
    #: the agent's private home (pi: :class:`~herdr_sim.real_agents.PiHome`; claude, codex,
    #: opencode: their own, see :mod:`herdr_sim.real_agents`)
    home: AgentHome
    llm: FakeLLM
    server: HerdrServer
    client: WireClient
    workspace: Workspace
    #: the agent's working directory (its project)
    cwd: Path

    @property
    def name(self) -> str:
        """The agent's name in Herdr."""
        return self.agent.name

    @property
    def pane(self) -> Pane:
        """The pane the agent runs in."""
        return self.agent.pane

    def prompt(self, text: str, **options: Any) -> dict[str, Any]:
        """``agent.prompt`` (waits for the turn by default; see :meth:`Agent.prompt`)."""
        return self.agent.prompt(text, **options)

    def session_files(self) -> list[Path]:
        """The agent's session files so far, oldest first."""
        return self.home.session_files()

    def requests(self) -> list[RecordedRequest]:
        """Every request the agent sent to the fake LLM so far."""
        return list(self.llm.requests)


@dataclass
class RealAgents:
    """Starts real agents against one fake LLM, in a simulator of their own."""

    llm: FakeLLM
    server_factory: ServerFactory
    directory: Path
    _servers: dict[Path | None, tuple[HerdrServer, WireClient]] = field(default_factory=dict)
    _numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def server(self, manifests: Path | None = None) -> tuple[HerdrServer, WireClient]:
        """The simulator the agents run in: no fake agents on its panes' PATH and the screen
        rules of ``manifests`` (a directory of Herdr's detection manifests) or none, so what
        Herdr knows of a real agent comes from the agent, its integration and those rules."""
        if manifests not in self._servers:
            server = self.server_factory(fake_agents=False, agent_manifests_dir=manifests)
            self._servers[manifests] = (server, WireClient(server.socket_path))
        return self._servers[manifests]

    def start(
        self,
        kind: str = "pi",
        script: Script | None = None,
        *,
        args: tuple[str, ...] = (),
        name: str | None = None,
        extension: bool = True,
        extra_extensions: tuple[Path, ...] = (),
        manifests: Path | None = None,
        ready_timeout: float = 60.0,
        before: Callable[[Pane], object] | None = None,
    ) -> RealAgent:
        """Start a real ``kind`` agent (``pi``, ``claude``, ``codex``, ``opencode``) with
        ``agent.start`` in a new workspace and wait until it is ``interactive_ready`` and its
        interface takes input; ``script`` (if given) becomes the fake LLM's script.
        ``extension=False`` leaves the project's Herdr integration out (pi's extension,
        Claude Code's and Codex's session hook, opencode's plugin); ``extra_extensions``
        are more pi extensions (``.ts`` files) to install beside it; ``manifests`` is a
        directory of Herdr's screen-detection manifests for the simulator to read the
        agent's screen with (default: none); ``before(pane)`` runs in the new pane before
        the agent starts there (e.g. printing output the agent then starts below)."""
        if kind not in REAL_KINDS:
            raise ValueError(f"no real agent {kind!r}; real kinds: {', '.join(REAL_KINDS)}")
        installed = require_agent(kind)
        if script is not None:
            self.llm.set_script(script)
        number = next(self._numbers)
        cwd = self.directory / f"{kind}-{number}-project"
        cwd.mkdir(parents=True, exist_ok=True)
        home = prepare_home(
            kind, self.directory / f"{kind}-{number}-home", self.llm.url, cwd,
            integration=extension,
        )  # fmt: skip
        for source in extra_extensions:
            (home.agent_dir / "extensions").mkdir(exist_ok=True)
            shutil.copyfile(source, home.agent_dir / "extensions" / source.name)
        server, client = self.server(manifests)
        env = home.env(installed, path=server.env.get("PATH"))
        created = client.call("workspace.create", cwd=str(cwd), focus=True, env=env,
                              label=f"real_{kind}_{number}")  # fmt: skip
        root = Pane.from_info(client, created["root_pane"])
        workspace = Workspace(
            client, created["workspace"]["workspace_id"], created["tab"]["tab_id"], root
        )
        if server.events is not None:
            server.events.watch(root.pane_id)
        if before is not None:
            before(root)
        agent = start_agent(
            client, kind, root, name or f"{kind}-{number}", [*home.args(), *args], ready_timeout
        )
        _wait_for_ui(agent, home, extension and home.session_at_start, ready_timeout)
        return RealAgent(agent, kind, installed, home, self.llm, server, client, workspace, cwd)


def _wait_for_ui(agent: Agent, home: AgentHome, reports: bool, timeout: float) -> None:
    """Wait (bounded) until the agent's interface is up: its screen shows the home's
    ``ready_text`` (pi, codex: the model in the footer) and, when its integration
    ``reports``, the session was reported; a start-up dialog of ``home.dialogs`` on the
    way is answered with its keys (again after half a second if it is still there).
    ``interactive_ready`` alone is not enough here: the simulator's settle delay is shortened
    for tests and the agent has not drawn its editor yet when it passes, so a prompt typed
    then is lost (Herdr's own 3 s settle hides this)."""

    answered: dict[str, float] = {}

    def up() -> bool:
        screen = agent.read("visible")
        for text, keys in home.dialogs:
            if text in screen and time.monotonic() - answered.get(text, 0.0) > 0.5:
                answered[text] = time.monotonic()
                agent.send_keys(*keys)
        if home.ready_text not in screen:
            return False
        return not reports or "agent_session" in agent.info

    wait_until(up, timeout, interval=0.05, what=f"{agent.name}'s interface to come up")


@pytest.fixture
def herdr_real_agent(
    herdr_fake_llm: FakeLLM, herdr_server_factory: ServerFactory, tmp_path: Path
) -> RealAgents:
    """Starts real agents (``pi``, ``claude``, ``codex``, ``opencode``) offline against
    ``herdr_fake_llm``:
    ``pi = herdr_real_agent.start("pi", Script().reply("hi"))`` → :class:`RealAgent`.

    The agent gets a private home in ``tmp_path`` (pi: ``$PI_CODING_AGENT_DIR`` with
    ``models.json`` naming the fake LLM, telemetry and update checks off, and the project's
    Herdr extension where ``herdr integration install pi`` puts Herdr's) and runs in a pane
    of a simulator of its own, started with ``agent.start``. Skips when the agent cannot be
    installed, fails instead under ``CI=true``."""
    return RealAgents(herdr_fake_llm, herdr_server_factory, tmp_path)
