"""Where and how the fake opencode keeps its sessions: in opencode 1.18's own SQLite database.

Found by running the real opencode 1.18.33 (tests/real_agents/test_opencode.py,
docs/simulator/real-agents.md): it keeps no JSON files per session any more (the older
``storage/session/…`` layout) but one database, ``$XDG_DATA_HOME/opencode/opencode.db``
(``~/.local/share/opencode``), whose ``session`` rows (``id`` ``ses_…``, ``directory``,
``title``, ``version``, ``agent``, ``model``) own ``message`` rows (``id`` ``msg_…``, JSON
``data`` with ``role``, ``time``, and for an answer ``parentID``, ``modelID``, ``finish``)
which own ``part`` rows (``prt_…``; JSON ``data`` of ``type`` ``text``, ``step-start``,
``tool`` with its ``state``, ``step-finish``). The fake creates those four tables with the
real columns, in a project ``global`` as opencode does outside a git repository, and writes
each turn as opencode does: the prompt, then one assistant message per model step (the
steps before a tool call finish ``tool-calls``, the last ``stop``). Ids are opencode's: a
prefix, twelve hex digits of the creation time in milliseconds times 4096 plus a counter
(bitwise inverted for sessions, so the newest sorts first) and fourteen random letters or
digits.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sqlite3
import string
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .session import PiSession, iso_now

__all__ = ["OPENCODE_VERSION", "OpencodeSession", "opencode_db", "opencode_id"]

OPENCODE_VERSION = "1.18.33"
_ALPHABET = string.ascii_letters + string.digits
_MASK = (1 << 48) - 1
_last = [0, 0]  # the last id's time and counter (ids made in one millisecond count up)

#: the columns of opencode 1.18.33's tables that hold a session (its own migrations make more)
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL,
    `vcs` text, `name` text, `icon_url` text, `icon_url_override` text, `icon_color` text,
    `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
    `time_initialized` integer, `sandboxes` text NOT NULL, `commands` text)""",
    """CREATE TABLE IF NOT EXISTS `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL,
    `workspace_id` text, `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL,
    `path` text, `title` text NOT NULL, `version` text NOT NULL, `share_url` text,
    `summary_additions` integer, `summary_deletions` integer, `summary_files` integer,
    `summary_diffs` text, `metadata` text, `cost` real DEFAULT 0 NOT NULL,
    `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL,
    `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0
    NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text,
    `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL,
    `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer,
    FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE)""",
    """CREATE TABLE IF NOT EXISTS `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL,
    `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
    FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE)""",
    """CREATE TABLE IF NOT EXISTS `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL,
    `session_id` text NOT NULL, `time_created` integer NOT NULL,
    `time_updated` integer NOT NULL, `data` text NOT NULL,
    FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE)""",
)
_ADJECTIVES = ("curious", "brave", "quiet", "swift", "gentle", "bright", "calm", "eager")
_NOUNS = ("mountain", "river", "forest", "comet", "harbor", "meadow", "canyon", "island")


def _now() -> int:
    return int(time.time() * 1000)


def opencode_id(prefix: str, *, descending: bool = False, ms: int | None = None) -> str:
    """A new opencode id: ``ses_`` (descending), ``msg_``, ``prt_``."""
    when = _now() if ms is None else ms
    _last[1] = _last[1] + 1 if _last[0] == when else 1
    _last[0] = when
    value = (when * 4096 + _last[1]) & _MASK
    if descending:
        value = ~value & _MASK
    tail = "".join(random.choices(_ALPHABET, k=14))
    return f"{prefix}_{value:012x}{tail}"


def opencode_db(env: dict[str, str] | os._Environ[str]) -> Path:
    """``$XDG_DATA_HOME/opencode/opencode.db`` (``~/.local/share`` by default)."""
    data = env.get("XDG_DATA_HOME") or str(
        Path(env.get("HOME") or str(Path.home())) / ".local" / "share"
    )
    return Path(data) / "opencode" / "opencode.db"


def _tokens() -> dict[str, Any]:
    return {"total": 15, "input": 10, "output": 5, "reasoning": 0, "cache": {"write": 0, "read": 0}}


class OpencodeSession(PiSession):
    """One opencode session in ``opencode.db``, written turn by turn (each write committed)."""

    def __init__(self, path: Path, session_id: str, cwd: str, **options: Any) -> None:
        """The session ``session_id`` of the database at ``path``: an existing one is
        continued (``opencode --session ID``), a new one is created with the first prompt."""
        super().__init__(path, session_id, cwd, **options)
        self._started = self._exists()
        self._user_id: str | None = None
        #: the open assistant message of the current step and its tool parts by call id
        self._step: str | None = None
        self._tools: dict[str, tuple[str, dict[str, Any]]] = {}

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """The database, its tables made; committed and closed after the block."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=5.0)
        try:
            for statement in _SCHEMA:
                connection.execute(statement)
            yield connection
            connection.commit()
        finally:
            connection.close()

    def _exists(self) -> bool:
        if not self.path.is_file():
            return False
        with self._connect() as db:
            row = db.execute("SELECT 1 FROM session WHERE id = ?", (self.session_id,)).fetchone()
            calls = db.execute(
                "SELECT COUNT(*) FROM part WHERE session_id = ? AND data LIKE ?",
                (self.session_id, '%"type":"tool"%'),
            ).fetchone()
        self._call = int(calls[0]) if calls else 0
        return row is not None

    def start(self) -> None:
        """The project and session rows, once (opencode creates them with the first prompt)."""
        if self._started:
            return
        self._started = True
        now = _now()
        model = json.dumps({"id": self.model, "providerID": self.provider}, separators=(",", ":"))
        slug = f"{random.choice(_ADJECTIVES)}-{random.choice(_NOUNS)}"
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated,"
                " sandboxes) VALUES ('global', '/', ?, ?, '[]')",
                (now, now),
            )
            db.execute(
                "INSERT INTO session (id, project_id, slug, directory, path, title, version,"
                " summary_additions, summary_deletions, summary_files, agent, model,"
                " time_created, time_updated) VALUES (?, 'global', ?, ?, ?, ?, ?, 0, 0, 0,"
                " 'build', ?, ?, ?)",
                (self.session_id, slug, self.cwd, self.cwd.lstrip("/"),
                 f"New session - {iso_now(now)}", OPENCODE_VERSION, model, now, now),
            )  # fmt: skip

    def _add_message(self, db: sqlite3.Connection, data: dict[str, Any]) -> str:
        now = _now()
        message_id = opencode_id("msg", ms=now)
        db.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data)"
            " VALUES (?, ?, ?, ?, ?)",
            (message_id, self.session_id, now, now, _json(data)),
        )
        db.execute("UPDATE session SET time_updated = ? WHERE id = ?", (now, self.session_id))
        return message_id

    def _part(self, db: sqlite3.Connection, message_id: str, data: dict[str, Any]) -> str:
        now = _now()
        part_id = opencode_id("prt", ms=now)
        db.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (part_id, message_id, self.session_id, now, now, _json(data)),
        )
        return part_id

    def user(self, text: str) -> None:
        """The prompt: a ``user`` message with one ``text`` part."""
        self.start()
        with self._connect() as db:
            data = {"role": "user", "time": {"created": _now()}, "agent": "build",
                    "model": {"providerID": self.provider, "modelID": self.model}}  # fmt: skip
            self._user_id = self._add_message(db, data)
            self._part(db, self._user_id, {"type": "text", "text": text})

    def assistant(
        self, content: list[dict[str, Any]], stop_reason: str, *, started_ms: int,
        error: str | None = None,
    ) -> None:  # fmt: skip
        """One model step: an ``assistant`` message with ``step-start``, its text and tool
        parts and ``step-finish`` (``tool-calls`` before a tool runs, else ``stop``)."""
        self.start()
        finish = "tool-calls" if stop_reason == "toolUse" else "stop"
        now = _now()
        data: dict[str, Any] = {
            "parentID": self._user_id, "role": "assistant", "mode": "build", "agent": "build",
            "path": {"cwd": self.cwd, "root": "/"}, "cost": 0, "tokens": _tokens(),
            "modelID": self.model, "providerID": self.provider,
            "time": {"created": started_ms, "completed": now}, "finish": finish,
        }  # fmt: skip
        if error is not None:
            aborted = stop_reason == "aborted"
            name = "MessageAbortedError" if aborted else "UnknownError"
            data["error"] = {"name": name, "data": {"message": error}}
            del data["finish"]
        with self._connect() as db:
            message_id = self._add_message(db, data)
            self._part(db, message_id, {"type": "step-start"})
            for block in content:
                if block.get("type") == "text":
                    text = {"type": "text", "text": block["text"],
                            "time": {"start": started_ms, "end": now}}  # fmt: skip
                    self._part(db, message_id, text)
                elif block.get("type") == "toolCall":
                    state = {"status": "running", "input": block["arguments"],
                             "time": {"start": now}}  # fmt: skip
                    tool = {"type": "tool", "tool": block["name"], "callID": block["id"],
                            "state": state}  # fmt: skip
                    self._tools[block["id"]] = (self._part(db, message_id, tool), tool)
            if error is None:
                step = {"reason": finish, "type": "step-finish", "tokens": _tokens(), "cost": 0}
                self._part(db, message_id, step)

    def tool_result(
        self, call_id: str, tool: str, output: str, *, is_error: bool, duration_ms: int
    ) -> None:
        """The tool part of the call, now ``completed`` (or ``error``) with its output."""
        found = self._tools.pop(call_id, None)
        if found is None:
            return
        part_id, data = found
        state = data["state"]
        end = _now()
        state["time"] = {"start": end - duration_ms, "end": end}
        if is_error:
            state.update(status="error", error=output)
        else:
            state.update(status="completed", output=output, title=_title(tool, state["input"]),
                         metadata={"output": output, "exit": 0, "truncated": False})  # fmt: skip
        with self._connect() as db:
            db.execute(
                "UPDATE part SET data = ?, time_updated = ? WHERE id = ?",
                (_json(data), end, part_id),
            )


def _title(tool: str, arguments: dict[str, Any]) -> str:
    if tool == "bash":
        return str(arguments.get("command", ""))
    return str(arguments.get("path", arguments.get("filePath", "")))


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))
