"""Where the fake claude and codex keep their transcripts: where the real ones do.

Found by running the real agents (tests/real_agents, docs/simulator/real-agents.md): Claude
Code 2.1 writes ``$CLAUDE_CONFIG_DIR/projects/<cwd, every character but letters and digits
as ->/<session id>.jsonl`` (``$CLAUDE_CONFIG_DIR`` defaults to ``~/.claude``) and resumes
into the same file; Codex 0.171 writes ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-
YYYY-MM-DDTHH-MM-SS-<session id>.jsonl`` (``$CODEX_HOME`` defaults to ``~/.codex``) and
resumes a session from its rollout. The lines the fakes write there are still pi's format
(:mod:`herdr_sim.fake_agent.session`); only the place is the real one.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

__all__ = ["transcript_path"]


def _home(env: dict[str, str] | os._Environ[str]) -> Path:
    return Path(env.get("HOME") or str(Path.home()))


def claude_dir(env: dict[str, str] | os._Environ[str]) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured) if configured else _home(env) / ".claude"


def codex_dir(env: dict[str, str] | os._Environ[str]) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    configured = env.get("CODEX_HOME")
    return Path(configured) if configured else _home(env) / ".codex"


def transcript_path(
    kind: str, cwd: str, session_id: str, ms: int, env: dict[str, str] | os._Environ[str]
) -> Path:
    """The transcript of session ``session_id`` of the ``claude`` or ``codex`` fake started
    in ``cwd`` at ``ms`` (Unix milliseconds): an existing one of that id, else a new path."""
    if kind == "claude":
        bucket = re.sub(r"[^A-Za-z0-9]", "-", cwd)
        return claude_dir(env) / "projects" / bucket / f"{session_id}.jsonl"
    if kind != "codex":
        raise ValueError(f"no real transcript place known for {kind!r}")
    sessions = codex_dir(env) / "sessions"
    existing = sorted(sessions.glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
    if existing:
        return existing[-1]
    stamp = time.localtime(ms / 1000)
    day = sessions / time.strftime("%Y", stamp) / time.strftime("%m", stamp)
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', stamp)}-{session_id}.jsonl"
    return day / time.strftime("%d", stamp) / name
