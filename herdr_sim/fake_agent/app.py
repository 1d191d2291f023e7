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

import os
import select
import signal
import sys
import threading
import time
from pathlib import Path

from ..timers import TIME_SCALE_ENV
from .agent_state import TICK as _TICK
from .claude_flags import CLAUDE_VERSION, ClaudeUsageError, claude_help, parse_claude_args
from .extensions import PiExtension, attach_extensions
from .key_input import KeyInput
from .options import Options, UsageError
from .personas import PERSONA_SOURCES, PROMPT_ECHOES
from .reporter import Reporter, herdr_env
from .scenario import Scenario, ScenarioError, Turn
from .screen import farewell_frame
from .session import iso_now

__all__ = ["FakeAgent", "Options", "UsageError", "main", "parse_args"]

SCENARIO_ENV = "HERDR_SIM_FAKE_SCENARIO"
THIRD_PARTY_SOURCE = "herdr-sim-fake-agent"
THIRD_PARTY_AGENT = "fake-agent"


def time_scale_of(env: dict[str, str] | os._Environ[str]) -> float:
    """The simulator's time scale from ``env`` (``HERDR_SIM_TIME_SCALE``); 1 when unset or
    not a finite number > 0."""
    try:
        scale = float(env.get(TIME_SCALE_ENV, "1"))
    except ValueError:
        return 1.0
    return scale if 0 < scale < float("inf") else 1.0


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


class FakeAgent(KeyInput):
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

    def run(self) -> int:
        """The main loop: draw, report, read keys until the user exits."""
        self.raw_terminal()
        if self.kind == "pi":  # real pi turns bracketed paste on: a pasted prompt is one prompt
            os.write(sys.stdout.fileno(), b"\x1b[?2004h")
        signal.signal(signal.SIGWINCH, lambda signum, frame: self.draw())
        self.enter_screen()
        self.draw()
        startup = self.scenario.startup_ms / 1000 * self.time_scale
        # own deadline: a start-up timer the fake agent's own select() loop checks; the fake
        # imports only its own modules, to start as fast as a real agent's launcher
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
            self.leave_screen()
            if self.kind == "pi":
                os.write(sys.stdout.fileno(), b"\x1b[?2004l")
            self.restore_terminal()
        self.report_exit()
        if self.reporter is not None:
            self.reporter.close(2.0)
        os.write(sys.stdout.fileno(), farewell_frame(self.kind, self._frame).encode())
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
