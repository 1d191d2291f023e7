"""What a fake agent tells Herdr: the reports its kind's official integration sends.

Why per kind: pi reports its session path and states, claude and codex only their session
(their states come from screen detection), opencode its session id, the third-party persona
states with a ``resume_argv`` and a release on exit (docs/simulator/agents.md).
"""

from __future__ import annotations

import time
from typing import Any

from .session_choice import SessionChoice

__all__ = ["Reports"]


class Reports(SessionChoice):
    """The fake agent's reports to Herdr (module docstring)."""

    def _params(self, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "pane_id": self.pane_id,
            "source": self.source,
            "agent": self.agent,
        }
        params.update(extra)
        return params

    def report_startup(self) -> None:
        """What the official integration of this kind sends when the agent starts."""
        rep = self.reporter
        if rep is None:
            return
        path = str(self.session.path)
        if self.kind == "pi":
            rep.send(
                "pane.report_agent_session",
                self._params(seq=None, session_start_source="startup", agent_session_path=path),
            )
            rep.send(
                "pane.report_agent",
                self._params(state="idle", seq=None, agent_session_path=path),
                state=True,
            )
        elif self.kind in ("claude", "codex"):
            start = "resume" if self.resumed else "startup"
            params = self._params(seq=time.time_ns(), agent_session_id=self.session_id)
            if self.kind == "claude":
                params["agent_session_path"] = path
            params["session_start_source"] = start
            rep.send("pane.report_agent_session", params)
        elif self.kind == "opencode":
            rep.send(
                "pane.report_agent_session",
                self._params(agent_session_id=self.session_id, session_start_source="select"),
            )
        else:
            rep.send(
                "pane.report_agent",
                self._params(
                    state="idle",
                    seq=None,
                    agent_session_id=self.session_id,
                    resume_argv=self.resume_argv(),
                ),
                state=True,
            )

    def report_state(self, state: str, message: str | None = None) -> None:
        """A lifecycle state report (only kinds whose integration reports states).

        ``working`` holds the turn (never the screen) until the report is on its way,
        for at most a second: a fast turn's ``idle`` would otherwise replace a still
        pending ``working`` (only the newest state is sent), and tests want each turn to
        report both.
        """
        rep = self.reporter
        if rep is None or self.kind in ("claude", "codex"):
            return
        extra: dict[str, Any] = {"state": state}
        if message is not None and state == "blocked":
            extra["message"] = message
        extra["seq"] = None
        if self.kind == "pi":
            extra["agent_session_path"] = str(self.session.path)
        elif self.kind == "opencode":
            extra["agent_session_id"] = self.session_id
        taken = rep.send("pane.report_agent", self._params(**extra), state=True)
        if state == "working":
            taken.wait(1.0)

    def report_turn_start(self) -> None:
        """pi's ``agent_start``: the session, then ``working``; others just ``working``."""
        rep = self.reporter
        if rep is not None and self.kind == "pi":
            rep.send(
                "pane.report_agent_session",
                self._params(seq=None, agent_session_path=str(self.session.path)),
            )
        self.report_state("working")

    def report_exit(self) -> None:
        """The third-party persona releases the pane when the user exits."""
        rep = self.reporter
        if rep is not None and self.kind == "fake-agent":
            rep.send("pane.release_agent", self._params(seq=None))
