"""Methods Herdr answers without a TUI client, answered as headless Herdr answers them.

Each test names the Herdr source it follows (herdrdev/herdr 0.8.2, the newest source we can
read). Every request and answer is also checked against the protocol-22 schema by the
suite's wire tap (``tests/conftest.py``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import RequestFailed, Subscription
from herdr_sim.registry import UNSUPPORTED
from pytest_herdr.cli_runner import HerdrCli
from tests.waits import SCALE

Api = Callable[..., dict[str, Any]]

HEADLESS = (
    "workspace.move_block",
    "pane.input.set",
    "popup.close",
    "client.window_title.set",
    "client.window_title.clear",
    "pane.graphics.info",
    "pane.graphics.set",
    "pane.graphics.clear",
    "server.reload_config",
)


def failure(api: Api, method: str, **params: Any) -> tuple[str, str]:
    """(code, message) of a call that must fail."""
    try:
        api(method, **params)
    except RequestFailed as failed:
        return failed.code, failed.message
    raise AssertionError(f"{method} did not fail")


def order(api: Api) -> list[str]:
    return [ws["workspace_id"] for ws in api("workspace.list")["workspaces"]]


@pytest.fixture
def five(api: Api) -> Api:
    """Workspaces w1..w5 in order, w1 active."""
    api("workspace.create", cwd="/tmp", focus=True)
    for _ in range(4):
        api("workspace.create", cwd="/tmp")
    return api


def test_headless_methods_are_implemented() -> None:
    assert not set(HEADLESS) & set(UNSUPPORTED)


# -- workspace.move_block -------------------------------------------------------------------


def test_move_block_gathers_the_block_before_the_target_and_emits_reordered(
    sim: Simulator, five: Api
) -> None:
    """``src/app/actions.rs`` ``move_workspace_block`` and its test
    ``move_workspace_block_collects_non_contiguous_members``: the block leaves the order,
    goes in as given before ``before_workspace_id``; the active workspace stays active;
    ``workspace_reordered`` carries the ids, the target and the new list
    (``src/app/api/workspaces.rs`` ``handle_workspace_move_block``)."""
    mark = len(sim.events)
    result = five("workspace.move_block", workspace_ids=["w3", "w1", "w4"], before_workspace_id="5")
    assert [ws["workspace_id"] for ws in result["workspaces"]] == ["w2", "w3", "w1", "w4", "w5"]
    assert order(five) == ["w2", "w3", "w1", "w4", "w5"]
    assert five("pane.current")["pane"]["workspace_id"] == "w1"
    # the active w1 moved from index 0 to 2: Herdr's focus check, keyed by the active index
    # (src/app/api.rs sync_focus_events, run after every request), sends the focus events
    event, *focus = sim.events[mark:]
    assert [e["event"] for e in focus] == ["workspace_focused", "tab_focused", "pane_focused"]
    assert event["event"] == "workspace_reordered"
    assert event["data"]["workspace_ids"] == ["w3", "w1", "w4"]
    assert event["data"]["before_workspace_id"] == "w5"
    assert event["data"]["workspaces"] == result["workspaces"]


def test_move_block_to_the_end_has_no_before_id_and_a_no_op_emits_nothing(
    sim: Simulator, five: Api
) -> None:
    """No ``before_workspace_id``: the block goes last, and the event leaves the field out
    (``skip_serializing_if = "Option::is_none"`` in ``src/api/schema/events.rs``). An order
    that does not change answers the list and emits nothing."""
    mark = len(sim.events)
    five("workspace.move_block", workspace_ids=["w2", "w1"])
    assert order(five) == ["w3", "w4", "w5", "w2", "w1"]
    event, *focus = sim.events[mark:]  # the active w1 is now last: its focus events follow
    assert event["event"] == "workspace_reordered" and len(focus) == 3
    assert "before_workspace_id" not in event["data"]
    mark = len(sim.events)
    unchanged = five("workspace.move_block", workspace_ids=["w2", "w1"])
    assert [ws["workspace_id"] for ws in unchanged["workspaces"]] == order(five)
    assert sim.events[mark:] == []


def test_move_block_refusals_in_herdr_s_order(five: Api) -> None:
    """``handle_workspace_move_block``: an empty list, an unknown id (as spelled), the same
    workspace twice (also by another spelling) and a target inside the block."""
    assert failure(five, "workspace.move_block", workspace_ids=[]) == (
        "workspace_move_block_failed",
        "workspace_ids must not be empty",
    )
    assert failure(five, "workspace.move_block", workspace_ids=["w1", "w9", "w1"]) == (
        "workspace_not_found",
        "workspace w9 not found",
    )
    assert failure(five, "workspace.move_block", workspace_ids=["w2", "2"]) == (
        "workspace_move_block_failed",
        "workspace 2 appears more than once",
    )
    assert failure(
        five, "workspace.move_block", workspace_ids=["w2"], before_workspace_id="w_2"
    ) == ("workspace_move_block_failed", "before_workspace_id must not be part of workspace_ids")
    assert failure(
        five, "workspace.move_block", workspace_ids=["w2"], before_workspace_id="w8"
    ) == ("workspace_not_found", "workspace w8 not found")
    assert order(five) == ["w1", "w2", "w3", "w4", "w5"]


def test_move_block_reaches_a_workspace_reordered_subscription(sim: Simulator, five: Api) -> None:
    """``workspace.reordered`` is a lifecycle subscription (``src/api/subscriptions.rs``)."""
    sub = Subscription(sim.socket_path, [{"type": "workspace.reordered"}], timeout=10 * SCALE)
    try:
        five("workspace.move_block", workspace_ids=["w5"], before_workspace_id="w1")
        line = sub.next(timeout=10 * SCALE)
    finally:
        sub.close()
    assert line["event"] == "workspace_reordered"
    assert line["data"]["workspace_ids"] == ["w5"]


# -- pane.input.set -------------------------------------------------------------------------


def test_input_set_answers_ok_and_keeps_the_setting_on_the_pane(sim: Simulator, api: Api) -> None:
    """``src/app/api/panes.rs`` ``handle_pane_input_set``: the pane's right-click
    passthrough is set, ``ok``; an unknown pane is ``pane <id> not found``."""
    pane = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    assert api("pane.input.set", pane_id=pane, right_click="pane") == {"type": "ok"}
    assert sim.run_in_loop(lambda rt: rt.pane(pane).pane.right_click) == "pane"
    api("pane.input.set", pane_id=pane, right_click="herdr")
    assert sim.run_in_loop(lambda rt: rt.pane(pane).pane.right_click) == "herdr"
    assert failure(api, "pane.input.set", pane_id="w1:p9", right_click="pane") == (
        "pane_not_found",
        "pane w1:p9 not found",
    )


def test_cli_pane_input_sets_the_right_click_target(sim: Simulator, herdr: HerdrCli) -> None:
    """``herdr pane input`` (``src/cli/pane.rs``) sends ``pane.input.set``."""
    sim.run_in_loop(lambda rt: None)
    result = herdr("workspace", "create", "--cwd", "/tmp")
    assert result.code == 0, result.stderr
    result = herdr("pane", "input", "w1:p1", "--right-click", "pane")
    assert result.code == 0, result.stderr
    assert sim.run_in_loop(lambda rt: rt.pane("w1:p1").pane.right_click) == "pane"


# -- client.window_title.*, popup.close, server.reload_config --------------------------------


def test_window_title_has_no_foreground_client(api: Api) -> None:
    """``src/server/headless.rs`` ``handle_client_window_title_api`` (and Herdr's test
    ``client_window_title_api_reports_no_foreground_client_in_app_mode``): no client to send
    the title to → ``changed: false``, ``no_foreground_client``, for set and clear."""
    expected = {"type": "client_window_title", "changed": False, "reason": "no_foreground_client"}
    assert api("client.window_title.set", title="  build \x1b\x07 ") == expected
    assert api("client.window_title.clear") == expected


@pytest.mark.parametrize("title", ["", "   ", "\x1b\x07\x9c", "\u3000\n\t"])
def test_blank_window_title_is_invalid_params(api: Api, title: str) -> None:
    """``sanitize_window_title_text`` (``src/config/window_title.rs``) drops ESC, BEL,
    U+009C and control characters and trims; nothing left → ``invalid_params``."""
    assert failure(api, "client.window_title.set", title=title) == (
        "invalid_params",
        "window title is empty",
    )


def test_window_title_keeps_the_sanitised_title(sim: Simulator, api: Api) -> None:
    """The explicit title is kept (``api_window_title``), at most 200 characters, trimmed."""
    api("client.window_title.set", title=" a\x1bb\tc " + "x" * 300)
    kept = sim.run_in_loop(lambda rt: rt.window_title)
    assert kept == "abc " + "x" * 195
    api("client.window_title.clear")
    assert sim.run_in_loop(lambda rt: rt.window_title) is None


def test_cli_terminal_title_prints_the_no_client_answer(herdr: HerdrCli) -> None:
    """``herdr terminal title set``/``clear`` (``src/cli.rs``) print the method's answer."""
    result = herdr("terminal", "title", "set", "build")
    assert result.code == 0, result.stderr
    assert result.json["result"]["reason"] == "no_foreground_client"


def test_popup_close_without_a_popup(api: Api) -> None:
    """``src/app/api.rs`` ``Method::PopupClose``: ``popup_not_open`` "no popup is open"."""
    assert failure(api, "popup.close") == ("popup_not_open", "no popup is open")


def test_reload_config_without_a_config_file_applies_the_defaults(
    api: Api, herdr: HerdrCli
) -> None:
    """``reload_server_config`` → ``apply_config_from_disk``; with no ``config.toml``
    ``load_live_config`` (``src/config/io.rs``) loads the defaults: applied, no diagnostics."""
    expected = {"type": "config_reload", "status": "applied", "diagnostics": []}
    assert api("server.reload_config") == expected
    result = herdr("server", "reload-config")
    assert result.code == 0, result.stderr
    assert result.json["result"] == expected


# -- pane.graphics.* ------------------------------------------------------------------------


def test_graphics_are_disabled_by_default_before_the_pane_is_looked_up(api: Api) -> None:
    """``require_enabled`` (``src/app/api/pane_graphics.rs``) runs first in all three:
    ``experimental.kitty_graphics`` is off by default (``src/config/model.rs``)."""
    disabled = ("feature_disabled", "pane graphics require experimental.kitty_graphics")
    assert failure(api, "pane.graphics.info", pane_id="w9:p9") == disabled
    assert failure(api, "pane.graphics.clear", pane_id="w9:p9") == disabled
    assert (
        failure(
            api,
            "pane.graphics.set",
            pane_id="w9:p9",
            format="rgb",
            image_width=1,
            image_height=1,
            data_base64="AAAA",
        )
        == disabled
    )


@pytest.mark.sim_settings(kitty_graphics=True)
def test_graphics_info_without_a_client_has_no_cell_size(api: Api) -> None:
    """``handle_pane_graphics_info``: the pane first, then ``cell_size_unavailable`` because
    only an attached client reports its cell size (``host_cell_size``)."""
    pane = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    assert failure(api, "pane.graphics.info", pane_id="w1:p7") == (
        "pane_not_found",
        "pane w1:p7 not found",
    )
    assert failure(api, "pane.graphics.info", pane_id=pane) == (
        "cell_size_unavailable",
        "host cell size is unavailable",
    )


def _image(width: int, height: int, per_pixel: int) -> str:
    return base64.b64encode(bytes(width * height * per_pixel)).decode()


@pytest.mark.sim_settings(kitty_graphics=True)
def test_graphics_set_validates_like_herdr_and_clear_removes(sim: Simulator, api: Api) -> None:
    """``set_layer`` and ``graphics_key`` (``src/app/api/pane_graphics.rs``): layer id,
    sizes, base64, the frame contract; then the layer is stored; ``clear`` removes it."""
    pane = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]

    def set_(**params: Any) -> dict[str, Any]:
        base = {"pane_id": pane, "format": "rgba", "image_width": 2, "image_height": 2}
        return api("pane.graphics.set", **{**base, **params})

    def fails(**params: Any) -> tuple[str, str]:
        try:
            set_(**params)
        except RequestFailed as failed:
            return failed.code, failed.message
        raise AssertionError("pane.graphics.set did not fail")

    assert fails(layer_id="", data_base64=_image(2, 2, 4)) == (
        "invalid_layer_id",
        "layer_id must contain between 1 and 64 characters",
    )
    assert fails(layer_id="a b", data_base64=_image(2, 2, 4)) == (
        "invalid_layer_id",
        "layer_id contains unsupported characters",
    )
    assert fails(image_width=0) == (
        "invalid_image",
        "image_width and image_height must be greater than zero",
    )
    assert fails(data_base64="not base64!") == ("invalid_image", "data_base64 is not valid base64")
    assert fails() == ("invalid_image", "image data must not be empty")
    assert fails(data_base64=_image(2, 2, 3)) == (
        "invalid_image",
        "image data does not match the frame contract",
    )
    assert fails(image_width=400, image_height=400, data_base64=_image(400, 400, 4)) == (
        "image_too_large",
        "image data is too large",
    )
    assert set_(data_base64=_image(2, 2, 4)) == {"type": "ok"}
    assert set_(layer_id="overlay:1", format="rgb", data_base64=_image(2, 2, 3)) == {"type": "ok"}
    assert sorted(layer for _, layer in sim.run_in_loop(lambda rt: list(rt.graphics))) == [
        "overlay:1",
        "primary",
    ]
    assert api("pane.graphics.clear", pane_id=pane) == {"type": "ok"}
    assert api("pane.graphics.clear", pane_id=pane, layer_id="absent") == {"type": "ok"}
    assert [layer for _, layer in sim.run_in_loop(lambda rt: list(rt.graphics))] == ["overlay:1"]


@pytest.mark.sim_settings(kitty_graphics=True)
def test_graphics_layer_limit_per_pane(api: Api) -> None:
    """``PANE_GRAPHICS_MAX_LAYERS_PER_PANE`` is 16 (``src/api/schema/panes.rs``); replacing
    an existing layer is always allowed."""
    pane = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    image = _image(1, 1, 3)
    for n in range(16):
        api(
            "pane.graphics.set",
            pane_id=pane,
            layer_id=f"l{n}",
            format="rgb",
            image_width=1,
            image_height=1,
            data_base64=image,
        )
    params = {"pane_id": pane, "format": "rgb", "image_width": 1, "image_height": 1}
    assert failure(api, "pane.graphics.set", layer_id="l16", data_base64=image, **params) == (
        "layer_limit",
        "pane graphics layer limit reached",
    )
    assert api("pane.graphics.set", layer_id="l3", data_base64=image, **params) == {"type": "ok"}


# -- agent.view.* ---------------------------------------------------------------------------

WORKING = {"op": "eq", "field": "status", "value": "working"}


def test_agent_view_set_and_source_guarded_clear(api: Api) -> None:
    """``src/app/api/agent_view.rs`` and Herdr's test
    ``set_and_source_guarded_clear_replace_transient_view``: set answers the active view;
    clear with another source keeps it, with its own source (or none) drops it."""
    assert api(
        "agent.view.set", source=" example.views ", label=" working\x01 ", filter=WORKING
    ) == {"type": "agent_view", "active": True, "source": "example.views", "label": "working"}
    kept = api("agent.view.clear", source="other.views")
    assert kept == {
        "type": "agent_view",
        "active": True,
        "source": "example.views",
        "label": "working",
    }
    cleared = api("agent.view.clear", source="example.views")
    assert cleared == {"type": "agent_view", "active": False, "source": None, "label": None}
    api("agent.view.set", source="x", sort=[{"field": "attention", "order": "desc"}])
    assert api("agent.view.clear")["active"] is False


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"source": "bad source"},
            (
                "agent view source must be non-empty, at most 120 characters, and contain only "
                "ASCII letters, digits, colon, dot, underscore, or hyphen"
            ),
        ),
        (
            {"source": "s", "label": "\x01"},
            "agent view label must be non-empty and at most 32 characters",
        ),
        (
            {"source": "s", "filter": {"op": "any", "filters": []}},
            "agent view all/any filters must not be empty",
        ),
        (
            {"source": "s", "filter": {"op": "in", "field": "agent", "values": []}},
            "agent view in filters require 1 to 32 values",
        ),
        (
            {"source": "s", "filter": {"op": "eq", "field": "status", "value": "busy"}},
            "unknown agent status `busy`",
        ),
        (
            {"source": "s", "filter": {"op": "eq", "field": "seen", "value": "yes"}},
            "agent view value type does not match the selected field",
        ),
        (
            {
                "source": "s",
                "filter": {"op": "eq", "field": "pane_id", "value": {"context": "current_tab_id"}},
            },
            "agent view context type does not match the selected field",
        ),
        (
            {"source": "s", "filter": {"op": "exists", "field": {"token": "no spaces"}}},
            "invalid agent view token `no spaces`",
        ),
        (
            {"source": "s", "sort": [{"field": "agent"}] * 9},
            "agent view sort may contain at most 8 fields",
        ),
        ({"source": "plugin:"}, "plugin-owned agent view source has an invalid plugin id"),
    ],
)
def test_agent_view_refusals(api: Api, params: dict[str, Any], message: str) -> None:
    """``validate_agent_view`` (``src/app/agent_view.rs``): ``invalid_agent_view`` with the
    first problem; an invalid view leaves the active one in place (Herdr's test
    ``invalid_view_does_not_replace_active_view``)."""
    api("agent.view.set", source="example.views", filter=WORKING)
    assert failure(api, "agent.view.set", **params) == ("invalid_agent_view", message)
    assert api("agent.view.clear", source="none.here")["source"] == "example.views"


def test_agent_view_filter_depth_and_plugin_sources(api: Api) -> None:
    """Nine nested levels are one too many (``MAX_FILTER_DEPTH`` 8); a ``plugin:`` source
    needs an installed plugin, and the simulator has none (``plugin_not_found``)."""
    nested: dict[str, Any] = WORKING
    for _ in range(8):
        nested = {"op": "not", "filter": nested}
    assert failure(api, "agent.view.set", source="s", filter=nested) == (
        "invalid_agent_view",
        "agent view filter may be nested at most 8 levels",
    )
    assert api("agent.view.set", source="s", filter=nested["filter"])["active"] is True
    assert failure(api, "agent.view.set", source="plugin:acme.views") == (
        "plugin_not_found",
        "plugin not found",
    )


def test_agent_view_untagged_values_are_read_like_serde(raw: Api) -> None:
    """``AgentViewValue`` is ``#[serde(untagged)]`` (``src/api/schema/agents.rs``): a value
    that is no string, boolean, u64 or context fails the request line."""
    reply = raw(
        "agent.view.set",
        source="s",
        filter={"op": "eq", "field": "state_change_seq", "value": -1},
    )
    assert reply["error"]["code"] == "invalid_request"
    assert (
        "data did not match any variant of untagged enum AgentViewValue"
        in (reply["error"]["message"])
    )


def test_cli_terminal_title_blank_is_the_server_s_invalid_params(herdr: HerdrCli) -> None:
    """``herdr terminal title set`` (``src/cli.rs`` ``terminal_title``) forwards the title
    as given; ``print_response`` writes the server's ``invalid_params`` to stderr, exit 1."""
    result = herdr("terminal", "title", "set", "  ")
    assert (result.code, result.stdout) == (1, ""), result.stderr
    error = json.loads(result.stderr)["error"]
    assert error == {"code": "invalid_params", "message": "window title is empty"}
