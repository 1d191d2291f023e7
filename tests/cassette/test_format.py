"""The cassette format round-trips (hypothesis), the writer and reader agree, and the
normalising rules do what docs/simulator/record-replay.md says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herdr_sim.cassette.format import (
    CLOSERS,
    Cassette,
    CassetteError,
    CassetteWriter,
    Direction,
    Header,
    Record,
    load,
    loads,
)
from herdr_sim.cassette.normalise import (
    MISSING,
    FieldPattern,
    IdMap,
    Rules,
    differences,
    join_path,
    screen_lines,
    split_path,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
offsets = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
headers = st.builds(
    Header,
    recorder=st.text(max_size=20),
    recorded_at=st.text(max_size=25),
    upstream_version=st.none() | st.text(max_size=10),
    upstream_protocol=st.none() | st.integers(min_value=0, max_value=1000),
    runtime_dirs=st.lists(st.text(max_size=20), max_size=3).map(tuple),
    redacted=st.booleans(),
)


@st.composite
def records(draw: st.DrawFn) -> Record:
    conn = draw(st.integers(min_value=1, max_value=50))
    t = draw(offsets)
    kind = draw(st.sampled_from(["open", "send", "recv", "close"]))
    if kind == "open":
        return Record(conn, "open", t)
    if kind == "close":
        return Record(
            conn, "close", t, by=draw(st.sampled_from(CLOSERS)), unfinished=draw(st.booleans())
        )
    direction: Direction = "send" if kind == "send" else "recv"
    partial = draw(st.booleans())
    if draw(st.booleans()):
        return Record(conn, direction, t, raw=draw(st.text()), partial=partial)
    return Record(conn, direction, t, line=draw(json_values), partial=partial)


cassettes = st.builds(
    Cassette, header=headers, records=st.lists(records(), max_size=12).map(tuple), duration=offsets
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(cassettes)
def test_a_cassette_round_trips_through_its_text(cassette: Cassette) -> None:
    text = cassette.dumps()
    assert loads(text) == cassette
    assert all(line for line in text.split("\n")[:-1])  # one record per line, no blank


@settings(max_examples=50, deadline=None)
@given(headers, st.lists(records(), max_size=8))
def test_the_writer_writes_what_the_reader_reads(
    tmp_path_factory: pytest.TempPathFactory, header: Header, written: list[Record]
) -> None:
    path = tmp_path_factory.mktemp("w") / "c.jsonl"
    writer = CassetteWriter(path, header)
    for record in written:
        writer.record(record)
    with pytest.raises(CassetteError, match="no end record"):
        load(path)  # still recording: not a whole cassette yet
    writer.finish(12.5)
    writer.record(Record(1, "open", 13.0))  # after the end: ignored
    assert writer.finished
    assert load(path) == Cassette(header, tuple(written), 12.5)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(cassettes, st.data())
def test_any_cut_of_a_cassette_is_refused(cassette: Cassette, data: st.DataObject) -> None:
    """A cassette cut anywhere short of its end (a killed recorder) never reads as whole."""
    text = cassette.dumps()
    cut = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    with pytest.raises(CassetteError):
        loads(text[:cut])


def test_records_after_the_end_and_bad_headers_are_refused() -> None:
    whole = Cassette(Header("r", "now", "0.9.2", 22)).dumps()
    with pytest.raises(CassetteError, match="after the end"):
        loads(whole + json.dumps({"conn": 1, "dir": "open", "t": 0}) + "\n")
    with pytest.raises(CassetteError, match="format 2"):
        loads(whole.replace('"herdr_cassette":1', '"herdr_cassette":2'))
    with pytest.raises(CassetteError, match="not a cassette header"):
        loads('{"conn":1}\n')
    bad = whole.replace('"protocol":22', '"protocol":"22"')
    with pytest.raises(CassetteError, match="wrong type"):
        loads(bad)


# -- normalising --------------------------------------------------------------------------


def test_ids_learnt_from_an_answer_rewrite_later_requests() -> None:
    ids = IdMap()
    ids.learn(
        {"result": {"workspace": {"workspace_id": "w3"}, "root_pane": {"pane_id": "w3:p1"}}},
        {"result": {"workspace": {"workspace_id": "w1"}, "root_pane": {"pane_id": "w1:p1"}}},
    )
    assert ids.rewrite({"pane_id": "w3:p1", "target_pane_id": "w3:p4"}) == {
        "pane_id": "w1:p1",
        "target_pane_id": "w1:p4",  # follows its workspace though never seen itself
    }
    ids.learn({"pane_id": "w3:p1"}, {"pane_id": "w1:p9"})  # first sight wins
    assert ids.translate("w3:p1") == "w1:p1"
    assert ids.rewrite({"label": "w3"}) == {"label": "w3"}  # only id fields are ids


def test_volatile_values_runtime_paths_and_screen_text_are_normalised() -> None:
    rules = Rules()
    recorded = {
        "pid": 10,
        "revision": 3,
        "created_at": "yesterday",
        "cwd": "/tmp/rec/rt/x",
        "text": "user@host:~$ echo hi   \nhi\n\nuser@host:~$ ",
    }
    replayed = {
        "pid": 99,
        "revision": 0,
        "created_at": "today",
        "cwd": "/tmp/rep/x",
        "text": "$ echo hi\nhi\n$",
    }
    a = rules.normalise(recorded, ("/tmp/rec/rt",))
    b = rules.normalise(replayed, ("/tmp/rep",))
    assert list(differences(a, b)) == []
    assert a["text"] == ["echo hi", "hi"]
    # presence still counts: a volatile field one side lacks is a difference
    del b["pid"]
    assert list(differences(a, b)) == [("pid", "<volatile>", MISSING)]
    assert Rules(screen="exact").normalise({"text": "a "}, ())["text"] == "a "
    assert Rules(screen="ignore").normalise({"text": "a"}, ()) == {"text": "<volatile>"}


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("result.workspace.label", "result.workspace.label", True),
        ("result.workspace", "result.workspace.label", True),
        ("result.workspaces[*].label", "result.workspaces[3].label", True),
        ("result.*.label", "result.tab.label", True),
        ("label", "result.panes[0].label", True),
        ("result.workspace.label", "result.tab.label", False),
        ("result.workspaces[0].label", "result.workspaces[1].label", False),
    ],
)
def test_ignore_patterns(pattern: str, path: str, hit: bool) -> None:
    assert FieldPattern(pattern).matches(split_path(path)) is hit
    assert join_path(split_path(path)) == path


def test_an_ignored_field_is_not_compared() -> None:
    rules = Rules(ignore=(FieldPattern("result.workspace.label"),))
    a: dict[str, Any] = {"result": {"workspace": {"label": "a", "number": 1}}}
    b: dict[str, Any] = {"result": {"workspace": {"label": "b", "number": 1}}}
    assert list(differences(rules.normalise(a, ()), rules.normalise(b, ()))) == []


def test_screen_lines_drop_prompts_blank_lines_and_trailing_spaces() -> None:
    assert screen_lines("me@box:/srv# ls  \nfile\n\n> cont\n❯ \n%") == ["ls", "file", "cont"]
    # typed before the prompt showed: echoed, then shown again after the prompt
    assert screen_lines("echo hi\n$ echo hi\nhi\n$") == ["echo hi", "hi"]


def test_a_cassette_path_that_cannot_be_read_is_a_cassette_error(tmp_path: Path) -> None:
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\n")
    with pytest.raises(CassetteError, match="not UTF-8"):
        load(tmp_path / "bin.jsonl")
