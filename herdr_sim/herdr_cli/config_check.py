"""``herdr config check``: validate the configuration file as Herdr does, print diagnostics.

Herdr (``src/cli.rs`` ``config_check``, ``src/config/io.rs`` ``Config::load``) reads
``$HERDR_CONFIG_PATH``, else ``config.toml`` in its config directory (here the simulator's,
as every path of this CLI); no file is ``config: ok``. Otherwise it prints ``config: ok`` or
``config: issues found`` and one diagnostic per line, exit 1 when there is any:

* an unreadable file: ``config read error: <error>; using defaults``;
* a file that is not TOML, or a known key with a value of the wrong type (Herdr's typed
  deserialisation fails as a whole): ``config parse error: <error>; using defaults``;
* a table or array of tables under an unknown top-level name: ``unknown config section
  [name]; ignoring section`` (``[toast]`` gets "did you mean [ui.toast]?");
* any other unknown key: ``unknown config key a.b; ignoring key``, sorted.

The known keys and their kinds are those of Herdr's configuration reference
(:data:`KNOWN_KEYS`). Differences (docs/simulator/fidelity.md): a parse error's text is
Python's ``tomllib`` wording, a type error names the key in our words, and only booleans,
integers and strings are type-checked (colours, enums, key bindings, paths and lists are
not, nor the value rules Herdr applies after parsing, such as a theme name it knows).

Imports ``tomllib`` only when it runs.
"""

from __future__ import annotations

import os

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["CONFIG_PATH_ENV", "KNOWN_KEYS", "check", "config_path"]

#: Herdr's override of the config file's path (``src/config.rs``)
CONFIG_PATH_ENV = "HERDR_CONFIG_PATH"

#: Herdr's top-level config names (``KNOWN_TOP_LEVEL_CONFIG_KEYS``)
_TOP_LEVEL = (
    "advanced", "experimental", "keys", "onboarding", "remote", "server", "session",
    "terminal", "theme", "ui", "update", "worktrees",
)  # fmt: skip

#: Every key of Herdr's configuration reference and what its value must be: ``bool``,
#: ``int``, ``str``, ``any`` (not type-checked here) or ``table`` (free-form below it).
_KEYS = """
onboarding bool
server.headless_cols int
server.headless_rows int
theme.name str
theme.auto_switch bool
theme.dark_name str
theme.light_name str
theme.custom.accent any
theme.custom.panel_bg any
theme.custom.sidebar_bg any
theme.custom.active_row_bg any
theme.custom.selection_bg any
theme.custom.surface0 any
theme.custom.surface1 any
theme.custom.surface_dim any
theme.custom.overlay0 any
theme.custom.overlay1 any
theme.custom.text any
theme.custom.subtext0 any
theme.custom.mauve any
theme.custom.green any
theme.custom.yellow any
theme.custom.red any
theme.custom.blue any
theme.custom.teal any
theme.custom.peach any
terminal.default_shell str
terminal.shell_mode any
terminal.new_cwd any
update.channel any
update.version_check bool
update.manifest_check bool
keys.prefix str
keys.help any
keys.settings any
keys.new_workspace any
keys.new_worktree any
keys.open_worktree any
keys.remove_worktree any
keys.rename_workspace any
keys.close_workspace any
keys.workspace_picker any
keys.goto any
keys.navigate_workspace_up any
keys.navigate_workspace_down any
keys.navigate_pane_left any
keys.navigate_pane_down any
keys.navigate_pane_up any
keys.navigate_pane_right any
keys.detach any
keys.reload_config any
keys.open_notification_target any
keys.previous_workspace any
keys.next_workspace any
keys.previous_agent any
keys.next_agent any
keys.focus_agent any
keys.remote_image_paste str
keys.new_tab any
keys.rename_tab any
keys.previous_tab any
keys.next_tab any
keys.move_tab_previous any
keys.move_tab_next any
keys.switch_tab any
keys.switch_workspace any
keys.close_tab any
keys.rename_pane any
keys.edit_scrollback any
keys.copy_mode any
keys.focus_pane_left any
keys.focus_pane_down any
keys.focus_pane_up any
keys.focus_pane_right any
keys.swap_pane_left any
keys.swap_pane_down any
keys.swap_pane_up any
keys.swap_pane_right any
keys.cycle_pane_next any
keys.cycle_pane_previous any
keys.last_pane any
keys.split_vertical any
keys.split_horizontal any
keys.close_pane any
keys.zoom any
keys.resize_mode any
keys.resize_pane_left any
keys.resize_pane_down any
keys.resize_pane_up any
keys.resize_pane_right any
keys.toggle_sidebar any
keys.indexed.tabs str
keys.indexed.workspaces str
keys.indexed.agents str
ui.sidebar_width int
ui.sidebar_min_width int
ui.sidebar_max_width int
ui.sidebar_start_collapsed bool
ui.sidebar_collapsed_mode any
ui.mobile_width_threshold int
ui.mouse_capture bool
ui.copy_on_select bool
ui.host_cursor any
ui.right_click_passthrough_modifier str
ui.redraw_on_focus_gained bool
ui.mouse_scroll_lines int
ui.confirm_close bool
ui.prompt_new_tab_name bool
ui.prompt_new_workspace_name bool
ui.pane_borders bool
ui.pane_outer_borders bool
ui.pane_scrollbars bool
ui.pane_gaps bool
ui.show_agent_labels_on_pane_borders bool
ui.hide_tab_bar_when_single_tab bool
ui.tab_bar_position any
ui.tab_bar_right any
ui.tab_bar_right_separator str
ui.window_title str
ui.agent_panel_sort any
ui.status_indicators any
ui.sidebar.agents.row_gap int
ui.sidebar.agents.rows any
ui.sidebar.agents.rows_by_agent table
ui.sidebar.spaces.row_gap int
ui.sidebar.spaces.rows any
ui.accent any
ui.toast.delivery any
ui.toast.delay_seconds int
ui.toast.herdr.position any
ui.toast.clipboard.enabled bool
ui.toast.clipboard.position any
ui.sound.enabled bool
ui.sound.path any
ui.sound.done_path any
ui.sound.request_path any
ui.sound.agents.pi any
ui.sound.agents.claude any
ui.sound.agents.codex any
ui.sound.agents.gemini any
ui.sound.agents.cursor any
ui.sound.agents.devin any
ui.sound.agents.agy any
ui.sound.agents.cline any
ui.sound.agents.open_code any
ui.sound.agents.github_copilot any
ui.sound.agents.kimi any
ui.sound.agents.kiro any
ui.sound.agents.droid any
ui.sound.agents.amp any
ui.sound.agents.grok any
ui.sound.agents.hermes any
ui.sound.agents.kilo any
ui.sound.agents.qodercli any
ui.sound.agents.qwen any
ui.sound.agents.maki any
session.resume_agents_on_restore bool
worktrees.directory str
remote.manage_ssh_config bool
advanced.scrollback_limit_bytes int
experimental.allow_nested bool
experimental.kitty_graphics bool
experimental.pane_history bool
experimental.reveal_hidden_cursor_for_cjk_ime bool
experimental.cjk_ime_agents any
experimental.cjk_ime_cursor_shape any
experimental.switch_ascii_input_source_in_prefix bool
"""
KNOWN_KEYS: dict[str, str] = dict(line.split() for line in _KEYS.strip().splitlines())
_PREFIXES = frozenset(
    ".".join(key.split(".")[:depth]) for key in KNOWN_KEYS for depth in range(1, key.count(".") + 1)
)


def config_path(env: Mapping[str, str]) -> str:
    """``$HERDR_CONFIG_PATH``, else ``config.toml`` in the simulator's config directory."""
    from orchestrator.client.socket_paths import child_path, config_dir_str

    override = env.get(CONFIG_PATH_ENV)
    if override is not None:
        return override
    return child_path(config_dir_str(env), "config.toml")


def check(env: Mapping[str, str]) -> list[str]:
    """Herdr's diagnostics for the config file ``env`` names (none: it is fine or absent)."""
    path = config_path(env)
    try:
        with open(path, "rb") as handle:  # noqa: PTH123 - no pathlib in the CLI
            data = handle.read()
    except FileNotFoundError:
        return []
    except OSError as err:
        return [f"config read error: {_io_error(err)}; using defaults"]
    import tomllib

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return ["config parse error: the file is not valid UTF-8; using defaults"]
    except tomllib.TOMLDecodeError as err:
        return [f"config parse error: {err}; using defaults"]
    wrong = _type_error(table, "")
    if wrong is not None:
        return [f"config parse error: {wrong}; using defaults"]
    diagnostics: list[str] = []
    unknown: list[list[str]] = []
    for key, value in table.items():
        if key in _TOP_LEVEL:
            unknown += _unknown_below([key], value)
            continue
        header = _section_header(key, value)
        if header is None:
            unknown.append([key])
        elif key == "toast":
            diagnostics.append(
                f"unknown config section {header}; did you mean [ui.toast]? ignoring section"
            )
        else:
            diagnostics.append(f"unknown config section {header}; ignoring section")
    paths = sorted({tuple(p) for p in unknown})
    diagnostics += [f"unknown config key {_format_path(list(p))}; ignoring key" for p in paths]
    return diagnostics


def _io_error(err: OSError) -> str:
    """Rust's ``io::Error`` display: ``<strerror> (os error N)``."""
    if err.errno is None:
        return str(err)
    return f"{os.strerror(err.errno)} (os error {err.errno})"


def _section_header(key: str, value: Any) -> str | None:
    if isinstance(value, dict):
        return f"[{key}]"
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return f"[[{key}]]"
    return None


def _unknown_below(path: list[str], value: Any) -> list[list[str]]:
    """The key paths under a known ``path`` that Herdr does not know."""
    dotted = ".".join(path)
    kind = KNOWN_KEYS.get(dotted)
    if kind is not None:
        return []  # a known leaf (or free-form table): its contents are its own
    if dotted not in _PREFIXES:
        return [path]
    if not isinstance(value, dict):
        return []  # a known table given a plain value: the type check's to report
    found: list[list[str]] = []
    for key, child in value.items():
        found += _unknown_below([*path, key], child)
    return found


def _type_error(value: Any, prefix: str) -> str | None:
    """The first known key whose value has the wrong type, in Herdr's serde wording."""
    if not isinstance(value, dict):
        return None
    for key, child in value.items():
        dotted = f"{prefix}.{key}" if prefix else key
        kind = KNOWN_KEYS.get(dotted)
        expected = {"bool": "a boolean", "int": "an integer", "str": "a string"}.get(kind or "")
        if expected is not None and not _is(kind or "", child):
            return f"invalid type: {_describe(child)}, expected {expected} for key `{dotted}`"
        if kind is None and dotted in _PREFIXES:
            if not isinstance(child, dict):
                return f"invalid type: {_describe(child)}, expected a table for key `{dotted}`"
            found = _type_error(child, dotted)
            if found is not None:
                return found
    return None


def _is(kind: str, value: Any) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def _describe(value: Any) -> str:
    """serde's ``Unexpected`` for a TOML value: JSON's words (one place for them), and a
    TOML date-time, which JSON lacks, as serde names it."""
    from herdr_sim.wire.request_json import describe

    if isinstance(value, (bool, int, float, str, list, dict)):
        return describe(value)
    return "a date-time"


def _format_path(path: list[str]) -> str:
    """Herdr's ``format_config_key_path``: bare keys as they are, others TOML-quoted."""
    import json

    def shown(key: str) -> str:
        if key and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in key):
            return key
        return json.dumps(key, ensure_ascii=False)

    return ".".join(shown(key) for key in path)
