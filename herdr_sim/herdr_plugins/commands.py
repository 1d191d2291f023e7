"""Running one plugin command the way Herdr does (``src/app/api/plugins/runtime.rs``).

An action's ``command`` is an argv list, never a shell string: the program runs directly in
the plugin directory, a relative program with a slash (``./run.sh``) resolved against it
(``src/plugin_command.rs``), stdin closed and stdout/stderr captured, 64 KiB of each kept
(``read_capped_plugin_output``). The simulator also gives the command its own session and
kills that process group if the run is cancelled (the simulator stopping), so nothing a
plugin started outlives the simulator that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OUTPUT_MAX_BYTES", "CommandResult", "resolve_program", "run_command"]

#: Herdr keeps this much of each stream (``PLUGIN_COMMAND_OUTPUT_MAX_BYTES``)
OUTPUT_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class CommandResult:
    """How a command ended: ``exit_code`` None when it could not start or a signal ended it
    (Rust's ``ExitStatus::code()``), ``error`` set when it could not start."""

    exit_code: int | None
    stdout: str
    stderr: str
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        """Herdr's rule: no error and exit code 0."""
        return self.error is None and self.exit_code == 0


def resolve_program(command: list[str], cwd: Path) -> list[str]:
    """``command`` with a relative program that has a slash made relative to ``cwd``."""
    program = command[0]
    if "/" in program and not program.startswith("/"):
        program = str(cwd / program.removeprefix("./"))
    return [program, *command[1:]]


async def _read_capped(stream: asyncio.StreamReader | None) -> str:
    """A stream read to its end, keeping the first 64 KiB and saying when it cut."""
    if stream is None:
        return ""
    kept = bytearray()
    truncated = False
    while chunk := await stream.read(8192):
        room = OUTPUT_MAX_BYTES - len(kept)
        kept += chunk[: max(room, 0)]
        truncated = truncated or len(chunk) > room
    text = kept.decode("utf-8", "replace")
    if truncated:
        text += f"\n[herdr truncated plugin output after {OUTPUT_MAX_BYTES} bytes]"
    return text


async def run_command(command: list[str], cwd: Path, env: dict[str, str]) -> CommandResult:
    """Run ``command`` (an argv list) in ``cwd`` with exactly ``env`` until it ends."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *resolve_program(command, cwd),
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(None, "", "", str(exc))
    try:
        stdout, stderr, code = await asyncio.gather(
            _read_capped(proc.stdout), _read_capped(proc.stderr), proc.wait()
        )
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        raise
    return CommandResult(code if code >= 0 else None, stdout, stderr)
