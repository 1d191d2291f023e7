"""Private temp directories for test servers, and reclaiming those a killed run left behind.

Each test server lives in a short directory under ``/tmp`` (socket paths are limited to
about 108 bytes) that is removed when the server stops. A pytest run killed with SIGKILL
removes nothing, and its simulators' pane processes keep running. So every directory made
here records its owner (pid and start time, which together name one process for good) in
:data:`OWNER_FILE`, and the first directory a later run makes first reclaims the ones whose
owner is gone: it ends the processes their simulators registered
(:func:`herdr_sim.host.pane_marks.reclaim`), then removes the directory. Only directories of
this user, private (0700), not symlinks, and holding this user's own owner file are
touched; a directory of a run still alive (an xdist sibling, a parallel session) is not.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

__all__ = ["OWNER_FILE", "reclaim_abandoned", "short_dir"]

#: the file in each directory that names the process it belongs to
OWNER_FILE = ".herdr-owner"
#: where the directories are made (short, for socket paths)
ROOT = Path("/tmp")

_reclaimed = False
_reclaim_lock = threading.Lock()


def short_dir(prefix: str = "herdr-") -> Path:
    """A new private (0700) directory under /tmp, short enough for socket paths, whose
    owner is recorded; abandoned ones of earlier runs are reclaimed on the first call."""
    global _reclaimed
    with _reclaim_lock:
        if not _reclaimed:
            _reclaimed = True
            reclaim_abandoned(prefix)
    from herdr_sim.host.procfs import start_ticks

    directory = Path(tempfile.mkdtemp(prefix=prefix, dir=ROOT))
    owner = {"pid": os.getpid(), "start": start_ticks(os.getpid())}
    (directory / OWNER_FILE).write_text(json.dumps(owner))
    (directory / OWNER_FILE).chmod(0o600)
    return directory


def reclaim_abandoned(prefix: str = "herdr-", root: Path = ROOT) -> list[Path]:
    """Remove this user's ``prefix*`` directories under ``root`` whose owner process is
    gone, ending the pane processes their simulators left first; the ones removed."""
    from herdr_sim.host.pane_marks import reclaim
    from herdr_sim.host.procfs import start_ticks
    from orchestrator.client.file_trust.ownership import (
        UntrustedPathError,
        ownership_problem,
        read_own_file,
    )

    removed: list[Path] = []
    try:
        candidates = [entry for entry in root.iterdir() if entry.name.startswith(prefix)]
    except OSError:
        return removed
    for directory in candidates:
        try:
            info = directory.lstat()
            # ours alone, and exactly the 0700 that this module creates
            if ownership_problem(info, kind="directory") or stat.S_IMODE(info.st_mode) != 0o700:
                continue
            raw = read_own_file(directory / OWNER_FILE, "temp dir owner file")
            if raw is None:
                continue
            owner = json.loads(raw)
            pid, start = int(owner["pid"]), owner.get("start")
        except (OSError, UntrustedPathError, ValueError, KeyError, TypeError):
            continue
        current = start_ticks(pid)
        if current is not None and (start is None or current == start):
            continue  # its run is still going
        for registry in directory.glob("*.processes"):
            with contextlib.suppress(OSError):
                reclaim(registry)
        shutil.rmtree(directory, ignore_errors=True)
        removed.append(directory)
    return removed
