"""Managed-agent definitions: Markdown files with YAML front matter, in three layers.

Why: seed 002 delegates work *by definition* (``agent_delegate {definition, task}``), and the
definition decides the child's model, thinking level, tools and which definitions it may
itself delegate to (``agents``). The roster a controller sees must be exactly what it may
use, so this module is the one place that turns files into that roster:

* **Layers, low to high** (as pi-herdsman reads them): ``builtin`` (shipped with the
  package in :data:`BUILTIN_DIR`: ``explorer``, ``worker`` and ``reviewer``, so a fresh setup
  can delegate at once), ``project`` (``<project>/.pi/agents/``) and ``user``
  (``$PI_CODING_AGENT_DIR/agents/``, default ``~/.pi/agent/agents/``). A higher layer with a
  definition of the same ``name`` overlays the lower one: its front matter is merged over the
  lower one key by key, and its body replaces the lower body (``bodyMode: append`` appends it
  after a blank line instead). The effective definition keeps each layer's body part with
  its file and layer directory (:class:`BodyPart`), so body ``@path`` lines are expanded at
  launch from the file they are written in (:mod:`orchestrator.managed.body_files`).
* **Project definitions need trusted-project approval.** A repository is someone else's
  code: its ``.pi/agents/`` could name any model or tool set. Until the project's real path
  has an approval record under the orchestrator's state dir (:func:`approve_project`), the
  project layer is left out of the roster and the roster says why (:attr:`Roster.refusals`).
* **Files are untrusted input.** A definition file that is a symbolic link, a FIFO or
  anything but a regular file, that is larger than :data:`DEFINITION_FILE_LIMIT`, that is not
  UTF-8, or whose front matter is not a YAML mapping of the supported fields, is refused with
  its reason (read through :mod:`orchestrator.client.file_trust.private_files`; YAML through
  ``yaml.safe_load``, which builds plain data only).
* **Fail closed per name.** When a layer's file for a name is invalid, or a layer holds two
  files with the same name, that name is left out of the roster entirely (never silently
  served from a lower layer the user meant to override); a definition whose ``agents`` names
  a definition that is not in the roster is left out too.

Nothing here launches an agent: the roster is what ``agent_list`` shows and what
``agent_delegate`` resolves against; :func:`where_definitions_go` is the sentence both say
when a roster is empty or a name is missing from it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from orchestrator.client.file_trust.private_files import (
    UnsafeFile,
    ensure_private_dir,
    read_bounded,
    write_atomic,
)

__all__ = [
    "BUILTIN_DIR",
    "DEFINITION_FILE_LIMIT",
    "LAYERS",
    "AgentDefinition",
    "BodyPart",
    "DefinitionError",
    "Layer",
    "LayerSources",
    "Refusal",
    "Roster",
    "approve_project",
    "default_user_dir",
    "is_project_trusted",
    "load_roster",
    "parse_definition",
    "project_definitions_dir",
    "revoke_project",
    "where_definitions_go",
]

Layer = Literal["builtin", "project", "user"]
LAYERS: tuple[Layer, ...] = ("builtin", "project", "user")
"""The layers from lowest to highest: a later layer overlays an earlier one."""

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin_agents"
"""The builtin layer: definitions shipped as package data (the wheel carries every file of
the package directory), each a role a newcomer can delegate to before writing their own."""

DEFINITION_FILE_LIMIT = 64 * 1024
"""The largest definition file read, in bytes; a larger one is refused, never truncated."""

_TRUST_RECORD_LIMIT = 8 * 1024
_TRUST_DIR = ("managed", "trusted-projects")

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_BOOL_FIELDS = frozenset(
    {
        "enabled",
        "noTools",
        "noBuiltinTools",
        "noSkills",
        "noExtensions",
        "inheritGlobalContext",
        "inheritProjectContext",
        "inheritSkills",
    }
)
_LIST_FIELDS = frozenset({"tools", "excludeTools", "skills", "extensions", "agents"})
_STRING_FIELDS = frozenset({"name", "description", "model"})
_CHOICE_FIELDS: Mapping[str, tuple[str, ...]] = {
    "systemPromptMode": ("append", "replace"),
    "bodyMode": ("replace", "append"),
}
SUPPORTED_FIELDS = frozenset(
    _BOOL_FIELDS | _LIST_FIELDS | _STRING_FIELDS | set(_CHOICE_FIELDS) | {"thinking", "permission"}
)


class DefinitionError(ValueError):
    """A definition file refused, with the reason in its message."""


@dataclass(frozen=True)
class ParsedFile:
    """One valid definition file: its validated front matter and its body."""

    path: Path
    layer: Layer
    front_matter: Mapping[str, object]
    body: str
    #: the layer directory the file was found under (its body ``@path`` lines stay inside)
    root: Path | None = None

    @property
    def name(self) -> str:
        return str(self.front_matter["name"])


@dataclass(frozen=True)
class BodyPart:
    """One layer's contribution to an effective body: its text, the definition file it came
    from and that file's layer directory (where its ``@path`` lines resolve and must stay,
    :mod:`orchestrator.managed.body_files`)."""

    path: Path
    root: Path
    text: str


@dataclass(frozen=True)
class AgentDefinition:
    """One effective definition: the merged front matter of every layer that defines
    ``name``, the resulting body, and the files it came from (lowest layer first)."""

    name: str
    front_matter: Mapping[str, object]
    body: str
    sources: tuple[tuple[Layer, Path], ...]
    #: the body's parts, lowest layer first (``body`` is their non-empty texts joined by a
    #: blank line); empty for a definition built without files
    body_parts: tuple[BodyPart, ...] = ()

    @property
    def layer(self) -> Layer:
        """The highest layer that contributed (the one that decides on a conflict)."""
        return self.sources[-1][0]

    @property
    def enabled(self) -> bool:
        return self.front_matter.get("enabled", True) is not False

    @property
    def description(self) -> str | None:
        value = self.front_matter.get("description")
        return value if isinstance(value, str) else None

    @property
    def model(self) -> str | None:
        value = self.front_matter.get("model")
        return value if isinstance(value, str) else None

    @property
    def thinking(self) -> str | None:
        value = self.front_matter.get("thinking")
        return value if isinstance(value, str) else None

    @property
    def agents(self) -> tuple[str, ...]:
        """The definitions this one may delegate to (empty: a leaf)."""
        value = self.front_matter.get("agents")
        return tuple(value) if isinstance(value, list) else ()

    def as_leaf(self) -> AgentDefinition:
        """This definition without ``agents``: how it runs under a delegating agent."""
        front = {k: v for k, v in self.front_matter.items() if k != "agents"}
        return AgentDefinition(self.name, front, self.body, self.sources, self.body_parts)


@dataclass(frozen=True)
class Refusal:
    """Something left out of the roster: which layer, which file or directory (when one),
    which definition name (when known), and why."""

    layer: Layer
    path: Path | None
    name: str | None
    reason: str


@dataclass(frozen=True)
class Roster:
    """The effective roster: definitions by name, and everything left out with its reason."""

    definitions: Mapping[str, AgentDefinition]
    refusals: tuple[Refusal, ...] = field(default=())

    def enabled(self) -> list[AgentDefinition]:
        """The enabled definitions, sorted by name (what a lead may delegate to)."""
        return [d for _, d in sorted(self.definitions.items()) if d.enabled]

    def for_delegating_agent(self, allowlist: Sequence[str]) -> list[AgentDefinition]:
        """What a delegating agent may delegate to: the enabled definitions its allowlist
        (its own definition's ``agents``) names, each projected as a leaf (no ``agents``:
        a delegating agent's children do not delegate further), sorted by name."""
        allowed = set(allowlist)
        return [d.as_leaf() for d in self.enabled() if d.name in allowed]


@dataclass(frozen=True)
class LayerSources:
    """Where each layer lives. ``None`` means the layer has no directory (the service passes
    :data:`BUILTIN_DIR`; tests pass ``None`` to see the other layers alone)."""

    builtin_dir: Path | None
    user_dir: Path | None
    project_root: Path | None
    state_dir: Path


def default_user_dir(env: Mapping[str, str]) -> Path:
    """``$PI_CODING_AGENT_DIR/agents``, else ``~/.pi/agent/agents`` (pi's agent dir)."""
    agent_dir = env.get("PI_CODING_AGENT_DIR")
    if agent_dir:
        return Path(agent_dir).expanduser() / "agents"
    home = env.get("HOME")
    base = Path(home) if home else Path.home()
    return base / ".pi" / "agent" / "agents"


def project_definitions_dir(project_root: Path) -> Path:
    """``<project>/.pi/agents``: where a project keeps its definitions."""
    return project_root / ".pi" / "agents"


def where_definitions_go(user_dir: Path, project_root: Path | None) -> str:
    """Where a user adds a definition and what one looks like, in one paragraph: what an
    empty roster and an unknown definition name answer, so nobody has to find the layers in
    the design document."""
    project = (
        f"{project_definitions_dir(project_root)}/<name>.md"
        if project_root is not None
        else "<project>/.pi/agents/<name>.md"
    )
    return (
        f"Agent definitions are Markdown files: yours in {user_dir}/<name>.md "
        "($PI_CODING_AGENT_DIR/agents, "
        f"default ~/.pi/agent/agents), a trusted project's in {project}, the built-in ones in "
        f"{BUILTIN_DIR}. A definition is YAML front matter between two '---' lines (name, "
        "description, and optionally model, thinking, tools), then the agent's instructions; "
        "a new file is in the roster at the next agent_list."
    )


# --- trusted-project approval ---------------------------------------------------------------


def _trust_record_path(state_dir: Path, project_root: Path) -> tuple[Path, str]:
    real = os.path.realpath(project_root)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()
    return state_dir.joinpath(*_TRUST_DIR, f"{digest}.json"), real


def approve_project(state_dir: Path, project_root: Path) -> Path:
    """Record that the project at ``project_root`` (by its real path) is trusted, so its
    definitions join the roster; returns the record's path. The state dir must be private
    (:func:`ensure_private_dir`)."""
    ensure_private_dir(state_dir)
    record, real = _trust_record_path(state_dir, project_root)
    payload = json.dumps({"version": 1, "project": real}, sort_keys=True) + "\n"
    write_atomic(record, payload)
    return record


def revoke_project(state_dir: Path, project_root: Path) -> bool:
    """Remove the project's approval record; whether there was one."""
    record, _ = _trust_record_path(state_dir, project_root)
    try:
        record.unlink()
    except FileNotFoundError:
        return False
    return True


def is_project_trusted(state_dir: Path, project_root: Path) -> bool:
    """Whether an approval record for exactly this project's real path exists and is valid
    (a regular file, not a link, naming the same real path, in a private state dir).
    Anything else: not trusted."""
    if not state_dir.is_dir():
        return False  # never created: nothing was approved (and nothing is created here)
    try:
        ensure_private_dir(state_dir)  # another user able to write there could plant trust
    except OSError:
        return False
    record, real = _trust_record_path(state_dir, project_root)
    try:
        read = read_bounded(record, _TRUST_RECORD_LIMIT)
        data = json.loads(read.data.decode("utf-8"))
    except (OSError, ValueError):
        return False
    if read.truncated or not isinstance(data, dict):
        return False
    return data.get("version") == 1 and data.get("project") == real


# --- parsing one file ------------------------------------------------------------------------


def _split_front_matter(text: str) -> tuple[str, str]:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise DefinitionError("has no YAML front matter (the file must start with a '---' line)")
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise DefinitionError("has an unterminated YAML front matter (no closing '---' line)")


def _is_string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _validate(front: Mapping[object, object]) -> dict[str, object]:
    checked: dict[str, object] = {}
    for key, value in front.items():
        if not isinstance(key, str) or key not in SUPPORTED_FIELDS:
            raise DefinitionError(f"field {key!r} is not a supported agent-definition field")
        if key in _STRING_FIELDS:
            if not isinstance(value, str) or (key != "description" and not value.strip()):
                raise DefinitionError(f"field {key!r} must be a non-empty string")
        elif key in _BOOL_FIELDS:
            if not isinstance(value, bool):
                raise DefinitionError(f"field {key!r} must be a boolean")
        elif key in _LIST_FIELDS:
            if not _is_string_list(value):
                raise DefinitionError(f"field {key!r} must be an array of non-empty strings")
            assert isinstance(value, list)
            if key == "agents" and len(set(value)) != len(value):
                raise DefinitionError("field 'agents' must not repeat a name")
        elif key in _CHOICE_FIELDS:
            if value not in _CHOICE_FIELDS[key]:
                raise DefinitionError(
                    f"field {key!r} must be one of {', '.join(_CHOICE_FIELDS[key])}"
                )
        elif key == "thinking":
            if value is False:
                value = "off"
            if value not in THINKING_LEVELS:
                raise DefinitionError(
                    f"field 'thinking' must be one of {', '.join(THINKING_LEVELS)}, or false"
                )
        elif key == "permission" and not (
            isinstance(value, dict) and all(isinstance(k, str) for k in value)
        ):
            raise DefinitionError("field 'permission' must be a mapping")
        checked[key] = value
    if "name" not in checked:
        raise DefinitionError("has no 'name' field")
    return checked


def _load_yaml(raw: str) -> object:
    """``yaml.safe_load`` of the front matter, refusing aliases: a definition never needs
    them, and nested aliases expand exponentially when the data is later walked or
    serialized (a few hundred bytes can stand for gigabytes)."""
    try:
        for event in yaml.parse(raw, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise DefinitionError("has front matter with a YAML alias (not supported)")
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise DefinitionError(f"has front matter that is not valid YAML: {exc}") from None


def parse_definition(path: Path, layer: Layer, root: Path | None = None) -> ParsedFile:
    """Read and validate one definition file found under the layer directory ``root`` (by
    default its own directory); :class:`DefinitionError` says why it is refused (a link, not
    a regular file, too large, not UTF-8, bad front matter, bad field)."""
    try:
        read = read_bounded(path, DEFINITION_FILE_LIMIT)
    except UnsafeFile as exc:
        raise DefinitionError(f"is refused: {exc.strerror}") from None
    except OSError as exc:
        raise DefinitionError(f"cannot be read: {exc.strerror or exc}") from None
    if read.truncated:
        raise DefinitionError(
            f"is {read.size} bytes, larger than the {DEFINITION_FILE_LIMIT}-byte limit"
        )
    try:
        text = read.data.decode("utf-8")
    except UnicodeDecodeError:
        raise DefinitionError("is not valid UTF-8") from None
    raw, body = _split_front_matter(text)
    front = _load_yaml(raw)
    if not isinstance(front, dict):
        raise DefinitionError("has front matter that is not a YAML mapping")
    return ParsedFile(path, layer, _validate(front), body.strip("\n"), root or path.parent)


# --- layers and the roster -------------------------------------------------------------------


def _definition_files(root: Path, layer: Layer, refusals: list[Refusal]) -> list[Path]:
    """The ``*.md`` files under ``root`` (recursively, sorted, ``*.example.md`` excluded).
    Links are not followed: a linked file or directory is refused with its reason."""
    found: list[Path] = []
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(directory)
        refusals.extend(
            Refusal(layer, base / name, None, "is a symbolic link: not followed")
            for name in sorted(dirnames)
            if (base / name).is_symlink()
        )
        found.extend(
            base / name
            for name in filenames
            if name.endswith(".md") and not name.endswith(".example.md")
        )
    return sorted(found)


def _load_layer(
    root: Path, layer: Layer, refusals: list[Refusal]
) -> tuple[dict[str, ParsedFile], set[str]]:
    """The layer's valid files by name, and the names the layer makes unusable (a refused
    file that still names a definition, or a name defined twice in the layer)."""
    by_name: dict[str, list[ParsedFile]] = {}
    broken: set[str] = set()
    for path in _definition_files(root, layer, refusals):
        try:
            parsed = parse_definition(path, layer, root)
        except DefinitionError as exc:
            name = _name_hint(path)
            refusals.append(Refusal(layer, path, name, f"{path} {exc}"))
            if name is not None:
                broken.add(name)
            continue
        by_name.setdefault(parsed.name, []).append(parsed)
    valid: dict[str, ParsedFile] = {}
    for name, files in by_name.items():
        if len(files) > 1:
            paths = ", ".join(str(f.path) for f in files)
            refusals.append(
                Refusal(
                    layer,
                    files[0].path,
                    name,
                    f"multiple definitions found for agent {name}: {paths}",
                )
            )
            broken.add(name)
        elif name not in broken:
            valid[name] = files[0]
    return valid, broken


def _name_hint(path: Path) -> str | None:
    """The ``name`` a refused file meant to define, when its front matter still says it (so
    a broken override fails its name closed instead of letting the lower layer through)."""
    try:
        read = read_bounded(path, DEFINITION_FILE_LIMIT)
        if read.truncated:
            return None
        raw, _ = _split_front_matter(read.data.decode("utf-8"))
        front = _load_yaml(raw)
    except (OSError, ValueError):
        return None
    name = front.get("name") if isinstance(front, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except OSError:
        return False


def _merge(layers: Sequence[ParsedFile]) -> AgentDefinition:
    front: dict[str, object] = {}
    parts: list[BodyPart] = []
    for parsed in layers:
        mode = parsed.front_matter.get("bodyMode", "replace")
        front.update(parsed.front_matter)
        part = BodyPart(parsed.path, parsed.root or parsed.path.parent, parsed.body)
        if mode != "append":
            parts = [part]  # replace (even by an empty body)
        elif parsed.body:
            parts.append(part)  # append after a blank line
    front.pop("bodyMode", None)
    return AgentDefinition(
        name=layers[0].name,
        front_matter=front,
        body="\n\n".join(p.text for p in parts if p.text),
        sources=tuple((p.layer, p.path) for p in layers),
        body_parts=tuple(parts),
    )


def load_roster(sources: LayerSources) -> Roster:
    """The effective roster of the three layers (see the module docstring for the rules)."""
    refusals: list[Refusal] = []
    roots: list[tuple[Layer, Path | None]] = [
        ("builtin", sources.builtin_dir),
        ("project", None),
        ("user", sources.user_dir),
    ]
    if sources.project_root is not None:
        project_dir = project_definitions_dir(sources.project_root)
        if _is_real_dir(project_dir):
            if is_project_trusted(sources.state_dir, sources.project_root):
                roots[1] = ("project", project_dir)
            else:
                refusals.append(
                    Refusal(
                        "project",
                        project_dir,
                        None,
                        f"project {os.path.realpath(sources.project_root)} is not trusted: its "
                        "definitions are not in the roster until the project is approved (an "
                        "approval record under the orchestrator's state dir)",
                    )
                )
    stacks: dict[str, list[ParsedFile]] = {}
    broken: set[str] = set()
    for layer, root in roots:
        if root is None or not _is_real_dir(root):
            continue
        valid, layer_broken = _load_layer(root, layer, refusals)
        broken |= layer_broken
        for name, parsed in valid.items():
            stacks.setdefault(name, []).append(parsed)
    definitions = {
        name: _merge(stack) for name, stack in sorted(stacks.items()) if name not in broken
    }
    # a definition that delegates to one not in the roster is not usable: drop it, repeatedly
    # (dropping one may leave another referring to it)
    changed = True
    while changed:
        changed = False
        for name, definition in list(definitions.items()):
            missing = [a for a in definition.agents if a not in definitions]
            if missing:
                del definitions[name]
                refusals.append(
                    Refusal(
                        definition.layer,
                        definition.sources[-1][1],
                        name,
                        f"agent {name} references missing agent definition {missing[0]}",
                    )
                )
                changed = True
    return Roster(definitions, tuple(refusals))
