"""Durable result artifacts: provenance, per-owner indices, refs, exactly-once delivery marks."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.managed import results as results_module
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.model_text import MODEL_TEXT_MAX_LINES
from orchestrator.managed.results import (
    ResultArtifact,
    ResultStore,
    delivery_text,
    render_delivery,
)

OWNER = "controller-1"


def _rid() -> str:
    return str(uuid.uuid4())


def _persist(store: ResultStore, **overrides: Any) -> ResultArtifact:
    fields: dict[str, Any] = {
        "owner_session_id": OWNER,
        "label": "scout",
        "definition": "researcher",
        "cwd": "/work/project",
        "pi_session_id": "0190aaaa-0000-7000-8000-000000000001",
        "pi_session_file": "/pi/sessions/s.jsonl",
        "request_id": _rid(),
        "run_id": _rid(),
        "status": "completed",
        "text": "found it",
        "created_at": 1764600000.5,
    }
    fields.update(overrides)
    return store.persist(**fields)


def test_persist_keeps_the_provenance_and_numbers_per_owner_and_label(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    first = _persist(store)
    assert first.index == 1 and first.ref == "result:scout#1"
    assert first.canonical_ref == f"result:{first.request_id}"
    assert (first.definition, first.cwd, first.text) == ("researcher", "/work/project", "found it")
    assert _persist(store).index == 2
    assert _persist(store, label="other").index == 1
    assert _persist(store, owner_session_id="controller-2").index == 1
    reopened = ResultStore(tmp_path / "results")  # a restarted controller
    assert reopened.get(first.request_id) == first
    assert _persist(reopened).index == 3


def test_files_are_private_and_directories_0700(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    artifact = _persist(store)
    store.mark_delivered(artifact.request_id)
    for path in (tmp_path / "results").rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path


def test_persist_is_idempotent_per_request(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    first = _persist(store)
    again = _persist(store, request_id=first.request_id, run_id=first.run_id, created_at=5.0)
    assert again == first
    assert _persist(store).index == 2


def test_a_different_result_for_a_stored_request_is_refused_and_the_first_kept(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path / "results")
    first = _persist(store)
    with pytest.raises(ManagedAgentError) as caught:
        _persist(store, request_id=first.request_id, run_id=first.run_id, text="other")
    assert caught.value.category == "internal_failure"
    assert first.request_id in caught.value.message
    assert store.get(first.request_id) == first


def test_a_crash_after_reserving_the_index_reuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(tmp_path / "results")
    request_id, run_id = _rid(), _rid()

    def crash(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results_module, "write_atomic", crash)
    with pytest.raises(ManagedAgentError) as caught:
        _persist(store, request_id=request_id, run_id=run_id)
    assert caught.value.category == "internal_failure"
    assert store.get(request_id) is None
    monkeypatch.undo()
    assert _persist(store, request_id=request_id, run_id=run_id).index == 1
    assert _persist(store).index == 2


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"label": "Scout"}, "label"),
        ({"label": "a" * 33}, "label"),
        ({"request_id": "not-a-uuid"}, "request_id"),
        ({"run_id": "17FE5F63-502C-4EA4-A228-52EB53974BFF"}, "run_id"),
        ({"status": "done"}, "status"),
        ({"owner_session_id": ""}, "owner_session_id"),
    ],
)
def test_bad_provenance_is_an_invalid_request(
    tmp_path: Path, overrides: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ManagedAgentError) as caught:
        _persist(ResultStore(tmp_path / "results"), **overrides)
    assert caught.value.category == "invalid_request"
    assert fragment in caught.value.message


def test_resolve_a_semantic_ref_only_for_its_owner(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    artifact = _persist(store)
    assert store.resolve("result:scout#1", owner_session_id=OWNER) == artifact
    for ref, owner in (("result:scout#1", "someone-else"), ("result:scout#2", OWNER)):
        with pytest.raises(ManagedAgentError) as caught:
            store.resolve(ref, owner_session_id=owner)
        assert caught.value.category == "target_not_found"
        assert ref in caught.value.message


def test_resolve_a_canonical_ref_for_any_owner(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    artifact = _persist(store)
    assert store.resolve(artifact.canonical_ref, owner_session_id="a-child") == artifact
    unknown = f"result:{_rid()}"
    with pytest.raises(ManagedAgentError) as caught:
        store.resolve(unknown, owner_session_id=OWNER)
    assert caught.value.category == "invalid_request"
    assert unknown in caught.value.message


@pytest.mark.parametrize(
    "ref",
    [
        "result:",
        "result:Scout#1",
        "result:scout#0",
        "result:scout#01",
        "result:scout#1\n",
        "result:scout",
        "result:scout#-1",
        "result:D0C4C1A4-8254-47E9-8020-FD64A6715042",
        "result:../../etc/passwd",
    ],
)
def test_a_malformed_ref_is_an_invalid_request(tmp_path: Path, ref: str) -> None:
    with pytest.raises(ManagedAgentError) as caught:
        ResultStore(tmp_path / "results").resolve(ref, owner_session_id=OWNER)
    assert caught.value.category == "invalid_request"
    assert caught.value.message.startswith(f"Invalid result ref: {ref}.")
    assert "Copy the exact result ref" in caught.value.message


@given(st.from_regex(r"[a-z][a-z0-9_-]{0,31}", fullmatch=True), st.integers(1, 10**6))
def test_every_well_formed_semantic_ref_parses(label: str, index: int) -> None:
    match = results_module.RESULT_REF_RE.fullmatch(f"result:{label}#{index}")
    assert match is not None and match.groups() == (label, str(index))


def test_mark_delivered_is_true_once_and_durable(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    request_id = _rid()
    assert store.is_delivered(request_id) is False
    assert store.mark_delivered(request_id) is True
    assert store.mark_delivered(request_id) is False
    restarted = ResultStore(tmp_path / "results")
    assert restarted.mark_delivered(request_id) is False
    assert restarted.is_delivered(request_id) is True
    with pytest.raises(ManagedAgentError) as caught:
        store.mark_delivered("../x")
    assert caught.value.category == "invalid_request"


def _mark(root: str, request_id: str, start: Any, out: Any) -> None:
    start.wait()
    out.put(ResultStore(Path(root)).mark_delivered(request_id))


def test_mark_delivered_is_exactly_once_across_processes(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    request_id = _rid()
    start = context.Event()
    out = context.Queue()
    procs = [
        context.Process(target=_mark, args=(str(tmp_path / "results"), request_id, start, out))
        for _ in range(6)
    ]
    for proc in procs:
        proc.start()
    start.set()
    answers = [out.get(timeout=30) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    assert sorted(answers) == [False] * 5 + [True]


def test_a_symlinked_or_corrupt_artifact_is_an_internal_failure_naming_it(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path / "results")
    artifact = _persist(store)
    path = tmp_path / "results" / "artifacts" / f"{artifact.request_id}.json"
    secret = tmp_path / "secret.json"
    secret.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    path.unlink()
    path.symlink_to(secret)
    with pytest.raises(ManagedAgentError) as caught:
        store.resolve(artifact.ref, owner_session_id=OWNER)
    assert caught.value.category == "internal_failure"
    assert "symbolic link" in caught.value.message
    path.unlink()
    for bad in (b"{not json", json.dumps({**artifact.to_record(), "extra": 1}).encode()):
        path.write_bytes(bad)
        with pytest.raises(ManagedAgentError) as caught:
            store.get(artifact.request_id)
        assert caught.value.category == "internal_failure"
        assert str(path) in caught.value.message


def test_a_fifo_artifact_is_refused_without_blocking(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    artifact = _persist(store)
    path = tmp_path / "results" / "artifacts" / f"{artifact.request_id}.json"
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(ManagedAgentError, match="FIFO"):
        store.get(artifact.request_id)


def test_a_root_others_can_write_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir(mode=0o700)
    root.chmod(0o777)
    with pytest.raises(ManagedAgentError) as caught:
        _persist(ResultStore(root))
    assert caught.value.category == "internal_failure"
    assert "writable by group or others" in caught.value.message


def test_delivery_text_uses_the_seed_wording() -> None:
    artifact = ResultArtifact(
        owner_session_id=OWNER,
        label="scout",
        index=2,
        definition="researcher",
        cwd="/w",
        pi_session_id="sess-1",
        pi_session_file="/s.jsonl",
        request_id=_rid(),
        run_id=_rid(),
        status="completed",
        text="All done.",
        created_at=0.0,
    )
    text = delivery_text(artifact)
    assert text.splitlines()[:2] == [
        "Agent result · agent=scout · definition=researcher · session=sess-1 · status=completed",
        "Result ref: result:scout#2",
    ]
    assert text.endswith("All done.")
    assert "retired" not in text
    retired = delivery_text(artifact, retired=True)
    assert "do not continue it with agent_continue" in retired
    assert "Delegate a fresh agent" in retired


def test_delivery_text_of_a_failed_result_without_session_and_a_bounded_text() -> None:
    artifact = ResultArtifact(
        owner_session_id=OWNER,
        label="scout",
        index=1,
        definition="d",
        cwd="/w",
        pi_session_id=None,
        pi_session_file=None,
        request_id=_rid(),
        run_id=_rid(),
        status="failed",
        text="é" * 100,
        created_at=0.0,
    )
    text = delivery_text(artifact, max_bytes=11)
    assert text.splitlines()[0].endswith("session=? · status=failed")
    assert "\n\nééééé\n\n[Result truncated: 1 of 1 lines, 10 of 200 bytes shown." in text
    assert "The full result is result:scout#1" in text
    empty = ResultArtifact(**{**artifact.__dict__, "text": ""})
    assert delivery_text(empty).endswith("(empty result)")


def test_the_plain_text_is_kept_beside_the_artifact(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    artifact = _persist(store, text="line 1\nline 2 €")
    path = store.text_path(artifact.request_id)
    assert path.read_text(encoding="utf-8") == "line 1\nline 2 €"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_long_result_is_delivered_as_its_head_and_the_ref_with_the_full_text_kept(
    tmp_path: Path,
) -> None:
    """Reference A.13: the completion text is bounded for the model (head kept, pi's
    default 50 KiB / 2000 lines), the full text stays the artifact, the notice names its ref."""
    store = ResultStore(tmp_path / "results")
    long = "".join(f"line {n:05d}\n" for n in range(3000))  # 3000 lines, 33 000 bytes
    artifact = _persist(store, text=long)
    rendered = render_delivery(artifact)
    assert rendered.truncated and rendered.bound.total_lines == 3000
    assert rendered.bound.shown_lines == MODEL_TEXT_MAX_LINES
    body = rendered.text.split("\n\n")[1]
    assert body == "\n".join(f"line {n:05d}" for n in range(2000))
    assert (
        f"[Result truncated: 2000 of 3000 lines, {rendered.bound.shown_bytes} of 33000 bytes "
        f"shown. The full result is {artifact.ref}; pass it in files" in rendered.text
    )
    assert store.text_path(artifact.request_id).read_text() == long
    assert store.resolve(artifact.ref, owner_session_id=OWNER).text == long
    short = render_delivery(_persist(store, text="short\n"))
    assert not short.truncated and "Result truncated" not in short.text
