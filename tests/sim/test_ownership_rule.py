"""The one "ours alone" rule every package uses:
:func:`orchestrator.client.file_trust.ownership.ownership_problem`.

The plugin loader, the agent home, the wire log, the session file and the orchestrator's
private directories, token file, audit log and extension install each once decided this on
their own; they now ask this predicate and word its answer their own way. This table pins
the rule itself, so a change to it shows here and not only in one caller's tests: a link, a
FIFO, a directory where a file is wanted (and the reverse), another user's file (a stat stub:
the test cannot give a file away), group- or other-writable, and the cases that pass.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

import pytest

from orchestrator.client.file_trust.ownership import (
    FOREIGN_OWNER,
    IS_LINK,
    NOT_DIRECTORY,
    NOT_REGULAR,
    OTHERS_ANY,
    WRITABLE,
    UntrustedPathError,
    check_directory,
    followable_link,
    open_own_append,
    open_own_file,
    ownership_problem,
    read_own_file,
)


def _with(
    info: os.stat_result, *, mode: int | None = None, uid: int | None = None
) -> os.stat_result:
    """``info`` with another mode or owner: the stub for what a test cannot create."""
    fields = list(info)
    if mode is not None:
        fields[stat.ST_MODE] = mode
    if uid is not None:
        fields[stat.ST_UID] = uid
    return os.stat_result(fields)


#: the user the table runs as (a stub: the suite may run as root, who is also "root")
ME = 4000
FOREIGN = 4242


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, os.stat_result]:
    """lstat results of one of each kind, all of :data:`ME` and 0600/0700."""
    monkeypatch.setattr(os, "geteuid", lambda: ME)
    regular = tmp_path / "file"
    regular.write_text("x")
    regular.chmod(0o600)
    directory = tmp_path / "dir"
    directory.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(regular)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    return {
        name: _with(os.lstat(tmp_path / name), uid=ME) for name in ("file", "dir", "link", "fifo")
    }


@pytest.mark.parametrize(
    ("name", "change", "kwargs", "expected"),
    [
        ("file", {}, {"kind": "file"}, None),
        ("dir", {}, {"kind": "directory"}, None),
        ("file", {}, {}, None),
        ("dir", {}, {}, None),
        ("link", {}, {"kind": "file"}, NOT_REGULAR),
        ("link", {}, {"kind": "directory"}, NOT_DIRECTORY),
        ("link", {}, {}, IS_LINK),
        ("fifo", {}, {"kind": "file"}, NOT_REGULAR),
        ("fifo", {}, {"kind": "directory"}, NOT_DIRECTORY),
        ("dir", {}, {"kind": "file"}, NOT_REGULAR),
        ("file", {}, {"kind": "directory"}, NOT_DIRECTORY),
        ("file", {"uid": FOREIGN}, {"kind": "file"}, FOREIGN_OWNER),
        ("dir", {"uid": FOREIGN}, {"kind": "directory"}, FOREIGN_OWNER),
        ("dir", {"uid": 0}, {"kind": "directory"}, FOREIGN_OWNER),
        ("dir", {"uid": 0}, {"kind": "directory", "root_may_own": True}, None),
        ("dir", {"uid": FOREIGN}, {"kind": "directory", "root_may_own": True}, FOREIGN_OWNER),
        ("file", {"mode": stat.S_IFREG | 0o620}, {"kind": "file"}, WRITABLE),
        ("file", {"mode": stat.S_IFREG | 0o602}, {"kind": "file"}, WRITABLE),
        ("file", {"mode": stat.S_IFREG | 0o644}, {"kind": "file"}, None),
        (
            "file",
            {"mode": stat.S_IFREG | 0o640},
            {"kind": "file", "forbidden": OTHERS_ANY},
            WRITABLE,
        ),
        ("file", {"mode": stat.S_IFREG | 0o666}, {"kind": "file", "forbidden": 0}, None),
        ("dir", {"mode": stat.S_IFDIR | 0o777}, {"kind": "directory"}, WRITABLE),
        ("dir", {"mode": stat.S_IFDIR | 0o1777}, {"kind": "directory"}, WRITABLE),
        ("dir", {"mode": stat.S_IFDIR | 0o1777}, {"kind": "directory", "sticky_ok": True}, None),
        # the kind is checked before the owner: a foreign link is "a link", not "foreign"
        ("link", {"uid": FOREIGN}, {}, IS_LINK),
    ],
    ids=lambda value: repr(value) if isinstance(value, dict) else None,
)
def test_ownership_problem_table(
    world: dict[str, os.stat_result],
    name: str,
    change: dict[str, int],
    kwargs: dict[str, object],
    expected: str | None,
) -> None:
    info = _with(world[name], **change)
    assert ownership_problem(info, **kwargs) == expected  # type: ignore[arg-type]


def test_the_owner_is_the_effective_user(
    world: dict[str, os.stat_result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files we create get our effective uid: that is the one compared, read at call time."""
    monkeypatch.setattr(os, "getuid", lambda: ME)
    monkeypatch.setattr(os, "geteuid", lambda: FOREIGN)
    assert ownership_problem(world["file"], kind="file") == FOREIGN_OWNER
    assert ownership_problem(_with(world["file"], uid=FOREIGN), kind="file") is None


def test_a_link_is_followed_only_when_ours_or_roots(world: dict[str, os.stat_result]) -> None:
    assert followable_link(world["file"])
    assert followable_link(_with(world["file"], uid=FOREIGN))  # not a link: nothing to follow
    assert followable_link(world["link"])
    assert followable_link(_with(world["link"], uid=0))
    assert not followable_link(_with(world["link"], uid=FOREIGN))


class _Refused(Exception):
    pass


def test_open_own_append_creates_narrows_and_refuses(tmp_path: Path) -> None:
    """The private-log opener of the wire log and the audit log: created 0600, a wider (or
    other) mode of ours set to 0600, a FIFO refused without a hang, a link never followed."""
    problems: list[str] = []
    kinds: list[int] = []

    def refuse(problem: str, info: os.stat_result) -> Exception:
        problems.append(problem)
        kinds.append(stat.S_IFMT(info.st_mode))  # the refusal sees what was opened
        return _Refused(problem)

    fresh = tmp_path / "fresh.log"
    os.close(open_own_append(fresh, refuse))
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    for mode in (0o666, 0o700, 0o755):
        wide = tmp_path / f"wide-{mode:o}.log"
        wide.write_text("kept\n")
        wide.chmod(mode)
        fd = open_own_append(wide, refuse)
        try:
            assert os.get_blocking(fd)  # the non-blocking open is undone for the writes
            os.write(fd, b"more\n")
        finally:
            os.close(fd)
        assert stat.S_IMODE(wide.stat().st_mode) == 0o600
        assert wide.read_text() == "kept\nmore\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so the write-open succeeds
    try:
        with pytest.raises(_Refused):
            open_own_append(fifo, refuse)
    finally:
        os.close(reader)
    assert problems == [NOT_REGULAR]
    assert kinds == [stat.S_IFIFO]
    link = tmp_path / "link"
    link.symlink_to(fresh)
    with pytest.raises(OSError, match="symbolic links") as raised:
        open_own_append(link, refuse)
    assert raised.value.errno == errno.ELOOP
    assert problems == [NOT_REGULAR]


def test_open_own_file_checks_on_the_descriptor(tmp_path: Path) -> None:
    """The private-file reader of the session file, plugin files, machine catalog and token
    file: a descriptor only for a regular file of ours without the forbidden bits; a FIFO
    refused without a hang, a link never followed, a missing file the caller's ENOENT."""
    problems: list[str] = []

    def refuse(problem: str, _info: os.stat_result) -> Exception:
        problems.append(problem)
        return _Refused(problem)

    mine = tmp_path / "mine"
    mine.write_text("ours")
    mine.chmod(0o644)
    fd = open_own_file(mine, refuse)
    try:
        assert os.read(fd, 10) == b"ours"
    finally:
        os.close(fd)
    with pytest.raises(_Refused):  # a secret's rule: no bit for group or others
        open_own_file(mine, refuse, forbidden=OTHERS_ANY)
    mine.chmod(0o664)
    with pytest.raises(_Refused):
        open_own_file(mine, refuse)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(_Refused):
        open_own_file(fifo, refuse)
    assert problems == [WRITABLE, WRITABLE, NOT_REGULAR]
    link = tmp_path / "link"
    link.symlink_to(mine)
    with pytest.raises(OSError, match="symbolic links") as raised:
        open_own_file(link, refuse)
    assert raised.value.errno == errno.ELOOP
    with pytest.raises(FileNotFoundError):
        open_own_file(tmp_path / "absent", refuse)
    assert len(problems) == 3


def test_check_directory_refuses_a_file_and_another_user_s_link(tmp_path: Path) -> None:
    """A directory check wants a directory all the way up, and follows only a link of this
    user's or root's (a link's owner is set with ``lchown``: the suite runs as root)."""
    check_directory(tmp_path, "state dir")  # ours, under the sticky /tmp: fine
    plain = tmp_path / "plain"
    plain.write_text("x")
    with pytest.raises(
        UntrustedPathError, match=f"^state dir {re.escape(str(plain))} is not a dir"
    ):
        check_directory(plain, "state dir")
    if os.geteuid() != 0:
        pytest.skip("giving a link to another user needs root")
    link = tmp_path / "planted"
    link.symlink_to(tmp_path)
    os.lchown(link, 4242, -1)
    expected = f"state dir {link} is a symlink owned by uid 4242, not this user (uid 0): "
    with pytest.raises(UntrustedPathError, match=f"^{re.escape(expected)}not following it$"):
        check_directory(link, "state dir")


def test_read_own_file_reads_it_whole_and_words_each_refusal(tmp_path: Path) -> None:
    big = tmp_path / "big"
    data = os.urandom(3 << 20)  # read in several chunks: they are joined as they came
    big.write_bytes(data)
    big.chmod(0o600)
    assert read_own_file(big, "session") == data
    assert read_own_file(tmp_path / "missing", "session") is None
    shared = tmp_path / "shared"
    shared.write_text("x")
    shared.chmod(0o666)
    with pytest.raises(
        UntrustedPathError,
        match=re.escape(
            f"session {shared} is writable by other users (mode 0666): refusing to use"
        ),
    ):
        read_own_file(shared, "session")
    under_a_file = big / "child"
    with pytest.raises(
        UntrustedPathError,
        match=re.escape(f"session {under_a_file} cannot be opened: Not a directory"),
    ):
        read_own_file(under_a_file, "session")
