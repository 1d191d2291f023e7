"""Which session a fake agent opens: the one its command line names, as its real agent does.

Why per kind: pi resumes a session file or an id prefix, claude and codex keep
transcripts where their real agents do (:mod:`.transcripts`), opencode a database row
(:mod:`.opencode_store`), the third-party persona a file in its own directory.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .agent_state import AgentState
from .opencode_store import OpencodeSession, opencode_db, opencode_id
from .options import UsageError
from .session import PiSession, find_session, new_session_id, session_path_for
from .transcripts import (
    ClaudeTranscript,
    CodexRollout,
    codex_dir,
    newest_transcript,
    transcript_class,
    transcript_path,
)

__all__ = ["SessionChoice"]


class SessionChoice(AgentState):
    """Opening (or resuming) the fake agent's session (module docstring)."""

    def _open_session(self, env: dict[str, str] | os._Environ[str]) -> tuple[str, PiSession]:
        opts = self.options
        common: dict[str, Any] = {
            "provider": self.provider,
            "model": self.model,
            "thinking": opts.thinking,
            "append_system_prompt": opts.append_system_prompt,
        }
        ms = int(time.time() * 1000)
        if self.kind == "fake-agent":
            directory = Path(
                opts.session_dir
                or env.get("HERDR_SIM_FAKE_AGENT_DIR")
                or Path(env.get("HOME") or str(Path.home())) / ".herdr-sim" / "fake-agent"
            )
            session_id = opts.resume or opts.session_id or new_session_id(ms)
            path = directory / f"{session_id}.jsonl"
            if path.exists():
                return session_id, PiSession.resume(path, **common)
            return session_id, PiSession(path, session_id, self.cwd, **common)
        if opts.session and (os.sep in opts.session or opts.session.endswith(".jsonl")):
            path = Path(opts.session)
            if path.exists() and path.stat().st_size > 0:
                session = PiSession.resume(path, **common)
                return session.session_id, session
            session_id = new_session_id(ms)
            return session_id, PiSession(path, session_id, self.cwd, **common)
        if opts.session and self.kind == "pi":
            found = find_session(self.cwd, opts.session, session_dir=opts.session_dir, env=env)
            if found is None:  # main() prints it and exits 1 before the agent starts
                raise UsageError(f"No session found matching '{opts.session}'")
            session = PiSession.resume(found, **common)
            return session.session_id, session
        if self.kind == "claude" and opts.continue_latest and not opts.resume:
            latest = newest_transcript("claude", self.cwd, env)
            if latest is None:  # main() prints it and exits 1, as Claude Code does
                raise UsageError("No conversation found to continue")
            opts.resume = latest.stem
        session_id = opts.session or opts.resume or opts.session_id or new_session_id(ms)
        if self.kind in ("claude", "codex"):
            path = transcript_path(self.kind, self.cwd, session_id, ms, env)
            writer = transcript_class(self.kind)
            if path.exists() and path.stat().st_size > 0:
                transcript = writer.resume(path, **common)
            else:
                transcript = writer(path, session_id, self.cwd, **common)
            if isinstance(transcript, ClaudeTranscript):
                transcript.permission_mode, transcript.effort = opts.permission_mode, opts.effort
            elif isinstance(transcript, CodexRollout):
                transcript.index = codex_dir(env) / "session_index.jsonl"
            return session_id, transcript
        if self.kind == "opencode":
            session_id = opts.session or opencode_id("ses", descending=True, ms=ms)
            return session_id, OpencodeSession(opencode_db(env), session_id, self.cwd, **common)
        path = session_path_for(self.cwd, session_id, ms, session_dir=opts.session_dir, env=env)
        return session_id, PiSession(path, session_id, self.cwd, **common)

    @property
    def resumed(self) -> bool:
        """Whether this run continues an earlier session."""
        return bool(self.options.session or self.options.resume)

    def resume_argv(self) -> list[str]:
        """The command that reopens this session (third-party persona)."""
        argv = ["herdr-sim", "fake-agent", "--resume", self.session_id]
        if self.options.scenario:
            argv += ["--scenario", self.options.scenario]
        if self.options.model:
            argv += ["--model", self.options.model]
        if self.options.session_dir:
            argv += ["--session-dir", self.options.session_dir]
        return argv
