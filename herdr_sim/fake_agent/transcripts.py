"""Where the fake claude and codex keep their transcripts: where the real ones do.

Found by running the real agents (tests/real_agents, docs/simulator/real-agents.md): Claude
Code 2.1 writes ``$CLAUDE_CONFIG_DIR/projects/<cwd, every character but letters and digits
as ->/<session id>.jsonl`` (``$CLAUDE_CONFIG_DIR`` defaults to ``~/.claude``) and resumes
into the same file; Codex 0.171 writes ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-
YYYY-MM-DDTHH-MM-SS-<session id>.jsonl`` (``$CODEX_HOME`` defaults to ``~/.codex``) and
resumes a session from its rollout. The fakes write there, in each agent's own format, the
entries of their turns that tools read (the real ones write more: snapshots, attachments,
token counts, settings).
"""

from __future__ import annotations

import json
import os
import random
import re
import time
import uuid
from pathlib import Path
from typing import Any

from .session import PiSession, iso_now

__all__ = [
    "ClaudeTranscript",
    "CodexRollout",
    "newest_transcript",
    "transcript_class",
    "transcript_path",
]


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


def newest_transcript(kind: str, cwd: str, env: dict[str, str] | os._Environ[str]) -> Path | None:
    """The newest transcript of the ``claude`` fake started in ``cwd`` (``claude --continue``
    continues the most recent conversation of the current directory), or None."""
    bucket = transcript_path(kind, cwd, "x", 0, env).parent
    found = [p for p in bucket.glob("*.jsonl") if p.is_file()] if bucket.is_dir() else []
    return max(found, key=lambda p: p.stat().st_mtime_ns) if found else None


def _options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: options[k] for k in ("provider", "model", "thinking", "append_system_prompt")}


class ClaudeTranscript(PiSession):
    """A transcript in Claude Code's own format (2.1): one JSON entry a line, linked by
    ``uuid``/``parentUuid`` and each naming ``sessionId`` and ``cwd``. A turn is a ``user``
    entry (``message.content`` the prompt), ``assistant`` entries (``message.content``
    blocks: ``text``, ``tool_use``) and, for a tool, a ``user`` entry holding the
    ``tool_result`` block."""

    @classmethod
    def resume(cls, path: Path, **options: Any) -> ClaudeTranscript:
        """Open an existing transcript to append to it (``claude --resume <id>``)."""
        session_id, cwd, last, calls = path.stem, "", None, 0
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line
            cwd = entry.get("cwd", cwd)
            last = entry.get("uuid", last)
            content = (entry.get("message") or {}).get("content")
            if isinstance(content, list):
                calls += sum(1 for c in content if c.get("type") == "tool_result")
        found = cls(path, session_id, cwd, **_options(options))
        found.last_id, found._call = last, calls
        return found

    def _claude(self, kind: str, **fields: Any) -> None:
        entry_id = str(uuid.uuid4())
        data: dict[str, Any] = {
            "parentUuid": self.last_id, "isSidechain": False, "type": kind,
            "uuid": entry_id, "timestamp": iso_now(), "cwd": self.cwd,
            "sessionId": self.session_id, "userType": "external",
        }  # fmt: skip
        data.update(fields)
        self._write(data)
        self.last_id = entry_id

    def start(self) -> None:
        """The entries before the first prompt (Claude Code writes no header)."""
        if self._started:
            return
        self._started = True
        self._write({"type": "permission-mode", "permissionMode": "default",
                     "sessionId": self.session_id})  # fmt: skip

    def user(self, text: str) -> None:
        """The user's prompt."""
        self.start()
        self._claude("user", message={"role": "user", "content": text})

    def assistant(
        self, content: list[dict[str, Any]], stop_reason: str, *, started_ms: int,
        error: str | None = None,
    ) -> None:  # fmt: skip
        """An assistant message; pi's content blocks in Claude's shapes."""
        blocks = [
            {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
            if c.get("type") == "toolCall" else c for c in content
        ]  # fmt: skip
        if error is not None:
            blocks = [{"type": "text", "text": f"API Error: {error}"}]
        stop = {"stop": "end_turn", "toolUse": "tool_use"}.get(stop_reason, stop_reason)
        message = {
            "id": f"msg_{random.getrandbits(64):016x}", "type": "message", "role": "assistant",
            "model": self.model, "content": blocks, "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }  # fmt: skip
        self._claude("assistant", message=message, **({"isApiErrorMessage": True} if error else {}))

    def tool_result(
        self, call_id: str, tool: str, output: str, *, is_error: bool, duration_ms: int
    ) -> None:
        """A tool's result: a ``user`` entry holding the ``tool_result`` block."""
        block = {"type": "tool_result", "tool_use_id": call_id, "content": output,
                 "is_error": is_error}  # fmt: skip
        result = {"stdout": output, "stderr": "", "interrupted": False}
        self._claude("user", message={"role": "user", "content": [block]}, toolUseResult=result)


class CodexRollout(PiSession):
    """A rollout in Codex's own format (0.171): ``{timestamp, type, payload}`` a line — a
    ``session_meta`` first (``id``, ``cwd``), then per turn ``event_msg`` ``task_started``,
    ``response_item`` messages (``role`` user / assistant with ``input_text`` /
    ``output_text`` parts), ``function_call`` / ``function_call_output`` items for a tool,
    and ``event_msg`` ``task_complete``."""

    @classmethod
    def resume(cls, path: Path, **options: Any) -> CodexRollout:
        """Open an existing rollout to append to it (``codex resume <id>``)."""
        lines = path.read_text(encoding="utf-8").splitlines()
        meta = json.loads(lines[0])["payload"]
        found = cls(path, str(meta["id"]), str(meta.get("cwd", "")), **_options(options))
        found._call = sum('"function_call_output"' in line for line in lines)
        return found

    def _item(self, kind: str, payload: dict[str, Any]) -> None:
        self._write({"timestamp": iso_now(), "type": kind, "payload": payload})

    def start(self) -> None:
        """The ``session_meta`` line, once (skipped when resuming)."""
        if self._started:
            return
        self._started = True
        meta = {
            "session_id": self.session_id, "id": self.session_id, "cwd": self.cwd,
            "timestamp": iso_now(self.created_ms), "originator": "codex-tui",
            "model_provider": self.provider,
        }  # fmt: skip
        self._item("session_meta", meta)

    def user(self, text: str) -> None:
        """The user's prompt, opening a turn."""
        self.start()
        self._item("event_msg", {"type": "task_started"})
        part = {"type": "input_text", "text": text}
        self._item("response_item", {"type": "message", "role": "user", "content": [part]})

    def assistant(
        self, content: list[dict[str, Any]], stop_reason: str, *, started_ms: int,
        error: str | None = None,
    ) -> None:  # fmt: skip
        """The model's output items; the turn ends unless it called a tool."""
        texts = [{"type": "output_text", "text": c["text"]} for c in content
                 if c.get("type") == "text"]  # fmt: skip
        if texts:
            self._item("response_item", {"type": "message", "role": "assistant",
                                         "content": texts})  # fmt: skip
        for call in (c for c in content if c.get("type") == "toolCall"):
            self._item("response_item", {"type": "function_call", "name": call["name"],
                                         "arguments": json.dumps(call["arguments"]),
                                         "call_id": call["id"]})  # fmt: skip
        if error is not None:
            self._item("event_msg", {"type": "error", "message": error})
        if stop_reason != "toolUse":
            last = texts[-1]["text"] if texts else None
            self._item("event_msg", {"type": "task_complete", "last_agent_message": last})

    def tool_result(
        self, call_id: str, tool: str, output: str, *, is_error: bool, duration_ms: int
    ) -> None:
        """A tool's output item."""
        self._item("response_item", {"type": "function_call_output", "call_id": call_id,
                                     "output": output})  # fmt: skip


def transcript_class(kind: str) -> type[PiSession]:
    """The transcript writer of the ``claude`` or ``codex`` fake."""
    return ClaudeTranscript if kind == "claude" else CodexRollout
