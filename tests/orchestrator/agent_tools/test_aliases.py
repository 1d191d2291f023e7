"""Model aliases and per-kind capabilities: what reaches an agent's command line."""

from __future__ import annotations

import pytest

from herdr_sim.fake_agent.app import parse_args
from orchestrator.core.aliases import (
    AliasError,
    alias_rows,
    resolve,
    system_prompt_argv,
)


def test_pi_defaults_to_flash() -> None:
    resolved = resolve("pi")
    assert resolved.alias == "flash"
    assert resolved.argv == ("--model", "deepseek/deepseek-flash")


def test_alias_resolves_to_provider_model() -> None:
    assert resolve("pi", "pro").model == "deepseek/deepseek-v4-pro"


def test_provider_model_passes_through() -> None:
    resolved = resolve("pi", "openrouter/qwen3-coder:free")
    assert resolved.alias is None
    assert resolved.argv == ("--model", "openrouter/qwen3-coder:free")


def test_unknown_alias_names_the_field_and_the_known_aliases() -> None:
    with pytest.raises(AliasError, match=r"model: 'flsh' is neither an alias of kind pi") as info:
        resolve("pi", "flsh")
    assert info.value.code == "MODEL_UNKNOWN" and info.value.field == "model"
    assert "flash" in str(info.value)


def test_agy_refuses_model() -> None:
    with pytest.raises(AliasError, match="kind agy does not accept a model") as info:
        resolve("agy", "flash")
    assert info.value.code == "FIELD_UNSUPPORTED" and info.value.field == "model"


def test_agy_without_model_gets_no_flags() -> None:
    assert resolve("agy").argv == ()


def test_thinking_level_flag_for_pi() -> None:
    assert resolve("pi", "flash", "xhigh").argv[-2:] == ("--thinking", "xhigh")


def test_unknown_thinking_level_names_the_field() -> None:
    with pytest.raises(AliasError, match="thinking: 'extreme' is not a thinking level") as info:
        resolve("pi", thinking="extreme")
    assert info.value.code == "THINKING_UNKNOWN"


def test_claude_refuses_thinking() -> None:
    with pytest.raises(AliasError, match="thinking: kind claude does not accept") as info:
        resolve("claude", thinking="high")
    assert info.value.field == "thinking"


def test_native_provider_is_stripped_for_claude() -> None:
    assert resolve("claude", "anthropic/claude-opus-4-1").argv == ("--model", "claude-opus-4-1")
    assert resolve("claude").argv == ("--model", "claude-sonnet-4-5")


def test_foreign_provider_is_refused_for_codex() -> None:
    with pytest.raises(AliasError, match="kind codex runs openai models only") as info:
        resolve("codex", "anthropic/claude-opus-4-1")
    assert info.value.code == "MODEL_UNSUPPORTED"


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(AliasError, match="kind: 'pie' is not a Herdr agent kind") as info:
        resolve("pie")
    assert info.value.code == "KIND_UNKNOWN"


def test_kinds_without_capabilities_refuse_model() -> None:
    with pytest.raises(AliasError, match="kind cline does not accept a model"):
        resolve("cline", "a/b")


def test_configuration_adds_aliases_and_changes_the_default() -> None:
    overrides = {"pi": {"fast": "groq/llama-4", "default": "fast"}}
    assert resolve("pi", overrides=overrides).model == "groq/llama-4"
    assert resolve("pi", "flash", overrides=overrides).model == "deepseek/deepseek-flash"


def test_system_prompt_must_be_one_line() -> None:
    assert system_prompt_argv("pi", "be brief") == ("--append-system-prompt", "be brief")
    with pytest.raises(AliasError, match="one line"):
        system_prompt_argv("pi", "a\nb")
    with pytest.raises(AliasError, match="kind codex does not accept a system prompt"):
        system_prompt_argv("codex", "x")


@pytest.mark.parametrize("kind", ["pi", "claude", "codex", "opencode"])
def test_our_fake_agents_accept_the_flags(kind: str) -> None:
    thinking = "high" if kind == "pi" else None
    model = {"opencode": "anthropic/x", "codex": "codex"}.get(kind)
    resolved = resolve(kind, model, thinking)
    options = parse_args(list(resolved.argv), kind)
    assert options.model == resolved.argv[1]
    if thinking:
        assert options.thinking == "high"


def test_alias_rows_mark_the_default() -> None:
    rows = alias_rows()
    flash = next(r for r in rows if r["kind"] == "pi" and r["alias"] == "flash")
    assert flash == {
        "kind": "pi",
        "alias": "flash",
        "model": "deepseek/deepseek-flash",
        "default": True,
    }


@pytest.mark.parametrize("kind", ["codex", "gemini"])
def test_kinds_without_a_checkable_default_use_their_own(kind: str) -> None:
    """No ``--model`` unless asked: the agent's own default is what its release accepts."""
    assert resolve(kind).argv == ()
