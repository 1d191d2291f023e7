"""The safe files' edges, pinned: every refusal's exact words, every bound of a bounded read,
every fsync a caller asked for, and the temp files that must never stay behind.

The mutation run over ``orchestrator/client/file_trust/private_files.py`` (``bench/
mutation.py safe-files``, docs/testing.md) left these unpinned: the main cases were tested,
the words a user reads when a path is refused and the boundaries beside them were not.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from orchestrator.client.file_trust import private_files as safe_fs

OTHER_UID = 4242


def _fails(code: int) -> Callable[..., NoReturn]:
    """A stand-in for an ``os`` call that fails with ``code`` (and the system's words)."""

    def fail(*args: object, **kwargs: object) -> NoReturn:
        raise OSError(code, os.strerror(code))

    return fail


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        (stat.S_IFREG | 0o644, "a regular file"),
        (stat.S_IFLNK | 0o777, "a symbolic link"),
        (stat.S_IFIFO | 0o600, "a FIFO"),
        (stat.S_IFDIR | 0o755, "a directory"),
        (stat.S_IFSOCK | 0o755, "a socket"),
        (stat.S_IFCHR | 0o666, "a device"),
        (stat.S_IFBLK | 0o660, "a device"),
        (0o644, "a file of an unknown kind"),
    ],
)
def test_each_kind_of_file_is_named_for_what_it_is(mode: int, words: str) -> None:
    assert safe_fs.describe_kind(mode) == words


def test_a_link_refused_by_an_open_says_so_with_eloop_and_its_path(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.write_text("x")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.open_regular(link)
    assert caught.value.errno == errno.ELOOP
    assert caught.value.strerror == f"{link} is a symbolic link: not followed"
    assert caught.value.filename == str(link)


def test_a_fifo_is_refused_without_blocking_and_named(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.open_regular(fifo)  # O_NONBLOCK: no writer, and it returns at once
    assert caught.value.errno == errno.EINVAL
    assert caught.value.strerror == f"{fifo} is a FIFO, not a regular file"
    assert caught.value.filename == str(fifo)


def test_is_regular_file_looks_at_the_name_itself(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_text("x")
    (tmp_path / "link").symlink_to(real)
    assert safe_fs.is_regular_file(real) is True
    assert safe_fs.is_regular_file(tmp_path / "link") is False
    assert safe_fs.is_regular_file(tmp_path / "missing") is False
    assert safe_fs.is_regular_file(tmp_path) is False


# -- bounded reads ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offset", "limit", "tail", "data", "start"),
    [
        (0, 10, False, b"0123456789", 0),  # exactly the whole file
        (3, 4, False, b"3456", 3),
        (8, 10, False, b"89", 8),  # the end comes first
        (10, 5, False, b"", 10),  # at the end: nothing, the size says where the end is
        (25, 5, False, b"", 10),  # past the end: clamped to the end
        (-4, 3, False, b"012", 0),  # a negative offset reads from the start
        (0, 4, True, b"6789", 6),
        (0, 10, True, b"0123456789", 0),
        (0, 40, True, b"0123456789", 0),  # a tail bigger than the file: all of it
        (0, 0, True, b"", 10),
        (0, 0, False, b"", 0),
    ],
)
def test_a_bounded_read_reads_exactly_its_window(
    tmp_path: Path, offset: int, limit: int, tail: bool, data: bytes, start: int
) -> None:
    path = tmp_path / "ten"
    path.write_bytes(b"0123456789")
    read = safe_fs.read_bounded(path, limit, offset=offset, tail=tail)
    assert (read.data, read.size, read.offset) == (data, 10, start)
    assert read.truncated is (start + len(data) < 10)


def test_a_bounded_read_crosses_its_chunks_and_stops_at_the_bound(tmp_path: Path) -> None:
    """Reads go in 64 KiB chunks: a window that spans several, starting mid-chunk, is read
    whole and not a byte more."""
    blob = bytes(range(256)) * 1200  # 307,200 bytes
    path = tmp_path / "blob"
    path.write_bytes(blob)
    read = safe_fs.read_bounded(path, 200_000, offset=1_000)
    assert read.data == blob[1_000:201_000]
    assert read.truncated
    whole = safe_fs.read_bounded(path, len(blob) + 1)
    assert whole.data == blob and not whole.truncated


def test_a_file_that_shrinks_while_read_gives_what_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "shrinking"
    path.write_bytes(b"x" * 100_000)
    real_pread = os.pread
    calls: list[int] = []

    def pread(fd: int, size: int, offset: int) -> bytes:
        calls.append(size)
        return real_pread(fd, size, offset) if len(calls) == 1 else b""  # cut after one chunk

    monkeypatch.setattr(os, "pread", pread)
    read = safe_fs.read_bounded(path, 100_000)
    assert calls == [1 << 16, 100_000 - (1 << 16)], "one chunk of 64 KiB, then the rest asked"
    assert read.data == b"x" * (1 << 16) and read.size == 100_000 and read.truncated


def test_a_bounded_read_follows_a_link_only_when_asked(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"data")
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(safe_fs.UnsafeFile, match="symbolic link: not followed"):
        safe_fs.read_bounded(tmp_path / "link", 10)
    assert safe_fs.read_bounded(tmp_path / "link", 10, follow=True).data == b"data"


# -- writes -------------------------------------------------------------------------------------


def test_a_write_that_makes_no_progress_is_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(OSError, match="short write") as caught:
        safe_fs.write_all(1, b"abc")
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.strerror == "short write: no space left on device"


def test_write_all_writes_nothing_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []

    def write(fd: int, data: bytes) -> int:
        calls.append(bytes(data))
        return len(data)

    monkeypatch.setattr(os, "write", write)
    safe_fs.write_all(1, b"")
    assert calls == []


def _temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_a_temp_file_is_hidden_beside_its_name_and_written_with_the_exact_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, int]] = []
    real_replace = os.replace

    def replace(src: str, dst: str, **kwargs: int) -> None:
        dir_fd = kwargs["src_dir_fd"]
        seen.append((src, stat.S_IMODE(os.stat(src, dir_fd=dir_fd).st_mode)))
        real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    old = os.umask(0o077)
    try:
        safe_fs.write_atomic(tmp_path / "launcher", "#!/bin/sh\n", mode=0o755)
    finally:
        os.umask(old)
    [(temp, mode)] = seen
    assert re.fullmatch(r"\.launcher\.[0-9a-f]{12}\.tmp", temp), temp
    assert mode == 0o755
    assert stat.S_IMODE((tmp_path / "launcher").stat().st_mode) == 0o755


def test_a_failed_write_removes_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kept").write_text("old")

    monkeypatch.setattr(os, "write", _fails(errno.ENOSPC))
    with pytest.raises(OSError, match="No space left"):
        safe_fs.write_atomic(tmp_path / "kept", "new")
    monkeypatch.undo()
    assert (tmp_path / "kept").read_text() == "old"
    assert _temp_files(tmp_path) == []


def test_a_failed_rename_removes_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "replace", _fails(errno.EXDEV))
    with pytest.raises(OSError, match="cross-device"):
        safe_fs.write_atomic(tmp_path / "target", "data")
    monkeypatch.undo()
    assert not (tmp_path / "target").exists()
    assert _temp_files(tmp_path) == []


def test_a_missing_parent_is_created_private_or_refused_as_asked(tmp_path: Path) -> None:
    written = safe_fs.write_atomic(tmp_path / "new" / "deep" / "file", b"x")
    assert written == tmp_path / "new" / "deep" / "file"
    assert written.read_bytes() == b"x"
    for directory in (tmp_path / "new", tmp_path / "new" / "deep"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    with pytest.raises(FileNotFoundError):
        safe_fs.write_atomic(tmp_path / "absent" / "file", b"x", create_parent=False)
    assert not (tmp_path / "absent").exists()


def test_a_link_at_the_name_is_replaced_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("theirs")
    (tmp_path / "name").symlink_to(victim)
    safe_fs.write_atomic(tmp_path / "name", "ours")
    assert victim.read_text() == "theirs"
    assert not (tmp_path / "name").is_symlink()
    assert (tmp_path / "name").read_text() == "ours"


def test_a_parent_link_of_another_user_is_refused_by_uid(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "config"
    link.symlink_to(real)
    os.lchown(link, OTHER_UID, OTHER_UID)
    if os.lstat(link).st_uid != OTHER_UID:  # pragma: no cover - needs root (CI runs as root)
        pytest.skip("only root can give a link to another user")
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.write_atomic(link / "file", "x", own_link_parent=True)
    assert caught.value.errno == errno.EPERM
    assert caught.value.strerror == (
        f"{link} is a symbolic link owned by uid {OTHER_UID}: not followed"
    )
    assert caught.value.filename == str(link)
    assert list(real.iterdir()) == []


def test_a_missing_or_plain_parent_is_used_as_named(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert safe_fs.write_atomic(plain / "f", "x", own_link_parent=True) == plain / "f"
    missing = tmp_path / "missing"
    assert safe_fs.write_atomic(missing / "f", "y", own_link_parent=True) == missing / "f"
    assert (missing / "f").read_text() == "y"


# -- create-once -------------------------------------------------------------------------------


def _count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each ``os.fsync``: "dir" for a directory descriptor, "file" otherwise."""
    kinds: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        kinds.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return kinds


@pytest.mark.parametrize(("sync", "expected"), [(True, ["file", "dir"]), (False, [])])
def test_publish_new_fsyncs_the_file_and_then_its_name_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool, expected: list[str]
) -> None:
    kinds = _count_fsyncs(monkeypatch)
    safe_fs.publish_new(tmp_path, "record", b"data", sync=sync)
    assert kinds == expected
    assert (tmp_path / "record").read_bytes() == b"data"


def test_publish_new_by_path_creates_with_its_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    safe_fs.publish_new(tmp_path, "script", b"#!/bin/sh\n", mode=0o700)
    assert stat.S_IMODE((tmp_path / "script").stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):
        safe_fs.publish_new(tmp_path, "script", b"again")
    assert (tmp_path / "script").read_bytes() == b"#!/bin/sh\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script"]


def test_publish_new_never_follows_a_link_at_its_name_even_to_a_file(tmp_path: Path) -> None:
    """``os.link`` with ``follow_symlinks=False``: the name is taken (by the link itself),
    whatever it points at; the target file is never touched."""
    target = tmp_path / "target"
    target.write_bytes(b"theirs")
    (tmp_path / "name").symlink_to(target)
    with pytest.raises(FileExistsError):
        safe_fs.publish_new(tmp_path, "name", b"ours")
    assert target.read_bytes() == b"theirs"
    assert (tmp_path / "name").is_symlink()


# -- private directories -------------------------------------------------------------------------


def test_a_private_dir_is_returned_as_given_whether_made_or_found(tmp_path: Path) -> None:
    made = safe_fs.ensure_private_dir(str(tmp_path / "made"))
    assert made == tmp_path / "made" and isinstance(made, Path)
    assert safe_fs.ensure_private_dir(tmp_path / "made") == tmp_path / "made"


def test_a_file_where_a_private_dir_is_wanted_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state"
    path.write_text("x")
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.ensure_private_dir(path)
    assert caught.value.errno == errno.ENOTDIR
    assert caught.value.strerror == f"{path} exists and is not a directory"
    assert caught.value.filename == str(path)


def test_a_writable_dir_is_refused_with_its_mode_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "state"
    path.mkdir()
    path.chmod(0o770)
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.ensure_private_dir(path)
    assert caught.value.errno == errno.EPERM
    assert caught.value.strerror == (
        f"{path} is writable by group or others (mode 0770): other users could plant files "
        f"there; use a private directory or run `chmod go-w {path}` yourself"
    )
    assert caught.value.filename == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o770, "never chmodded"


def test_a_dir_of_another_user_is_refused_with_both_uids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "theirs"
    path.mkdir(mode=0o700)
    me = os.getuid() + 1
    monkeypatch.setattr(os, "geteuid", lambda: me)
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.ensure_private_dir(path)
    assert caught.value.errno == errno.EPERM
    assert caught.value.strerror == (
        f"{path} is owned by uid {os.getuid()}, not by you (uid {me}): another local user "
        "could read or replace the orchestrator's files there; choose a directory of your "
        "own (it is created 0700 when missing)"
    )
    assert caught.value.filename == str(path)


def test_a_link_of_another_user_at_a_private_dir_is_refused_by_uid(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "state"
    link.symlink_to(real)
    os.lchown(link, OTHER_UID, OTHER_UID)
    if os.lstat(link).st_uid != OTHER_UID:  # pragma: no cover - needs root (CI runs as root)
        pytest.skip("only root can give a link to another user")
    with pytest.raises(safe_fs.UnsafeFile) as caught:
        safe_fs.ensure_private_dir(link)
    assert caught.value.errno == errno.EPERM
    assert caught.value.strerror == (
        f"{link} is a symbolic link owned by uid {OTHER_UID}, not by you (uid "
        f"{os.geteuid()}): not followed; choose a directory of your own"
    )
    assert caught.value.filename == str(link)


def test_a_link_of_ours_at_a_private_dir_is_followed_and_checked(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(real)
    assert safe_fs.ensure_private_dir(tmp_path / "state") == tmp_path / "state"
    real.chmod(0o777)
    with pytest.raises(safe_fs.UnsafeFile, match=r"\(mode 0777\)"):
        safe_fs.ensure_private_dir(tmp_path / "state")


def test_a_dangling_link_is_not_created_through(tmp_path: Path) -> None:
    """A link to nothing is "there" (never made again through the link); its target stays
    absent and the check that follows refuses what it cannot stat."""
    (tmp_path / "state").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError):
        safe_fs.ensure_private_dir(tmp_path / "state")
    assert not (tmp_path / "nowhere").exists()


def test_a_dir_made_by_a_racing_creator_is_checked_not_claimed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process made the directory between the look and the ``mkdir``: it is not
    ours to trust unchecked, so it is checked like any directory found (here: shared)."""
    path = tmp_path / "state"
    real_mkdir = Path.mkdir

    def racing_mkdir(self: Path, mode: int = 0o777, *args: object, **kwargs: object) -> None:
        if self == path:
            real_mkdir(self, 0o777)
            self.chmod(0o777)
            raise FileExistsError(errno.EEXIST, "File exists", str(self))
        real_mkdir(self, mode)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    with pytest.raises(safe_fs.UnsafeFile, match="writable by group or others"):
        safe_fs.ensure_private_dir(path)


def test_a_bounded_read_reads_only_what_was_there_at_the_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window is fixed by the size at the open: bytes appended while the read runs are
    not read (the result never holds more than ``size`` says), in one ``pread``."""
    path = tmp_path / "growing"
    path.write_bytes(b"0123456789")
    real_pread = os.pread
    asked: list[tuple[int, int]] = []

    def pread(fd: int, size: int, offset: int) -> bytes:
        if not asked:
            with path.open("ab") as grow:
                grow.write(b"ABCDEFGHIJKLMNOPQRST")
        asked.append((size, offset))
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", pread)
    read = safe_fs.read_bounded(path, 100, offset=8)
    assert (read.data, read.size, read.offset) == (b"89", 10, 8)
    assert asked == [(2, 8)], "the two bytes there were, asked for once"


def test_a_failed_rename_reports_itself_even_when_the_cleanup_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "replace", _fails(errno.EXDEV))
    monkeypatch.setattr(os, "unlink", _fails(errno.EACCES))
    with pytest.raises(OSError, match="cross-device") as caught:
        safe_fs.write_atomic(tmp_path / "target", "data")
    assert caught.value.errno == errno.EXDEV


def test_publish_new_is_durable_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds = _count_fsyncs(monkeypatch)
    safe_fs.publish_new(tmp_path, "record", b"data")
    assert kinds == ["file", "dir"]


def test_publish_new_hides_its_temp_file_beside_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked: list[str] = []
    real_link = os.link

    def link(src: str, dst: str, **kwargs: object) -> None:
        linked.append(src)
        real_link(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", link)
    safe_fs.publish_new(tmp_path, "record", b"data")
    [temp] = linked
    assert re.fullmatch(r"\.record\.[0-9a-f]{12}\.tmp", temp), temp


def test_a_published_name_stands_when_its_temp_file_cannot_be_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name is there, whole: a temp file left behind is untidy, not a failure."""

    monkeypatch.setattr(os, "unlink", _fails(errno.EACCES))
    safe_fs.publish_new(tmp_path, "record", b"data")
    monkeypatch.undo()
    assert (tmp_path / "record").read_bytes() == b"data"


def test_publish_new_by_path_needs_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        safe_fs.publish_new(tmp_path / "file", "record", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_failed_write_reports_itself_even_when_the_cleanup_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "write", _fails(errno.ENOSPC))
    monkeypatch.setattr(os, "unlink", _fails(errno.EACCES))
    with pytest.raises(OSError, match="No space left") as caught:
        safe_fs.write_atomic(tmp_path / "target", "data")
    assert caught.value.errno == errno.ENOSPC
