"""``files``: canonical regular files from the cwd, result refs, inline or reference, limits."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.files import (
    PreparedFiles,
    escape_attribute,
    prepare_files,
    render_message,
)
from orchestrator.managed.results import ResultArtifact, ResultStore

OWNER = "controller-1"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "notes.md").write_text("hello notes\n", encoding="utf-8")
    (cwd / "src").mkdir()
    (cwd / "src" / "a.py").write_text("print('a')\n", encoding="utf-8")
    return cwd


@pytest.fixture
def store(tmp_path: Path) -> ResultStore:
    return ResultStore(tmp_path / "state" / "results")


def _prepare(files: list[str], cwd: Path, store: ResultStore, **options: object) -> PreparedFiles:
    kwargs: dict[str, object] = {"inline_limit": 131072, **options}
    return prepare_files(
        files,
        cwd=cwd,
        results=store,
        owner_session_id=OWNER,
        **kwargs,  # type: ignore[arg-type]
    )


def _result(store: ResultStore, text: str = "the findings", label: str = "scout") -> ResultArtifact:
    return store.persist(
        owner_session_id=OWNER,
        label=label,
        definition="researcher",
        cwd="/work/project",
        pi_session_id="sess-1",
        pi_session_file="/s.jsonl",
        request_id=str(uuid.uuid4()),
        run_id=str(uuid.uuid4()),
        status="completed",
        text=text,
    )


def _refused(files: list[str], cwd: Path, store: ResultStore, **options: object) -> str:
    with pytest.raises(ManagedAgentError) as caught:
        _prepare(files, cwd, store, **options)
    assert caught.value.category == "invalid_request"
    return caught.value.message


def test_relative_paths_resolve_from_the_cwd_and_are_inlined(
    work: Path, store: ResultStore
) -> None:
    prepared = _prepare(["notes.md", "./src/../src/a.py"], work, store)
    real = os.path.realpath(work)
    assert prepared.paths == (f"{real}/notes.md", f"{real}/src/a.py")
    assert prepared.text == (
        f'<file name="{real}/notes.md" bytes="12">\nhello notes\n\n</file>\n\n'
        f'<file name="{real}/src/a.py" bytes="11">\nprint(\'a\')\n\n</file>'
    )


def test_an_absolute_path_inside_the_cwd_and_duplicates_keep_the_first(
    work: Path, store: ResultStore
) -> None:
    prepared = _prepare([str(work / "notes.md"), "notes.md", "src/../notes.md"], work, store)
    assert len(prepared.files) == 1
    assert prepared.files[0].entry == str(work / "notes.md")


def test_a_symlink_is_resolved_then_its_target_checked(work: Path, store: ResultStore) -> None:
    (work / "link.md").symlink_to(work / "notes.md")
    prepared = _prepare(["link.md"], work, store)
    assert prepared.paths == (os.path.realpath(work / "notes.md"),)
    (work / "dirlink").symlink_to(work / "src")
    assert "a directory" in _refused(["dirlink"], work, store)


def test_paths_outside_the_cwd_are_refused_unless_allowed(
    tmp_path: Path, work: Path, store: ResultStore
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    (work / "escape.md").symlink_to(outside)
    for entry in (str(outside), "../secret.txt", "escape.md"):
        message = _refused([entry], work, store)
        assert message.startswith(f"Cannot read file {entry}: ")
        assert "outside the working directory" in message
    allowed = _prepare(["escape.md"], work, store, allow_outside_cwd=True)
    assert allowed.files[0].content == "secret"


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: os.mkfifo(p), "a FIFO"),
        (lambda p: None, "no such file"),
    ],
)
def test_only_regular_files_are_read_and_a_fifo_never_blocks(
    work: Path, store: ResultStore, make: object, fragment: str
) -> None:
    target = work / "thing"
    make(target)  # type: ignore[operator]
    message = _refused(["thing"], work, store)
    assert message.startswith("Cannot read file thing: ") and fragment in message


def test_a_socket_and_a_device_are_refused(work: Path, store: ResultStore) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(work / "sock"))
        assert "a socket" in _refused(["sock"], work, store)
    assert "a device" in _refused(["/dev/null"], work, store, allow_outside_cwd=True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_refused(work: Path, store: ResultStore) -> None:
    (work / "notes.md").chmod(0)
    assert "permission denied" in _refused(["notes.md"], work, store)


def test_one_bad_entry_refuses_them_all(work: Path, store: ResultStore) -> None:
    assert "missing.md" in _refused(["notes.md", "missing.md"], work, store)


def test_a_path_with_a_nul_byte_is_refused(work: Path, store: ResultStore) -> None:
    assert "not a valid path" in _refused(["notes\x00.md"], work, store)


@pytest.mark.parametrize("files", [["notes.md", ""], ["  "], "notes.md", [3]])
def test_malformed_files_are_refused(work: Path, store: ResultStore, files: object) -> None:
    _refused(files, work, store)  # type: ignore[arg-type]


def test_over_the_inline_limit_binary_or_nul_files_become_references(
    work: Path, store: ResultStore
) -> None:
    (work / "big.txt").write_text("x" * 2000, encoding="utf-8")
    (work / "bin.dat").write_bytes(b"\xff\xfe\x00abc")
    (work / "nul.txt").write_bytes(b"a\x00b")
    prepared = _prepare(
        ["big.txt", "bin.dat", "nul.txt", "notes.md"], work, store, inline_limit=1999
    )
    real = os.path.realpath(work)
    inline = [f.inline for f in prepared.files]
    assert inline == [False, False, False, True]
    assert prepared.files[0].element() == f'<file name="{real}/big.txt" bytes="2000" />'
    assert prepared.files[1].element() == f'<file name="{real}/bin.dat" bytes="6" />'


def test_exactly_the_inline_limit_is_inlined(work: Path, store: ResultStore) -> None:
    (work / "edge.txt").write_text("y" * 1024, encoding="utf-8")
    assert _prepare(["edge.txt"], work, store, inline_limit=1024).files[0].inline
    assert not _prepare(["edge.txt"], work, store, inline_limit=1023).files[0].inline


def test_result_refs_carry_provenance_and_their_canonical_ref(
    work: Path, store: ResultStore
) -> None:
    artifact = _result(store)
    prepared = _prepare(["result:scout#1"], work, store)
    assert prepared.refs == ("result:scout#1",) and prepared.artifacts == (artifact,)
    assert prepared.text == (
        f'<file name="result:scout#1" ref="{artifact.canonical_ref}" agent="scout" '
        'definition="researcher" cwd="/work/project" session="sess-1" status="completed" '
        'bytes="12">\nthe findings\n</file>'
    )
    canonical = _prepare([artifact.canonical_ref, "result:scout#1"], work, store)
    assert len(canonical.files) == 1  # the same result twice: the first kept


def test_a_large_result_is_a_reference_to_its_text_file(work: Path, store: ResultStore) -> None:
    artifact = _result(store, text="r" * 5000)
    prepared = _prepare(["result:scout#1"], work, store, inline_limit=1024)
    element = prepared.files[0].element()
    path = store.text_path(artifact.request_id)
    assert f'path="{path}" bytes="5000" />' in element
    assert path.read_text(encoding="utf-8") == "r" * 5000


def test_result_ref_errors_pass_through(work: Path, store: ResultStore) -> None:
    assert "Invalid result ref: result:Bad#1." in _refused(["result:Bad#1"], work, store)
    with pytest.raises(ManagedAgentError) as caught:
        _prepare(["result:scout#9"], work, store)
    assert caught.value.category == "target_not_found"


def test_the_payload_limit_inlines_in_order_while_the_message_fits(
    work: Path, store: ResultStore
) -> None:
    (work / "one.txt").write_text("1" * 600, encoding="utf-8")
    (work / "two.txt").write_text("2" * 600, encoding="utf-8")
    prepared = _prepare(["one.txt", "two.txt"], work, store, payload_limit=1200, reserved_bytes=20)
    assert [f.inline for f in prepared.files] == [True, False]
    message = render_message(prepared, "Task", "do it")
    assert len(message.encode()) <= 1200
    assert message.endswith("\n\nTask:\ndo it")


def test_a_message_that_cannot_fit_even_as_references_is_refused(
    work: Path, store: ResultStore
) -> None:
    message = _refused(["notes.md"], work, store, payload_limit=1024, reserved_bytes=1024)
    assert message.startswith("Mailbox payload is ")
    assert message.endswith("configured limit is 1024 bytes")


def test_render_without_files_is_the_heading_and_body() -> None:
    assert PreparedFiles().render("Steer", "also x") == "Steer:\nalso x"
    assert PreparedFiles().text == ""


def test_attribute_escaping() -> None:
    assert escape_attribute('a&b"c<d>e\nf\x7f') == "a&#x26;b&#x22;c&#x3C;d&#x3E;e&#x0A;f&#x7F;"


@given(st.text())
def test_escaped_attributes_never_hold_a_quote_or_control(value: str) -> None:
    escaped = escape_attribute(value)
    assert not any(c in escaped for c in '"<>') and all(ord(c) >= 0x20 for c in escaped)


def test_a_path_with_odd_characters_is_escaped_in_the_element(
    work: Path, store: ResultStore
) -> None:
    name = 'we"ird<name>.md'
    (work / name).write_text("z", encoding="utf-8")
    element = _prepare([name], work, store).files[0].element()
    assert "we&#x22;ird&#x3C;name&#x3E;.md" in element


def test_a_file_swapped_between_check_and_open_is_refused(
    work: Path, store: ResultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def swap_then_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        target = Path(str(path))
        if target.name == "notes.md":
            target.with_name("kept.md").hardlink_to(target)  # the old inode stays in use
            target.with_name("new.md").write_text("replaced", encoding="utf-8")
            target.with_name("new.md").replace(target)  # another inode at the same path
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", swap_then_open)
    assert "file changed during validation" in _refused(["notes.md"], work, store)


def test_a_file_swapped_for_a_link_after_canonicalizing_is_refused(
    tmp_path: Path, work: Path, store: ResultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open
    (tmp_path / "other").write_text("other", encoding="utf-8")

    def link_then_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        target = Path(str(path))
        if target.name == "notes.md":
            target.unlink()
            target.symlink_to(tmp_path / "other")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", link_then_open)
    assert "file changed during validation" in _refused(["notes.md"], work, store)
