"""pi's version-3 session files: where they go, and the entries a turn appends.

The layout follows ``reference/pi-agent.md`` and the pi 1.6 capture: a ``session`` header,
then tree entries (``id`` of 8 hex digits, ``parentId`` of the previous entry) for the model,
the thinking level, one ``system`` message, and the ``user``/``assistant``/``toolResult``
messages of each turn. Like pi, the file is created lazily, on the first prompt.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

__all__ = ["PiSession", "find_session", "iso_now", "new_session_id", "session_path_for"]

_ZERO_COST = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "total": 0,
    "totalFromProvider": False,
}
_SECTIONS = ("preamble", "tools", "rules", "docs", "cwd")


def iso_now(ms: int | None = None) -> str:
    """UTC time like JavaScript's ``toISOString()``: ``2026-11-30T09:53:03.440Z``."""
    when = int(time.time() * 1000) if ms is None else ms
    seconds, millis = divmod(when, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def new_session_id(ms: int | None = None) -> str:
    """A UUID v7 (48-bit millisecond time, version and variant bits, random rest)."""
    when = int(time.time() * 1000) if ms is None else ms
    value = (when & ((1 << 48) - 1)) << 80 | random.getrandbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _agent_dir(env: dict[str, str] | os._Environ[str]) -> Path:
    configured = env.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(configured)
    return Path(env.get("HOME") or str(Path.home())) / ".pi" / "agent"


def session_path_for(
    cwd: str,
    session_id: str,
    ms: int,
    *,
    session_dir: str | None,
    env: dict[str, str] | os._Environ[str],
) -> Path:
    """Where pi puts a new session: ``--session-dir`` (or its env var), else the agent dir."""
    stamp = iso_now(ms).replace(":", "-").replace(".", "-")
    name = f"{stamp}_{session_id}.jsonl"
    directory = session_dir or env.get("PI_CODING_AGENT_SESSION_DIR")
    if directory:
        return Path(directory) / name
    bucket = "--" + cwd.lstrip("/").replace("/", "-").replace(":", "-") + "--"
    return _agent_dir(env) / "sessions" / bucket / name


def find_session(
    cwd: str, prefix: str, *, session_dir: str | None, env: dict[str, str] | os._Environ[str]
) -> Path | None:
    """The session of this project whose id starts with ``prefix`` (``pi --session ID``).

    Real pi 1.6 opens the current project's session by its full or partial id and appends
    to it; an id found nowhere makes it exit with ``No session found matching 'ID'`` (and one
    of another project makes it ask to fork, which the fake does not simulate).
    """
    directory = session_path_for(cwd, "x", 0, session_dir=session_dir, env=env).parent
    if not prefix or not directory.is_dir():
        return None
    for path in sorted(directory.glob("*.jsonl")):
        _, _, session_id = path.stem.partition("_")
        if session_id.startswith(prefix):
            return path
    return None


class PiSession:
    """One session file, appended entry by entry (each line flushed at once)."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        cwd: str,
        *,
        provider: str,
        model: str,
        thinking: str,
        append_system_prompt: str | None,
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.provider = provider
        self.model = model
        self.thinking = thinking
        self.append_system_prompt = append_system_prompt
        self.created_ms = int(time.time() * 1000)
        self.last_id: str | None = None
        self._ids: set[str] = set()
        self._started = path.exists() and path.stat().st_size > 0
        self._call = 0

    @classmethod
    def resume(cls, path: Path, **options: Any) -> PiSession:
        """Open an existing session file to append to it (``pi --session PATH``)."""
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        session = cls(path, str(header["id"]), str(header.get("cwd", "")), **options)
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line
            session._ids.add(str(entry.get("id")))
            session.last_id = str(entry.get("id"))
            message = entry.get("message") or {}
            if message.get("role") == "toolResult":
                session._call += 1
        return session

    # -- writing ----------------------------------------------------------------------------

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(data) + "\n")

    def _new_id(self) -> str:
        while True:
            entry_id = f"{random.getrandbits(32):08x}"
            if entry_id not in self._ids:
                self._ids.add(entry_id)
                return entry_id

    def _entry(self, kind: str, **fields: Any) -> str:
        entry_id = self._new_id()
        data: dict[str, Any] = {
            "type": kind,
            "id": entry_id,
            "parentId": self.last_id,
            "timestamp": iso_now(),
        }
        data.update(fields)
        self._write(data)
        self.last_id = entry_id
        return entry_id

    def start(self) -> None:
        """Write the header and the opening entries, once (skipped when resuming)."""
        if self._started:
            return
        self._started = True
        self._write(
            {
                "type": "session",
                "version": 3,
                "id": self.session_id,
                "timestamp": iso_now(self.created_ms),
                "cwd": self.cwd,
            }
        )
        self._entry("model_change", provider=self.provider, modelId=self.model)
        self._entry("thinking_level_change", thinkingLevel=self.thinking)
        sections: dict[str, str] = dict.fromkeys(_SECTIONS, "(fake pi system prompt)")
        if self.append_system_prompt:
            sections["append"] = self.append_system_prompt
        now = int(time.time() * 1000)
        self._message({"role": "system", "content": "", "sections": sections, "timestamp": now})

    def _message(self, message: dict[str, Any]) -> str:
        return self._entry("message", message=message)

    def user(self, text: str) -> None:
        """The user's prompt."""
        self.start()
        now = int(time.time() * 1000)
        self._message(
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now}
        )

    def assistant(
        self,
        content: list[dict[str, Any]],
        stop_reason: str,
        *,
        started_ms: int,
        error: str | None = None,
    ) -> None:
        """An assistant message (``stop``, ``toolUse``, ``error`` or ``aborted``)."""
        now = int(time.time() * 1000)
        usage = {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "reasoning": 0,
            "totalTokens": 15,
            "cost": dict(_ZERO_COST),
        }
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "openai-completions",
            "provider": self.provider,
            "model": self.model,
            "usage": usage,
            "stopReason": stop_reason,
            "timestamp": started_ms,
            "responseId": f"chatcmpl-{random.getrandbits(48):012x}",
            "rawStopReason": {"toolUse": "tool_calls"}.get(stop_reason, stop_reason),
            "durationMs": max(0, now - started_ms),
            "thinkingLevel": self.thinking,
        }
        if error is not None:
            message["errorMessage"] = error
        self._message(message)

    def next_call_id(self) -> str:
        """``call_1``, ``call_2``, … across the whole session."""
        self._call += 1
        return f"call_{self._call}"

    def tool_result(
        self, call_id: str, tool: str, output: str, *, is_error: bool, duration_ms: int
    ) -> None:
        """A tool's result, recorded after it ran."""
        self._message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": tool,
                "content": [{"type": "text", "text": output}],
                "isError": is_error,
                "durationMs": duration_ms,
                "timestamp": int(time.time() * 1000),
            }
        )
