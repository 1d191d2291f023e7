"""Managed-agent definitions: parsing, the three layers, trusted-project approval, refusals.

Each test builds its layers in ``tmp_path`` and asserts what the roster holds and, for what is
left out, that the reason is given: a definition silently dropped or silently served from the
wrong layer is the failure these tests exist to catch.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.managed.definitions import (
    DEFINITION_FILE_LIMIT,
    DefinitionError,
    LayerSources,
    Roster,
    approve_project,
    default_user_dir,
    is_project_trusted,
    load_roster,
    parse_definition,
    revoke_project,
)


def _write(path: Path, front: str, body: str = "Do the work.") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def layers(tmp_path: Path) -> LayerSources:
    project = tmp_path / "project"
    project.mkdir()
    return LayerSources(
        builtin_dir=tmp_path / "builtin",
        user_dir=tmp_path / "user",
        project_root=project,
        state_dir=tmp_path / "state",
    )


def _builtin(s: LayerSources) -> Path:
    assert s.builtin_dir is not None
    return s.builtin_dir


def _user(s: LayerSources) -> Path:
    assert s.user_dir is not None
    return s.user_dir


def _project(s: LayerSources) -> Path:
    assert s.project_root is not None
    return s.project_root / ".pi" / "agents"


def _reasons(roster: Roster) -> str:
    return "\n".join(r.reason for r in roster.refusals)


def test_parse_reads_front_matter_and_body(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "impl.md",
        "name: implementer\ndescription: writes code\nmodel: flash\nthinking: false\n"
        "tools: [read, edit]\nagents: [scout]\nenabled: true",
        body="You implement.\n\nCarefully.",
    )
    parsed = parse_definition(path, "builtin")
    assert parsed.name == "implementer"
    assert parsed.front_matter["thinking"] == "off"  # `false` means off, as in pi-herdsman
    assert parsed.front_matter["tools"] == ["read", "edit"]
    assert parsed.body == "You implement.\n\nCarefully."


def test_parse_strips_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes("\ufeff---\nname: a\n---\nbody\n".encode())
    assert parse_definition(path, "user").name == "a"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("name: a\n", "no YAML front matter"),
        ("---\nname: a\nbody\n", "unterminated"),
        ("---\n- a\n- b\n---\n", "not a YAML mapping"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\ndescription: x\n---\n", "no 'name' field"),
        ("---\nname: a\ncolour: red\n---\n", "'colour' is not a supported"),
        ("---\nname: a\nenabled: 'yes'\n---\n", "'enabled' must be a boolean"),
        ("---\nname: a\ntools: [read, '']\n---\n", "array of non-empty strings"),
        ("---\nname: a\nagents: [b, b]\n---\n", "must not repeat"),
        ("---\nname: a\nthinking: huge\n---\n", "'thinking' must be one of"),
        ("---\nname: a\nsystemPromptMode: merge\n---\n", "'systemPromptMode' must be one of"),
        ("---\nname: a\npermission: all\n---\n", "'permission' must be a mapping"),
        ("---\nname: '  '\n---\n", "'name' must be a non-empty string"),
        ("---\nname: !!python/object:os.system x\n---\n", "not valid YAML"),
        ("---\nname: a\npermission: {x: &r [1], y: *r}\n---\n", "YAML alias"),
    ],
)
def test_parse_refuses_bad_files_with_the_reason(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DefinitionError, match=reason):
        parse_definition(path, "user")


def test_parse_refuses_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(b"---\nname: a\n---\n\xff\xfe\n")
    with pytest.raises(DefinitionError, match="not valid UTF-8"):
        parse_definition(path, "user")


def test_parse_refuses_a_symlink_a_fifo_and_a_large_file(tmp_path: Path) -> None:
    target = _write(tmp_path / "real.md", "name: a")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    with pytest.raises(DefinitionError, match="symbolic link"):
        parse_definition(link, "user")
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    with pytest.raises(DefinitionError, match="FIFO"):  # and it returns: no blocking open
        parse_definition(fifo, "user")
    big = _write(tmp_path / "big.md", "name: big", body="x" * DEFINITION_FILE_LIMIT)
    with pytest.raises(DefinitionError, match="larger than the 65536-byte limit"):
        parse_definition(big, "user")


def test_three_layers_overlay_by_name(layers: LayerSources) -> None:
    _write(_builtin(layers) / "impl.md", "name: impl\nmodel: flash\ndescription: base", "Base.")
    _write(_builtin(layers) / "scout.md", "name: scout", "Scout.")
    _write(_project(layers) / "impl.md", "name: impl\nthinking: high\nbodyMode: append", "Proj.")
    _write(_user(layers) / "impl.md", "name: impl\nmodel: opus", "")
    approve_project(layers.state_dir, _project(layers).parent.parent)
    roster = load_roster(layers)
    impl = roster.definitions["impl"]
    # front matter merged key by key, higher layers win; user is the highest layer
    assert impl.model == "opus"
    assert impl.thinking == "high"
    assert impl.description == "base"
    # project appended its body to the built-in one; the user's empty body replaces it
    assert impl.body == ""
    assert [layer for layer, _ in impl.sources] == ["builtin", "project", "user"]
    assert impl.layer == "user"
    assert roster.definitions["scout"].body == "Scout."
    assert roster.refusals == ()


def test_body_mode_append_joins_with_a_blank_line(layers: LayerSources) -> None:
    _write(_builtin(layers) / "a.md", "name: a", "Base.")
    _write(_user(layers) / "a.md", "name: a\nbodyMode: append", "More.")
    definition = load_roster(layers).definitions["a"]
    assert definition.body == "Base.\n\nMore."
    assert "bodyMode" not in definition.front_matter


def test_untrusted_project_is_left_out_with_the_reason(layers: LayerSources) -> None:
    _write(_builtin(layers) / "impl.md", "name: impl\nmodel: flash")
    _write(_project(layers) / "impl.md", "name: impl\nmodel: attacker-model")
    _write(_project(layers) / "extra.md", "name: extra")
    roster = load_roster(layers)
    assert set(roster.definitions) == {"impl"}
    assert roster.definitions["impl"].model == "flash"
    (refusal,) = roster.refusals
    assert refusal.layer == "project"
    assert "is not trusted" in refusal.reason
    # approval (by the project's real path) brings them in; revoking takes them out again
    assert layers.project_root is not None
    approve_project(layers.state_dir, layers.project_root)
    trusted = load_roster(layers)
    assert set(trusted.definitions) == {"impl", "extra"}
    assert trusted.definitions["impl"].model == "attacker-model"
    assert revoke_project(layers.state_dir, layers.project_root)
    assert set(load_roster(layers).definitions) == {"impl"}
    assert not revoke_project(layers.state_dir, layers.project_root)


def test_trust_record_is_per_real_path_and_not_a_link(tmp_path: Path) -> None:
    state = tmp_path / "state"
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(one)
    record = approve_project(state, alias)
    assert is_project_trusted(state, one)  # approved by its real path
    assert not is_project_trusted(state, two)
    assert (state.stat().st_mode & 0o777) == 0o700
    assert (record.stat().st_mode & 0o777) == 0o600
    # a record that is a link (even to a valid record) or names another project: not trusted
    other = approve_project(state, two)
    record.unlink()
    record.symlink_to(other)
    assert not is_project_trusted(state, one)
    record.unlink()
    record.write_text(other.read_text(), encoding="utf-8")
    assert not is_project_trusted(state, one)


def test_trust_in_a_state_dir_others_can_write_is_refused(tmp_path: Path) -> None:
    state, project = tmp_path / "state", tmp_path / "project"
    project.mkdir()
    approve_project(state, project)
    assert is_project_trusted(state, project)
    state.chmod(0o777)  # another local user could have planted the record
    assert not is_project_trusted(state, project)
    state.chmod(0o700)
    assert is_project_trusted(state, project)
    # asking about a state dir that was never made creates nothing
    assert not is_project_trusted(tmp_path / "absent", project)
    assert not (tmp_path / "absent").exists()


def test_a_broken_override_fails_its_name_closed(layers: LayerSources) -> None:
    _write(_builtin(layers) / "impl.md", "name: impl\nmodel: flash")
    _write(_builtin(layers) / "ok.md", "name: ok")
    _write(_user(layers) / "impl.md", "name: impl\nmodel: opus\nenabled: maybe")
    roster = load_roster(layers)
    # never served from the built-in layer the user meant to override
    assert set(roster.definitions) == {"ok"}
    assert "'enabled' must be a boolean" in _reasons(roster)
    assert roster.refusals[0].name == "impl"


def test_duplicate_names_in_one_layer_are_refused(layers: LayerSources) -> None:
    _write(_user(layers) / "a.md", "name: impl")
    _write(_user(layers) / "sub" / "b.md", "name: impl")
    _write(_user(layers) / "sub" / "c.md", "name: other")
    roster = load_roster(layers)
    assert set(roster.definitions) == {"other"}  # found recursively
    assert "multiple definitions found for agent impl" in _reasons(roster)


def test_examples_and_non_markdown_are_ignored(layers: LayerSources) -> None:
    _write(_user(layers) / "a.example.md", "name: example")
    _write(_user(layers) / "notes.txt", "name: notes")
    _write(_user(layers) / "a.md", "name: a")
    roster = load_roster(layers)
    assert set(roster.definitions) == {"a"}
    assert roster.refusals == ()


def test_links_in_a_layer_are_refused_not_followed(layers: LayerSources, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside / "secret.md", "name: secret")
    _write(_user(layers) / "a.md", "name: a")
    (_user(layers) / "linked.md").symlink_to(outside / "secret.md")
    (_user(layers) / "linkdir").symlink_to(outside)
    roster = load_roster(layers)
    assert set(roster.definitions) == {"a"}
    reasons = _reasons(roster)
    assert "linked.md is refused" in reasons and "symbolic link" in reasons
    assert any(r.path == _user(layers) / "linkdir" for r in roster.refusals)


def test_missing_delegation_targets_drop_the_delegator(layers: LayerSources) -> None:
    _write(_builtin(layers) / "lead.md", "name: lead\nagents: [mid]")
    _write(_builtin(layers) / "mid.md", "name: mid\nagents: [ghost]")
    _write(_builtin(layers) / "leaf.md", "name: leaf")
    _write(_builtin(layers) / "boss.md", "name: boss\nagents: [leaf]")
    roster = load_roster(layers)
    assert set(roster.definitions) == {"leaf", "boss"}
    assert roster.definitions["boss"].agents == ("leaf",)
    reasons = _reasons(roster)
    assert "agent mid references missing agent definition ghost" in reasons
    assert "agent lead references missing agent definition mid" in reasons


def test_enabled_lists_only_enabled_definitions(layers: LayerSources) -> None:
    _write(_builtin(layers) / "b.md", "name: b")
    _write(_builtin(layers) / "a.md", "name: a")
    _write(_user(layers) / "b.md", "name: b\nenabled: false")
    roster = load_roster(layers)
    assert [d.name for d in roster.enabled()] == ["a"]
    assert not roster.definitions["b"].enabled


def test_missing_layer_directories_give_an_empty_roster(tmp_path: Path) -> None:
    roster = load_roster(LayerSources(None, tmp_path / "nope", None, tmp_path / "state"))
    assert roster.definitions == {}
    assert roster.refusals == ()


def test_default_user_dir() -> None:
    assert default_user_dir({"PI_CODING_AGENT_DIR": "/x/pi"}) == Path("/x/pi/agents")
    assert default_user_dir({"HOME": "/home/u"}) == Path("/home/u/.pi/agent/agents")


def test_a_delegating_agent_sees_its_enabled_allowlist_as_leaves(layers: LayerSources) -> None:
    _write(_builtin(layers) / "lead.md", "name: lead\nagents: [mid, leaf, dis]")
    _write(_builtin(layers) / "mid.md", "name: mid\nagents: [leaf]")
    _write(_builtin(layers) / "leaf.md", "name: leaf\nmodel: flash")
    _write(_builtin(layers) / "dis.md", "name: dis\nenabled: false")
    _write(_builtin(layers) / "other.md", "name: other")
    roster = load_roster(layers)
    allowed = roster.for_delegating_agent(roster.definitions["lead"].agents)
    assert [d.name for d in allowed] == ["leaf", "mid"]  # not disabled, not outside the list
    assert all(d.agents == () and "agents" not in d.front_matter for d in allowed)
    assert allowed[0].model == "flash"
    assert roster.definitions["mid"].agents == ("leaf",)  # the roster itself is unchanged
