"""The simulator's test seams: what a test may do to a :class:`~herdr_sim.Simulator` that no
client of a real Herdr can do.

A test drives Herdr through its socket and CLI; those tests run against a real Herdr too
(``pytest --herdr-backend real``). Some behaviour cannot be reached that way — what process
and screen detection would decide, how many connections the server still holds, a name set
behind the API's back — so the simulator offers it here, in one small public module, instead
of tests reaching into its runtime. A test that uses this module needs the simulator: mark it
``@pytest.mark.herdr_sim_only`` (the ``pytest_herdr`` plugin then skips it on a real Herdr).
Fault injection is :attr:`Simulator.faults <herdr_sim.Simulator.faults>` and settings read at
call time are :attr:`Simulator.config <herdr_sim.Simulator.config>`; both are public already.

Every function runs on the simulator's own thread and returns when it is done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herdr_sim.services.runtime import Runtime

    from .model.agents import AgentRecord, AgentState
    from .server import Server
    from .simulator import Simulator

__all__ = [
    "agent_record",
    "check_agent_exit",
    "connections",
    "event_listeners",
    "layout_size",
    "on_shell_returned",
    "requests_in_flight",
    "set_agent_name",
    "set_detection",
]


def set_detection(sim: Simulator, pane_id: str, *steps: tuple[str | None, AgentState]) -> None:
    """What process and screen detection would decide for a pane: each ``(agent, screen)``
    step in turn, all in one turn of the simulator's loop (so no client sees the steps
    between). ``agent=None`` is a shell with no agent in the foreground. The live detection
    loop overrides it on its next pass: run such tests with ``agent_detection=False``."""

    def apply(rt: Runtime) -> None:
        for agent, screen in steps:
            rt.agents.set_detection(rt.pane(pane_id), agent=agent, screen_state=screen)

    sim.run_in_loop(apply)


def agent_record(sim: Simulator, pane_id: str) -> AgentRecord:
    """The agent engine's record of a pane (status, report, name, session)."""
    return sim.run_in_loop(lambda rt: rt.pane(pane_id).pane.agent_rec)


def set_agent_name(sim: Simulator, pane_id: str, name: str) -> None:
    """Name a pane's agent without ``agent.start``/``agent.rename`` and their checks (how a
    test makes the duplicate names a restored session can bring)."""

    def apply(rt: Runtime) -> None:
        def rename(rec: AgentRecord) -> bool:
            rec.name = name
            return False

        rt.agents.apply(rt.pane(pane_id), rename)

    sim.run_in_loop(apply)


def check_agent_exit(sim: Simulator, pane_id: str) -> None:
    """Run the agent-exit check on a pane now, instead of on the detection loop's next pass."""

    def check(rt: Runtime) -> None:
        if rt.detection is None:
            raise RuntimeError("agent detection is off in this simulator")
        rt.detection.check(rt.pane(pane_id).pane.key)

    sim.run_in_loop(check)


def on_shell_returned(sim: Simulator, listener: Callable[[str], None]) -> None:
    """Call ``listener(pane_id)`` (on the simulator's thread) each time detection sees a
    pane's shell come back to its prompt."""

    def listen(rt: Runtime) -> None:
        if rt.detection is None:
            raise RuntimeError("agent detection is off in this simulator")
        rt.detection.shell_returned.append(lambda ref: listener(ref.pane_id))

    sim.run_in_loop(listen)


def layout_size(sim: Simulator, pane_id: str) -> tuple[int, int]:
    """``(cols, rows)`` of a pane's content as the layout model computes it."""

    def size(rt: Runtime) -> tuple[int, int]:
        ref = rt.session.find_pane(pane_id)
        if ref is None:
            raise KeyError(pane_id)
        cols, rows = ref.tab.layout.content_size(ref.pane.key, rt.area)
        return int(cols), int(rows)

    return sim.run_in_loop(size)


def connections(sim: Simulator) -> int:
    """How many client connections the socket server is handling right now."""
    return sim.run_in_loop(lambda rt: _server(sim).connection_count())


def requests_in_flight(sim: Simulator) -> int:
    """How many requests are inside their handler (past their first checks) right now."""
    return sim.run_in_loop(lambda rt: _server(sim).in_flight)


def event_listeners(sim: Simulator) -> int:
    """How many listeners the event hub has (each subscription, waiting prompt or wait)."""
    return sim.run_in_loop(lambda rt: rt.hub.listener_count())


def _server(sim: Simulator) -> Server:
    server = sim.socket_server
    if server is None:
        raise RuntimeError("the simulator is not serving")
    return server
