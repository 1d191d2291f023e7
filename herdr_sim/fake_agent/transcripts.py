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

from .claude_flags import CLAUDE_VERSION
from .session import PiSession, iso_now, new_session_id

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


#: the Codex version whose format the fake writes (the one .ci/install-real-agents installs)
CODEX_VERSION = "0.171.0"


def _git_branch(cwd: str) -> str:
    """What Claude Code writes as ``gitBranch``: the checked-out branch, ``HEAD`` outside one."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", cwd, "rev-parse", "--abbrev-ref", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "HEAD"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "HEAD"


class ClaudeTranscript(PiSession):
    """A transcript in Claude Code's own format (2.1.332): one JSON entry a line. The
    conversation's entries (``user``, ``assistant``, ``system``) are linked by
    ``uuid``/``parentUuid`` and each names ``sessionId``, ``cwd``, ``version``,
    ``gitBranch``, ``entrypoint``; between them come bookkeeping lines without a ``uuid``
    (``mode``, ``permission-mode``, ``last-prompt``). A turn is a ``user`` entry (the prompt
    as a string, with ``promptId``, ``permissionMode``, ``turnPosition``), one ``assistant``
    entry per content block (``text``, ``tool_use``; the same ``message.id``, ``apiBlockIndex``
    counting), for a tool a ``user`` entry holding the ``tool_result`` block and
    ``toolUseResult``, and at its end a ``system`` ``turn_duration`` entry and a
    ``last-prompt`` line."""

    #: ``--permission-mode`` and ``--effort`` of the run (Claude Code records both)
    permission_mode = "default"
    effort = "medium"

    def __init__(self, path: Path, session_id: str, cwd: str, **options: Any) -> None:
        super().__init__(path, session_id, cwd, **options)
        self._branch: str | None = None
        self._prompts = 0
        self._prompt_id = ""
        self._prompt = ""
        self._turn_ms = 0
        self._turn_messages = 0
        self._last_assistant: str | None = None

    @classmethod
    def resume(cls, path: Path, **options: Any) -> ClaudeTranscript:
        """Open an existing transcript to append to it (``claude --resume <id>``)."""
        session_id, cwd, last, calls, prompts = path.stem, "", None, 0, 0
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
            elif entry.get("type") == "user" and isinstance(content, str):
                prompts += 1
        found = cls(path, session_id, cwd, **_options(options))
        found.last_id, found._call, found._prompts = last, calls, prompts
        return found

    def _claude(self, kind: str, **fields: Any) -> str:
        if self._branch is None:
            self._branch = _git_branch(self.cwd)
        entry_id = str(uuid.uuid4())
        data: dict[str, Any] = {"parentUuid": self.last_id, "isSidechain": False}
        data.update(fields)
        data.update({
            "type": kind, "uuid": entry_id, "timestamp": iso_now(), "userType": "external",
            "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.session_id,
            "version": CLAUDE_VERSION, "gitBranch": self._branch,
        })  # fmt: skip
        self._write(data)
        self.last_id = entry_id
        self._turn_messages += 1
        return entry_id

    def _modes(self) -> None:
        self._write({"type": "mode", "mode": "normal", "sessionId": self.session_id})
        self._write({"type": "permission-mode", "permissionMode": self.permission_mode,
                     "sessionId": self.session_id})  # fmt: skip

    def start(self) -> None:
        """The lines before the first prompt (Claude Code writes no header)."""
        if self._started:
            return
        self._started = True
        self._modes()

    def user(self, text: str) -> None:
        """The user's prompt, opening a turn."""
        self.start()
        self._prompts += 1
        self._prompt_id, self._prompt = str(uuid.uuid4()), text
        self._turn_ms, self._turn_messages = int(time.time() * 1000), 0
        position = {"promptIndex": self._prompts, "turnIndex": self._prompts}
        self._claude(
            "user", promptId=self._prompt_id, message={"role": "user", "content": text},
            permissionMode=self.permission_mode, origin={"kind": "human"},
            promptSource="typed", turnOrigin="human", turnPosition=position,
        )  # fmt: skip

    def assistant(
        self, content: list[dict[str, Any]], stop_reason: str, *, started_ms: int,
        error: str | None = None,
    ) -> None:  # fmt: skip
        """The model's message: one entry per content block, as Claude Code streams it."""
        blocks = [
            {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
            if c.get("type") == "toolCall" else c for c in content
        ]  # fmt: skip
        if error is not None:
            blocks = [{"type": "text", "text": f"API Error: {error}"}]
        if not blocks:
            blocks = [{"type": "text", "text": ""}]
        stop = {"stop": "end_turn", "toolUse": "tool_use"}.get(stop_reason, stop_reason)
        message_id = f"msg_{random.getrandbits(96):024x}"
        request = str(uuid.uuid4())
        for index, block in enumerate(blocks):
            last = index == len(blocks) - 1
            message = {
                "id": message_id, "type": "message", "role": "assistant", "model": self.model,
                "content": [block], "stop_reason": stop if last else None,
                "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
                "stop_details": None,
            }  # fmt: skip
            extra = {"isApiErrorMessage": True} if error else {}
            self._last_assistant = self._claude(
                "assistant", message=message, apiBlockIndex=index, requestRef=request,
                requestedModel=self.model, effort=self.effort, perTurnEffort=self.effort,
                madeBy="model", session_id=self.session_id, **extra,
            )  # fmt: skip
        if stop_reason != "toolUse":
            self._end_turn()

    def _end_turn(self) -> None:
        duration = max(0, int(time.time() * 1000) - self._turn_ms)
        leaf = self._claude("system", subtype="turn_duration", durationMs=duration,
                            messageCount=self._turn_messages + 1, isMeta=False)  # fmt: skip
        self._write({"type": "last-prompt", "lastPrompt": self._prompt, "leafUuid": leaf,
                     "sessionId": self.session_id})  # fmt: skip
        self._modes()

    def tool_result(
        self, call_id: str, tool: str, output: str, *, is_error: bool, duration_ms: int
    ) -> None:
        """A tool's result: a ``user`` entry holding the ``tool_result`` block."""
        block = {"tool_use_id": call_id, "type": "tool_result", "content": output,
                 "is_error": is_error}  # fmt: skip
        result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False,
                  "noOutputExpected": False}  # fmt: skip
        self._claude(
            "user", promptId=self._prompt_id, message={"role": "user", "content": [block]},
            toolUseResult=result, sandboxed=False,
            sourceToolAssistantUUID=self._last_assistant, session_id=self.session_id,
        )  # fmt: skip


class CodexRollout(PiSession):
    """A rollout in Codex's own format (0.171): ``{timestamp, ordinal, type, payload}`` a
    line (``ordinal`` counting lines from 0; a ``response_item`` line also has
    ``metadata``) — a ``session_meta`` first (``id``, ``cwd``, ``cli_version``,
    ``originator``, ``source``), then per turn ``event_msg`` ``task_started`` (its
    ``turn_id``), ``response_item`` messages (``role`` user / assistant with ``input_text`` /
    ``output_text`` parts, ids ``msg_…``), ``function_call`` / ``function_call_output``
    items for a tool, and ``event_msg`` ``task_complete`` (``last_agent_message``). Codex
    also lists the session in ``$CODEX_HOME/session_index.jsonl`` (id, thread name = the
    first prompt), which the fake writes too."""

    def __init__(self, path: Path, session_id: str, cwd: str, **options: Any) -> None:
        super().__init__(path, session_id, cwd, **options)
        self._ordinal = 0
        self._history = 0
        self._turn = ""
        self._turn_started = 0.0
        #: ``$CODEX_HOME/session_index.jsonl`` (None: not listed)
        self.index: Path | None = None

    @classmethod
    def resume(cls, path: Path, **options: Any) -> CodexRollout:
        """Open an existing rollout to append to it (``codex resume <id>``)."""
        lines = path.read_text(encoding="utf-8").splitlines()
        meta = json.loads(lines[0])["payload"]
        found = cls(path, str(meta["id"]), str(meta.get("cwd", "")), **_options(options))
        found._call = sum('"function_call_output"' in line for line in lines)
        found._ordinal = len(lines)
        found._history = sum('"response_item"' in line for line in lines)
        return found

    def _item(self, kind: str, payload: dict[str, Any]) -> None:
        line: dict[str, Any] = {"timestamp": iso_now(), "ordinal": self._ordinal, "type": kind,
                                "payload": payload}  # fmt: skip
        if kind == "response_item":
            self._history += 1
            line["metadata"] = {"history_sequence": self._history, "client_authored": False}
        self._write(line)
        self._ordinal += 1

    def start(self) -> None:
        """The ``session_meta`` line, once (skipped when resuming)."""
        if self._started:
            return
        self._started = True
        meta = {
            "session_id": self.session_id, "id": self.session_id,
            "timestamp": iso_now(self.created_ms), "cwd": self.cwd,
            "runtime_workspace_roots": [self.cwd], "originator": "codex-tui",
            "cli_version": CODEX_VERSION, "source": "cli", "thread_source": "user",
            "model_provider": self.provider,
        }  # fmt: skip
        self._item("session_meta", meta)

    def _list(self, prompt: str) -> None:
        """The session's line in ``session_index.jsonl`` (Codex adds it at the first prompt)."""
        if self.index is None or self._history > 1:
            return
        entry = {"id": self.session_id, "thread_name": prompt, "updated_at": iso_now()}
        self.index.parent.mkdir(parents=True, exist_ok=True)
        with self.index.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")

    def user(self, text: str) -> None:
        """The user's prompt, opening a turn."""
        self.start()
        self._turn, self._turn_started = new_session_id(), time.time()
        self._item("event_msg", {"type": "task_started", "turn_id": self._turn,
                                 "started_at": int(self._turn_started)})  # fmt: skip
        part = {"type": "input_text", "text": text}
        self._item("response_item", {"type": "message", "id": f"msg_{new_session_id()}",
                                     "role": "user", "content": [part]})  # fmt: skip
        self._list(text)

    def assistant(
        self, content: list[dict[str, Any]], stop_reason: str, *, started_ms: int,
        error: str | None = None,
    ) -> None:  # fmt: skip
        """The model's output items; the turn ends unless it called a tool."""
        texts = [{"type": "output_text", "text": c["text"], "annotations": []}
                 for c in content if c.get("type") == "text"]  # fmt: skip
        if texts:
            self._item("response_item", {"type": "message", "status": "completed",
                                         "id": f"msg_{new_session_id()}", "role": "assistant",
                                         "content": texts})  # fmt: skip
        for call in (c for c in content if c.get("type") == "toolCall"):
            self._item("response_item", {"type": "function_call", "status": "completed",
                                         "id": f"fc_{call['id']}", "name": call["name"],
                                         "arguments": json.dumps(call["arguments"]),
                                         "call_id": call["id"]})  # fmt: skip
        if error is not None:
            self._item("event_msg", {"type": "error", "message": error})
        if stop_reason != "toolUse":
            last = texts[-1]["text"] if texts else None
            now = time.time()
            self._item("event_msg", {
                "type": "task_complete", "turn_id": self._turn, "last_agent_message": last,
                "started_at": int(self._turn_started), "completed_at": int(now),
                "duration_ms": int((now - self._turn_started) * 1000),
            })  # fmt: skip

    def tool_result(
        self, call_id: str, tool: str, output: str, *, is_error: bool, duration_ms: int
    ) -> None:
        """A tool's output item."""
        self._item("response_item", {"type": "function_call_output",
                                     "id": f"fco_{new_session_id()}", "call_id": call_id,
                                     "output": output})  # fmt: skip


def transcript_class(kind: str) -> type[PiSession]:
    """The transcript writer of the ``claude`` or ``codex`` fake."""
    return ClaudeTranscript if kind == "claude" else CodexRollout
