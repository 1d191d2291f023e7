"""A fake agent's parsed command line, and the error of a bad one.

Why apart from the parser (:func:`herdr_sim.fake_agent.app.parse_args`): every part of a
running fake agent reads its options (:mod:`.agent_state`).
"""

from __future__ import annotations

__all__ = ["Options", "UsageError"]


class UsageError(Exception):
    """Bad command-line arguments (exit status 2)."""


class Options:
    """The parsed command line of a fake agent."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.model = ""
        self.thinking = "off"
        self.session: str | None = None
        self.session_dir: str | None = None
        self.append_system_prompt: str | None = None
        self.extensions: list[str] = []
        self.scenario: str | None = None
        self.resume: str | None = None
        self.session_id: str | None = None
        self.prompt: str | None = None
        #: claude: ``--continue`` (or ``--resume`` without an id): the newest session here
        self.continue_latest = False
        #: claude: ``-p``/``--print``: answer the prompt on stdout and exit
        self.print_mode = False
        #: claude: what Claude Code warns about on stderr and goes on
        self.warnings: list[str] = []
        #: claude: ``--permission-mode`` and ``--effort`` (its transcript records them)
        self.permission_mode = "default"
        self.effort = "medium"
        #: claude: ``--help`` / ``--version``: print this and exit 0
        self.show: str | None = None
