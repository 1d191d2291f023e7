"""The driver of an integration check: run the agent, drive it, record what it reports.

It runs the agent command twice outside Herdr (a pty of its own, the ``HERDR_*`` variables
incomplete but pointing at a recording socket), then in a pane of an in-process simulator:
a prompt, a question and its answer, a session change, prompts while the socket is slow and
then refused, an exit; a second start in the same pane; a stop of the session and a restore.
Every wait is bounded; what it saw goes into :class:`Observed`, which the rules judge.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pexpect

from herdr_sim.host import keys
from herdr_sim.host.pty import default_signal_state
from orchestrator.client.poll import Deadline

from ..simulator import Simulator
from . import defaults
from .recorder import REPORT_METHODS, Report, ReportLog, SocketRecorder
from .report import Evidence

__all__ = [
    "CheckOptions",
    "CliRefusal",
    "Observed",
    "Outside",
    "TurnTiming",
    "drive",
    "not_found_line",
]

#: how long a fault delays each report in the "slow socket" phase (seconds)
SLOW_DELAY = 4.0
#: how much longer than the baseline a prompt may take while the socket is slow or refused
SLOW_ALLOWANCE = 2.0
#: a screen unchanged this long counts as settled (the agent finished drawing its answer)
SETTLE = 0.3
_POLL = 0.03

#: what shells and pexpect print when a command cannot be started
_NOT_FOUND = re.compile(
    r"(command not found|: not found|No such file or directory|Permission denied"
    r"|command was not found or was not executable)"
)
#: what only a shell prints when it has no such command (ends the wait for a first report)
_SHELL_NOT_FOUND = re.compile(r"(command not found|: not found)$")


def not_found_line(text: str, command: str, *, shell_only: bool = False) -> str | None:
    """The line of ``text`` saying ``command`` could not be started, if there is one
    (``shell_only``: only a shell's "command not found")."""
    name = command.rsplit("/", 1)[-1]
    pattern = _SHELL_NOT_FOUND if shell_only else _NOT_FOUND
    for line in text.splitlines():
        if name in line and pattern.search(line.strip()):
            return line.strip()
    return None


@dataclass
class CheckOptions:
    """What to run and how to drive it (see :func:`herdr_sim.conformance.check_integration`)."""

    argv: list[str]
    cwd: Path | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    agent_env: Mapping[str, str] = field(default_factory=dict)
    prompt: str = defaults.PROMPT
    question_prompt: str | None = defaults.QUESTION_PROMPT
    answer: str = defaults.ANSWER
    new_session_prompt: str | None = defaults.NEW_SESSION_PROMPT
    exit_keys: Sequence[str] = defaults.EXIT_KEYS
    timeout: float = 10.0
    rules: frozenset[str] = frozenset()
    #: shown every wire line of the check's simulators (a contract checker, say)
    wire_taps: Sequence[Callable[[str, dict[str, Any]], None]] = ()


@dataclass
class Outside:
    """One run outside Herdr: which variables it had and what reached the recorder."""

    label: str
    env: dict[str, str]
    lines: list[tuple[float, str]]
    output: str
    exited: bool


@dataclass(frozen=True)
class CliRefusal:
    """A command line the simulator's ``herdr`` refused in the agent's pane before
    anything reached the socket (:mod:`herdr_sim.persist.cli_refusals`)."""

    #: seconds since the check started (the CLI's monotonic clock is the checker's)
    t: float
    phase: str
    argv: list[str]
    exit: int
    error: str

    @property
    def is_report(self) -> bool:
        """A report command of the guide (``pane report-agent`` ...)."""
        return self.argv[:1] == ["pane"] and any(
            arg in ("report-agent", "report-agent-session", "release-agent")
            for arg in self.argv[1:2]
        )

    def describe(self) -> str:
        """The refusal in one line, as evidence."""
        command = " ".join(["herdr", *self.argv])
        return f"[{self.phase}] the herdr CLI refused `{command}` (exit {self.exit}): {self.error}"


@dataclass
class TurnTiming:
    """How long one prompt took to be answered on screen (None: not within the bound)."""

    label: str
    started: float
    elapsed: float | None
    bound: float


@dataclass
class Observed:
    """Everything a check saw, for the rules to judge."""

    options: CheckOptions
    cwd: str
    path: str
    log: ReportLog
    marks: dict[str, tuple[int, float]] = field(default_factory=dict)
    timeline: list[Evidence] = field(default_factory=list)
    outside: list[Outside] = field(default_factory=list)
    baseline: TurnTiming | None = None
    faulted_turns: list[TurnTiming] = field(default_factory=list)
    running_after_faults: bool | None = None
    exited: bool | None = None
    restored_processes: list[dict[str, Any]] = field(default_factory=list)
    restored_pane_cwd: str | None = None
    screens: dict[str, str] = field(default_factory=dict)
    #: command lines the simulated ``herdr`` refused in the agent's panes (never sent)
    cli_refusals: list[CliRefusal] = field(default_factory=list)
    #: why the in-Herdr part stopped early (None: it ran to its end)
    aborted: str | None = None

    def mark_index(self, name: str) -> int | None:
        """The report index at a mark (None: the mark was never reached)."""
        mark = self.marks.get(name)
        return None if mark is None else mark[0]

    def between(self, start: str, end: str | None = None) -> list[Report]:
        """The reports from mark ``start`` up to mark ``end`` (or the end)."""
        first = self.mark_index(start)
        if first is None:
            return []
        last = self.mark_index(end) if end is not None else None
        return self.log.snapshot()[first:last]


class _Abort(Exception):
    """The agent did not get far enough for the next phase."""


def _is_key(item: str) -> bool:
    try:
        keys.parse_key(item)
    except keys.InvalidKeyError:
        return False
    return True


def _encode(items: Sequence[str]) -> bytes:
    return b"".join(keys.encode_keys([i]) if _is_key(i) else i.encode() for i in items)


def _wait(predicate: Callable[[], Any], timeout: float) -> Any:
    """The first truthy value of ``predicate`` within ``timeout`` seconds, else None."""
    deadline = Deadline(timeout)
    while True:
        value = predicate()
        if value or deadline.expired():
            return value or None
        time.sleep(_POLL)


def _read_until_quiet(child: pexpect.spawn[bytes], out: bytearray, timeout: float) -> None:
    """Collect output until some arrived and then none for ``SETTLE`` s, or ``timeout``, or EOF."""
    deadline = Deadline(timeout)
    while (remaining := deadline.left()) > 0:
        wait = min(SETTLE, remaining) if out else remaining
        try:
            out.extend(child.read_nonblocking(65536, timeout=wait))
        except pexpect.TIMEOUT:
            if out:
                return
        except pexpect.EOF:
            return


def _read_until_exit(child: pexpect.spawn[bytes], out: bytearray, timeout: float) -> bool:
    """Collect output until the pty ends, then whether the child exited, all within ``timeout``.

    pexpect's own wait after end-of-output blocks without bound, so the exit is awaited on a
    pidfd (readable once the child is a zombie) before pexpect reaps it.
    """
    deadline = Deadline(timeout)
    try:
        child.expect(pexpect.EOF, timeout=timeout)
    except pexpect.TIMEOUT:
        return False
    finally:
        out.extend(child.before or b"")
    assert child.pid is not None  # set by a successful spawn
    pidfd = os.pidfd_open(child.pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(deadline.left() * 1000):
            return False
    finally:
        os.close(pidfd)
    return not child.isalive()


class _Driver:
    def __init__(self, options: CheckOptions, workdir: Path) -> None:
        self.o = options
        self.workdir = workdir
        self.log = ReportLog()
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("HERDR_") or key.startswith("HERDR_SIM_")
        }
        self.env.pop("HERDR_SIM_WIRE_LOG", None)
        self.env.update(options.agent_env)
        cwd = options.cwd or workdir / "work"
        cwd.mkdir(parents=True, exist_ok=True)
        self.seen = Observed(
            options=options,
            cwd=os.path.realpath(cwd),
            path=self.env.get("PATH", os.defpath),
            log=self.log,
        )
        self.socket = workdir / "s" / "herdr.sock"
        self.sim: Simulator | None = None
        self.pane = ""

    # -- bookkeeping ---------------------------------------------------------------------------

    def note(self, text: str, screen: str | None = None) -> None:
        self.seen.timeline.append(Evidence(f"[{self.log.phase}] {text}", self.log.now(), screen))

    def mark(self, name: str) -> int:
        index = self.log.mark()
        self.seen.marks[name] = (index, self.log.now())
        return index

    # -- outside Herdr -------------------------------------------------------------------------

    def outside(self) -> None:
        from herdr_sim.host.cli_install import install_cli

        self.log.phase = "outside"
        base = self.workdir / "o"
        cli = install_cli(base / "bin")
        variants = [
            (
                "HERDR_ENV unset (the other HERDR_* variables set)",
                {
                    "HERDR_PANE_ID": "w1:p1",
                    "HERDR_WORKSPACE_ID": "w1",
                    "HERDR_TAB_ID": "w1:t1",
                },
            ),
            ("HERDR_ENV=1 but HERDR_PANE_ID unset", {"HERDR_ENV": "1"}),
        ]

        def one(number: int, label: str, extra: dict[str, str]) -> Outside:
            recorder = SocketRecorder(base / f"r{number}.sock", self.log.t0)
            env = dict(self.env)
            env.update(extra)
            env["HERDR_SOCKET_PATH"] = str(recorder.path)
            env["HERDR_BIN_PATH"] = str(cli)
            env["PATH"] = f"{Path(cli).parent}{os.pathsep}{env.get('PATH', os.defpath)}"
            try:
                output, exited = self._run_in_own_pty(env)
                _wait(recorder.seen, 0.3)
            finally:
                recorder.close()
            shown = {k: v for k, v in env.items() if k.startswith("HERDR_")}
            return Outside(label, shown, recorder.seen(), output, exited)

        # the runs are independent (each its own pty and recorder) and mostly wait for the
        # agent's screen to settle: run them side by side, which halves the phase's time
        for label, _ in variants:
            self.note(f"run outside Herdr: {label}")
        with ThreadPoolExecutor(max_workers=len(variants)) as pool:
            runs = [
                pool.submit(one, n, label, extra) for n, (label, extra) in enumerate(variants, 1)
            ]
            self.seen.outside.extend(run.result() for run in runs)

    def _run_in_own_pty(self, env: dict[str, str]) -> tuple[str, bool]:
        """Run the agent in a 100x30 pty as a terminal would; its output and whether it exited.

        pexpect drives it: wait until the first screen settles, type the prompt, wait until
        the answer settles, type the exit keys, then expect the end of output and the exit.
        """
        try:
            child: pexpect.spawn[bytes] = pexpect.spawn(
                self.o.argv[0],
                list(self.o.argv[1:]),
                cwd=self.seen.cwd,
                env=env,
                dimensions=(30, 100),
                encoding=None,  # bytes: the output is decoded once, leniently
                use_poll=True,  # the simulator's process may hold fds above 1023
                preexec_fn=default_signal_state,
            )
        except (OSError, pexpect.ExceptionPexpect) as exc:
            return f"could not start: {exc}", False
        out = bytearray()
        exited = False
        try:
            _read_until_quiet(child, out, self.o.timeout)
            child.send(self.o.prompt.encode() + b"\r")
            _read_until_quiet(child, out, 3.0)
            child.send(_encode(self.o.exit_keys))
            exited = _read_until_exit(child, out, 5.0)
        except OSError:
            exited = not child.isalive()
        finally:
            if child.isalive() and child.pid is not None:
                # the agent leads its own session: end its whole process group
                with contextlib.suppress(OSError):
                    os.killpg(child.pid, signal.SIGKILL)
            child.close(force=True)
        return out.decode(errors="replace"), exited

    # -- the simulator -------------------------------------------------------------------------

    def start_sim(self) -> Simulator:
        # the agent under check is a real one: like Herdr's panes, it sees the HOME it was
        # given (agent_env), not the fake agents' sandbox (herdr_sim/services/agent_home.py)
        settings = {"fake_agents": False, **self.o.settings}
        settings.update(socket_path=self.socket, persist=True, base_env=self.env)
        sim = Simulator(**settings)
        sim.wire_taps.extend(self.o.wire_taps)
        self.log.attach(sim)
        self.sim = sim.start()
        return self.sim

    def stop_sim(self) -> None:
        if self.sim is not None:
            self.collect_cli_refusals(self.sim)
            self.sim.stop()
            self.sim = None

    def collect_cli_refusals(self, sim: Simulator) -> None:
        """Keep what ``sim``'s CLI refused (its runtime directory goes when it stops)."""
        for item in sim.cli_refusals:
            t = float(item.get("monotonic", 0.0)) - self.log.t0
            phase = next(
                (name for name, (_, at) in sorted(self.seen.marks.items(), key=lambda m: -m[1][1])
                 if at <= t),
                "",
            )  # fmt: skip
            argv = [str(arg) for arg in item.get("argv", [])]
            refusal = CliRefusal(t, phase, argv, int(item.get("exit", 1)), str(item.get("error")))
            self.seen.cli_refusals.append(refusal)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        assert self.sim is not None
        response = self.sim.call(method, params)
        if "error" in response:
            raise _Abort(f"{method} failed: {response['error']}")
        result: dict[str, Any] = response["result"]
        return result

    def screen(self) -> str:
        text: str = self.call("pane.read", pane_id=self.pane, source="visible")["read"]["text"]
        return text

    def send(self, items: Sequence[str]) -> None:
        for item in items:
            if _is_key(item):
                self.call("pane.send_keys", pane_id=self.pane, keys=[item])
            else:
                self.call("pane.send_text", pane_id=self.pane, text=item)

    def type_line(self, text: str) -> str:
        """Type ``text`` (until it shows, at most 1 s), then Enter; the screen before Enter."""
        self.call("pane.send_text", pane_id=self.pane, text=text)
        tail = text[-20:].strip()
        _wait(lambda: tail in self.screen(), 1.0)
        before = self.screen()
        self.call("pane.send_keys", pane_id=self.pane, keys=["Enter"])
        return before

    def settled(self, before: str, timeout: float) -> float | None:
        """Seconds from now until the screen changed from ``before`` and then stayed
        unchanged for :data:`SETTLE`; None if that did not happen within ``timeout``."""
        start = time.monotonic()
        deadline = start + timeout
        last, changed_at = before, None
        while time.monotonic() < deadline:
            now_screen = self.screen()
            now = time.monotonic()
            if now_screen != last:
                last, changed_at = now_screen, now
            elif changed_at is not None and now - changed_at >= SETTLE:
                return changed_at - start
            time.sleep(_POLL)
        return None

    def running(self) -> bool:
        """A job other than the shell is in the pane's foreground."""
        assert self.sim is not None
        pane = self.pane
        return self.sim.run_in_loop(lambda rt: rt.agent_job(rt.pane(pane)) is not None)

    def wait_report(
        self, predicate: Callable[[Report], bool], since: int, timeout: float | None = None
    ) -> Report | None:
        return self.log.wait_for(predicate, since=since, timeout=timeout or self.o.timeout)

    def start_agent(self, name: str) -> None:
        """Type the agent command at the pane's shell; wait for its first report."""
        since = self.mark(f"{name}.start")
        command = shlex.join(self.o.argv)
        self.note(f"type the agent command: {command}")
        before = self.type_line(command)

        def started() -> Report | str | None:
            hit = self.log.wait_for(lambda r: True, since=since, timeout=0.2)
            return hit or not_found_line(self.screen(), self.o.argv[0], shell_only=True)

        first = _wait(started, self.o.timeout)
        if not isinstance(first, Report):
            screen = self.screen()
            self.seen.screens[name] = screen
            if first is not None:
                self.note(f"the shell could not start the agent: {first}", screen)
                raise _Abort(f"the shell could not start the agent: {first}")
            self.note(f"no report within {self.o.timeout:g}s of starting the agent", screen)
            raise _Abort(f"the agent did not report within {self.o.timeout:g}s of its start")
        self.wait_report(lambda r: r.state == "idle", since, timeout=min(self.o.timeout, 3.0))
        self.settled(before, 3.0)
        self.mark(f"{name}.ready")

    def prompt_turn(self, label: str, bound: float) -> TurnTiming:
        """Type the prompt; how long (from the first key) until its answer settled."""
        started, typing = self.log.now(), time.monotonic()
        before = self.type_line(self.o.prompt)
        typed = time.monotonic() - typing
        answered = self.settled(before, max(0.0, bound - typed) + SETTLE)
        elapsed = None if answered is None else typed + answered
        timing = TurnTiming(label, started, elapsed, bound)
        shown = "not answered" if elapsed is None else f"answered in {elapsed:.2f}s"
        self.note(f"prompt ({label}): {shown}")
        return timing

    # -- the story -----------------------------------------------------------------------------

    def inside(self) -> None:
        rules = self.o.rules
        do_faults = "non-blocking" in rules
        do_prompt = bool(rules & {"turn", "states", "source", "seq"}) or do_faults
        do_question = "blocked" in rules and self.o.question_prompt is not None
        do_new = "resume" in rules and self.o.new_session_prompt is not None
        do_restore = "restore" in rules
        do_restart = bool(rules & {"seq", "resume"}) or ("release" in rules and do_restore)
        do_exit = do_restart or "release" in rules

        self.log.phase = "run1"
        sim = self.start_sim()
        self.note(f"simulator on {sim.socket_path}")
        created = self.call("workspace.create", cwd=self.seen.cwd)
        self.pane = created["root_pane"]["pane_id"]
        _wait(lambda: self.screen().strip(), self.o.timeout)
        self.start_agent("run1")
        if do_prompt:
            self.mark("prompt")
            self.seen.baseline = self.prompt_turn("baseline", self.o.timeout)
            since = self.seen.mark_index("prompt") or 0
            self.wait_report(lambda r: r.state == "idle", since, timeout=2.0)
        if do_question:
            self.question()
        if do_new:
            since = self.mark("new-session")
            assert self.o.new_session_prompt is not None
            self.note(f"session change: {self.o.new_session_prompt!r}")
            before = self.type_line(self.o.new_session_prompt)
            self.wait_report(lambda r: r.resume_argv is not None, since, timeout=3.0)
            self.settled(before, 2.0)
            self.mark("new-session.end")
        if do_faults:
            self.faults()
        if do_exit:
            self.exit_agent("exit1")
        if do_restart:
            self.log.phase = "run2"
            self.start_agent("run2")
        if do_restore:
            self.restore()

    def question(self) -> None:
        assert self.o.question_prompt is not None
        since = self.mark("question")
        self.note(f"question prompt: {self.o.question_prompt!r}")
        before = self.type_line(self.o.question_prompt)
        blocked = self.wait_report(lambda r: r.state == "blocked", since)
        screen = self.screen()
        self.seen.screens["question"] = screen
        if blocked is None:
            self.note("no blocked report", screen)
            self.settled(before, 2.0)
            self.mark("question.end")
            return
        self.settled(before, 2.0)
        since = self.mark("answer")
        self.note(f"answer: {self.o.answer!r}")
        before = self.type_line(self.o.answer)
        self.wait_report(lambda r: r.state == "idle", since)
        self.settled(before, 2.0)
        self.mark("question.end")

    def faults(self) -> None:
        sim = self.sim
        assert sim is not None
        base = self.seen.baseline
        baseline = base.elapsed if base is not None and base.elapsed is not None else 1.0
        bound = baseline + SLOW_ALLOWANCE
        for name, kwargs in (
            ("slow", {"delay": SLOW_DELAY}),
            ("refused", {"drop": "before"}),
        ):
            if any(t.elapsed is None or t.elapsed > t.bound for t in self.seen.faulted_turns):
                break  # already too slow: the rule fails, spare the rest of the wait
            self.mark(name)
            self.note(
                f"socket {name}: every report "
                + (f"delayed {SLOW_DELAY:g}s" if name == "slow" else "dropped unanswered")
            )
            self.log.fault_active = True
            armed = [sim.faults.add(method, **kwargs) for method in REPORT_METHODS]
            try:
                for number in (1, 2):
                    timing = self.prompt_turn(f"{name} #{number}", bound)
                    self.seen.faulted_turns.append(timing)
                    if timing.elapsed is None or timing.elapsed > bound:
                        break
            finally:
                for fault in armed:
                    sim.faults.remove(fault)
                self.log.fault_active = False
        # connections read while the socket was slow are still held by the server; whatever
        # they carry is marked faulted (read time), so the rules can set it aside
        since = self.mark("recovered")
        self.note("socket healthy again")
        self.seen.running_after_faults = self.running()
        self.prompt_turn("recovered", self.o.timeout)
        self.wait_report(lambda r: r.state == "idle" and not r.faulted, since, timeout=SLOW_DELAY)
        self.mark("faults.end")

    def exit_agent(self, name: str, judged: bool = True) -> None:
        """Type the exit keys and wait for the shell; when the ``release`` rule judges this
        exit (``judged``), give the agent 1 s more to send its release."""
        since = self.mark(name)
        self.note(f"exit keys: {list(self.o.exit_keys)}")
        self.send(self.o.exit_keys)
        gone = _wait(lambda: not self.running(), self.o.timeout)
        self.seen.exited = bool(gone)
        if not gone:
            screen = self.screen()
            self.seen.screens[name] = screen
            self.note("the agent is still running after the exit keys", screen)
            raise _Abort("the agent did not exit on the exit keys")
        self.note("the agent exited; the shell is back")
        if judged:
            self.wait_report(lambda r: r.method == "pane.release_agent", since, timeout=1.0)
        self.mark(f"{name}.end")

    def restore(self) -> None:
        self.mark("restore.stop")
        self.note("stop the session (the agent still running)")
        self.stop_sim()
        self.log.phase = "restore"
        since = self.mark("restore.start")
        sim = self.start_sim()
        self.note(f"session started again on {sim.socket_path}")
        report = self.wait_report(lambda r: True, since)
        screen = self.screen()
        self.seen.screens["restore"] = screen
        if report is None:
            self.note(f"no report within {self.o.timeout:g}s of the restore", screen)
            self.mark("restore.end")
            return
        self.wait_report(lambda r: r.state == "idle", since, timeout=2.0)
        info = self.call("pane.process_info", pane_id=self.pane)["process_info"]
        self.seen.restored_processes = list(info.get("foreground_processes") or [])
        self.seen.restored_pane_cwd = self.call("pane.get", pane_id=self.pane)["pane"].get("cwd")
        self.mark("restore.end")
        with contextlib.suppress(_Abort):
            self.exit_agent("exit3", judged=False)  # only exit1's release is judged


def drive(options: CheckOptions) -> Observed:
    """Run every phase the selected rules need; always clean up."""
    workdir = Path(tempfile.mkdtemp(prefix="hci-", dir="/tmp"))
    driver = _Driver(options, workdir)
    try:
        if "outside-herdr" in options.rules:
            driver.outside()
        if options.rules - {"outside-herdr"}:
            try:
                driver.inside()
            except _Abort as exc:
                driver.seen.aborted = str(exc)
                driver.note(f"stopped early: {exc}")
    finally:
        try:
            driver.stop_sim()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return driver.seen
