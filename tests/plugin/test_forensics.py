"""pytest_herdr.forensics: what a failing test's report shows — pane screens, the protocol
tail, the agent timeline — as text and as one HTML page; never raising, never leaking env."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from herdr_sim import Simulator
from pytest_herdr import WireClient
from pytest_herdr.events import EventRecorder
from pytest_herdr.forensics import Forensics, WireTail
from tests.contract.helpers import Api, enter, split, wait_line
from tests.waits import SCALE, wait_until

pytestmark = pytest.mark.sim_settings(agent_detection=False)


@pytest.fixture
def tail(sim: Simulator) -> Iterator[WireTail]:
    """A protocol tail on the in-process simulator's wire."""
    with WireTail(size=6).attached() as attached:
        yield attached


@pytest.fixture
def forensics(sim: Simulator, tail: WireTail) -> Iterator[Forensics]:
    """Forensics for ``sim`` with events recorded from setup to teardown, like the plugin's
    fixtures."""
    events = EventRecorder(sim.socket_path).start()
    yield Forensics(sim.socket_path, tail=tail, events=events, title="test_x <failing>")
    events.stop()


@pytest.fixture
def two_panes(sim: Simulator) -> tuple[str, str]:
    """``w1:p1`` showing a marker line and ``<script>``, ``w1:p2`` split to its right."""
    client = WireClient(sim.socket_path, id_prefix="herdr-sim")  # as the api fixture
    root: str = client.call("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    wait_line(client, root, r"^\$")
    enter(client, root, "echo 'forensic-marker <script>alert(1)</script>'")
    wait_line(client, root, r"^forensic-marker", source="visible")
    return root, split(client, root)


def test_the_text_report_boxes_each_pane_screen_with_its_caption(
    forensics: Forensics, two_panes: tuple[str, str]
) -> None:
    text = forensics.render_text()
    assert "──────── panes" in text
    assert "┌─ w1:p1 · agent - · unknown · focused · 47x39 at 26,1 " in text
    assert "┌─ w1:p2 · agent - · unknown · 47x39 at 73,1 " in text
    assert "│forensic-marker <script>alert(1)</script>" in text
    assert "workspace w1 'tmp' (focused) · tab w1:t1 '1' (active)" in text


def test_the_protocol_tail_keeps_the_last_requests_and_responses(
    forensics: Forensics, tail: WireTail, two_panes: tuple[str, str]
) -> None:
    text = forensics.render_text()
    assert f"protocol tail (last 6 of {tail.seen})" in text
    assert tail.seen > 6
    assert '→ {"id":"herdr-sim:' in text
    assert '"method":"pane.split"' in text
    assert '← {"id":"herdr-sim:' in text
    # the forensics' own requests stay out of the tail
    assert "session.snapshot" not in text


def test_the_agent_timeline_records_status_changes_relative_to_the_start(
    forensics: Forensics, api: Api, two_panes: tuple[str, str]
) -> None:
    root, _ = two_panes
    api("pane.report_agent", pane_id=root, source="my-agent", agent="my-agent", state="working")
    entry = wait_until(
        lambda: next((e for e in forensics.timeline_entries() if e.what == "status"), None),
        what="a status entry",
    )
    assert (entry.pane_id, entry.agent, entry.status) == (root, "my-agent", "working")
    assert 0 < entry.at < 10
    text = forensics.render_text()
    assert "──────── agent timeline" in text
    assert f"{root}    status agent=my-agent status=working" in text
    assert f"{root}    created" in text


def test_the_timeline_follows_panes_that_existed_before_recording(
    sim: Simulator, api: Api, two_panes: tuple[str, str]
) -> None:
    root, _ = two_panes
    events = EventRecorder(sim.socket_path).start()
    try:
        api("pane.report_agent", pane_id=root, source="my-agent", agent="my-agent", state="blocked")
        forensics = Forensics(sim.socket_path, events=events)
        entry = wait_until(
            lambda: next((e for e in forensics.timeline_entries() if e.what == "status"), None),
            what="a status entry",
        )
    finally:
        events.stop()
    assert (entry.pane_id, entry.status, entry.agent) == (root, "blocked", "my-agent")


def test_env_values_never_reach_the_report(forensics: Forensics, api: Api, tmp_path: Path) -> None:
    api("workspace.create", cwd="/tmp", env={"API_TOKEN": "hunter2-secret"})
    text = forensics.render_text()
    page = forensics.render_html(tmp_path / "page.html").read_text()
    assert '"API_TOKEN":"<redacted>"' in text
    assert "hunter2-secret" not in text
    assert "hunter2-secret" not in page


def test_the_html_page_draws_each_pane_at_its_rectangle(
    forensics: Forensics, two_panes: tuple[str, str], tmp_path: Path
) -> None:
    page = forensics.render_html(tmp_path / "out" / "test_x.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    # rectangles are drawn relative to the pane area (Herdr's starts at 26,1: sidebar, tab bar)
    assert 'data-pane-id="w1:p1" data-rect="0,0,47,39"' in page
    assert "left:calc(0 * 1ch);top:calc(0 * 1.25em);width:calc(47 * 1ch)" in page
    assert 'data-pane-id="w1:p2" data-rect="47,0,47,39"' in page
    assert "left:calc(47 * 1ch)" in page
    assert '<section class="tab" data-tab-id="w1:t1">' in page
    assert '<div class="pane status-unknown focused" data-pane-id="w1:p1"' in page
    assert '<div class="pane status-unknown" data-pane-id="w1:p2"' in page


def test_the_html_page_escapes_screen_text_and_has_no_external_assets(
    forensics: Forensics, two_panes: tuple[str, str], tmp_path: Path
) -> None:
    page = forensics.render_html(tmp_path / "page.html").read_text()
    assert "forensic-marker &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page
    assert "test_x &lt;failing&gt;" in page
    assert "http://" not in page and "https://" not in page
    assert "src=" not in page and "<link" not in page


def test_tabs_are_sections_of_the_page(
    forensics: Forensics, api: Api, two_panes: tuple[str, str], tmp_path: Path
) -> None:
    api("tab.create", workspace_id="w1")
    page = forensics.render_html(tmp_path / "page.html").read_text()
    assert page.count('<section class="tab"') == 2
    assert '<section class="tab" data-tab-id="w1:t2">' in page


def test_a_dead_server_is_reported_not_raised(short_dir: Path, tmp_path: Path) -> None:
    forensics = Forensics(short_dir / "nobody.sock")
    started = time.monotonic()
    text = forensics.render_text()
    forensics.render_html(tmp_path / "dead.html")
    assert time.monotonic() - started < 2 * SCALE
    assert "! could not read session.snapshot: session.snapshot: " in text
    assert "! could not read the panes: workspace.list: " in text
    assert text.endswith("(not recorded)\n")


def test_stopping_the_recorder_after_the_server_died_is_bounded(sim: Simulator) -> None:
    events = EventRecorder(sim.socket_path).start()
    sim.stop()
    started = time.monotonic()
    events.stop()
    assert time.monotonic() - started < 1.5 * SCALE
