"""The managed-child pi extension is shipped with the package and installed safely: 0600 in a
private directory, never through a link, never over a file that is not ours."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.extension_install import (
    EXTENSION_NAME,
    EXTENSION_SOURCE,
    install_child_extension,
)


def test_the_extension_ships_inside_the_package_and_is_a_managed_child_only_module() -> None:
    assert EXTENSION_SOURCE.is_file()
    assert EXTENSION_SOURCE.parent.parent == Path(__file__).parents[3] / "orchestrator" / "managed"
    source = EXTENSION_SOURCE.read_text()
    assert "export default function" in source
    assert "if (!env.PI_HERDSMAN_MAILBOX) return;" in source  # outside a managed child: nothing
    assert "orchestrator.managed.child_cli" in source


def test_install_creates_a_private_dir_and_a_0600_copy(tmp_path: Path) -> None:
    extensions = tmp_path / "agent" / "extensions"
    installed = install_child_extension(extensions)
    assert installed == extensions / EXTENSION_NAME
    assert installed.read_bytes() == EXTENSION_SOURCE.read_bytes()
    assert stat.S_IMODE(installed.stat().st_mode) == 0o600
    assert stat.S_IMODE(extensions.stat().st_mode) == 0o700
    assert stat.S_IMODE(extensions.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in extensions.iterdir()) == [EXTENSION_NAME]  # no temp left


def test_install_again_replaces_an_own_stale_copy(tmp_path: Path) -> None:
    extensions = tmp_path / "extensions"
    extensions.mkdir(mode=0o700)
    (extensions / EXTENSION_NAME).write_text("// an older version\n")
    installed = install_child_extension(extensions)
    assert installed.read_bytes() == EXTENSION_SOURCE.read_bytes()
    assert stat.S_IMODE(installed.stat().st_mode) == 0o600


def _refused(extensions: Path) -> ManagedAgentError:
    with pytest.raises(ManagedAgentError) as caught:
        install_child_extension(extensions)
    assert caught.value.category == "internal_failure"
    assert caught.value.details is not None and "path" in caught.value.details
    return caught.value


def test_a_symlinked_extensions_dir_is_refused_even_when_it_is_ours(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "agent").mkdir(mode=0o700)
    (tmp_path / "agent" / "extensions").symlink_to(elsewhere)
    error = _refused(tmp_path / "agent" / "extensions")
    assert "symbolic link" in error.message
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_a_symlink_at_the_file_is_refused_and_its_target_left_alone(tmp_path: Path) -> None:
    extensions = tmp_path / "extensions"
    extensions.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (extensions / EXTENSION_NAME).symlink_to(victim)
    error = _refused(extensions)
    assert "not a regular file" in error.message
    assert victim.read_text() == "keep me"
    assert (extensions / EXTENSION_NAME).is_symlink()


def test_a_fifo_or_directory_at_the_file_is_refused(tmp_path: Path) -> None:
    extensions = tmp_path / "extensions"
    extensions.mkdir(mode=0o700)
    os.mkfifo(extensions / EXTENSION_NAME)
    _refused(extensions)
    (extensions / EXTENSION_NAME).unlink()
    (extensions / EXTENSION_NAME).mkdir()
    _refused(extensions)


def test_a_group_writable_extensions_dir_is_refused_not_chmodded(tmp_path: Path) -> None:
    extensions = tmp_path / "extensions"
    extensions.mkdir()
    extensions.chmod(0o777)
    error = _refused(extensions)
    assert "writable by group or others" in error.message
    assert stat.S_IMODE(extensions.stat().st_mode) == 0o777
    assert list(extensions.iterdir()) == []


def test_a_foreign_owned_dir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extensions = tmp_path / "extensions"
    extensions.mkdir(mode=0o700)
    # as another user: every directory here belongs to someone else
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 4242)
    error = _refused(extensions)
    assert "owned by uid" in error.message
    assert list(extensions.iterdir()) == []


def test_a_relative_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _refused(Path("extensions"))
    assert not (tmp_path / "extensions").exists()
