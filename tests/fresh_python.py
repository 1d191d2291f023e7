"""Run a few lines in a fresh ``python -S`` at the repository root and read what they print.

The import-cost tests ask a new interpreter (no ``site``, so nothing but the code itself
loads) which modules an import pulled into ``sys.modules``; test_wire and
test_protocol_facts share this runner.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["fresh_python"]

ROOT = Path(__file__).resolve().parents[1]


def fresh_python(code: str) -> list[str]:
    """The stdout lines of ``code`` run by ``python -S -c`` in the repository root."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.splitlines()
