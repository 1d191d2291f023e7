"""Body ``@path`` lines of a definition (``orchestrator.managed.body_files``, reference A.8 and
A.17 step 7): expanded from the definition's own layer directory, never through a link,
bounded, refused as ``invalid_request`` naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.managed.body_files import BODY_FILE_LIMIT, EXPANDED_BODY_LIMIT, expand_body
from orchestrator.managed.definitions import AgentDefinition, LayerSources, load_roster
from orchestrator.managed.errors import ManagedAgentError


def _definition(
    tmp_path: Path, body: str, *, name: str = "d", sub: str = "", strict: bool = True
) -> AgentDefinition:
    """The user layer ``<tmp>/agents`` with one definition (in ``sub`` when given); with
    ``strict`` the roster refused nothing (fragments are not ``*.md``: every ``*.md`` under
    a layer is read as a definition)."""
    folder = tmp_path / "agents" / sub
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n---\n{body}\n")
    roster = load_roster(
        LayerSources(
            builtin_dir=None,
            user_dir=tmp_path / "agents",
            project_root=None,
            state_dir=tmp_path / "state",
        )
    )
    assert not (strict and roster.refusals), roster.refusals
    return roster.definitions[name]


def _refused(definition: AgentDefinition, home: Path, reason: str) -> ManagedAgentError:
    with pytest.raises(ManagedAgentError) as caught:
        expand_body(definition, home=home)
    error = caught.value
    assert error.category == "invalid_request"
    assert reason in error.message, error.message
    assert f"in the body of definition {definition.name}" in error.message
    assert str(definition.sources[-1][1]) in error.message  # the definition file
    return error


def test_an_at_line_is_replaced_by_the_files_text(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    (agents / "shared").mkdir(parents=True)
    (agents / "shared" / "style.txt").write_text("Write short sentences.\n")
    (agents / "shared" / "more notes.txt").write_text("With a space.")
    body = (
        "Intro.\n@./shared/style.txt\n@./shared/more notes.txt  \n  @./shared/style.txt\n"
        "@shared/style.txt\nend @./shared/style.txt"
    )
    definition = _definition(tmp_path, body)
    assert expand_body(definition, home=tmp_path / "home") == (
        "Intro.\nWrite short sentences.\nWith a space.\n  @./shared/style.txt\n"
        "@shared/style.txt\nend @./shared/style.txt"
    )


def test_paths_resolve_from_the_definition_files_directory_home_or_absolute(
    tmp_path: Path,
) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "top.txt").write_text("TOP")
    definition = _definition(
        tmp_path, f"@../top.txt\n@~/agents/top.txt\n@{agents}/top.txt", sub="team"
    )
    assert expand_body(definition, home=tmp_path) == "TOP\nTOP\nTOP"


def test_an_inserted_files_own_at_lines_are_not_expanded(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "a.txt").write_text("@./b.txt\n")
    (agents / "b.txt").write_text("B")
    assert expand_body(_definition(tmp_path, "@./a.txt"), home=tmp_path) == "@./b.txt"


def test_a_path_outside_the_layer_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("no")
    definition = _definition(tmp_path, "@../secret.txt")
    error = _refused(definition, tmp_path, "is outside the definition's layer directory")
    assert error.details == {
        "file": "../secret.txt",
        "definition": "d",
        "definitionFile": str(tmp_path / "agents" / "d.md"),
    }
    _refused(_definition(tmp_path, "@/etc/hostname", name="e"), tmp_path, "outside")
    _refused(_definition(tmp_path, "@~/secret.txt", name="f"), tmp_path, "outside")
    _refused(_definition(tmp_path, "@./", name="g"), tmp_path, "a directory")


def test_no_symbolic_link_is_followed(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    (agents / "real").mkdir(parents=True)
    (agents / "real" / "x.txt").write_text("inside")
    (tmp_path / "outside.txt").write_text("outside")
    (agents / "out.txt").symlink_to(tmp_path / "outside.txt")
    (agents / "in.txt").symlink_to(agents / "real" / "x.txt")
    (agents / "linkdir").symlink_to(agents / "real")
    # (the roster refuses the linked directory itself: strict=False)
    out = _definition(tmp_path, "@./out.txt", strict=False)
    _refused(out, tmp_path, "a symbolic link: not followed")
    _refused(_definition(tmp_path, "@./in.txt", name="e", strict=False), tmp_path, "symbolic link")
    linked = _definition(tmp_path, "@./linkdir/x.txt", name="f", strict=False)
    _refused(linked, tmp_path, "linkdir is a symbolic link")


def test_non_regular_oversized_non_utf8_and_missing_files_are_refused(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    os.mkfifo(agents / "pipe")
    (agents / "big.txt").write_text("x" * (BODY_FILE_LIMIT + 1))
    (agents / "latin.txt").write_bytes(b"caf\xe9")
    (agents / "dir").mkdir()
    _refused(_definition(tmp_path, "@./pipe"), tmp_path, "a FIFO, not a regular file")
    _refused(_definition(tmp_path, "@./big.txt", name="e"), tmp_path, "byte limit")
    _refused(_definition(tmp_path, "@./latin.txt", name="f"), tmp_path, "not valid UTF-8")
    _refused(_definition(tmp_path, "@./dir", name="g"), tmp_path, "a directory")
    _refused(_definition(tmp_path, "@./gone.txt", name="h"), tmp_path, "no such file")


def test_a_file_the_caller_passed_in_files_is_dropped_from_the_body(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "spec.txt").write_text("SPEC")
    definition = _definition(tmp_path, "before\n@./spec.txt\nafter")
    skip = {os.path.realpath(agents / "spec.txt")}
    assert expand_body(definition, home=tmp_path, skip=skip) == "before\nafter"


def test_each_overlay_part_resolves_in_its_own_layer(tmp_path: Path) -> None:
    builtin, user = tmp_path / "builtin", tmp_path / "user"
    for folder, text in ((builtin, "BUILTIN NOTE"), (user, "USER NOTE")):
        folder.mkdir()
        (folder / "note.txt").write_text(text)
    (builtin / "d.md").write_text("---\nname: d\n---\nBase.\n@./note.txt\n")
    (user / "d.md").write_text("---\nname: d\nbodyMode: append\n---\n@./note.txt\n")
    roster = load_roster(
        LayerSources(
            builtin_dir=builtin, user_dir=user, project_root=None, state_dir=tmp_path / "s"
        )
    )
    definition = roster.definitions["d"]
    assert definition.body == "Base.\n@./note.txt\n\n@./note.txt"
    assert expand_body(definition, home=tmp_path) == "Base.\nBUILTIN NOTE\n\nUSER NOTE"
    leaf = definition.as_leaf()
    assert expand_body(leaf, home=tmp_path) == "Base.\nBUILTIN NOTE\n\nUSER NOTE"


def test_the_expanded_body_is_bounded(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "chunk.txt").write_text("y" * BODY_FILE_LIMIT)
    lines = "\n".join(["@./chunk.txt"] * (EXPANDED_BODY_LIMIT // BODY_FILE_LIMIT + 1))
    with pytest.raises(ManagedAgentError) as caught:
        expand_body(_definition(tmp_path, lines), home=tmp_path)
    assert caught.value.category == "invalid_request"
    assert "once its @ files are expanded" in caught.value.message


def test_a_definition_built_without_files_keeps_its_body() -> None:
    definition = AgentDefinition("m", {"name": "m"}, "@./x.txt", ())
    assert expand_body(definition, home=Path("/nonexistent")) == "@./x.txt"
