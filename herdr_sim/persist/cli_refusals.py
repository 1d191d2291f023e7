"""What the simulator's ``herdr`` CLI refused on its own, before anything reached the socket.

Real Herdr's CLI checks a command line before it connects: ``herdr pane report-agent
--state busy`` exits 1 with "invalid pane agent state" and sends nothing. Watching the
socket, such a report is simply absent, and an integration check would judge only the
reports that did arrive (and pass). So every pane of a simulator gets
:data:`REFUSALS_VARIABLE`, naming a file in the simulator's private runtime directory; the
simulator's CLI appends one JSON line per command line it refused there (:func:`record`),
and :meth:`herdr_sim.Simulator.cli_refusals` reads them back (:func:`read`).

Import-light (the CLI imports it only when it refuses something): ``json``, ``os``, ``time``
and the light file-trust rules.
"""

from __future__ import annotations

import json
import os
import time

from orchestrator.client.file_trust.ownership import open_own_append

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any

__all__ = ["FILE_NAME", "MAX_ARG_CHARS", "REFUSALS_VARIABLE", "read", "record"]

#: the pane variable naming the file the CLI records its refusals in
REFUSALS_VARIABLE = "HERDR_SIM_CLI_REFUSALS"
#: the file's name in the simulator's runtime directory
FILE_NAME = "cli-refusals.jsonl"
#: each recorded argument is cut to this many characters (a pasted blob stays small)
MAX_ARG_CHARS = 200


def record(env: Mapping[str, str], argv: Sequence[str], code: int, message: str) -> None:
    """Append a refusal to the file ``env`` names, if any; never fails the CLI.

    The file is opened without following a symlink and created 0600: only the simulator's
    own runtime directory (0700) is expected to hold it.
    """
    path = env.get(REFUSALS_VARIABLE)
    if not path:
        return
    line = {
        "argv": [arg[:MAX_ARG_CHARS] for arg in argv],
        "exit": code,
        "error": message.strip(),
        "pane_id": env.get("HERDR_PANE_ID"),
        "monotonic": time.monotonic(),
    }
    data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
    try:  # a private log: never through a link, a file of ours only (else not written)
        fd = open_own_append(path, lambda problem, _info: OSError(problem))
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def read(path: Path) -> list[dict[str, Any]]:
    """The refusals recorded in ``path`` (none when it does not exist), oldest first."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    refusals: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            refusals.append(item)
    return refusals
