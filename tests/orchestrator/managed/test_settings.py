"""The managed-agent settings: the ``[managed]`` config table and its environment variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.core.config import ConfigError, load_config
from orchestrator.managed.settings import (
    ManagedSettings,
    apply_managed_env,
    managed_env_name,
    managed_settings,
    parse_managed,
)


def _load(tmp_path: Path, toml: str, **env: str) -> ManagedSettings:
    config_file = tmp_path / "config.toml"
    config_file.write_text(toml, encoding="utf-8")
    base = {"HOME": str(tmp_path), "HERDR_ORCHESTRATOR_CONFIG": str(config_file)}
    environ = {**base, **env}
    return managed_settings(load_config(environ), environ)


def test_the_defaults_are_the_references() -> None:
    settings = ManagedSettings()
    assert settings.spawn_placement == "subtree"
    assert settings.context_retirement is True
    assert settings.inline_attachment_limit_bytes == 131072
    assert settings.mailbox_payload_limit_bytes == 131072


def test_a_config_without_the_table_has_the_defaults(tmp_path: Path) -> None:
    assert _load(tmp_path, "") == ManagedSettings()


def test_the_table_sets_every_key(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        "[managed]\n"
        'spawnPlacement = "split"\n'
        "contextRetirement = false\n"
        "inlineAttachmentLimitBytes = 1024\n"
        "mailboxPayloadLimitBytes = 1048576\n",
    )
    assert settings == ManagedSettings("split", False, 1024, 1 << 20)


def test_the_environment_wins_over_the_table(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        '[managed]\nspawnPlacement = "split"\ninlineAttachmentLimitBytes = 2048\n',
        HERDR_ORCHESTRATOR_MANAGED_SPAWN_PLACEMENT="tab",
        HERDR_ORCHESTRATOR_MANAGED_CONTEXT_RETIREMENT="false",
        HERDR_ORCHESTRATOR_MANAGED_MAILBOX_PAYLOAD_LIMIT_BYTES="4_096",
    )
    assert settings == ManagedSettings("tab", False, 2048, 4096)


def test_the_table_is_kept_as_read_and_other_config_keys_still_refused(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[managed]\nspawnPlacement = "tab"\n', encoding="utf-8")
    environ = {"HOME": str(tmp_path), "HERDR_ORCHESTRATOR_CONFIG": str(config_file)}
    assert load_config(environ).managed == {"spawnPlacement": "tab"}
    with pytest.raises(ConfigError, match="unknown key"):
        load_config({**environ, "HERDR_ORCHESTRATOR_MANAGE": "x"})


def test_the_process_environment_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text("", encoding="utf-8")
    config = load_config({"HOME": str(tmp_path), "HERDR_ORCHESTRATOR_CONFIG": str(config_file)})
    monkeypatch.setenv("HERDR_ORCHESTRATOR_MANAGED_SPAWN_PLACEMENT", "split")
    assert managed_settings(config).spawn_placement == "split"


@pytest.mark.parametrize(
    ("toml", "key", "fragment"),
    [
        ("[managed]\ncontextRetirment = false\n", "managed.contextRetirment", "did you mean"),
        ('[managed]\nspawnPlacement = "window"\n', "managed.spawnPlacement", "tab, subtree"),
        ("[managed]\ncontextRetirement = 1\n", "managed.contextRetirement", "true or false"),
        ("[managed]\ninlineAttachmentLimitBytes = 1023\n", "managed.inline", "1024..1048576"),
        ("[managed]\nmailboxPayloadLimitBytes = 1048577\n", "managed.mailbox", "1024..1048576"),
        ("[managed]\nmailboxPayloadLimitBytes = true\n", "managed.mailbox", "an integer"),
        ('[managed]\nmailboxPayloadLimitBytes = "4096"\n', "managed.mailbox", "an integer"),
        ('managed = "subtree"\n', "managed", "a table"),
    ],
)
def test_a_bad_table_is_refused_naming_the_key(
    tmp_path: Path, toml: str, key: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, toml)
    assert caught.value.key.startswith(key)
    assert fragment in str(caught.value)
    assert str(tmp_path / "config.toml") in str(caught.value)


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("HERDR_ORCHESTRATOR_MANAGED_SPAWN_PLACMENT", "tab", "did you mean"),
        ("HERDR_ORCHESTRATOR_MANAGED_", "x", "unknown key"),
        ("HERDR_ORCHESTRATOR_MANAGED_SPAWN_PLACEMENT", "window", "tab, subtree"),
        ("HERDR_ORCHESTRATOR_MANAGED_CONTEXT_RETIREMENT", "maybe", "CONTEXT_RETIREMENT"),
        ("HERDR_ORCHESTRATOR_MANAGED_INLINE_ATTACHMENT_LIMIT_BYTES", "lots", "an integer"),
        ("HERDR_ORCHESTRATOR_MANAGED_INLINE_ATTACHMENT_LIMIT_BYTES", "10", "1024..1048576"),
    ],
)
def test_a_bad_variable_is_refused_naming_it(
    tmp_path: Path, name: str, value: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, "", **{name: value})
    assert fragment in str(caught.value)
    assert "environment" in str(caught.value)


def test_the_bare_managed_variable_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown key"):
        _load(tmp_path, "", HERDR_ORCHESTRATOR_MANAGED="{}")


def test_env_names_follow_the_config_style() -> None:
    assert managed_env_name("inlineAttachmentLimitBytes") == (
        "HERDR_ORCHESTRATOR_MANAGED_INLINE_ATTACHMENT_LIMIT_BYTES"
    )


def test_parse_and_env_compose_from_a_start() -> None:
    start = parse_managed({"spawnPlacement": "tab"})
    assert apply_managed_env(start, {}) is start
    changed = apply_managed_env(start, {"HERDR_ORCHESTRATOR_MANAGED_CONTEXT_RETIREMENT": "0"})
    assert changed == ManagedSettings("tab", False)
