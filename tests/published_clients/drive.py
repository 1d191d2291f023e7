"""The test side of the published-clients tier: start ``driver.py`` under the published
clients' Python 3.13 virtualenv and exchange one JSON line each way per request, every wait
bounded (a stuck client fails the test; it never hangs the run)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.waits import SCALE

DRIVER = Path(__file__).with_name("driver.py")
#: the libraries and modes the driver speaks (see driver.py)
LIBS = ("sdk", "sdk_async", "client", "client_async")


def published_python() -> Path:
    """The virtualenv's interpreter that ``.ci/install-published-clients`` builds."""
    base = os.environ.get("PYTEST_HERDR_PUBLISHED_DIR")
    root = Path(base) if base else Path.home() / ".cache" / "pytest-herdr" / "published-clients"
    return root / "venv" / "bin" / "python"


class Driver:
    """One running driver process; :meth:`ask` sends a request and returns its answer."""

    def __init__(self, python: Path) -> None:
        self._proc = subprocess.Popen(
            [str(python), "-u", str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()

    def _pump(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put("")

    def send(self, request: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()

    def receive(self, timeout: float = 30.0) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout * SCALE)
        except queue.Empty:
            raise TimeoutError(f"the driver gave no answer in {timeout * SCALE:.0f} s") from None
        if not line:
            raise RuntimeError(f"the driver exited (status {self._proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        self.send(request)
        return self.receive(timeout)

    def call(
        self, lib: str, socket: Path, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Call ``method`` through ``lib`` (see :data:`LIBS`)."""
        request = {"op": "call", "lib": lib, "socket": str(socket), "method": method}
        return self.ask({**request, "params": params or {}})

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        self._pump_thread.join(timeout=10)  # it ends at the pipe's EOF
        if self._proc.stdout is not None:
            self._proc.stdout.close()
