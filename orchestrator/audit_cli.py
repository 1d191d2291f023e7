"""``herdr-orchestrator audit``: print the last lines of the audit log, and follow it.

The log is the configured state directory's (:mod:`orchestrator.pipeline.audit`), so the command
reads the same configuration as the servers (file and ``HERDR_ORCHESTRATOR_*``). Lines are
printed as written: JSON, one call each, with no secret in them to hide.
"""

from __future__ import annotations

import contextlib
import os
import sys

from orchestrator.client.file_trust.private_files import UnsafeFile
from orchestrator.core.config import ConfigError, load_config
from orchestrator.pipeline import audit


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def print_audit(lines: int, *, follow: bool = False) -> int:
    """Print the last ``lines`` lines; with ``follow``, then every new one until interrupted.
    Exit status 0, or 1 when the configuration or the log cannot be read."""
    try:
        path = audit.audit_path(load_config(os.environ).state_dir)
        end = audit.size_of(path)  # printed up to here, followed from here: no line twice
        for line in audit.last_lines(path, lines, end=end):
            _emit(line)
        if follow:
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends a follow
                audit.follow(path, _emit, keep_going=lambda: True, since=end)
    except (ConfigError, UnsafeFile) as exc:
        sys.stderr.write(f"herdr-orchestrator audit: {exc}\n")
        return 1
    return 0


__all__ = ["print_audit"]
