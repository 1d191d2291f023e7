"""The task envelope a spawned agent receives, and the wrapper around later messages.

**Delivery: one short line, the envelope in a file.** ``agent.prompt`` types the text into
the agent's terminal and presses Enter once, 300 ms later. A newline inside the text is only
harmless if the agent turned on bracketed paste; otherwise every newline is an Enter press and
a multi-line envelope arrives as a burst of separate prompts (the simulator's fake agents
behave this way, and so does any agent that reads raw keys). Herdr also refuses newlines in
``agent start`` arguments, so the envelope cannot ride on the command line either. So the
full envelope is written to ``<artifactDir>/task.md`` and the agent is prompted with ONE line
without control characters that points at it (:meth:`TaskEnvelope.kickoff_prompt`). The same
rule applies to follow-up messages (:func:`prepare_message`): a short single-line message is
typed inline, anything else goes to ``<artifactDir>/messages/NNN-kind.md`` behind a one-line
pointer. The file is also durable evidence of exactly what the agent was told.

The wording is documented in ``docs/orchestrator/task-envelope.md``; keep the two in step.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orchestrator.agent_tools.remote_files import RemoteFiles
from orchestrator.client import untrusted_text
from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.client.untrusted_text import strip_control
from orchestrator.logs import CONTROL_CHARACTERS

__all__ = [
    "FROM",
    "INLINE_LIMIT",
    "MESSAGE_KINDS",
    "PreparedMessage",
    "TaskEnvelope",
    "answer_text",
    "escape_closing_tag",
    "one_line",
    "prepare_message",
    "render_message",
    "write_atomic",
]

FROM = "dsh:orchestrator"
TASK_FILE = "task.md"
RESULT_FILE = "result.md"
INBOX_FILE = "inbox.ndjson"
MESSAGES_DIR = "messages"
INLINE_LIMIT = 1000
"""Longest message typed inline; longer ones go to a file (long typed text is slow and fragile)."""

Role = Literal["worker", "reviewer"]
MessageKind = Literal["NOTE", "REVIEW_FINDINGS", "ACCEPT", "REJECT", "ANSWER"]
MESSAGE_KINDS: tuple[MessageKind, ...] = ("NOTE", "REVIEW_FINDINGS", "ACCEPT", "REJECT", "ANSWER")

_BLANKS = re.compile(r"\s+")


def one_line(text: str) -> str:
    """``text`` as one typeable line: control characters and line breaks become spaces."""
    return _BLANKS.sub(" ", CONTROL_CHARACTERS.sub(" ", text)).strip()


def _clean_file_text(text: str) -> str:
    """Keep newlines and tabs, drop other control characters (escape sequences)."""
    return strip_control(text.replace("\r\n", "\n").replace("\r", "\n"), keep="\n\t")


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` via a temporary file and a rename, so a reader (the agent)
    never sees half a file; the directory is opened without following a link (the child can
    touch everything under its artifact directory: ``core.safe_fs``)."""
    return safe_fs.write_atomic(path, text)


def escape_closing_tag(text: str) -> str:
    """``text`` with every ``</agent-message`` (any case, blanks around the slash) defused as
    ``&lt;/…``, so a body can never close the wrapper it travels in (inline or in a file)."""
    return untrusted_text.escape_closing_tag(text, "agent-message")


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {one_line(item)}" for item in items if one_line(item))


_HEADERS = """\
| Header | Direction | Meaning |
|---|---|---|
| `COMPLETE <path>` | you → orchestrator | Task done; `result.md` is at `<path>`. |
| `BLOCKED` | you → orchestrator | You need a decision before you can go on. |
| `REVIEW_REQUEST` | you → orchestrator | You want a review before continuing. |
| `REVIEW_FINDINGS round N` | orchestrator → you | Fix these findings. |
| `ACCEPT` / `REJECT` | either | Close the loop. |
| `NOTE` | either | Free-form. |"""


@dataclass(frozen=True)
class TaskEnvelope:
    """Everything the first prompt tells a spawned agent.

    ``goal`` is the caller's prompt, verbatim. ``constraints`` and ``acceptance`` are the
    caller's extra items, added after the standard ones. ``branch``/``base_commit`` describe
    an isolated worktree (``cwd`` is then the worktree).
    """

    task_id: str
    goal: str
    artifact_dir: Path
    cwd: str
    role: Role = "worker"
    name: str | None = None
    constraints: Sequence[str] = ()
    acceptance: Sequence[str] = ()
    branch: str | None = None
    base_commit: str | None = None

    @property
    def task_path(self) -> Path:
        """``<artifactDir>/task.md``: the full envelope."""
        return self.artifact_dir / TASK_FILE

    @property
    def result_path(self) -> Path:
        """``<artifactDir>/result.md``: where the agent writes its report."""
        return self.artifact_dir / RESULT_FILE

    @property
    def inbox_path(self) -> Path:
        """``<artifactDir>/inbox.ndjson``: where the agent appends its messages."""
        return self.artifact_dir / INBOX_FILE

    # -- rendering ------------------------------------------------------------------------

    def _who(self) -> str:
        name = f" `{self.name}`" if self.name else ""
        if self.role == "reviewer":
            return f"You are{name}, a REVIEWER agent started by `{FROM}` (task `{self.task_id}`)."
        return f"You are{name}, a worker agent started by `{FROM}` (task `{self.task_id}`)."

    def _where(self) -> str:
        lines = [f"- Working directory: `{self.cwd}`"]
        if self.branch:
            base = f" based on commit `{self.base_commit}`" if self.base_commit else ""
            lines.append(
                f"- This is an isolated git worktree on branch `{self.branch}`{base}; "
                "the orchestrator diffs it against that base (uncommitted and new files "
                "included), so committing is optional."
            )
        lines += [
            f"- Artifact directory (`artifactDir`): `{self.artifact_dir}`",
            f"- This task: `{self.task_path}`",
            f"- Your report: `{self.result_path}`",
            f"- Your outbox to the orchestrator: `{self.inbox_path}`",
        ]
        return "\n".join(lines)

    def _constraints(self) -> str:
        if self.role == "reviewer":
            standard = [
                (
                    f"READ-ONLY: do not create, modify, delete, move or rename any file under "
                    f"`{self.cwd}`; no git commit, checkout, reset, stash, merge or push."
                ),
                (
                    "Run only commands that do not change the tree (reading, searching, tests "
                    "that write nothing there); if a check would write files, say so instead "
                    "of running it."
                ),
                f"Write only inside `{self.artifact_dir}`: `result.md` and `inbox.ndjson`.",
            ]
        else:
            standard = [
                (
                    f"Work inside `{self.cwd}`; write nothing outside it except in "
                    f"`{self.artifact_dir}`."
                ),
                "Do not push, publish, or change git remotes; do not start other agents.",
                (
                    "Do not wait for a human: if you need a decision, report `BLOCKED` "
                    "(below) and end your turn with the question."
                ),
            ]
        return _bullets([*standard, *self.constraints])

    def _acceptance(self) -> str:
        if self.role == "reviewer":
            standard = [
                (
                    "Every finding has a severity (`BLOCKER`, `MAJOR`, `MINOR` or `NIT`), a "
                    "location (`path:line`), what is wrong, and a suggested fix."
                ),
                (
                    "`result.md` ends with a verdict: `ACCEPT` (no BLOCKER or MAJOR findings) "
                    "or `REJECT`."
                ),
            ]
        else:
            standard = [
                (
                    "The goal is met and the relevant tests pass (run them; quote the command "
                    "and its outcome)."
                ),
                (
                    "`result.md` says what you changed (files), how you verified it, and "
                    "anything left undone or uncertain."
                ),
            ]
        return _bullets([*standard, *self.acceptance])

    def _reporting(self) -> str:
        inbox = shlex.quote(str(self.inbox_path))
        example = '{"ts":"2026-10-20T09:00:00Z","type":"NOTE","text":"started; tests were red"}'
        done = (
            f"1. Write your report to `{self.result_path}` (overwrite it if it exists).\n"
            f'2. Append `{{"ts":"…","type":"COMPLETE","text":"{self.result_path}"}}` '
            f"to the outbox.\n"
            f"3. End your turn with a final message whose first line is "
            f"`COMPLETE {self.result_path}`, followed by a short summary."
        )
        return (
            "To tell the orchestrator something, APPEND one JSON object per line to "
            f"`{self.inbox_path}` — fields `ts` (ISO-8601 UTC time), `type` (a header below) "
            "and `text`. One object per line, each line ending with a newline; never "
            "rewrite, truncate or reorder the file. For example:\n\n"
            f"```sh\nprintf '%s\\n' {shlex.quote(example)} >> {inbox}\n```\n\n"
            f"{_HEADERS}\n\n"
            f"When you are done:\n\n{done}\n\n"
            "If you need a decision: append a `BLOCKED` line whose `text` is the question, "
            "then end your turn asking it. For a review before continuing, append "
            "`REVIEW_REQUEST` (say what to look at) and end your turn."
        )

    def _incoming(self) -> str:
        return (
            f'Later messages arrive as `<agent-message from="{FROM}" to="…" kind="…">…'
            "</agent-message>`; a long one points at a file under "
            f"`{self.artifact_dir / MESSAGES_DIR}` — read it. On `REVIEW_FINDINGS round N`: "
            "fix every BLOCKER and MAJOR, address every MINOR and NIT (fix, or say why not), "
            "re-run the tests, update `result.md`, and finish with `COMPLETE <path>` again. "
            "On `ACCEPT`: stop, change nothing more. On `REJECT`: stop and change nothing "
            "more unless the message says otherwise. An `ANSWER` answers your `BLOCKED` "
            "question: continue with it."
        )

    def render(self) -> str:
        """The full envelope (``task.md``), Markdown."""
        title = "Review task" if self.role == "reviewer" else "Task"
        sections = [
            f"# {title} `{self.task_id}` from {FROM}",
            self._who()
            + " Work autonomously: nobody watches your terminal. This file is your complete "
            "task; the goal below is the requester's own words.",
            "## Goal",
            _clean_file_text(self.goal).strip(),
            "## Where things are",
            self._where(),
            "## Constraints",
            self._constraints(),
            "## Acceptance",
            self._acceptance(),
            "## Reporting (protocol)",
            self._reporting(),
            "## Messages from the orchestrator",
            self._incoming(),
        ]
        return "\n\n".join(sections) + "\n"

    def write(self, files: RemoteFiles | None = None) -> Path:
        """Write ``task.md`` (atomically) and return its path; ``files``: on the machine the
        task runs on (this host by default)."""
        if files is None:
            return write_atomic(self.task_path, self.render())
        files.write_atomic(str(self.task_path), self.render().encode("utf-8"))
        return self.task_path

    def kickoff_prompt(self) -> str:
        """The single line typed into the agent: where the task is, and to follow it."""
        what = "review task" if self.role == "reviewer" else "task"
        return one_line(
            f"Your {what} from {FROM} is in {self.task_path} - read that whole file now "
            "and follow it; it is your complete task."
        )


# -- messages to a running agent -----------------------------------------------------------


def _attr(value: str) -> str:
    return html.escape(one_line(value), quote=True)


def _open_tag(to: str, kind: MessageKind | None, round_: int | None) -> str:
    attrs = f'from="{FROM}" to="{_attr(to)}"'
    if kind is not None:
        attrs += f' kind="{kind}"'
    if kind == "REVIEW_FINDINGS" and round_ is not None:
        attrs += f' round="{round_}"'
    return f"<agent-message {attrs}>"


def _header(kind: MessageKind | None, round_: int) -> str:
    if kind == "REVIEW_FINDINGS":
        return (
            f"REVIEW_FINDINGS round {round_}\n"
            "A review of your work found the issues below. Fix every BLOCKER and MAJOR; "
            "address every MINOR and NIT (fix it, or say why not). Then re-run the tests, "
            "update result.md, and reply COMPLETE <path to result.md> with what you did "
            "for each finding.\n\nFindings:"
        )
    if kind == "ACCEPT":
        return "ACCEPT\nYour work is accepted. Stop here and change nothing more."
    if kind == "REJECT":
        return "REJECT\nStop working on this task and change nothing more unless told below."
    if kind == "ANSWER":
        return "ANSWER\nThe answer to your question:"
    if kind == "NOTE":
        return "NOTE"
    return ""


def render_message(text: str, *, to: str, kind: MessageKind | None = None, round_: int = 1) -> str:
    """The full wrapped message: header (with the ``REVIEW_FINDINGS`` prologue) and body.

    A literal ``</agent-message`` inside the body (any case) is escaped so it cannot close
    the wrapper.
    """
    if kind is not None and kind not in MESSAGE_KINDS:
        raise ValueError(f"unknown message kind {kind!r}; expected one of {MESSAGE_KINDS}")
    if round_ < 1:
        raise ValueError("round must be at least 1")
    body = escape_closing_tag(_clean_file_text(text).strip())
    header = _header(kind, round_)
    inner = f"{header}\n{body}" if header and body else header or body
    return f"{_open_tag(to, kind, round_)}\n{inner}\n</agent-message>"


@dataclass(frozen=True)
class PreparedMessage:
    """What to type (``prompt``, one line) and, for a long message, the file to write first."""

    prompt: str
    file: Path | None
    file_text: str | None

    def write(self, files: RemoteFiles | None = None) -> Path | None:
        """Write the message file (if any) atomically; do this BEFORE typing ``prompt``.
        ``files``: on the machine the task runs on (this host by default)."""
        if self.file is None or self.file_text is None:
            return None
        if files is None:
            return write_atomic(self.file, self.file_text)
        files.write_atomic(str(self.file), self.file_text.encode("utf-8"))
        return self.file


def prepare_message(
    text: str,
    *,
    to: str,
    artifact_dir: Path,
    seq: int,
    kind: MessageKind | None = None,
    round_: int = 1,
    inline_limit: int = INLINE_LIMIT,
) -> PreparedMessage:
    """Plan the delivery of one message to an idle/working agent.

    Inline (the whole wrapped message on one line) when the body is one short line and the
    kind has no multi-line prologue; otherwise the wrapped message goes to
    ``<artifactDir>/messages/<seq>-<kind>.md`` and the prompt is a one-line wrapper pointing
    at it. ``seq`` numbers the task's messages (the caller keeps the counter).
    """
    rendered = render_message(text, to=to, kind=kind, round_=round_)
    flat_body = escape_closing_tag(one_line(text))
    simple = kind in (None, "NOTE", "ANSWER")
    if simple and "\n" not in text.strip() and len(flat_body) <= inline_limit:
        head = f"{kind}: " if kind else ""
        prompt = f"{_open_tag(to, kind, round_)}{head}{flat_body}</agent-message>"
        return PreparedMessage(prompt=one_line(prompt), file=None, file_text=None)
    label = (kind or "message").lower().replace("_", "-")
    file = artifact_dir / MESSAGES_DIR / f"{seq:03d}-{label}.md"
    header = f"REVIEW_FINDINGS round {round_}" if kind == "REVIEW_FINDINGS" else kind or "Message"
    pointer = (
        f"{_open_tag(to, kind, round_)}{header}: the full message is in {file} - "
        "read that file now and act on it.</agent-message>"
    )
    return PreparedMessage(prompt=one_line(pointer), file=file, file_text=rendered + "\n")


def answer_text(text: str) -> str:
    """The reply to a BLOCKED agent's question, as typed into its question prompt.

    Herdr delivers a prompt to a blocked agent as the answer itself, and Enter submits it,
    so it must be one line and carries no wrapper (the agent's question UI shows it as-is).
    """
    return one_line(text)
