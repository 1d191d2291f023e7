"""Settings of one simulator instance."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ._version import HERDR_VERSION, PROTOCOL


@dataclass
class SimulatorConfig:
    """Everything a simulator needs to start; the defaults are real Herdr's.

    ``socket_path`` None means "resolve like the ``herdr`` CLI does" (``HERDR_SOCKET_PATH``,
    ``HERDR_SESSION``, the simulator's config dir). ``version`` and ``protocol`` are what
    ``ping`` reports, so clients' mismatch handling can be tested.
    """

    socket_path: Path | None = None
    session_name: str | None = None
    #: the headless terminal area (Herdr's default without an attached client is 120×40)
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
