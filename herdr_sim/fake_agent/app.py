"""The fake agent program: an interactive screen in its terminal, driven by a scenario.

Run as ``pi``, ``claude``, ``codex`` or ``opencode`` (the launchers that
:func:`herdr_sim.fake_agent.install.install_fake_agents` writes) or as the third-party
persona ``herdr-sim fake-agent``. The scenario comes from ``--scenario FILE`` or the
``HERDR_SIM_FAKE_SCENARIO`` environment variable (a path); without one every prompt gets
the reply ``ok``. The scenario's delays (``startup_ms``, ``type_ms``, ``wait``, ``blip``) run
at the simulator's time scale (``HERDR_SIM_TIME_SCALE``, :mod:`herdr_sim.timers`), as the
simulator's own timers do. The fake ``claude`` reads its command line as Claude Code does
(:mod:`.claude_flags`; ``-p`` answers one prompt on stdout without a screen); each kind keeps
its session where and as its real agent does (:mod:`.session` for pi, :mod:`.transcripts`
for claude and codex, :mod:`.opencode_store` for opencode).

Keys: text then Enter submits a prompt (or answers a question); Escape interrupts a running
turn (or cancels a question); Ctrl+C interrupts, or exits when idle; Ctrl+D on an empty
line, ``/exit`` or ``/quit`` exit. ``/ask QUESTION`` runs a turn that asks ``QUESTION`` (then
replies the scenario's default reply) without consuming a scenario turn; the third-party
persona's ``/new`` replaces its session with a new one in the same process and reports it
(the integration checks drive these two).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from herdr_sim.timers import TIME_SCALE_ENV

from .claude_flags import CLAUDE_VERSION, ClaudeUsageError, claude_help, parse_claude_args
from .extensions import PiExtension, attach_extensions
from .opencode_store import OpencodeSession, opencode_db, opencode_id
from .personas import ANSWER_MARKS, PERSONA_SOURCES, PROMPT_ECHOES, render
from .reporter import Reporter, herdr_env
from .scenario import Scenario, ScenarioError, Step, Turn
from .session import PiSession, find_session, iso_now, new_session_id, session_path_for
from .transcripts import (
    ClaudeTranscript,
    CodexRollout,
    codex_dir,
    newest_transcript,
    transcript_class,
    transcript_path,
)

__all__ = ["FakeAgent", "Options", "UsageError", "main", "parse_args"]

SCENARIO_ENV = "HERDR_SIM_FAKE_SCENARIO"
THIRD_PARTY_SOURCE = "herdr-sim-fake-agent"
THIRD_PARTY_AGENT = "fake-agent"
_TICK = 0.1


def time_scale_of(env: dict[str, str] | os._Environ[str]) -> float:
    """The simulator's time scale from ``env`` (``HERDR_SIM_TIME_SCALE``); 1 when unset or
    not a finite number > 0."""
    try:
        scale = float(env.get(TIME_SCALE_ENV, "1"))
    except ValueError:
        return 1.0
    return scale if 0 < scale < float("inf") else 1.0


class UsageError(Exception):
    """Bad command-line arguments (exit status 2)."""


class _Interrupted(Exception):
    """Escape (or Ctrl+C) interrupted the running turn."""


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


_VALUE_FLAGS = {
    "--model": "model",
    "-m": "model",
    "--thinking": "thinking",
    "--session": "session",
    "--session-dir": "session_dir",
    "--append-system-prompt": "append_system_prompt",
    "--system-prompt": None,
    "--tools": None,
    "--exclude-tools": None,
    "--session-id": "session_id",
    "--api-key": None,
    "--scenario": "scenario",
    "--resume": "resume",
    "-r": "resume",
    "--mode": None,
    "--permission-mode": None,
    "--kind": "kind",
}
_BOOL_FLAGS = {
    "--continue",
    "-c",
    "--no-session",
    "--verbose",
    "--yolo",
    "--dangerously-skip-permissions",
}


#: real pi 1.6's flags that change nothing the fake simulates (checked against ``pi --help``
#: of 1.6.0; docs/simulator/real-agents.md). Flags that would change what the fake shows or
#: reports (``-p``, ``--no-extensions``, ``--provider``, ``--name`` …) stay refused.
_PI_VALUE_FLAGS = {"--api-key", "-t", "-xt"}
_PI_BOOL_FLAGS = {
    "--offline", "--no-mcp", "--approve", "-a", "--no-approve", "-na", "--no-context-files",
    "-nc", "--no-skills", "-ns", "--no-prompt-templates", "-np", "--no-themes",
}  # fmt: skip


#: real Codex 0.171's flags that change nothing the fake simulates: ``--no-daemon`` (run the
#: app server inside the TUI instead of a detached daemon; the real-agent fixture passes it)
_CODEX_BOOL_FLAGS = {"--no-daemon"}


def _claude_options(argv: list[str]) -> Options:
    """Claude Code's command line (:mod:`.claude_flags`) as the fake's options."""
    parsed = parse_claude_args(argv)
    options = Options(parsed.kind or "claude")
    options.model = parsed.model or ""
    options.resume = parsed.resume
    options.session_id = parsed.session_id
    options.append_system_prompt = parsed.append_system_prompt
    options.scenario = parsed.scenario
    options.prompt = parsed.prompt
    options.continue_latest = parsed.continue_ or parsed.resume_picker
    options.print_mode = parsed.print_
    options.warnings = parsed.warnings
    options.permission_mode = parsed.permission_mode
    options.effort = (parsed.effort or options.effort).lower()
    if parsed.help or parsed.version:
        options.show = claude_help() if parsed.help else f"{CLAUDE_VERSION} (Claude Code)"
    return options


def parse_args(argv: list[str], kind: str) -> Options:
    """Accept the flags an orchestrator passes to the real agent of ``kind``."""
    if kind == "claude":
        return _claude_options(argv)
    options = Options(kind)
    args = list(argv)
    if kind == "codex" and args[:1] == ["resume"]:
        args = args[1:]
        if args and not args[0].startswith("-"):
            options.resume = args.pop(0)
    while args:
        arg = args.pop(0)
        name, eq, inline = arg.partition("=")
        if name in ("-e", "--extension"):
            if not eq and not args:
                raise UsageError(f"{name} needs a value")
            options.extensions.append(inline if eq else args.pop(0))
        elif name in _VALUE_FLAGS:
            if not eq and not args:
                raise UsageError(f"{name} needs a value")
            value = inline if eq else args.pop(0)
            attr = _VALUE_FLAGS[name]
            if attr is not None:
                setattr(options, attr, value)
        elif kind == "pi" and name in _PI_VALUE_FLAGS:
            if not eq and not args:
                raise UsageError(f"{name} needs a value")
            if not eq:
                args.pop(0)
        elif (
            name in _BOOL_FLAGS
            or (kind == "pi" and name in _PI_BOOL_FLAGS)
            or (kind == "codex" and name in _CODEX_BOOL_FLAGS)
        ):
            continue
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option: {arg}")
        elif options.prompt is None:
            options.prompt = arg
        else:
            options.prompt += " " + arg
    if kind == "pi" and ":" in options.model.rpartition("/")[2]:
        options.model, _, options.thinking = options.model.rpartition(":")
    if kind == "pi" and options.append_system_prompt:
        options.append_system_prompt = _prompt_input(options.append_system_prompt)
    return options


def _prompt_input(value: str) -> str:
    """pi's reading of ``--append-system-prompt``: a value naming an existing file is that
    file's text (as real pi 1.6 does; the managed controller passes a definition body so)."""
    path = Path(value)
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")[: 1 << 20]
    except OSError:
        return value
    return value


class FakeAgent:
    """One running fake agent: its screen, its turns and its reports."""

    def __init__(
        self, options: Options, scenario: Scenario, env: dict[str, str] | os._Environ[str]
    ) -> None:
        self.kind = options.kind
        self.options = options
        self.scenario = scenario
        #: the factor the scenario's delays run at (the simulator's time scale)
        self.time_scale = time_scale_of(env)
        self.cwd = str(Path.cwd())
        model = options.model or "fake/fake-model"
        self.provider, _, self.model = model.rpartition("/")
        self.provider = self.provider or "fake"
        self.state = "idle"
        self.transcript: list[str] = []
        self.typed = ""
        self.question = ""
        self.answer: str | None = None
        self.frame = 0
        self.turn_started = 0.0
        self.turn_index = 0
        self.pending: list[tuple[str, Turn | None]] = []
        self.interrupt = threading.Event()
        self.wake = threading.Event()
        self.lock = threading.RLock()
        self.exiting = False
        #: until when (monotonic) the agent is still starting up (0: started)
        self.starting_until = 0.0
        self.worker: threading.Thread | None = None
        #: no screen (``claude -p``): nothing is drawn
        self.headless = False
        #: the last turn's answer (its text blocks) and error, for ``claude -p``
        self.last_answer = ""
        self.last_error: str | None = None
        self.session_id, self.session = self._open_session(env)
        self.env = env
        #: the managed side (pi with ``PI_HERDSMAN_MAILBOX`` running the managed-child
        #: extension its launch names: :mod:`.extensions`), once started
        self.managed: PiExtension | None = None
        #: the current steps ended with a successful ``ask_owner`` (the turn ends there)
        self.asked_owner = False
        where = herdr_env(env)
        source = PERSONA_SOURCES.get(self.kind)
        self.pane_id = where[1] if where else ""
        self.reporter: Reporter | None = None
        if where is not None and source is not None:
            self.reporter = Reporter(where[0], id_prefix=source)
        self.source = source or ""
        self.agent = THIRD_PARTY_AGENT if self.kind == "fake-agent" else self.kind

    # -- sessions ---------------------------------------------------------------------------

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

    # -- reports ----------------------------------------------------------------------------

    def _params(self, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "pane_id": self.pane_id,
            "source": self.source,
            "agent": self.agent,
        }
        params.update(extra)
        return params

    def report_startup(self) -> None:
        """What the official integration of this kind sends when the agent starts."""
        rep = self.reporter
        if rep is None:
            return
        path = str(self.session.path)
        if self.kind == "pi":
            rep.send(
                "pane.report_agent_session",
                self._params(seq=None, session_start_source="startup", agent_session_path=path),
            )
            rep.send(
                "pane.report_agent",
                self._params(state="idle", seq=None, agent_session_path=path),
                state=True,
            )
        elif self.kind in ("claude", "codex"):
            start = "resume" if self.resumed else "startup"
            params = self._params(seq=time.time_ns(), agent_session_id=self.session_id)
            if self.kind == "claude":
                params["agent_session_path"] = path
            params["session_start_source"] = start
            rep.send("pane.report_agent_session", params)
        elif self.kind == "opencode":
            rep.send(
                "pane.report_agent_session",
                self._params(agent_session_id=self.session_id, session_start_source="select"),
            )
        else:
            rep.send(
                "pane.report_agent",
                self._params(
                    state="idle",
                    seq=None,
                    agent_session_id=self.session_id,
                    resume_argv=self.resume_argv(),
                ),
                state=True,
            )

    def started(self) -> None:
        """Startup is over: report it and, for a managed pi child, say hello to the mailbox
        (its ``state.json`` is the controller's readiness proof)."""
        self.report_startup()
        if self.kind == "pi" and self.managed is None:
            self.managed = attach_extensions(
                self.options.extensions,
                self.env,
                session_id=self.session_id,
                session_file=str(self.session.path),
                cwd=self.cwd,
                pid=os.getpid(),
                submit=self.submit,
                interrupt=self.interrupt,
                deliver=self._deliver_steer,
                say=self.say,
            )

    def _deliver_steer(self, text: str) -> None:
        """A steer reaches the turn at a boundary: shown and persisted as a user message."""
        echo = PROMPT_ECHOES.get(self.kind, "> ")
        self.say(echo + text.replace("\n", " "))
        self.session.user(text)

    def report_state(self, state: str, message: str | None = None) -> None:
        """A lifecycle state report (only kinds whose integration reports states).

        ``working`` holds the turn (never the screen) until the report is on its way,
        for at most a second: a fast turn's ``idle`` would otherwise replace a still
        pending ``working`` (only the newest state is sent), and tests want each turn to
        report both.
        """
        rep = self.reporter
        if rep is None or self.kind in ("claude", "codex"):
            return
        extra: dict[str, Any] = {"state": state}
        if message is not None and state == "blocked":
            extra["message"] = message
        extra["seq"] = None
        if self.kind == "pi":
            extra["agent_session_path"] = str(self.session.path)
        elif self.kind == "opencode":
            extra["agent_session_id"] = self.session_id
        taken = rep.send("pane.report_agent", self._params(**extra), state=True)
        if state == "working":
            taken.wait(1.0)

    def report_turn_start(self) -> None:
        """pi's ``agent_start``: the session, then ``working``; others just ``working``."""
        rep = self.reporter
        if rep is not None and self.kind == "pi":
            rep.send(
                "pane.report_agent_session",
                self._params(seq=None, agent_session_path=str(self.session.path)),
            )
        self.report_state("working")

    def report_exit(self) -> None:
        """The third-party persona releases the pane when the user exits."""
        rep = self.reporter
        if rep is not None and self.kind == "fake-agent":
            rep.send("pane.release_agent", self._params(seq=None))

    # -- screen -----------------------------------------------------------------------------

    def draw(self) -> None:
        """Redraw the whole screen (and the terminal title)."""
        if self.headless:
            return
        with self.lock:
            try:
                cols, rows = os.get_terminal_size(sys.stdout.fileno())
            except OSError:
                cols, rows = 0, 0
            cols, rows = cols or 80, rows or 24
            elapsed = int(time.monotonic() - self.turn_started) if self.state != "idle" else 0
            title, lines = render(
                self.kind,
                state=self.state,
                width=cols,
                height=rows,
                transcript=self.transcript,
                typed=self.typed.replace("\n", " "),
                question=self.question,
                frame=self.frame,
                elapsed_s=elapsed,
                model=self.model,
                cwd=self.cwd,
                provider=self.provider,
            )
            out = f"\x1b]0;{title}\x07\x1b[H\x1b[2J" + "\r\n".join(lines)
            os.write(sys.stdout.fileno(), out.encode())

    def keep_scrollback(self) -> None:
        """Scroll what the terminal shows into its scrollback before the first frame.

        Every frame starts with ``ESC [ H ESC [ 2 J``, which erases the screen without
        saving it (Herdr's terminal, libghostty, saves it only when the last row is a
        marked shell prompt). The real agents draw inline, below the shell's output, so the
        output stays in the pane's history; one newline per row from the cursor (which the
        shell left below that output) moves it all into the scrollback first.
        """
        if self.headless:
            return
        try:
            rows = os.get_terminal_size(sys.stdout.fileno()).lines
        except OSError:
            return
        os.write(sys.stdout.fileno(), b"\n" * max(rows, 1))

    def say(self, line: str) -> None:
        """Add a transcript line and redraw."""
        with self.lock:
            self.transcript.append(line)
        self.draw()

    def set_state(self, state: str) -> None:
        """Change the visible state and redraw."""
        with self.lock:
            self.state = state
        self.draw()

    # -- turns ------------------------------------------------------------------------------

    def _sleep(self, seconds: float) -> None:
        if self.interrupt.wait(seconds):
            raise _Interrupted

    def _type(self, text: str, type_ms: int) -> None:
        mark = ANSWER_MARKS.get(self.kind, "")
        indent = " " * len(mark)
        if not type_ms:
            for number, line in enumerate(text.split("\n")):
                self.say((indent if number else mark) + line)
            return
        with self.lock:
            self.transcript.append(mark)
        for char in text:
            self._sleep(type_ms / 1000 * self.time_scale)
            with self.lock:
                if char == "\n":
                    self.transcript.append(indent)
                else:
                    self.transcript[-1] += char
            self.draw()

    def _run_command(self, command: str | list[str]) -> tuple[str, bool]:
        """Run ``command`` (a shell command line, or an argv run without a shell)."""
        import subprocess

        proc = subprocess.Popen(
            ["bash", "-c", command] if isinstance(command, str) else command,
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        while True:
            try:
                out, _ = proc.communicate(timeout=_TICK)
                break
            except subprocess.TimeoutExpired:
                if self.interrupt.is_set():
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.communicate()
                    raise _Interrupted from None
        return out.decode(errors="replace"), proc.returncode != 0

    def _tool(self, name: str, arguments: dict[str, Any], texts: list[str], started: int) -> int:
        """Persist the call, run it, persist the result; return the next message's start."""
        call_id = self.session.next_call_id()
        content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
        self.session.assistant(content, "toolUse", started_ms=started)
        texts.clear()
        if self.managed is not None:
            self.managed.tool_start()
        begun = time.monotonic()
        if name == "write":
            target = Path(self.cwd) / str(arguments["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            data = str(arguments["content"])
            target.write_text(data, encoding="utf-8")
            output = f"Successfully wrote {len(data.encode())} bytes to {arguments['path']}"
            failed = False
            self.say(f"write {arguments['path']}")
        elif name.startswith("agent_"):
            output, failed = self._managed_tool(name, arguments)
        else:
            self.say(f"$ {arguments['command']}")
            output, failed = self._run_command(str(arguments["command"]))
            for line in output.rstrip("\n").split("\n"):
                self.say(f"  {line}")
        duration = int((time.monotonic() - begun) * 1000)
        self.session.tool_result(call_id, name, output, is_error=failed, duration_ms=duration)
        return int(time.time() * 1000)

    def _managed_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """A delegating child's managed-agent tool, run as the extension runs it:
        ``$PI_HERDSMAN_PYTHON -m orchestrator call`` (the child's environment says who its
        controller is)."""
        self.say(f"{name} {json.dumps(arguments)}")
        python = self.env.get("PI_HERDSMAN_PYTHON", "")
        if self.managed is None or not python:
            refused = f"{name} is available only to a managed agent"
            self.say(f"  {refused}")
            return refused, True
        output, failed = self._run_command(
            [python, "-m", "orchestrator", "call", name, json.dumps(arguments)]
        )
        self.say(f"  {name}: {'failed' if failed else 'ok'}")
        return output, failed

    def _ask_owner(self, question: str, texts: list[str], started: int) -> int:
        """pi-herdsman's ``ask_owner`` tool: the question goes to the owner's mailbox and,
        posted, ends the turn (:attr:`asked_owner`); refused, the tool fails and the turn
        goes on."""
        call_id = self.session.next_call_id()
        content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        arguments = {"question": question}
        content.append(
            {"type": "toolCall", "id": call_id, "name": "ask_owner", "arguments": arguments}
        )
        self.session.assistant(content, "toolUse", started_ms=started)
        texts.clear()
        self.say(f"ask_owner: {question}")
        if self.managed is None:
            output, failed = "ask_owner is available only to a managed agent", True
        else:
            self.managed.tool_start()
            output, failed = self.managed.ask(question)
        self.session.tool_result(call_id, "ask_owner", output, is_error=failed, duration_ms=0)
        self.say(f"  {output}")
        self.asked_owner = not failed
        return int(time.time() * 1000)

    def _compact(self, reason: str) -> None:
        """pi's compaction: a managed child may retire its session (and cancel it)."""
        retired, cancelled = self.managed.compact(reason) if self.managed else (False, False)
        if retired:
            self.say("pi-herdsman: session retired after context pressure; handing off")
        self.say(f"Compaction ({reason}) " + ("cancelled" if cancelled else "done"))

    def _ask(self, question: str) -> None:
        if self.headless:  # nobody to ask (claude -p): the question goes unanswered
            self.say(f"? {question}")
            return
        with self.lock:
            self.question = question
            self.answer = None
            self.typed = ""
        self.set_state("blocked")
        self.report_state("blocked", question)
        while self.answer is None:
            self._sleep(0.02)
        self.say(f"> {self.answer}")
        with self.lock:
            self.question = ""
        self.set_state("working")
        self.report_state("working")

    def run_turn(self, prompt: str, turn: Turn) -> None:
        """Run one prompt's turn to its end (stop, error, aborted) and settle to idle."""
        self.turn_started = time.monotonic()
        echo = PROMPT_ECHOES.get(self.kind, "> ")
        for number, line in enumerate(prompt.split("\n")):
            self.say((" " * len(echo) if number else echo) + line)
        self.set_state("working")
        self.report_turn_start()
        managed = self.managed
        if managed is not None:
            managed.turn_start()
        self.session.user(prompt)
        started = int(time.time() * 1000)
        texts: list[str] = []
        self.last_answer, self.last_error = "", None
        try:
            while True:
                texts = []
                stopped = self._play(turn, texts, started)
                answer = self.last_answer if stopped else None
                if managed is None or not managed.settle(answer, stopped=stopped):
                    break
                # steers came as the steps ended: pi answers them in the same operation
                turn = self.scenario.turn(self.turn_index)
                self.turn_index += 1
                started = int(time.time() * 1000)
        except _Interrupted:
            content = [{"type": "text", "text": t} for t in texts]
            self.session.assistant(
                content, "aborted", started_ms=started, error="Request was aborted"
            )
            self.say("Operation aborted")
            if managed is not None:
                managed.settle(None, stopped=False)
        with self.lock:
            self.question = ""
            self.interrupt.clear()
        self.set_state("idle")
        self.report_state("idle")

    def _play(self, turn: Turn, texts: list[str], started: int) -> bool:
        """Run ``turn``'s steps; ``True`` when they ran to the end (the answer recorded),
        ``False`` when a ``fail`` or a posted ``ask_owner`` ended the turn."""
        self.asked_owner = False
        for step in turn.steps:
            started = self._step(step, turn, texts, started)
            if step.action == "fail" or self.asked_owner:
                return False
            if self.managed is not None:
                tool = step.action in ("tool", "write_file", "ask_owner", "agent_tool")
                self.managed.boundary(after_tool=tool)
        content = [{"type": "text", "text": t} for t in texts]
        self.session.assistant(content, "stop", started_ms=started)
        self.last_answer = "\n".join(texts)
        return True

    def _step(self, step: Step, turn: Turn, texts: list[str], started: int) -> int:
        if step.action == "reply":
            self._type(step.text, turn.type_ms)
            texts.append(step.text)
        elif step.action == "tool":
            return self._tool(step.tool, {"command": step.text}, texts, started)
        elif step.action == "write_file":
            return self._tool("write", {"path": step.text, "content": step.content}, texts, started)
        elif step.action == "ask":
            self._ask(step.text)
        elif step.action == "ask_owner":
            return self._ask_owner(step.text, texts, started)
        elif step.action == "agent_tool":
            return self._tool(step.text, json.loads(step.content or "{}"), texts, started)
        elif step.action == "compact":
            self._compact(step.text)
        elif step.action == "fail":
            content = [{"type": "text", "text": t} for t in texts]
            self.session.assistant(content, "error", started_ms=started, error=step.text)
            self.say(f"Error: {step.text}")
            self.last_error = step.text
        elif step.action == "wait":
            self._sleep(step.ms / 1000 * self.time_scale)
        elif step.action == "blip":
            self.set_state("idle")
            self.report_state("idle")
            self._sleep(step.ms / 1000 * self.time_scale)
            self.set_state("working")
            self.report_state("working")
        elif step.action == "hang":
            while True:
                self._sleep(_TICK)
        elif step.action == "crash":
            self.restore_terminal()
            os._exit(step.code)
        return started

    def _worker(self) -> None:
        while True:
            with self.lock:
                item = self.pending.pop(0) if self.pending else None
            if item is None:
                return
            prompt, turn = item
            if turn is None:
                turn = self.scenario.turn(self.turn_index)
                self.turn_index += 1
            self.run_turn(prompt, turn)

    def submit(self, text: str, turn: Turn | None = None) -> None:
        """Queue a prompt (``turn``: run these steps instead of the scenario's next turn);
        it runs after the current turn, if any."""
        with self.lock:
            self.pending.append((text, turn))
            if self.worker is None or not self.worker.is_alive():
                self.worker = threading.Thread(target=self._worker, name="turn", daemon=True)
                self.worker.start()

    # -- input ------------------------------------------------------------------------------

    def on_key_text(self, data: str) -> None:
        """Handle typed input (already split from escape sequences)."""
        for char in data:
            if char in "\r\n":
                self._enter()
            elif char in "\x7f\b":
                with self.lock:
                    self.typed = self.typed[:-1]
            elif char == "\x03":
                if self.state == "idle":
                    self.exiting = True
                else:
                    self.interrupt.set()
            elif char == "\x04":
                if not self.typed and self.state == "idle":
                    self.exiting = True
            elif char >= " " or char == "\t":
                with self.lock:
                    self.typed += char
        self.draw()

    def _enter(self) -> None:
        with self.lock:
            text = self.typed.strip()
            self.typed = ""
            if self.state == "blocked":
                self.answer = text
                return
        if not text:
            return
        if self.starting_until:
            # real pi before its startup ends: the text stays in the editor, nothing is sent
            with self.lock:
                self.typed = text
            self.say("Startup is still in progress")
            return
        if text in ("/exit", "/quit"):
            self.exiting = True
            return
        if text.startswith("/ask ") and text[5:].strip():
            steps = [
                Step("ask", text=text[5:].strip()),
                Step("reply", text=self.scenario.default_reply),
            ]
            self.submit(text, Turn(steps=steps))
            return
        if text == "/new" and self.kind == "fake-agent" and self.state == "idle":
            self.new_session()
            return
        self.submit(text)

    def new_session(self) -> None:
        """``/new``: a fresh session in the same process, reported (never a release)."""
        self.options.resume = None
        self.options.session_id = None
        with self.lock:
            self.session_id, self.session = self._open_session(os.environ)
        self.say(f"New session {self.session_id}")
        self.report_startup()

    def on_escape(self) -> None:
        """Escape: interrupt the running turn (a question counts as part of it)."""
        if self.state != "idle":
            self.interrupt.set()

    def feed(self, data: bytes) -> None:
        """Split raw terminal input into text, Escape and (ignored) escape sequences."""
        text = data.decode(errors="replace")
        i = 0
        while i < len(text):
            if text[i] != "\x1b":
                j = text.find("\x1b", i)
                j = len(text) if j < 0 else j
                self.on_key_text(text[i:j])
                i = j
                continue
            if i + 1 >= len(text) or text[i + 1] == "\x1b":
                self.on_escape()
                i += 1
            elif text.startswith("\x1b[200~", i):
                end = text.find("\x1b[201~", i)
                end = len(text) if end < 0 else end
                pasted = text[i + 6 : end].replace("\r\n", "\n").replace("\r", "\n")
                if self.kind != "pi":  # only the pi persona keeps pasted lines (as pi does)
                    pasted = pasted.replace("\n", " ")
                with self.lock:
                    self.typed += pasted
                i = end + 6
            elif text[i + 1] in "[O":
                j = i + 2
                while j < len(text) and not ("@" <= text[j] <= "~"):
                    j += 1
                i = j + 1
            else:
                i += 2  # Alt+key: ignored
        self.draw()

    # -- terminal ---------------------------------------------------------------------------

    _saved: list[Any] | None = None

    def raw_terminal(self) -> None:
        """Put stdin in raw mode (when it is a terminal), remembering the old mode."""
        import termios

        try:
            fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(fd)
            mode = termios.tcgetattr(fd)
        except (termios.error, OSError, ValueError):
            return
        mode[0] &= ~(termios.ICRNL | termios.IXON | termios.INLCR)
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG | termios.IEXTEN)
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)

    def restore_terminal(self) -> None:
        """Undo :meth:`raw_terminal`."""
        import termios

        if self._saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, self._saved)

    def run(self) -> int:
        """The main loop: draw, report, read keys until the user exits."""
        self.raw_terminal()
        if self.kind == "pi":  # real pi turns bracketed paste on: a pasted prompt is one prompt
            os.write(sys.stdout.fileno(), b"\x1b[?2004h")
        signal.signal(signal.SIGWINCH, lambda signum, frame: self.draw())
        self.keep_scrollback()
        self.draw()
        startup = self.scenario.startup_ms / 1000 * self.time_scale
        self.starting_until = time.monotonic() + startup if startup > 0 else 0.0
        if not self.starting_until:
            self.started()
        if self.options.prompt:
            self.submit(self.options.prompt)
        fd = sys.stdin.fileno()
        try:
            while not self.exiting:
                if self.starting_until and time.monotonic() >= self.starting_until:
                    self.starting_until = 0.0  # started up: prompts are taken from now on
                    self.started()
                ready, _, _ = select.select([fd], [], [], _TICK)
                if ready:
                    data = os.read(fd, 4096)
                    if not data:
                        break
                    self.feed(data)
                elif self.state == "working":
                    self.frame += 1
                    self.draw()
        finally:
            if self.managed is not None:
                self.managed.stop()
            if self.kind == "pi":
                os.write(sys.stdout.fileno(), b"\x1b[?2004l")
            self.restore_terminal()
        self.report_exit()
        if self.reporter is not None:
            self.reporter.close(2.0)
        os.write(sys.stdout.fileno(), b"\x1b[H\x1b[2J")
        print(self.goodbye(), flush=True)
        return 0

    def print_answer(self) -> int:
        """``claude -p``: answer one prompt without a screen and exit.

        As Claude Code 2.1 does: the prompt is the argument, else stdin; the SessionStart
        hook reports the session; the answer's text goes to stdout (status 0), a failed
        turn's error to stdout with status 1; with no prompt at all it says so and exits 1.
        """
        prompt = self.options.prompt
        if prompt is None and not sys.stdin.isatty():
            prompt = sys.stdin.read().strip() or None
        if prompt is None:
            print(
                "Error: Input must be provided either through stdin or as a prompt argument "
                "when using --print",
                file=sys.stderr,
            )
            return 1
        self.headless = True
        self.report_startup()
        self.run_turn(prompt, self.scenario.turn(0))
        if self.reporter is not None:
            self.reporter.close(2.0)
        if self.last_error is not None:
            print(f"API Error: {self.last_error}", flush=True)
            return 1
        print(self.last_answer, flush=True)
        return 0

    def goodbye(self) -> str:
        """What the agent prints on exit: how to resume."""
        if self.kind == "fake-agent":
            return "Resume this session with: " + " ".join(self.resume_argv())
        if self.kind == "pi":  # real pi 1.6's words, and it resumes by the id
            return f"To resume this session:\npi --session {self.session_id}"
        if self.kind == "claude":
            return f"Resume this session with: claude --resume {self.session_id}"
        if self.kind == "codex":
            return f"To continue this session, run codex resume {self.session_id}"
        return f"Session {self.session_id} ended at {iso_now()}"


#: ``pi --list-models``'s catalog of the fake pi: ``provider/model`` ids, comma-separated in
#: ``$HERDR_SIM_FAKE_MODELS`` (set it to test a model that does not resolve).
FAKE_MODELS_ENV = "HERDR_SIM_FAKE_MODELS"
FAKE_MODELS = ("deepseek/deepseek-flash", "deepseek/deepseek-v4-pro", "anthropic/claude-sonnet-4-5")


def list_models(search: str | None) -> int:
    """``pi --list-models [search]``: pi 1.6's table (provider, model, …), filtered by search.

    Like pi, an empty catalog (no provider authenticated) prints a notice and no table.
    """
    configured = os.environ.get(FAKE_MODELS_ENV)
    ids = [m for m in (configured.split(",") if configured is not None else FAKE_MODELS) if m]
    rows = [m.partition("/") for m in ids if not search or search.lower() in m.lower()]
    if not ids:
        print("No models available. Use /login to log into a provider via OAuth or API key.")
        return 0
    print(f"{'provider':<10} {'model':<30} context")
    for provider, _, model in rows:
        print(f"{provider:<10} {model:<30} 1M")
    return 0


def main(argv: list[str] | None = None, kind: str | None = None) -> int:
    """Run a fake agent; ``kind`` defaults to ``--kind`` or the program name."""
    args = sys.argv[1:] if argv is None else argv
    default = kind or Path(sys.argv[0]).name
    if default not in PERSONA_SOURCES:
        default = "fake-agent"
    if default == "pi" and args[:1] == ["--list-models"]:
        return list_models(args[1] if len(args) > 1 else None)
    try:
        options = parse_args(args, default)
    except ClaudeUsageError as exc:  # commander's words and status, as Claude Code exits
        print(exc, file=sys.stderr)
        return exc.status
    except UsageError as exc:
        print(f"{default}: {exc}", file=sys.stderr)
        return 2
    if options.show is not None:
        print(options.show)
        return 0
    for warning in options.warnings:
        print(warning, file=sys.stderr)
    try:
        if options.kind not in PERSONA_SOURCES:
            raise UsageError(f"unknown kind: {options.kind} (one of {', '.join(PERSONA_SOURCES)})")
        path = options.scenario or os.environ.get(SCENARIO_ENV)
        scenario = Scenario.load(Path(path)) if path else Scenario()
    except (UsageError, ScenarioError, OSError) as exc:
        print(f"{default}: {exc}", file=sys.stderr)
        return 2
    if scenario.models and options.model and options.model not in scenario.models:
        # Like an agent that cannot resolve its model: an error line, status 1, no screen.
        print(
            f'Error: model "{options.model}" not found. '
            f"Use --list-models to see the available models.",
            file=sys.stderr,
        )
        return 1
    try:
        agent = FakeAgent(options, scenario, os.environ)
    except UsageError as exc:  # a session to resume that does not exist, as real pi says it
        print(exc, file=sys.stderr)
        return 1
    if options.print_mode:
        return agent.print_answer()
    return agent.run()
