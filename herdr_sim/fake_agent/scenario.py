"""Scenarios for the fake agents: what each turn does, declared in a file or built in Python.

A scenario is a list of turns. Every prompt the user submits consumes the next turn;
once the turns run out, each further prompt gets :attr:`Scenario.default_reply`. A turn is
a list of steps run in order:

``reply``       print (and record) assistant text
``tool``        run a shell command as pi's ``bash`` tool; record the call and its result
``write_file``  create or overwrite a file relative to the agent's cwd (pi's ``write`` tool)
``ask``         show a question dialog; the turn is blocked until the user answers
``ask_owner``   (a managed pi child, ``PI_HERDSMAN_MAILBOX`` set) call the ``ask_owner`` tool:
                post the question to the owner's mailbox and end the turn; the owner's
                reply starts the next turn (:mod:`.managed`). Unmanaged, the tool fails.
``agent_tool``  (a managed pi child) call one of the nine ``agent_*`` tools with its
                ``arguments`` as the extension does for a delegating child:
                ``$PI_HERDSMAN_PYTHON -m orchestrator call <tool> <json>`` (no shell); the
                JSON answer is the tool's result. Unmanaged, the tool fails.
``compact``     pi compacts its context for a reason (``threshold``, ``overflow`` or
                ``manual``): a managed child under ``contextRetirement`` retires its session
                (a ``threshold`` compaction is then cancelled); otherwise it is shown only
``fail``        end the turn with ``stopReason: "error"`` and this error message
``wait``        stay working for some milliseconds
``hang``        stay working until interrupted (Escape)
``blip``        look idle for some milliseconds mid-turn (screen and state report), then
                work on: the ``working → idle → working`` flicker seen under load, which must
                not be taken for the end of the turn
``crash``       exit the process at once with an exit status, without any goodbye

A turn's ``type_ms`` types its replies one character at a time with that delay.

A prompt beyond the scripted turns works for ``think_ms`` (default
:data:`DEFAULT_THINK_MS`) and then answers :attr:`Scenario.default_reply`: no real agent
answers instantly, and Herdr's screen detection only sees a turn whose working screen stays
up across its polls. ``"think_ms": 0`` answers at once (scripted turns script their own
``wait``).

``startup_ms`` (optional) is how long the agent takes to start up after drawing its screen:
a prompt submitted meanwhile stays in the editor with "Startup is still in progress" (as real
pi does), and pi reports its session only once started.

``models`` (optional) is the agent's model catalog: given a ``--model`` outside it, the agent
prints an error and exits with status 1 before drawing anything, as real pi does for a model
it cannot resolve. Without ``models`` every model is accepted.

Python::

    Scenario().reply("hi").then().run_tool("bash", "echo hi").reply("done")

File (JSON, or TOML with ``[[turns]]`` tables)::

    {"default_reply": "ok",
     "turns": [{"steps": [{"reply": "hi"}]},
               {"type_ms": 5, "steps": [{"tool": "bash", "command": "echo hi"},
                                        {"write_file": "a.txt", "content": "x"},
                                        {"ask": "Proceed?"}, {"fail": "boom"}]},
               {"steps": [{"ask_owner": "A or B?"}]},
               {"steps": [{"agent_tool": "agent_delegate",
                           "arguments": {"definition": "scout", "task": "look"}}]}]}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ACTIONS", "DEFAULT_THINK_MS", "Scenario", "ScenarioError", "Step", "Turn"]

#: Every step action a scenario may use.
ACTIONS = (
    "reply", "tool", "write_file", "ask", "ask_owner", "agent_tool", "fail", "wait", "hang",
    "crash", "blip", "compact",
)  # fmt: skip


#: How long an unscripted turn works before it answers, in Herdr's milliseconds (scaled by
#: the simulator's time scale): two of the screen polls Herdr runs on an identified agent
#: (``TICK_IDENTIFIED``, 300 ms, in Herdr's ``src/pane.rs``), so its working screen is seen
#: by at least one poll even when a poll is late, as it is for every real agent's turn.
DEFAULT_THINK_MS = 600

#: pi's compaction reasons (its ``session_before_compact`` event)
COMPACTION_REASONS = ("threshold", "overflow", "manual")


class ScenarioError(ValueError):
    """A scenario file or step that cannot be understood."""


@dataclass(frozen=True)
class Step:
    """One action of a turn; ``text`` is the reply, command, path, question or error."""

    action: str
    text: str = ""
    tool: str = ""
    content: str = ""
    ms: int = 0
    code: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The step as it is written in a scenario file."""
        if self.action == "tool":
            return {"tool": self.tool, "command": self.text}
        if self.action == "write_file":
            return {"write_file": self.text, "content": self.content}
        if self.action == "agent_tool":
            return {"agent_tool": self.text, "arguments": json.loads(self.content or "{}")}
        if self.action in ("wait", "blip"):
            return {self.action: self.ms}
        if self.action == "hang":
            return {"hang": True}
        if self.action == "crash":
            return {"crash": self.code}
        return {self.action: self.text}


@dataclass
class Turn:
    """The steps one prompt runs, and the per-character typing delay of its replies."""

    steps: list[Step] = field(default_factory=list)
    type_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The turn as it is written in a scenario file."""
        data: dict[str, Any] = {"steps": [step.to_dict() for step in self.steps]}
        if self.type_ms:
            data["type_ms"] = self.type_ms
        return data


@dataclass
class Scenario:
    """A deterministic script of turns; chain the builder methods, :meth:`then` for a new turn."""

    turns: list[Turn] = field(default_factory=list)
    default_reply: str = "ok"
    #: The model catalog (``provider/model``); empty: every model is accepted.
    models: list[str] = field(default_factory=list)
    #: Milliseconds the agent takes to start up after drawing its screen: a prompt submitted
    #: meanwhile stays in the editor ("Startup is still in progress", as real pi does), and
    #: pi reports its session only once started.
    startup_ms: int = 0
    #: Milliseconds an unscripted (default) turn works before answering ``default_reply``.
    think_ms: int = DEFAULT_THINK_MS

    # -- builder ----------------------------------------------------------------------------

    def _current(self) -> Turn:
        if not self.turns:
            self.turns.append(Turn())
        return self.turns[-1]

    def _add(self, step: Step) -> Scenario:
        self._current().steps.append(step)
        return self

    def then(self) -> Scenario:
        """Start the next turn: later steps run on the following prompt."""
        self._current()
        self.turns.append(Turn())
        return self

    def reply(self, text: str) -> Scenario:
        """Answer with ``text``."""
        return self._add(Step("reply", text=text))

    def run_tool(self, tool: str, command: str) -> Scenario:
        """Run ``command`` with ``bash -c`` in the cwd as the tool ``tool`` (normally "bash")."""
        return self._add(Step("tool", text=command, tool=tool))

    def write_file(self, path: str, content: str) -> Scenario:
        """Create or overwrite ``path`` (relative to the cwd) with ``content``."""
        return self._add(Step("write_file", text=path, content=content))

    def ask(self, question: str) -> Scenario:
        """Block on ``question`` until the user answers (text then Enter) or presses Escape."""
        return self._add(Step("ask", text=question))

    def ask_owner(self, question: str) -> Scenario:
        """(A managed child) ask the owner ``question`` through the mailbox; the turn ends."""
        return self._add(Step("ask_owner", text=question))

    def agent_tool(self, tool: str, **arguments: Any) -> Scenario:
        """(A managed child) call the managed-agent tool ``tool`` with ``arguments``."""
        return self._add(Step("agent_tool", text=tool, content=json.dumps(arguments)))

    def compact(self, reason: str = "threshold") -> Scenario:
        """pi compacts its context (``threshold``: near the window's end; ``overflow``: after
        the provider refused the context; ``manual``: ``/compact``)."""
        return self._add(Step("compact", text=reason))

    def fail(self, message: str) -> Scenario:
        """End the turn with an error (``stopReason: "error"``)."""
        return self._add(Step("fail", text=message))

    def wait(self, ms: int) -> Scenario:
        """Keep working for ``ms`` milliseconds."""
        return self._add(Step("wait", ms=ms))

    def blip(self, ms: int) -> Scenario:
        """Look idle for ``ms`` milliseconds (screen and report) without ending the turn."""
        return self._add(Step("blip", ms=ms))

    def hang(self) -> Scenario:
        """Keep working until Escape interrupts the turn."""
        return self._add(Step("hang"))

    def crash(self, code: int = 1) -> Scenario:
        """Exit immediately with status ``code`` (no release, no goodbye)."""
        return self._add(Step("crash", code=code))

    def known_models(self, *models: str) -> Scenario:
        """Accept only these models (``provider/model``); another ``--model`` exits at once."""
        self.models = list(models)
        return self

    def start_slowly(self, ms: int) -> Scenario:
        """Take ``ms`` milliseconds to start up (see :attr:`startup_ms`)."""
        self.startup_ms = ms
        return self

    def type_slowly(self, ms: int) -> Scenario:
        """Type this turn's replies one character every ``ms`` milliseconds."""
        self._current().type_ms = ms
        return self

    # -- lookup -----------------------------------------------------------------------------

    def turn(self, index: int) -> Turn:
        """The turn for the ``index``-th prompt (0-based): scripted, else the default reply."""
        if 0 <= index < len(self.turns):
            return self.turns[index]
        reply = Step("reply", text=self.default_reply)
        return Turn([Step("wait", ms=self.think_ms), reply] if self.think_ms else [reply])

    # -- files ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The scenario as a JSON-compatible document."""
        data: dict[str, Any] = {
            "default_reply": self.default_reply,
            "turns": [turn.to_dict() for turn in self.turns],
        }
        if self.models:
            data["models"] = list(self.models)
        if self.startup_ms:
            data["startup_ms"] = self.startup_ms
        if self.think_ms != DEFAULT_THINK_MS:
            data["think_ms"] = self.think_ms
        return data

    def dump(self, path: str | os.PathLike[str]) -> Path:
        """Write the scenario as JSON to ``path`` (a ``str`` or any path-like); return it
        as a :class:`~pathlib.Path`."""
        target = Path(path)
        target.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return target

    @classmethod
    def from_dict(cls, data: object) -> Scenario:
        """Parse a scenario document; raise :class:`ScenarioError` on anything unknown."""
        if not isinstance(data, dict):
            raise ScenarioError("a scenario must be an object with a 'turns' list")
        unknown = set(data) - {"turns", "default_reply", "models", "startup_ms", "think_ms"}
        if unknown:
            raise ScenarioError(f"unknown scenario key(s): {', '.join(sorted(unknown))}")
        default = data.get("default_reply", "ok")
        if not isinstance(default, str):
            raise ScenarioError("'default_reply' must be a string")
        turns = data.get("turns", [])
        if not isinstance(turns, list):
            raise ScenarioError("'turns' must be a list")
        models = data.get("models", [])
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise ScenarioError("'models' must be a list of strings")
        startup = data.get("startup_ms", 0)
        if not isinstance(startup, int) or isinstance(startup, bool) or startup < 0:
            raise ScenarioError("'startup_ms' must be a whole number of milliseconds >= 0")
        think = data.get("think_ms", DEFAULT_THINK_MS)
        if not isinstance(think, int) or isinstance(think, bool) or think < 0:
            raise ScenarioError("'think_ms' must be a whole number of milliseconds >= 0")
        turns_ = [_parse_turn(turn, i) for i, turn in enumerate(turns)]
        return cls(turns_, default, list(models), startup, think)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a ``.toml`` or JSON scenario file."""
        text = Path(path).read_text(encoding="utf-8")
        if str(path).endswith(".toml"):
            import tomllib

            try:
                return cls.from_dict(tomllib.loads(text))
            except tomllib.TOMLDecodeError as exc:
                raise ScenarioError(f"{path}: {exc}") from exc
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{path}: {exc}") from exc


def _parse_turn(data: object, index: int) -> Turn:
    where = f"turn {index + 1}"
    if isinstance(data, list):
        data = {"steps": data}
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a turn must be an object with 'steps'")
    unknown = set(data) - {"steps", "type_ms"}
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s): {', '.join(sorted(unknown))}")
    type_ms = data.get("type_ms", 0)
    if not isinstance(type_ms, int) or isinstance(type_ms, bool) or type_ms < 0:
        raise ScenarioError(f"{where}: 'type_ms' must be a non-negative integer")
    steps = data.get("steps", [])
    if not isinstance(steps, list):
        raise ScenarioError(f"{where}: 'steps' must be a list")
    return Turn(
        [_parse_step(step, f"{where}, step {i + 1}") for i, step in enumerate(steps)], type_ms
    )


def _want_str(value: object, where: str, key: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: '{key}' must be a string")
    return value


def _want_int(value: object, where: str, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ScenarioError(f"{where}: '{key}' must be a non-negative integer")
    return value


def _parse_step(data: object, where: str) -> Step:
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a step must be an object such as {{'reply': 'text'}}")
    actions = [key for key in data if key in ACTIONS]
    if len(actions) != 1:
        raise ScenarioError(f"{where}: a step needs exactly one of {', '.join(ACTIONS)}")
    action = actions[0]
    allowed = {action} | {
        "tool": {"command"},
        "write_file": {"content"},
        "agent_tool": {"arguments"},
    }.get(action, set())
    unknown = set(data) - allowed
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s): {', '.join(sorted(unknown))}")
    value = data[action]
    if action == "tool":
        return Step(
            "tool",
            tool=_want_str(value, where, "tool"),
            text=_want_str(data.get("command"), where, "command"),
        )
    if action == "write_file":
        return Step(
            "write_file",
            text=_want_str(value, where, "write_file"),
            content=_want_str(data.get("content", ""), where, "content"),
        )
    if action == "agent_tool":
        arguments = data.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ScenarioError(f"{where}: 'arguments' must be an object")
        return Step(
            "agent_tool", text=_want_str(value, where, "agent_tool"), content=json.dumps(arguments)
        )
    if action in ("wait", "blip"):
        return Step(action, ms=_want_int(value, where, action))
    if action == "hang":
        if value is not True:
            raise ScenarioError(f"{where}: 'hang' must be true")
        return Step("hang")
    if action == "crash":
        return Step("crash", code=_want_int(value, where, "crash"))
    if action == "compact" and value not in COMPACTION_REASONS:
        raise ScenarioError(f"{where}: 'compact' must be one of {', '.join(COMPACTION_REASONS)}")
    return Step(action, text=_want_str(value, where, action))
