"""One implementation of each file primitive: only ``orchestrator.client.file_trust`` does them.

Why a test: atomic replace, create-once publish and lock files were written by hand in a
dozen modules, and the copies drifted (one followed a link, one left a file at the umask's
mode, one skipped the fsync its readers relied on). The primitives now live in
:mod:`orchestrator.client.file_trust` (``private_files``: ``write_atomic``,
``publish_new``, ``open_regular``, ``read_bounded``; ``locks``: ``held``, ``acquire``,
``open_lock_file``; ``ownership``: ``open_own_append``). This test walks every module of the
three packages with ``ast`` and fails on a hand-written copy elsewhere: an ``os.open`` that
creates (``O_CREAT`` / ``O_EXCL``), ``os.replace``/``os.rename``/``os.link``, a path's
one-argument ``.replace(...)`` / ``.rename(...)``, ``fcntl.flock`` and ``tempfile.mkstemp``.
What remains outside is listed below with why it is not one of the primitives.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("orchestrator", "herdr_sim", "pytest_herdr")
HOME = "orchestrator/client/file_trust/"

#: ``path:call`` → why it is not a file primitive (or not one of ours)
ALLOWED: dict[str, str] = {
    "orchestrator/managed/mailbox.py:os.link": (
        "moves a delivered record between two of the box's directories (link, then unlink "
        "the old name): a move of an existing file, not a new file's creation"
    ),
    "orchestrator/agent_tools/slots.py:.rename": (
        "a queue ticket enters the queue already locked: made under a hidden name, locked "
        "(file_trust.locks), then renamed in; the rename is the queue's protocol"
    ),
    "herdr_sim/real_agents/install.py:.rename": (
        "a finished npm install directory is renamed into the cache: a directory, complete "
        "before it gets its name"
    ),
    "orchestrator/pipeline/audit.py:.replace": (
        "log rotation renames audit.log to audit.log.1 (and older ones up): a rename of "
        "finished logs, not a write"
    ),
}

_CALLS = {
    ("os", "replace"),
    ("os", "rename"),
    ("os", "link"),
    ("fcntl", "flock"),
    ("tempfile", "mkstemp"),
}


#: a call of an attribute :func:`_finding` could name, found in the text before parsing
_MAY_CALL = re.compile(r"\.\s*(?:replace|rename|link|flock|mkstemp|open)\s*\(")


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _finding(call: ast.Call) -> str | None:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = _dotted(func.value)
    if (owner, func.attr) in _CALLS:
        return f"{owner}.{func.attr}"
    if owner == "os" and func.attr == "open" and len(call.args) >= 2:
        flags = ast.unparse(call.args[1])
        if "O_CREAT" in flags or "O_EXCL" in flags:
            return "os.open"
        return None
    one_path_arg = len(call.args) == 1 and not call.keywords
    if func.attr in ("replace", "rename") and one_path_arg and owner != "dataclasses":
        return f".{func.attr}"
    return None


@cache  # two tests read it (neither changes it)
def _findings() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(HOME):
                continue
            source = path.read_text(encoding="utf-8")
            if not _MAY_CALL.search(source):
                continue  # no call of any of those names: nothing to parse for
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Call) and (what := _finding(node)) is not None:
                    found.setdefault(f"{relative}:{what}", []).append(node.lineno)
    return found


def test_file_primitives_are_written_once_in_file_trust() -> None:
    copies = {key: lines for key, lines in _findings().items() if key not in ALLOWED}
    assert copies == {}, (
        "a file primitive written by hand outside orchestrator/client/file_trust (use "
        "write_atomic, publish_new, open_regular or locks.held there, or list it in ALLOWED "
        f"with why it is not one): {copies}"
    )


def test_the_allowlist_names_only_what_is_still_there() -> None:
    assert sorted(set(ALLOWED) - set(_findings())) == []


def test_the_walk_finds_a_hand_written_copy() -> None:
    """The detector itself: each shape it must catch, and the look-alikes it must not."""
    caught = [
        "os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)",
        "os.replace(a, b)",
        "fcntl.flock(fd, fcntl.LOCK_EX)",
        "tempfile.mkstemp(dir=d)",
        "Path(t).replace(target)",
        "staging.rename(directory)",
    ]
    ignored = [
        "os.open(p, os.O_RDONLY | os.O_NOFOLLOW)",
        "text.replace('a', 'b')",
        "dataclasses.replace(config)",
        "catalog.rename(profile_id, label)",
    ]
    for source in caught:
        call = ast.parse(source, mode="eval").body
        assert isinstance(call, ast.Call) and _finding(call) is not None, source
    for source in ignored:
        call = ast.parse(source, mode="eval").body
        assert isinstance(call, ast.Call) and _finding(call) is None, source
