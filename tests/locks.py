"""The locked dependency sets (``.ci/locks``) read back: their pins, and those pins as a plain
constraints file for a test that installs the package the way a user does (``pip install
PATH``) yet must not resolve today's releases (pip refuses hashes on a directory install, so a
constraint there carries the version alone)."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.utils import canonicalize_name

__all__ = ["LOCKS", "constraints_file", "pins"]

LOCKS = Path(__file__).resolve().parents[1] / ".ci" / "locks"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def pins(lock: str) -> dict[str, str]:
    """``{canonical name: version}`` of ``.ci/locks/<lock>``; every pin must be followed by a
    hash (an AssertionError names the one that is not)."""
    lines = (LOCKS / lock).read_text().splitlines()
    found: dict[str, str] = {}
    for index, line in enumerate(lines):
        match = PIN.match(line)
        if match is None:
            continue
        name = canonicalize_name(match[1])
        assert name not in found, f"{lock}: {name} is pinned twice"
        following = lines[index + 1] if index + 1 < len(lines) else ""
        assert "--hash=sha256:" in following, f"{lock}: {name}=={match[2]} has no hash"
        found[name] = match[2]
    assert found, f"{lock} pins nothing"
    return found


def constraints_file(lock: str, destination: Path) -> Path:
    """Write ``lock``'s pins, versions only, to ``destination``."""
    destination.write_text("".join(f"{name}=={v}\n" for name, v in sorted(pins(lock).items())))
    return destination
