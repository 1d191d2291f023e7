"""Herdr's detection manifests: loading, validation, and Rust regex translation.

Every manifest in the shared contracts directory must load unmodified and
every pattern in it must translate and compile.  Validation cases are Herdr's
own (unknown fields, empty gates, bad regions and regexes, complexity limits,
neutral skip rules); the regex cases pin the places where Rust and Python
syntax or semantics differ.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.detection import ManifestError, load_manifests, parse_manifest
from herdr_sim.detection.manifest import validate_region_name
from herdr_sim.regex import RustRegex, RustRegexError, compile_rust_regex, translate
from orchestrator.client.protocol import (
    SCREEN_MANIFEST_AGENTS,
    interactive_executable,
    parse_agent_label,
    parse_canonical_agent_label,
)
from tests.contract_check import contracts_dir

MANIFEST_DIR = contracts_dir() / "agent-detection"
MANIFEST_FILES = sorted(MANIFEST_DIR.glob("*.toml"))


def _patterns(gate: dict[str, Any]) -> list[str]:
    found = [*gate.get("regex", []), *gate.get("line_regex", [])]
    for key in ("all", "any", "not"):
        for nested in gate.get(key, []):
            found.extend(_patterns(nested))
    return found


def _codex(rules: str) -> str:
    return f'id = "codex"\n\n{rules}'


# -- the shared manifests ------------------------------------------------------------------------


def test_every_shared_manifest_loads_unmodified_for_its_agent() -> None:
    manifests = load_manifests(MANIFEST_DIR)
    assert manifests.errors == {}
    assert sorted(manifests.manifests) == sorted(SCREEN_MANIFEST_AGENTS)
    assert len(MANIFEST_FILES) == 20


def test_files_named_after_the_product_serve_the_canonical_label() -> None:
    manifests = load_manifests(MANIFEST_DIR)
    assert manifests.manifests["agy"].path == MANIFEST_DIR / "antigravity.toml"
    assert manifests.manifests["copilot"].path == MANIFEST_DIR / "github-copilot.toml"
    assert manifests.for_agent("antigravity") is manifests.manifests["agy"]
    assert manifests.for_agent("claude-code") is manifests.manifests["claude"]


@pytest.mark.parametrize("path", MANIFEST_FILES, ids=lambda p: p.stem)
def test_every_pattern_of_a_shared_manifest_translates_and_compiles(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    patterns = [pattern for rule in data["rules"] for pattern in _patterns(rule)]
    for pattern in patterns:
        assert isinstance(compile_rust_regex(pattern), RustRegex), pattern


def test_manifest_metadata_is_kept() -> None:
    claude = load_manifests(MANIFEST_DIR).manifests["claude"]
    assert claude.manifest.id == "claude"
    assert claude.manifest.aliases == ("claude-code",)
    assert claude.manifest.version == "2026.08.21.1"
    assert claude.manifest.min_engine_version == 2
    assert claude.source.label == "bundled"


def test_summaries_follow_herdr_agent_order_and_manifest_info_shape() -> None:
    summaries = load_manifests(MANIFEST_DIR).summaries()
    assert [s["agent"] for s in summaries] == list(SCREEN_MANIFEST_AGENTS)
    pi = summaries[0]
    assert pi == {
        "agent": "pi",
        "source": "bundled",
        "source_kind": "bundled",
        "active_version": "2026.06.10.1",
        "cached_remote_version": None,
        "local_override_shadowing_remote": False,
        "remote_update_result": None,
        "remote_update_error": None,
        "remote_last_checked_unix": None,
        "warning": None,
    }


def test_missing_manifest_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_manifests(tmp_path / "absent")


def test_invalid_and_foreign_files_are_reported_not_loaded(tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("id = ", encoding="utf-8")
    (tmp_path / "other.toml").write_text(
        'id = "vim"\n[[rules]]\nid = "r"\nstate = "idle"\ncontains = ["x"]\n', encoding="utf-8"
    )
    manifests = load_manifests(tmp_path)
    assert manifests.manifests == {}
    assert set(manifests.errors) == {tmp_path / "broken.toml", tmp_path / "other.toml"}
    assert "does not match a known agent" in manifests.errors[tmp_path / "other.toml"]


def test_a_second_simulator_reuses_the_compiled_manifests_and_an_edit_is_read_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each simulator loads the manifests; their patterns are compiled once per text."""
    import herdr_sim.detection.manifest as manifest_module

    compiled: list[str] = []

    def counting(pattern: str) -> RustRegex:
        compiled.append(pattern)
        return compile_rust_regex(pattern)

    monkeypatch.setattr(manifest_module, "compile_rust_regex", counting)
    path = tmp_path / "codex.toml"
    path.write_text(_codex('[[rules]]\nid = "mine"\nstate = "idle"\nregex = ["^ready-1$"]\n'))
    first = load_manifests(tmp_path).manifests["codex"].manifest
    assert "^ready-1$" in compiled
    compiled.clear()
    assert load_manifests(tmp_path).manifests["codex"].manifest is first
    assert compiled == []
    path.write_text(_codex('[[rules]]\nid = "mine"\nstate = "idle"\nregex = ["^ready-2$"]\n'))
    edited = load_manifests(tmp_path).manifests["codex"]
    assert "^ready-2$" in compiled and edited.manifest is not first
    assert edited.manifest.rules[-1].gate.regex == ("^ready-2$",)


# -- overrides (Herdr's <config>/agent-detection/<label>.toml) ---------------------------------


def test_valid_override_replaces_the_base_manifest(tmp_path: Path) -> None:
    path = tmp_path / "codex.toml"
    path.write_text(
        _codex('[[rules]]\nid = "test"\nstate = "blocked"\ncontains = ["local-ready"]\n'),
        encoding="utf-8",
    )
    manifests = load_manifests(MANIFEST_DIR, override_directory=tmp_path)
    explained = manifests.explain("codex", "local-ready")
    assert explained.state == "blocked"
    assert explained.source is not None
    assert explained.source.kind == "local override"
    assert explained.source.label == str(path)


def test_override_for_another_agent_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "codex.toml"
    path.write_text(
        'id = "claude"\n[[rules]]\nid = "t"\nstate = "blocked"\ncontains = ["x"]\n',
        encoding="utf-8",
    )
    loaded = load_manifests(MANIFEST_DIR, override_directory=tmp_path).manifests["codex"]
    assert loaded.source.kind == "bundled"
    assert loaded.warning == (
        f"ignored override {path} because manifest id claude does not match codex"
    )


def test_unloadable_override_keeps_the_base_manifest_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "codex.toml"
    path.write_text("id = ", encoding="utf-8")
    manifests = load_manifests(MANIFEST_DIR, override_directory=tmp_path)
    loaded = manifests.manifests["codex"]
    assert loaded.source.kind == "bundled"
    assert loaded.warning is not None
    assert loaded.warning.startswith(f"ignored override {path} because it could not be loaded: ")
    assert manifests.explain("codex", "").warning == loaded.warning


def test_reload_reads_the_files_again(tmp_path: Path) -> None:
    path = tmp_path / "codex.toml"
    path.write_text(
        _codex('[[rules]]\nid = "t"\nstate = "blocked"\ncontains = ["ready"]\n'),
        encoding="utf-8",
    )
    first = load_manifests(tmp_path)
    path.write_text(
        _codex('[[rules]]\nid = "t"\nstate = "working"\ncontains = ["ready"]\n'),
        encoding="utf-8",
    )
    assert first.detect("codex", "ready").state == "blocked"
    assert first.reload().detect("codex", "ready").state == "working"


# -- validation (Herdr's manifest tests) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ('[[rules]]\nid = "typo"\nstate = "working"\ncontain = ["Working"]\n', "unknown field"),
        ('[[rules]]\nid = "empty"\nstate = "working"\n', "must contain a positive matcher"),
        (
            (
                '[[rules]]\nid = "bad_region"\nstate = "working"\n'
                'region = "after_last_promt_marker"\ncontains = ["Working"]\n'
            ),
            "rule bad_region uses invalid region: after_last_promt_marker",
        ),
        ('[[rules]]\nid = "bad_regex"\nstate = "working"\nregex = ["["]\n', "invalid regex"),
        (
            (
                '[[rules]]\nid = "bad_nested_regex"\nstate = "working"\n'
                'any = [{ line_regex = ["["] }]\n'
            ),
            "invalid line_regex",
        ),
        (
            (
                '[[rules]]\nid = "bad_skip_state"\nstate = "idle"\n'
                'skip_state_update = true\ncontains = ["menu"]\n'
            ),
            'rule bad_skip_state uses skip_state_update without state = "unknown"',
        ),
        (
            (
                '[[rules]]\nid = "bad_skip_visible"\nstate = "unknown"\nskip_state_update = true\n'
                'visible_blocker = true\ncontains = ["menu"]\n'
            ),
            "rule bad_skip_visible uses skip_state_update with visible state evidence",
        ),
        ('[[rules]]\nid = "n"\nstate = "idle"\ncontains = ["a"]\nnot = [{}]\n', "empty not gate"),
        ('[[rules]]\nid = " "\nstate = "idle"\ncontains = ["a"]\n', "rule id must not be empty"),
        ('[[rules]]\nid = "s"\nstate = "busy"\ncontains = ["a"]\n', "unknown variant `busy`"),
        ("", "manifest must contain at least one rule"),
    ],
)
def test_invalid_manifests_are_rejected(rules: str, message: str) -> None:
    with pytest.raises(ManifestError, match=re.escape(message)):
        parse_manifest(_codex(rules))


def test_more_than_128_rules_are_rejected() -> None:
    rules = "".join(
        f'[[rules]]\nid = "rule_{i}"\nstate = "idle"\ncontains = ["ready"]\n' for i in range(129)
    )
    with pytest.raises(ManifestError, match="manifest contains 129 rules, max is 128"):
        parse_manifest(_codex(rules))
    assert len(parse_manifest(_codex(rules.rsplit("[[rules]]", 1)[0])).rules) == 128


def test_gates_nested_deeper_than_eight_are_rejected() -> None:
    gate = '{ contains = ["9"] }'
    for level in range(8, 0, -1):
        gate = f'{{ contains = ["{level}"], all = [{gate}] }}'
    rules = f'[[rules]]\nid = "deep"\nstate = "idle"\ncontains = ["ready"]\nall = [{gate}]\n'
    with pytest.raises(ManifestError, match="exceeds max gate depth 8"):
        parse_manifest(_codex(rules))


def test_more_than_32_matchers_in_one_gate_are_rejected() -> None:
    needles = ", ".join(f'"m{i}"' for i in range(33))
    rules = f'[[rules]]\nid = "many"\nstate = "idle"\ncontains = [{needles}]\n'
    with pytest.raises(ManifestError, match="has 33 direct matchers, max is 32"):
        parse_manifest(_codex(rules))


def test_matchers_longer_than_512_characters_are_rejected() -> None:
    rules = f'[[rules]]\nid = "long"\nstate = "idle"\ncontains = ["{"x" * 513}"]\n'
    with pytest.raises(ManifestError, match="matcher exceeds max length 512"):
        parse_manifest(_codex(rules))


def test_top_non_empty_lines_needs_a_canonical_positive_bounded_count() -> None:
    validate_region_name("top_non_empty_lines(1)")
    validate_region_name("top_non_empty_lines(65535)")
    validate_region_name(" bottom_non_empty_lines(3) ")
    for count in ("0", "01", "+1", "65536", "999999999999999999999999"):
        with pytest.raises(ManifestError):
            validate_region_name(f"top_non_empty_lines({count})")


def test_top_non_empty_lines_requires_engine_three_when_declared() -> None:
    manifest = (
        'id = "grok"\nversion = "1"\nmin_engine_version = 2\n\n[[rules]]\nid = "background"\n'
        'state = "working"\nregion = " top_non_empty_lines(1) "\ncontains = ["active"]\n'
    )
    with pytest.raises(ManifestError, match="min_engine_version is below 3"):
        parse_manifest(manifest)


@pytest.mark.parametrize("version", ["", "2026..1", "2026.06a", "v1"])
def test_versions_must_be_dotted_numeric(version: str) -> None:
    rules = '[[rules]]\nid = "r"\nstate = "idle"\ncontains = ["a"]\n'
    with pytest.raises(ManifestError, match="version"):
        parse_manifest(f'id = "codex"\nversion = "{version}"\n{rules}')


def test_rule_defaults_are_priority_zero_and_whole_recent() -> None:
    rule = parse_manifest(_codex('[[rules]]\nid = "r"\ncontains = ["a"]\n')).rules[0]
    assert (rule.priority, rule.region, rule.state, rule.effective_state) == (
        0,
        "whole_recent",
        None,
        "unknown",
    )


# -- agent labels --------------------------------------------------------------------------------


def test_agent_spellings_map_to_canonical_labels() -> None:
    cases = {
        "claude-code": "claude",
        "CLAUDE": "claude",
        "cursor-agent": "cursor",
        "devin cli": "devin",
        "antigravity-cli": "agy",
        "opencode.exe": "opencode",
        "opencode2": "opencode",
        "Kimi Code": "kimi",
        "kiro-cli": "kiro",
        "ghcs": "copilot",
        "grok-build": "grok",
        "hermes-agent": "hermes",
        "Qwen Code": "qwen",
        "qoder": "qodercli",
        "amp-local": "amp",
        "mastra code": "mastracode",
    }
    assert {name: parse_agent_label(name) for name in cases} == cases
    for unknown in ("bash", "vim", "node", "herdr:pi", ""):
        assert parse_agent_label(unknown) is None


def test_canonical_labels_are_strict_and_executables_follow_herdr() -> None:
    assert parse_canonical_agent_label("agy") == "agy"
    assert parse_canonical_agent_label("antigravity") is None
    assert parse_canonical_agent_label("Claude") is None
    assert interactive_executable("cursor") == "cursor-agent"
    assert interactive_executable("kiro") == "kiro-cli"
    assert interactive_executable("copilot") == "copilot"


# -- Rust regex translation ---------------------------------------------------------------------


def test_braced_code_points_become_re2_escapes() -> None:
    pattern = compile_rust_regex(r"^[\x{2800}-\x{28FF}\x{25D0}-\x{25D3}] \u{fe0f}?x")
    assert pattern.search("⠋ x")
    assert pattern.search("◐ \ufe0fx")
    assert not pattern.search("✳ x")


def test_dollar_without_multiline_matches_only_at_the_very_end() -> None:
    assert compile_rust_regex("done$").search("done")
    assert not compile_rust_regex("done$").search("done\n")
    assert compile_rust_regex("(?m)^done$").search("a\ndone\nb")
    assert not compile_rust_regex(r"done\z").search("done\n")


def test_flags_set_mid_pattern_apply_to_the_rest_of_the_group_and_its_alternatives() -> None:
    pattern = compile_rust_regex("a(?i)b|c")
    assert pattern.fullmatch("aB")
    assert pattern.fullmatch("C")
    assert not pattern.fullmatch("AB")
    scoped = compile_rust_regex("(x(?i)y)z")
    assert scoped.fullmatch("xYz")
    assert not scoped.fullmatch("xYZ")


def test_unicode_and_ascii_classes_translate() -> None:
    assert compile_rust_regex(r"^\p{Alphabetic}+$").search("Éclair")
    assert not compile_rust_regex(r"^\p{Alphabetic}+$").search("abc1")
    assert compile_rust_regex(r"\P{Lu}").fullmatch("a")
    assert compile_rust_regex(r"[[:digit:][:upper:]]+").fullmatch("A1")
    assert compile_rust_regex(r"(?<name>\w+)").fullmatch("abc")
    assert compile_rust_regex(r"(?-u:\w)").fullmatch("a")
    assert not compile_rust_regex(r"(?-u:\w)").fullmatch("é")


def test_translation_leaves_plain_patterns_alone() -> None:
    assert translate(r"^[⏸⏵].*esc to (?:interrupt|cancel)\b") == (
        r"^[⏸⏵].*esc to (?:interrupt|cancel)\b"
    )


def test_whitespace_classes_follow_unicode_white_space() -> None:
    assert compile_rust_regex(r"a\sb").search("a\u3000b")
    assert compile_rust_regex(r"[\s]").search("\x85")
    assert not compile_rust_regex(r"a\sb").search("a\x1cb")
    assert compile_rust_regex(r"\S").fullmatch("\x1c")
    assert not compile_rust_regex(r"(?-u:\s)").search("\x85")


@pytest.mark.parametrize(
    "pattern",
    [r"(?=a)", r"(?<!a)b", r"(a)\1", r"\q", r"[a&&b]", r"[a--b]", r"\u{D800}", "(", ")"],
)
def test_patterns_rust_rejects_or_re2_cannot_express_are_errors(pattern: str) -> None:
    with pytest.raises(RustRegexError):
        compile_rust_regex(pattern)
