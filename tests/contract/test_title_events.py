"""A title set with OSC 0/2 bumps the pane's ``revision`` and emits ``pane_updated`` when the
stripped title changes; a spinner frame alone changes neither.

Herdr: ``set_terminal_title`` (``src/terminal/state.rs``) bumps ``revision`` only when the
stripped title changed, and ``sync_terminal_titles`` (``src/app/terminal_titles.rs``, test
``sync_keeps_latest_raw_title_and_emits_only_for_stripped_changes``) emits ``pane_updated``
for exactly those panes.
"""

from __future__ import annotations

from typing import Any

from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Subscribe, take


def _set_title(herdr_client: HerdrClient, pane: str, octal_title: str, osc: int = 2) -> None:
    herdr_client.call(
        "pane.send_text", pane_id=pane, text=f"printf '\\033]{osc};{octal_title}\\007'\r"
    )


def _info(herdr_client: HerdrClient, pane: str) -> dict[str, Any]:
    info: dict[str, Any] = herdr_client.call("pane.get", pane_id=pane)["pane"]
    return info


def test_title_change_bumps_revision_and_emits_pane_updated(
    herdr_client: HerdrClient, subscribe: Subscribe, pane: str
) -> None:
    before = _info(herdr_client, pane)["revision"]
    sub = subscribe("pane.updated")
    _set_title(herdr_client, pane, "building")
    [event] = take(sub, 1)
    assert event["event"] == "pane_updated"
    updated = event["data"]["pane"]
    assert (updated["pane_id"], updated["terminal_title"]) == (pane, "building")
    assert updated["revision"] == before + 1
    assert _info(herdr_client, pane)["revision"] == before + 1

    # OSC 0 sets the title too; a spinner glyph in front keeps the stripped title the same
    _set_title(herdr_client, pane, "\\342\\240\\213 building", osc=0)
    _set_title(herdr_client, pane, "tests")
    [event] = take(sub, 1)
    updated = event["data"]["pane"]
    assert (updated["terminal_title"], updated["revision"]) == ("tests", before + 2)
