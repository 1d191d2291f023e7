"""``workspace.report_metadata`` and ``pane.report_metadata``, over the socket and through
``herdr workspace report-metadata`` / ``herdr pane report-metadata`` (reference §3.6, §4,
§6 and checklist item 12)."""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim.client import Subscription
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    Raw,
    Subscribe,
    cli_error,
    cli_quiet,
    failure,
    invalid_request,
    take,
)
from tests.waits import wait_until

PANE = "w1:p1"
CONFLICT = "cannot set and clear the same metadata field"
NOTHING = "missing metadata field to set or clear"


def ws_report(herdr_client: HerdrClient, **params: Any) -> dict[str, Any]:
    """``workspace.report_metadata`` on w1 (defaults: source ``s``)."""
    return herdr_client.call(
        "workspace.report_metadata", **{"workspace_id": "w1", "source": "s", **params}
    )


def pane_report(herdr_client: HerdrClient, **params: Any) -> dict[str, Any]:
    """``pane.report_metadata`` on w1:p1 (defaults: source ``s``)."""
    return herdr_client.call("pane.report_metadata", **{"pane_id": PANE, "source": "s", **params})


def ws_tokens(herdr_client: HerdrClient) -> dict[str, str] | None:
    """w1's tokens (None when WorkspaceInfo omits them)."""
    tokens: dict[str, str] | None = herdr_client.call("workspace.get", workspace_id="w1")[
        "workspace"
    ].get("tokens")
    return tokens


def pane_info(herdr_client: HerdrClient) -> dict[str, Any]:
    """w1:p1's PaneInfo."""
    info: dict[str, Any] = herdr_client.call("pane.get", pane_id=PANE)["pane"]
    return info


def presentation(herdr_client: HerdrClient) -> tuple[str | None, str | None, dict[str, str] | None]:
    """w1:p1's (title, display_agent, state_labels)."""
    info = pane_info(herdr_client)
    return info.get("title"), info.get("display_agent"), info.get("state_labels")


@pytest.fixture
def ws_events(ws: str, subscribe: Subscribe) -> Subscription:
    """``workspace.metadata_updated`` (plus ``workspace.renamed`` as a sentinel)."""
    return subscribe("workspace.metadata_updated", "workspace.renamed")


@pytest.fixture
def pane_events(ws: str, subscribe: Subscribe) -> Subscription:
    """``pane.updated`` (plus ``workspace.renamed`` as a sentinel)."""
    return subscribe("pane.updated", "workspace.renamed")


@pytest.fixture
def status_events(ws: str, subscribe: Subscribe) -> Subscription:
    """The filtered ``pane.agent_status_changed`` stream of w1:p1."""
    return subscribe({"type": "pane.agent_status_changed", "pane_id": PANE})


def sentinel(herdr_client: HerdrClient, sub: Subscription) -> None:
    """Prove nothing else was queued: the next event is the sentinel rename."""
    herdr_client.call("workspace.rename", workspace_id="w1", label="sentinel")
    assert take(sub, 1)[0]["event"] == "workspace_renamed"


# == workspace tokens ===========================================================================


def test_workspace_tokens_are_set_shown_and_announced(
    herdr_client: HerdrClient, ws_events: Subscription
) -> None:
    assert ws_report(herdr_client, tokens={"summary": "reviewing auth", "jj": "2 changes"}) == {
        "type": "ok"
    }
    assert ws_tokens(herdr_client) == {"summary": "reviewing auth", "jj": "2 changes"}
    event = take(ws_events, 1)[0]
    assert event["event"] == "workspace_metadata_updated"
    assert event["data"] == {
        "type": "workspace_metadata_updated",
        "workspace": herdr_client.call("workspace.get", workspace_id="w1")["workspace"],
    }


def test_workspace_tokens_patch_per_key(herdr_client: HerdrClient, ws_events: Subscription) -> None:
    ws_report(herdr_client, tokens={"summary": "one", "jj": "x"})
    ws_report(herdr_client, tokens={"summary": "done", "jj": None})
    assert ws_tokens(herdr_client) == {"summary": "done"}
    assert [e["data"]["workspace"].get("tokens") for e in take(ws_events, 2)] == [
        {"summary": "one", "jj": "x"},
        {"summary": "done"},
    ]


def test_workspace_without_tokens_omits_the_field(herdr_client: HerdrClient, ws: str) -> None:
    assert ws_tokens(herdr_client) is None
    ws_report(herdr_client, tokens={"a": "1"})
    ws_report(herdr_client, tokens={"a": None})
    assert "tokens" not in herdr_client.call("workspace.get", workspace_id="w1")["workspace"]


def test_unchanged_workspace_report_emits_nothing(
    herdr_client: HerdrClient, ws_events: Subscription
) -> None:
    ws_report(herdr_client, tokens={"a": "1"})
    take(ws_events, 1)
    ws_report(herdr_client, tokens={"a": "1"})
    ws_report(herdr_client, tokens={"gone": None})
    sentinel(herdr_client, ws_events)


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("  review\nready  ", "reviewready"),
        ("a\x1b[1mb", "a[1mb"),
        ("v" * 100, "v" * 80),
        ("caf\u00e9\u00a0bar", "caf\u00e9\u00a0bar"),
    ],
)
def test_token_values_are_sanitized(
    herdr_client: HerdrClient, ws: str, value: str, stored: str
) -> None:
    ws_report(herdr_client, tokens={"k": value})
    assert ws_tokens(herdr_client) == {"k": stored}


def test_blank_token_value_clears(herdr_client: HerdrClient, ws: str) -> None:
    ws_report(herdr_client, tokens={"k": "v", "keep": "1"})
    ws_report(herdr_client, tokens={"k": " \n "})
    assert ws_tokens(herdr_client) == {"keep": "1"}


def test_workspace_token_ttl_expires_with_an_event(
    herdr_client: HerdrClient, ws_events: Subscription
) -> None:
    ws_report(herdr_client, tokens={"short": "soon gone"}, ttl_ms=100)
    ws_report(herdr_client, source="other", tokens={"long": "stays"})
    take(ws_events, 2)
    expired = take(ws_events, 1)[0]
    assert expired["event"] == "workspace_metadata_updated"
    assert expired["data"]["workspace"]["tokens"] == {"long": "stays"}
    assert ws_tokens(herdr_client) == {"long": "stays"}


def test_stale_sequence_is_ok_but_ignored(
    herdr_client: HerdrClient, ws_events: Subscription
) -> None:
    assert ws_report(herdr_client, tokens={"a": "5"}, seq=5) == {"type": "ok"}
    assert ws_report(herdr_client, tokens={"a": "4"}, seq=4) == {"type": "ok"}
    assert ws_report(herdr_client, tokens={"a": "5b"}, seq=5) == {"type": "ok"}
    assert ws_tokens(herdr_client) == {"a": "5"}
    take(ws_events, 1)
    sentinel(herdr_client, ws_events)
    ws_report(herdr_client, tokens={"a": "6"}, seq=6)
    ws_report(herdr_client, source="other", tokens={"a": "unsequenced"})
    assert ws_tokens(herdr_client) == {"a": "unsequenced"}


def test_sequences_are_per_source(herdr_client: HerdrClient, ws: str) -> None:
    ws_report(herdr_client, source="one", tokens={"a": "1"}, seq=10)
    ws_report(herdr_client, source="two", tokens={"a": "2"}, seq=1)
    assert ws_tokens(herdr_client) == {"a": "2"}


def test_source_is_trimmed(herdr_client: HerdrClient, ws: str) -> None:
    ws_report(herdr_client, source="  user:me  ", tokens={"a": "1"}, seq=3)
    ws_report(herdr_client, source="user:me", tokens={"a": "2"}, seq=3)
    assert ws_tokens(herdr_client) == {"a": "1"}


SOURCE_ERRORS = [
    ("", "metadata source must not be empty"),
    ("   ", "metadata source must not be empty"),
    ("s" * 81, "metadata source must be 80 characters or fewer"),
    (
        "has space",
        (
            "metadata source may contain only ASCII letters, digits, colon, dot, underscore, "
            "and hyphen"
        ),
    ),
    (
        "caf\u00e9",
        (
            "metadata source may contain only ASCII letters, digits, colon, dot, underscore, "
            "and hyphen"
        ),
    ),
]


def test_source_of_80_chars_is_accepted(herdr_client: HerdrClient, ws: str) -> None:
    assert ws_report(herdr_client, source="a:." + "s" * 77, tokens={"a": "1"}) == {"type": "ok"}


TOKEN_ERRORS = [
    ({}, "missing token to set or clear"),
    ({f"k{i}": "v" for i in range(17)}, "a metadata report may update at most 16 tokens"),
    ({"bad.name": "v"}, "invalid metadata token key: bad.name"),
    ({"x" * 33: "v"}, f"invalid metadata token key: {'x' * 33}"),
    ({"": "v"}, "invalid metadata token key: "),
]


@pytest.mark.parametrize(
    ("params", "code", "message"),
    [
        *(({"source": s}, "invalid_metadata_source", m) for s, m in SOURCE_ERRORS),
        ({"ttl_ms": 0}, "invalid_metadata_ttl", "metadata ttl_ms must be at least 1"),
        (
            {"ttl_ms": 86_400_001},
            "invalid_metadata_ttl",
            "metadata ttl_ms must be 86400000 or less",
        ),
        *(({"tokens": t}, "invalid_metadata_token", m) for t, m in TOKEN_ERRORS),
    ],
)
def test_workspace_report_errors(
    herdr_client: HerdrClient, ws: str, params: dict[str, Any], code: str, message: str
) -> None:
    full = {"workspace_id": "w1", "source": "s", "tokens": {"a": "1"}, **params}
    assert failure(herdr_client.call, "workspace.report_metadata", **full) == (code, message)
    assert ws_tokens(herdr_client) is None


def test_workspace_checks_source_then_ttl_then_tokens(herdr_client: HerdrClient, ws: str) -> None:
    bad = {"workspace_id": "w1", "source": " ", "ttl_ms": 0, "tokens": {}}
    assert (
        failure(herdr_client.call, "workspace.report_metadata", **bad)[0]
        == "invalid_metadata_source"
    )
    bad["source"] = "ok"
    assert (
        failure(herdr_client.call, "workspace.report_metadata", **bad)[0] == "invalid_metadata_ttl"
    )
    bad["ttl_ms"] = 5
    assert (
        failure(herdr_client.call, "workspace.report_metadata", **bad)[0]
        == "invalid_metadata_token"
    )


def test_workspace_token_limit(herdr_client: HerdrClient, ws: str) -> None:
    for start in (0, 16):
        ws_report(herdr_client, tokens={f"k{i}": "v" for i in range(start, start + 16)})
    assert failure(
        herdr_client.call,
        "workspace.report_metadata",
        workspace_id="w1",
        source="s",
        tokens={"k32": "v"},
    ) == ("metadata_token_limit", "workspace metadata may contain at most 32 tokens")
    ws_report(herdr_client, tokens={"k32": "v", "k0": None})
    assert len(ws_tokens(herdr_client) or {}) == 32


def test_failed_token_limit_does_not_consume_the_sequence(
    herdr_client: HerdrClient, ws: str
) -> None:
    for start in (0, 16):
        ws_report(
            herdr_client, source="filler", tokens={f"k{i}": "v" for i in range(start, start + 16)}
        )
    assert (
        failure(
            herdr_client.call,
            "workspace.report_metadata",
            workspace_id="w1",
            source="seq",
            tokens={"new": "v"},
            seq=7,
        )[0]
        == "metadata_token_limit"
    )
    ws_report(herdr_client, source="filler", tokens={"k0": None})
    ws_report(herdr_client, source="seq", tokens={"new": "v"}, seq=7)
    assert (ws_tokens(herdr_client) or {}).get("new") == "v"


def test_workspace_sequence_source_limit(herdr_client: HerdrClient, ws: str) -> None:
    for index in range(32):
        ws_report(herdr_client, source=f"src{index}", tokens={"a": str(index)}, seq=1)
    assert failure(
        herdr_client.call,
        "workspace.report_metadata",
        workspace_id="w1",
        source="src32",
        tokens={"a": "x"},
        seq=1,
    ) == (
        "metadata_sequence_source_limit",
        "workspace metadata may track at most 32 sequenced sources",
    )
    ws_report(herdr_client, source="src32", tokens={"a": "unsequenced"})
    ws_report(herdr_client, source="src0", tokens={"b": "known"}, seq=2)
    assert ws_tokens(herdr_client) == {"a": "unsequenced", "b": "known"}


def test_workspace_report_targets(herdr_client: HerdrClient, ws: str) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    ws_report(herdr_client, workspace_id="2", tokens={"a": "by position"})
    assert herdr_client.call("workspace.get", workspace_id="w2")["workspace"]["tokens"] == {
        "a": "by position"
    }
    assert failure(
        herdr_client.call, "workspace.report_metadata", workspace_id="w9", source="", tokens={}
    ) == (
        "workspace_not_found",
        "workspace w9 not found",
    )


def test_missing_position_is_checked_after_the_params_like_herdr(
    herdr_client: HerdrClient, ws: str
) -> None:
    # A position parses to an index first; Herdr looks it up only after validating.
    assert failure(
        herdr_client.call, "workspace.report_metadata", workspace_id="5", source="", tokens={}
    )[0] == ("invalid_metadata_source")
    assert failure(
        herdr_client.call,
        "workspace.report_metadata",
        workspace_id="5",
        source="s",
        tokens={"a": "1"},
    ) == ("workspace_not_found", "workspace 5 not found")


# == pane tokens ===================================================================================


def test_pane_tokens_bump_revision_and_emit_pane_updated(
    herdr_client: HerdrClient, pane_events: Subscription
) -> None:
    before = pane_info(herdr_client)["revision"]
    assert pane_report(herdr_client, tokens={"branch": "main"}) == {"type": "ok"}
    info = pane_info(herdr_client)
    assert (info["tokens"], info["revision"]) == ({"branch": "main"}, before + 1)
    event = take(pane_events, 1)[0]
    assert event["event"] == "pane_updated"
    assert (event["data"]["pane"]["tokens"], event["data"]["pane"]["revision"]) == (
        {"branch": "main"},
        before + 1,
    )


def test_unchanged_pane_tokens_do_not_bump(
    herdr_client: HerdrClient, pane_events: Subscription
) -> None:
    pane_report(herdr_client, tokens={"a": "1"})
    take(pane_events, 1)
    revision = pane_info(herdr_client)["revision"]
    pane_report(herdr_client, tokens={"a": "1"})
    assert pane_info(herdr_client)["revision"] == revision
    sentinel(herdr_client, pane_events)


def test_pane_token_ttl_expires_with_pane_updated(
    herdr_client: HerdrClient, pane_events: Subscription
) -> None:
    pane_report(herdr_client, tokens={"t": "brief"}, ttl_ms=100)
    revision = take(pane_events, 1)[0]["data"]["pane"]["revision"]
    expired = take(pane_events, 1)[0]["data"]["pane"]
    assert "tokens" not in expired
    assert expired["revision"] == revision + 1
    assert "tokens" not in pane_info(herdr_client)


def test_pane_token_limit(herdr_client: HerdrClient, ws: str) -> None:
    for start in (0, 16):
        pane_report(herdr_client, tokens={f"k{i}": "v" for i in range(start, start + 16)})
    assert failure(
        herdr_client.call, "pane.report_metadata", pane_id=PANE, source="s", tokens={"x": "v"}
    ) == (
        "metadata_token_limit",
        "pane metadata may contain at most 32 tokens",
    )


def test_pane_sequence_source_limit_counts_token_reports_only(
    herdr_client: HerdrClient, ws: str
) -> None:
    for index in range(40):
        pane_report(herdr_client, source=f"title{index}", title="t", seq=1)
    for index in range(32):
        pane_report(herdr_client, source=f"tok{index}", tokens={"a": str(index)}, seq=1)
    assert failure(
        herdr_client.call,
        "pane.report_metadata",
        pane_id=PANE,
        source="tok32",
        tokens={"a": "x"},
        seq=1,
    ) == ("metadata_sequence_source_limit", "pane metadata may track at most 32 sequenced sources")
    pane_report(herdr_client, source="title0", tokens={"b": "1"}, seq=1)  # stale: ignored, still ok
    assert pane_info(herdr_client)["tokens"] == {"a": "31"}


# == pane presentation (title, display name, state labels) =========================================


def test_title_metadata_emits_status_changed_and_expires(
    herdr_client: HerdrClient, status_events: Subscription
) -> None:
    pane_report(herdr_client, title="Fixing tests", ttl_ms=100)
    shown = take(status_events, 1)[0]
    assert shown == {
        "event": "pane.agent_status_changed",
        "data": {
            "pane_id": PANE,
            "workspace_id": "w1",
            "agent_status": "unknown",
            "title": "Fixing tests",
        },
    }
    expired = take(status_events, 1)[0]
    assert expired["data"] == {"pane_id": PANE, "workspace_id": "w1", "agent_status": "unknown"}
    assert presentation(herdr_client) == (None, None, None)


def test_presentation_fields_show_on_the_pane(
    herdr_client: HerdrClient, status_events: Subscription
) -> None:
    pane_report(
        herdr_client,
        title="  Review\tPR  ",
        display_agent="Claude Code",
        state_labels={" IDLE ": "waiting", "working": "busy", "done": "  "},
    )
    assert presentation(herdr_client) == (
        "ReviewPR",
        "Claude Code",
        {"idle": "waiting", "working": "busy"},
    )
    data = take(status_events, 1)[0]["data"]
    assert (data["title"], data["display_agent"], data["state_labels"]) == (
        "ReviewPR",
        "Claude Code",
        {"idle": "waiting", "working": "busy"},
    )


def test_presentation_does_not_touch_revision_or_emit_pane_updated(
    herdr_client: HerdrClient, pane_events: Subscription
) -> None:
    revision = pane_info(herdr_client)["revision"]
    pane_report(herdr_client, title="t")
    assert pane_info(herdr_client)["revision"] == revision
    sentinel(herdr_client, pane_events)


def test_report_without_clears_replaces_the_sources_record(
    herdr_client: HerdrClient, ws: str
) -> None:
    pane_report(herdr_client, title="first", state_labels={"idle": "zzz"})
    pane_report(herdr_client, display_agent="Pi")
    assert presentation(herdr_client) == (None, "Pi", None)


def test_report_with_a_clear_patches_the_sources_record(herdr_client: HerdrClient, ws: str) -> None:
    pane_report(herdr_client, title="keep", display_agent="Pi")
    pane_report(herdr_client, clear_display_agent=True, state_labels={"blocked": "needs you"})
    assert presentation(herdr_client) == ("keep", None, {"blocked": "needs you"})
    pane_report(herdr_client, clear_title=True, clear_state_labels=True)
    assert presentation(herdr_client) == (None, None, None)


def test_newest_report_wins_per_field_across_sources(herdr_client: HerdrClient, ws: str) -> None:
    pane_report(herdr_client, source="a", title="from a", display_agent="A")
    pane_report(herdr_client, source="b", title="from b")
    assert presentation(herdr_client) == ("from b", "A", None)
    pane_report(herdr_client, source="a", clear_display_agent=True, state_labels={"idle": "a idle"})
    assert presentation(herdr_client)[0] == "from b"  # a's title was reported before b's
    pane_report(herdr_client, source="b", clear_title=True)
    assert presentation(herdr_client) == ("from a", None, {"idle": "a idle"})


def test_clear_only_report_keeps_the_records_ttl(
    herdr_client: HerdrClient, status_events: Subscription
) -> None:
    pane_report(herdr_client, title="brief", display_agent="X", ttl_ms=300)
    take(status_events, 1)
    pane_report(herdr_client, clear_display_agent=True)
    assert take(status_events, 1)[0]["data"].get("title") == "brief"
    assert "title" not in take(status_events, 1)[0]["data"]


def test_stale_presentation_report_is_ignored(herdr_client: HerdrClient, ws: str) -> None:
    pane_report(herdr_client, title="new", seq=2)
    assert pane_report(herdr_client, title="old", seq=1) == {"type": "ok"}
    assert presentation(herdr_client)[0] == "new"


def test_unchanged_presentation_emits_nothing_new(
    herdr_client: HerdrClient, status_events: Subscription
) -> None:
    pane_report(herdr_client, title="same")
    take(status_events, 1)
    pane_report(herdr_client, title="same")
    pane_report(herdr_client, title="other")
    assert take(status_events, 1)[0]["data"]["title"] == "other"


def test_report_for_another_agent_is_not_shown(herdr_client: HerdrClient, ws: str) -> None:
    # A plain shell pane has no agent, so a report scoped to `pi` does not apply to it.
    assert pane_report(herdr_client, agent="pi", title="pi task") == {"type": "ok"}
    assert presentation(herdr_client) == (None, None, None)


def test_report_scoped_to_another_source_is_not_shown(herdr_client: HerdrClient, ws: str) -> None:
    # `applies_to_source` must name the pane's hook authority; a shell pane has none.
    assert pane_report(herdr_client, applies_to_source="herdr:pi", title="scoped") == {"type": "ok"}
    assert presentation(herdr_client) == (None, None, None)


def test_tokens_and_presentation_in_one_report(
    herdr_client: HerdrClient, pane_events: Subscription, status_events: Subscription
) -> None:
    pane_report(herdr_client, title="both", tokens={"k": "v"})
    assert take(status_events, 1)[0]["data"]["title"] == "both"
    assert take(pane_events, 1)[0]["data"]["pane"]["tokens"] == {"k": "v"}


# == pane errors ===================================================================================


@pytest.mark.parametrize(
    ("params", "code", "message"),
    [
        ({"agent": "  "}, "invalid_agent", "agent label must not be empty"),
        ({"agent": "", "source": ""}, "invalid_agent", "agent label must not be empty"),
        *(({"source": s}, "invalid_metadata_source", m) for s, m in SOURCE_ERRORS),
        (
            {"applies_to_source": " "},
            "invalid_metadata_source",
            "metadata source must not be empty",
        ),
        (
            {"tokens": {"bad key": "v"}},
            "invalid_metadata_token",
            "invalid metadata token key: bad key",
        ),
        ({"ttl_ms": 0}, "invalid_metadata_ttl", "metadata ttl_ms must be at least 1"),
        (
            {"state_labels": {"Sleeping": "z"}},
            "invalid_state_label",
            "unknown state label: sleeping",
        ),
        ({"title": "t", "clear_title": True}, "invalid_metadata_request", CONFLICT),
        ({"title": "  ", "clear_title": True}, "invalid_metadata_request", CONFLICT),
        ({"display_agent": "d", "clear_display_agent": True}, "invalid_metadata_request", CONFLICT),
        (
            {"state_labels": {"idle": ""}, "clear_state_labels": True},
            "invalid_metadata_request",
            CONFLICT,
        ),
        ({}, "invalid_metadata_request", NOTHING),
        ({"title": " \n "}, "invalid_metadata_request", NOTHING),
        ({"state_labels": {"idle": "  "}}, "invalid_metadata_request", NOTHING),
    ],
)
def test_pane_report_errors(
    herdr_client: HerdrClient, ws: str, params: dict[str, Any], code: str, message: str
) -> None:
    full = {"pane_id": PANE, "source": "s", **params}
    assert failure(herdr_client.call, "pane.report_metadata", **full) == (code, message)
    assert presentation(herdr_client) == (None, None, None)


@pytest.mark.parametrize(
    ("method", "params", "needle"),
    [
        (
            "workspace.report_metadata",
            {"workspace_id": "w1", "source": "s"},
            "missing field `tokens`",
        ),
        (
            "workspace.report_metadata",
            {"workspace_id": "w1", "tokens": {}},
            "missing field `source`",
        ),
        (
            "workspace.report_metadata",
            {"workspace_id": "w1", "source": "s", "tokens": {"a": 1}},
            "invalid type",
        ),
        (
            "workspace.report_metadata",
            {"workspace_id": "w1", "source": "s", "tokens": {}, "seq": -1},
            "invalid value",
        ),
        ("pane.report_metadata", {"pane_id": PANE}, "missing field `source`"),
        ("pane.report_metadata", {"source": "s"}, "missing field `pane_id`"),
        (
            "pane.report_metadata",
            {"pane_id": PANE, "source": "s", "state_labels": {"idle": 1}},
            "invalid type",
        ),
        (
            "pane.report_metadata",
            {"pane_id": PANE, "source": "s", "clear_title": "yes"},
            "invalid type",
        ),
        ("pane.report_metadata", {"pane_id": PANE, "source": "s", "ttl_ms": 1.5}, "invalid type"),
    ],
)
def test_malformed_params_are_invalid_request(
    raw: Raw, method: str, params: dict[str, Any], needle: str
) -> None:
    assert needle in invalid_request(raw(method, **params))


def test_pane_report_on_unknown_pane(herdr_client: HerdrClient, ws: str) -> None:
    assert failure(
        herdr_client.call, "pane.report_metadata", pane_id="w1:p9", source="", title="t"
    ) == (
        "pane_not_found",
        "pane w1:p9 not found",
    )


def test_pane_report_accepts_legacy_pane_ids(herdr_client: HerdrClient, ws: str) -> None:
    herdr_client.call("pane.report_metadata", pane_id="w1-1", source="s", tokens={"legacy": "yes"})
    assert pane_info(herdr_client)["tokens"] == {"legacy": "yes"}


# == the herdr CLI, end to end =====================================================================


def test_cli_workspace_report_metadata(
    herdr_cli: HerdrCli, herdr_client: HerdrClient, ws: str
) -> None:
    done = herdr_cli(
        "workspace", "report-metadata", "w1", "--source", "cli", "--token", "a=1", "--token",
        "b=two words", "--seq", "3",
    )  # fmt: skip
    cli_quiet(done)
    assert ws_tokens(herdr_client) == {"a": "1", "b": "two words"}
    herdr_cli(
        "workspace", "report-metadata", "w1", "--source", "cli", "--clear-token", "a", "--seq", "4"
    )
    assert ws_tokens(herdr_client) == {"b": "two words"}
    stale = herdr_cli(
        "workspace", "report-metadata", "1", "--source", "cli", "--token", "b=x", "--seq", "2"
    )
    assert stale.code == 0
    assert ws_tokens(herdr_client) == {"b": "two words"}


def test_cli_workspace_report_metadata_ttl(
    herdr_cli: HerdrCli, herdr_client: HerdrClient, ws: str
) -> None:
    herdr_cli(
        "workspace", "report-metadata", "w1", "--source", "cli", "--token", "t=x", "--ttl-ms", "50"
    )
    wait_until(lambda: ws_tokens(herdr_client) is None, what="the token to expire")


def test_cli_workspace_report_metadata_server_error(herdr_cli: HerdrCli, ws: str) -> None:
    result = herdr_cli(
        "workspace", "report-metadata", "w1", "--source", "bad source", "--token", "a=1"
    )
    assert cli_error(result) == {
        "id": "cli:request",
        "error": {"code": "invalid_metadata_source", "message": SOURCE_ERRORS[3][1]},
    }
    missing = herdr_cli("workspace", "report-metadata", "w9", "--source", "s", "--token", "a=1")
    assert cli_error(missing)["error"] == {
        "code": "workspace_not_found",
        "message": "workspace w9 not found",
    }


def test_cli_pane_report_metadata(herdr_cli: HerdrCli, herdr_client: HerdrClient, ws: str) -> None:
    done = herdr_cli(
        "pane", "report-metadata", PANE, "--source", "cli", "--title", "From CLI",
        "--display-agent", "Shell", "--state-label", "idle=resting", "--token", "k=v",
    )  # fmt: skip
    cli_quiet(done)
    assert presentation(herdr_client) == ("From CLI", "Shell", {"idle": "resting"})
    assert pane_info(herdr_client)["tokens"] == {"k": "v"}
    herdr_cli(
        "pane", "report-metadata", PANE, "--source", "cli", "--clear-title", "--clear-token", "k"
    )
    assert presentation(herdr_client) == (None, "Shell", {"idle": "resting"})
    assert "tokens" not in pane_info(herdr_client)


def test_cli_pane_report_metadata_server_error(herdr_cli: HerdrCli, ws: str) -> None:
    result = herdr_cli(
        "pane", "report-metadata", PANE, "--source", "s", "--agent", " ", "--title", "t"
    )
    assert cli_error(result) == {
        "id": "cli:request",
        "error": {"code": "invalid_agent", "message": "agent label must not be empty"},
    }
