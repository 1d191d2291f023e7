"""The managed-child extension for the simulator's fake pi: the twin of
``herdr-managed-child.ts``, speaking the V4 mailbox as that extension does.

Why: a controller delegates to a managed pi child through a file mailbox. The real child
runs the TypeScript extension; the fake pi runs no TypeScript, so the extension file names
this module in its header (``// fake pi: ...``) and the fake pi loads it from there, as pi
loads the extension its launch installs or names (``herdr_sim.fake_agent.extensions``): the
simulator never imports it of its own accord. The rules are not written again here: this
driver runs the one protocol brain, :class:`orchestrator.managed.child.ManagedChild`,
in-process (imported lazily, only when ``PI_HERDSMAN_MAILBOX`` is set, so an unmanaged
fake starts as fast as before), and maps its actions onto the fake's turns:

* ``start_turn`` (a task, a reply, a control while idle): the text is submitted as a prompt,
  so the next scenario turn runs for it;
* ``steer``: queued, delivered at the next step boundary (shown, and written into the pi
  session as a user message); still queued when the steps end, it continues the operation
  with the next scenario turn, as pi makes another model call for it;
* ``abort_and_start``: the queued steers are dropped, the running step is interrupted (as
  Escape does), and the text runs as the next turn of the same assignment.

The scenario step ``ask_owner`` calls the brain's ``ask`` and ends the turn. The mailbox is
polled every 50 ms.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.managed.child import ManagedChild

__all__ = ["MAILBOX_ENV", "POLL_S", "ManagedMode", "attach"]

#: the variable that makes a pi managed (``orchestrator.managed.env.MAILBOX_ENV``; a test
#: checks they are the same, so this module need not import the orchestrator to look)
MAILBOX_ENV = "PI_HERDSMAN_MAILBOX"
POLL_S = 0.05


class ManagedMode:
    """A running fake pi's managed side: the poll thread, the steer queue and the events."""

    def __init__(
        self,
        child: ManagedChild,
        *,
        submit: Callable[[str], None],
        interrupt: threading.Event,
        deliver: Callable[[str], None],
        say: Callable[[str], None],
    ) -> None:
        self.child = child
        self._submit = submit
        self._interrupt = interrupt
        self._deliver = deliver
        self._say = say
        #: one lock for the brain's calls and the steer queue: a turn's end (queued steers
        #: checked, then ``turn_end``) is atomic against a poll handing steers over
        self.lock = threading.RLock()
        self.steers: list[str] = []
        self._stop = threading.Event()
        self._errors: set[str] = set()
        self._thread: threading.Thread | None = None

    @classmethod
    def attach(
        cls,
        env: Mapping[str, str],
        *,
        session_id: str,
        session_file: str,
        cwd: str,
        pid: int,
        submit: Callable[[str], None],
        interrupt: threading.Event,
        deliver: Callable[[str], None],
        say: Callable[[str], None],
    ) -> ManagedMode | None:
        """Start the managed side when ``env`` makes this pi a managed child (``None``
        otherwise). A broken environment or mailbox is shown and the fake runs unmanaged,
        as the extension leaves a pi with a broken environment unmanaged."""
        if not env.get(MAILBOX_ENV):
            return None
        from orchestrator.managed.child import ManagedChild
        from orchestrator.managed.env import ChildIdentity
        from orchestrator.managed.errors import ManagedAgentError

        try:
            child = ManagedChild(ChildIdentity.from_env(env))
            child.hello(pi_session_id=session_id, pi_session_file=session_file, cwd=cwd, pid=pid)
        except ManagedAgentError as exc:
            say(f"pi-herdsman: not managed: {exc.message}")
            return None
        except OSError as exc:  # the mailbox could not be made (permissions, a full disk)
            say(f"pi-herdsman: not managed: {exc}")
            return None
        mode = cls(child, submit=submit, interrupt=interrupt, deliver=deliver, say=say)
        mode._thread = threading.Thread(target=mode._poll_loop, name="mailbox", daemon=True)
        mode._thread.start()
        return mode

    def stop(self) -> None:
        self._stop.set()

    @contextlib.contextmanager
    def _shown(self) -> Iterator[None]:
        """Show a mailbox failure (once) instead of letting it kill a turn or the poll: the
        mailbox may be gone after the controller's cleanup, or be tampered with."""
        from orchestrator.managed.errors import ManagedAgentError

        try:
            yield
        except ManagedAgentError as exc:
            self._error(exc.message)
        except OSError as exc:
            self._error(str(exc))

    # -- the mailbox -----------------------------------------------------------------------

    def _poll_loop(self) -> None:
        while not self._stop.wait(POLL_S):
            with self._shown():
                self.poll()

    def _error(self, message: str) -> None:
        if message not in self._errors:  # once each: the poll repeats every 50 ms
            self._errors.add(message)
            self._say(f"pi-herdsman: {message}")

    def poll(self) -> None:
        """Take the pending records and apply them to the fake's turns."""
        with self.lock:
            for action in self.child.poll():
                if action.do == "steer":
                    self.steers.append(action.text)
                elif action.do == "abort_and_start":
                    self.steers.clear()
                    self._interrupt.set()
                    self._submit(action.text)
                else:
                    self._submit(action.text)

    # -- the turn's events -----------------------------------------------------------------

    def turn_start(self) -> None:
        with self.lock, self._shown():
            self.child.turn_start()

    def tool_start(self) -> None:
        with self.lock, self._shown():
            self.child.tool_start()

    def boundary(self, *, after_tool: bool) -> None:
        """A step ended: deliver the queued steers (pi's steering boundary)."""
        with self.lock, self._shown():
            delivered = self._deliver_steers()
            if after_tool:
                self.child.tool_end()
            elif delivered:
                self.child.steers_delivered()

    def _deliver_steers(self) -> bool:
        steers, self.steers = self.steers, []
        for text in steers:
            self._deliver(text)
        return bool(steers)

    def settle(self, assistant_text: str | None, *, stopped: bool) -> bool:
        """The steps of a turn ended. With steers still queued (and a normal stop) they are
        delivered and ``True`` says: run the next scenario turn in the same operation.
        Otherwise the turn ends for the brain (which may post the result): ``False``."""
        with self.lock:
            if stopped and self._deliver_steers():
                with self._shown():
                    self.child.steers_delivered()
                return True
            with self._shown():
                self.child.turn_end(assistant_text)
            return False

    def compact(self, reason: str) -> tuple[bool, bool]:
        """pi's ``session_before_compact``: ``(retired, cancel)`` from the brain."""
        with self.lock, self._shown():  # a mailbox failure is shown; the turn goes on
            return self.child.context_pressure(reason)
        return False, False

    def ask(self, question: str) -> tuple[str, bool]:
        """``ask_owner``: the tool's result text and whether it failed."""
        from orchestrator.managed.errors import ManagedAgentError

        with self.lock:
            try:
                ask_id = self.child.ask(question)
            except ManagedAgentError as exc:
                return exc.message, True
        sent = (
            f"Question sent to the owner (ask {ask_id}). The assignment is blocked until the "
            "reply, which resumes it automatically. Stop now."
        )
        return sent, False


#: the fake pi's entry point (``herdr_sim.fake_agent.extensions``): the running extension,
#: or None when this pi is not a managed child
attach = ManagedMode.attach
