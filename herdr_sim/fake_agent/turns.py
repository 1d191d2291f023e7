"""A fake agent's turns: the scenario's steps played, persisted and shown.

Why here: a turn is what a real agent does with a prompt (text typed out, tools run, a
question asked, a failure or a crash), written to the session as its agent writes it, and
reported to Herdr as ``working`` then ``idle``; prompts queue and run one at a time on a
worker thread, and Escape or Ctrl+C interrupts the running one.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from .agent_state import TICK as _TICK
from .personas import ANSWER_MARKS, PROMPT_ECHOES
from .reports import Reports
from .scenario import Step, Turn
from .screen import Screen
from .terminal_mode import TerminalMode

__all__ = ["Turns"]


class _Interrupted(Exception):
    """Escape (or Ctrl+C) interrupted the running turn."""


class Turns(Screen, Reports, TerminalMode):
    """Playing the scenario's turns (module docstring)."""

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
            self.leave_screen()
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
