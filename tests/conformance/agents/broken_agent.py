"""A small line-mode agent whose Herdr integration follows the guide, except for one fault.

Run as ``broken_agent.py [--fault NAME] [--resume SESSION]``. Without ``--fault`` it is a
correct third-party integration (the conformance checker must pass it); each fault breaks
one rule of the guide the way a sloppy integration would:

``outside``       reports whenever ``HERDR_SOCKET_PATH`` is set, ignoring ``HERDR_ENV``
``seq``           counts ``seq`` from 1 in every process (not increasing across restarts)
``herdr-source``  reports with source ``herdr:broken-agent``
``bad-resume``    reports its resume command with an absolute path as first word
``no-release``    exits without releasing the pane
``blocking``      sends each report synchronously and waits for the answer, no timeout
``no-restore``    does not report when started by its resume command
``stuck-working`` after a question's answer reports idle, then working again (left working)
``resume-always`` sends its (absolute, so refused) resume command with every idle report
``cli-busy``      reports ``working`` with ``herdr pane report-agent --state busy`` (the
                  ``herdr`` CLI refuses it locally: exit 1, nothing reaches the socket)

``late`` is no fault: after a question's answer its ``working`` report reaches Herdr after
the ``idle`` that follows it (background reports race), so Herdr ignores it as stale and
the pane is idle, as it should be.

Input: a line is a prompt (working, ``ok``, idle); ``/ask QUESTION`` asks and waits for the
answer line (blocked); ``/new`` switches to a new session; ``/exit`` exits. Reports go to
``$HERDR_SOCKET_PATH`` directly, one JSON line per connection, like Herdr's protocol.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

FAULTS = (
    "outside",
    "seq",
    "herdr-source",
    "bad-resume",
    "no-release",
    "blocking",
    "no-restore",
    "stuck-working",
    "resume-always",
    "cli-busy",
    "late",
)


class Agent:
    """The agent's reports; its screen is plain lines on stdout."""

    def __init__(self, fault: str | None, resume: str | None) -> None:
        self.fault = fault
        self.resumed = resume is not None
        self.session = resume or uuid.uuid4().hex
        self.where = self._herdr()
        self.source = "herdr:broken-agent" if fault == "herdr-source" else "broken-agent"
        self.seq = 0 if fault == "seq" else time.time_ns() // 1000
        self.jobs: queue.Queue[bytes | None] = queue.Queue()
        self.worker = threading.Thread(target=self._run, daemon=True)
        self.worker.start()
        self.quiet = fault == "no-restore" and self.resumed
        #: hold the next report back and send it after the one that follows (``late``)
        self.hold = False
        self.held: bytes | None = None

    def _herdr(self) -> tuple[str, str] | None:
        env = os.environ
        sock, pane = env.get("HERDR_SOCKET_PATH", ""), env.get("HERDR_PANE_ID", "")
        if self.fault == "outside":
            return (sock, pane or "w1:p1") if sock else None
        if env.get("HERDR_ENV") != "1" or not sock or not pane:
            return None
        return sock, pane

    def resume_argv(self) -> list[str]:
        absolute = self.fault in ("bad-resume", "resume-always")
        first = str(Path(sys.argv[0]).resolve()) if absolute else "broken-agent"
        argv = [first]
        if self.fault:
            argv += ["--fault", self.fault]
        return [*argv, "--resume", self.session]

    def report(self, method: str, **params: Any) -> None:
        if self.where is None or self.quiet:
            return
        self.seq += 1
        body: dict[str, Any] = {
            "pane_id": self.where[1],
            "source": self.source,
            "agent": "broken-agent",
        }
        body.update(params, seq=self.seq)
        line = {"id": f"broken-agent:{self.seq}", "method": method, "params": body}
        data = (json.dumps(line) + "\n").encode()
        if self.hold:
            self.held, self.hold = data, False
            return
        if self.held is not None:  # the held report goes out after this one
            self.jobs.put(data)
            data, self.held = self.held, None
        if self.fault == "blocking":
            self._send(data, None)
        else:
            self.jobs.put(data)

    def state(self, state: str, **extra: Any) -> None:
        if self.fault == "cli-busy" and state == "working" and self.where is not None:
            self.seq += 1
            where = ["pane", "report-agent", self.where[1], "--source", self.source]
            argv = ["herdr", *where, "--agent", "broken-agent", "--state", "busy"]
            argv += ["--seq", str(self.seq)]
            subprocess.run(argv, capture_output=True, check=False, timeout=10)
            return
        if self.fault == "resume-always" and state == "idle" and "resume_argv" not in extra:
            extra.update(agent_session_id=self.session, resume_argv=self.resume_argv())
        self.report("pane.report_agent", state=state, **extra)

    def session_report(self) -> None:
        self.state("idle", agent_session_id=self.session, resume_argv=self.resume_argv())

    def _send(self, data: bytes, timeout: float | None) -> None:
        assert self.where is not None
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(timeout)
                conn.connect(self.where[0])
                conn.sendall(data)
                conn.recv(4096)
        except OSError:
            pass

    def _run(self) -> None:
        while True:
            data = self.jobs.get()
            if data is None:
                return
            self._send(data, 0.5)

    def close(self) -> None:
        self.jobs.put(None)
        self.worker.join(2.0)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault", choices=FAULTS)
    parser.add_argument("--resume")
    args = parser.parse_args()
    agent = Agent(args.fault, args.resume)
    print(f"broken-agent session {agent.session}", flush=True)
    agent.session_report()
    while True:
        print("> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line or line.strip() == "/exit":
            break
        text = line.strip()
        if text == "/new":
            agent.session = uuid.uuid4().hex
            print(f"new session {agent.session}", flush=True)
            agent.session_report()
        elif text.startswith("/ask "):
            agent.state("working")
            question = text[5:]
            agent.state("blocked", message=question)
            print(f"? {question}", flush=True)
            answer = sys.stdin.readline().strip()
            if args.fault == "late":
                agent.hold = True  # the working report is sent after the idle one
            agent.state("working")
            print(f"answered {answer}; ok", flush=True)
            agent.state("idle")
            if args.fault == "stuck-working":
                agent.state("working")
        elif text:
            agent.state("working")
            print("ok", flush=True)
            agent.state("idle")
    if args.fault != "no-release":
        agent.report("pane.release_agent")
    agent.close()
    print("bye", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
