"""A fake agent's keys: typed text, Enter, Escape, pastes, and the slash commands."""

from __future__ import annotations

import os

from .scenario import Step, Turn
from .turns import Turns

__all__ = ["KeyInput"]


class KeyInput(Turns):
    """Reading the fake agent's keys (module docstring)."""

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
