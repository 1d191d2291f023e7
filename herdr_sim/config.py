"""Settings of one simulator instance."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ._version import HERDR_VERSION, PROTOCOL

if TYPE_CHECKING:
    from herdr_sim.timers import Timers


@dataclass
class SimulatorConfig:
    """Everything a simulator needs to start; the defaults are real Herdr's.

    ``socket_path`` None means "resolve like the ``herdr`` CLI does" (``HERDR_SOCKET_PATH``,
    ``HERDR_SESSION``, the simulator's config dir). ``version`` and ``protocol`` are what
    ``ping`` reports, so clients' mismatch handling can be tested.
    """

    socket_path: Path | None = None
    session_name: str | None = None
    #: Herdr's headless frame (`server.headless_cols`/`headless_rows`, 120×40); its sidebar and
    #: tab bar take their share, so panes get `geometry.terminal_area(cols, rows)`
    cols: int = 120
    rows: int = 40
    #: None → the deterministic bash setup; a path → that shell
    shell: str | None = None
    user_shell: bool = False
    version: str = HERDR_VERSION
    protocol: int = PROTOCOL
    scrollback: int = 10_000
    #: environment the pane processes inherit (before caller env and Herdr's variables)
    base_env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    #: where the simulator keeps its own files (the `herdr` CLI, the shell rc); None → next
    #: to the socket
    runtime_dir: Path | None = None
    #: make this process a child subreaper so orphans of pane processes come back and are
    #: reaped (no zombie left under a lazy PID 1); a process-wide setting, see overview.md
    adopt_orphans: bool = True
    #: seconds a client may take to send its request line (Herdr: 5 s)
    first_line_timeout: float = 5.0
    #: bytes a request line may have (Herdr: 1 MiB)
    max_request_bytes: int = 1024 * 1024
    #: save the session (layout, cwds, labels, agent sessions, resume commands) beside the
    #: socket on every change, and restore it when a simulator starts on the same socket
    persist: bool = True
    #: Herdr's ``[session] resume_agents_on_restore``: run resume commands after a restore
    resume_agents_on_restore: bool = True
    #: seconds ``agent.prompt`` waits between typing the text and pressing Enter (Herdr's
    #: ``AGENT_PROMPT_SUBMIT_DELAY``: 300 ms)
    agent_prompt_submit_delay: float = 0.3
    #: seconds ``agent.prompt`` with ``wait`` gives a non-working agent to show that it took
    #: the prompt before answering ``agent_prompt_stalled`` (Herdr: 5000 ms)
    agent_prompt_stall_timeout: float = 5.0
    # -- agent detection and fake agents (herdr_sim/services/detection_loop.py) ---------------
    #: run process and screen detection; False leaves a pane's detected agent to whoever
    #: sets it (tests that drive the state engine directly)
    agent_detection: bool = True
    #: put the fake agents (`pi`, `claude`, `codex`, `opencode`) on every pane's PATH, right
    #: after the simulator's `herdr`; False → panes find only the agents the user installed
    fake_agents: bool = True
    #: Herdr's ``experimental.kitty_graphics`` (default off): off, every ``pane.graphics.*``
    #: answers ``feature_disabled``
    kitty_graphics: bool = False
    #: the sandbox HOME of the panes while ``fake_agents`` is on (herdr_sim/services/agent_home.py);
    #: None → ``agent-home`` beside the socket. Unused with the fakes off: the panes then
    #: see ``base_env``'s HOME, as in Herdr
    agent_home: Path | None = None
    #: Herdr's screen-detection manifests (`*.toml`); None → no screen rules, so a detected
    #: known agent is always `idle` (Herdr's known-agent fallback)
    agent_manifests_dir: Path | None = None
    #: seconds between foreground-process checks of every pane (Herdr: 500 ms)
    detection_interval: float = 0.5
    #: seconds after output before a pane is checked (coalesces bursts of output)
    detection_debounce: float = 0.05
    #: seconds a working → plain idle screen must persist (Herdr's pending-idle hold)
    detection_idle_hold: float = 0.3
    # -- agent.start (herdr_sim/methods/agent_start.py) -----------------------------------------
    #: seconds a managed launch waits before its agent may become ``interactive_ready``
    #: (Herdr's ``AGENT_START_SETTLE_DELAY``: 3 s); test suites shorten it. The
    #: ``timeout_ms`` bounds stay Herdr's (3000 < timeout_ms ≤ 300000) whatever this is.
    agent_start_settle: float = 3.0
    # -- worktree.* (herdr_sim/methods/worktree.py) ---------------------------------------------
    #: where ``worktree.create`` puts checkouts (``<dir>/<repo>/<branch-slug>``, Herdr's
    #: ``[worktrees] directory``); None → ``worktrees`` beside the socket (as the session
    #: file), never the user's ``~/.herdr/worktrees`` (Herdr's default)
    worktree_directory: Path | None = None
    #: seconds one git command may run before it is killed and the request fails
    git_timeout: float = 60.0
    # -- time scale (herdr_sim/timers.py) -----------------------------------------------------
    #: the factor every Herdr-side delay and default wait above runs at (the settle and
    #: submit delays, the prompt stall and first-line timeouts, the detection timers,
    #: agent.start's default deadline): 1 = Herdr's real time, 0.1 = ten times faster,
    #: their order kept. The fields above stay in Herdr's time; :meth:`timers` applies it.
    time_scale: float = 1.0

    def timers(self) -> Timers:
        """The seconds this simulator waits on each of Herdr's clocks: the timer fields
        times :attr:`time_scale` (the one place the scale is applied)."""
        from herdr_sim.timers import effective

        return effective(self)

    def coerce_paths(self) -> None:
        """Accept any path-like (a ``str`` too) for the path settings, as callers write
        ``Simulator(socket_path="/tmp/x/herdr.sock")``; the simulator works with ``Path``."""
        for name in (
            "socket_path",
            "runtime_dir",
            "agent_manifests_dir",
            "worktree_directory",
            "agent_home",
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Path):
                setattr(self, name, Path(value))
