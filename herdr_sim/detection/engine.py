"""Evaluate a set of detection manifests on a pane's detection snapshot.

Semantics follow Herdr's engine: every rule of the agent's manifest is
evaluated on its region; among the rules that match, the one with the highest
priority wins, and on equal priority the earlier rule in the file wins.  A
rule's ``visible_*`` flags count only when its state agrees (``visible_idle``
only on an ``idle`` rule, and so on).  When no rule matches, a known agent
falls back to ``idle`` (reason ``default_known_agent_idle_fallback``); an
unknown label gives ``unknown`` (reason ``unknown_agent`` when explaining).

Manifests come from a directory the caller names (the simulator's stand-in
for Herdr's bundled set) and, optionally, from an override directory holding
``<label>.toml`` files, as Herdr reads ``<config>/agent-detection/``.  An
override that cannot be loaded or names another agent is ignored with a
warning, keeping the base manifest.

Usage::

    manifests = load_manifests(contracts_dir() / "agent-detection")
    detection = manifests.detect("claude", screen_text, osc_title="✳ Claude Code")
    detection.state, detection.rule_id
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from herdr_sim.detection.manifest import (
    Gate,
    Manifest,
    ManifestError,
    Rule,
    manifest_matches_agent,
    read_manifest,
)
from herdr_sim.detection.regions import region_text, rust_lines
from orchestrator.client.protocol import SCREEN_MANIFEST_AGENTS, parse_agent_label

__all__ = [
    "DEFAULT_KNOWN_AGENT_IDLE_FALLBACK",
    "Detection",
    "DetectionExplain",
    "EvaluatedRule",
    "LoadedManifest",
    "ManifestSet",
    "ManifestSource",
    "MatchedRule",
    "gate_matches",
    "load_manifests",
]

DEFAULT_KNOWN_AGENT_IDLE_FALLBACK = "default_known_agent_idle_fallback"
UNKNOWN_AGENT_FALLBACK = "unknown_agent"
_PREVIEW_CHARS = 240


@dataclass(frozen=True)
class ManifestSource:
    """Where a manifest came from: ``bundled``, ``remote`` or ``local override``."""

    kind: str
    path: Path | None = None

    @property
    def label(self) -> str:
        """Herdr's label: ``bundled``, ``remote:<path>``, or the override's path."""
        if self.kind == "bundled":
            return "bundled"
        if self.kind == "remote":
            return f"remote:{self.path}"
        return str(self.path)


@dataclass(frozen=True)
class LoadedManifest:
    """A manifest in use for one agent, with its source and any load warning."""

    agent: str
    manifest: Manifest
    source: ManifestSource
    path: Path | None = None
    warning: str | None = None


@dataclass(frozen=True)
class MatchedRule:
    """The winning rule."""

    id: str
    priority: int
    region: str
    state: str


@dataclass(frozen=True)
class EvaluatedRule:
    """One rule's outcome plus evidence, as ``agent explain`` reports it."""

    id: str
    priority: int
    region: str
    state: str
    matched: bool
    contains: tuple[str, ...]
    regex: tuple[str, ...]
    line_regex: tuple[str, ...]
    all_count: int
    any_count: int
    not_count: int
    region_bytes: int
    region_preview: str


@dataclass(frozen=True)
class Detection:
    """What the detection loop consumes: the state and its confidence flags."""

    state: str
    skip_state_update: bool = False
    visible_idle: bool = False
    visible_blocker: bool = False
    visible_working: bool = False
    rule_id: str | None = None


@dataclass(frozen=True)
class DetectionExplain:
    """Everything Herdr's explain reports about one evaluation."""

    agent: str | None
    state: str
    source: ManifestSource | None = None
    matched_rule: MatchedRule | None = None
    screen_detection_skipped: bool = False
    visible_idle: bool = False
    visible_blocker: bool = False
    visible_working: bool = False
    skip_state_update: bool = False
    skipped_update_reason: str | None = None
    fallback_reason: str | None = None
    evaluated_rules: tuple[EvaluatedRule, ...] = ()
    warning: str | None = None
    manifest_version: str | None = None
    cached_remote_version: str | None = None
    local_override_shadowing_remote: bool = False
    remote_update_status: str | None = None
    remote_update_error: str | None = None

    def to_detection(self) -> Detection:
        """The :class:`Detection` part of this explanation."""
        return Detection(
            state=self.state,
            skip_state_update=self.skip_state_update,
            visible_idle=self.visible_idle,
            visible_blocker=self.visible_blocker,
            visible_working=self.visible_working,
            rule_id=self.matched_rule.id if self.matched_rule else None,
        )


def gate_matches(gate: Gate, text: str, lower_text: str | None = None) -> bool:
    """Herdr's gate semantics: all direct matchers, every ``all``, one ``any``, no ``not``."""
    lower = text.lower() if lower_text is None else lower_text
    if not all(needle in lower for needle in gate.lowered_contains):
        return False
    if not all(pattern.search(text) for pattern in gate.compiled_regex):
        return False
    if gate.compiled_line_regex:
        lines = rust_lines(text)
        if not all(
            any(pattern.search(line) for line in lines) for pattern in gate.compiled_line_regex
        ):
            return False
    if not all(gate_matches(nested, text, lower) for nested in gate.all):
        return False
    if gate.any and not any(gate_matches(nested, text, lower) for nested in gate.any):
        return False
    return not any(gate_matches(nested, text, lower) for nested in gate.not_)


def _preview(text: str) -> str:
    if len(text) > _PREVIEW_CHARS:
        return text[:_PREVIEW_CHARS] + "..."
    return text


def _evaluated(rule: Rule, text: str, matched: bool) -> EvaluatedRule:
    return EvaluatedRule(
        id=rule.id,
        priority=rule.priority,
        region=rule.region,
        state=rule.effective_state,
        matched=matched,
        contains=rule.gate.contains,
        regex=rule.gate.regex,
        line_regex=rule.gate.line_regex,
        all_count=len(rule.gate.all),
        any_count=len(rule.gate.any),
        not_count=len(rule.gate.not_),
        region_bytes=len(text.encode("utf-8")),
        region_preview=_preview(text),
    )


def _fallback(
    agent: str | None, loaded: LoadedManifest | None, evaluated: tuple[EvaluatedRule, ...]
) -> DetectionExplain:
    known = agent is not None
    return DetectionExplain(
        agent=agent,
        state="idle" if known else "unknown",
        source=loaded.source if loaded else None,
        fallback_reason=DEFAULT_KNOWN_AGENT_IDLE_FALLBACK if known else None,
        evaluated_rules=evaluated,
        warning=loaded.warning if loaded else None,
        manifest_version=loaded.manifest.version if loaded else None,
    )


def evaluate(
    loaded: LoadedManifest, screen: str, osc_title: str = "", osc_progress: str = ""
) -> DetectionExplain:
    """Evaluate one loaded manifest on a snapshot."""
    winner: Rule | None = None
    evaluated: list[EvaluatedRule] = []
    for rule in loaded.manifest.rules:
        text = region_text(rule.region, screen, osc_title, osc_progress)
        matched = gate_matches(rule.gate, text)
        evaluated.append(_evaluated(rule, text, matched))
        if matched and (winner is None or rule.priority > winner.priority):
            winner = rule
    if winner is None:
        return _fallback(loaded.agent, loaded, tuple(evaluated))
    state = winner.effective_state
    return DetectionExplain(
        agent=loaded.agent,
        state=state,
        source=loaded.source,
        matched_rule=MatchedRule(
            id=winner.id, priority=winner.priority, region=winner.region, state=state
        ),
        visible_idle=winner.visible_idle and state == "idle",
        visible_blocker=winner.visible_blocker and state == "blocked",
        visible_working=winner.visible_working and state == "working",
        skip_state_update=winner.skip_state_update,
        skipped_update_reason=f"matched_rule:{winner.id}" if winner.skip_state_update else None,
        evaluated_rules=tuple(evaluated),
        warning=loaded.warning,
        manifest_version=loaded.manifest.version,
    )


@dataclass
class ManifestSet:
    """The manifests in use, keyed by canonical agent label, plus load errors."""

    directory: Path | None
    override_directory: Path | None = None
    manifests: dict[str, LoadedManifest] = field(default_factory=dict)
    errors: dict[Path, str] = field(default_factory=dict)

    def for_agent(self, label: str) -> LoadedManifest | None:
        """The manifest for any spelling of an agent label, if one is loaded."""
        canonical = parse_agent_label(label)
        return self.manifests.get(canonical) if canonical else None

    def explain(
        self,
        agent_label: str | None,
        screen: str,
        *,
        osc_title: str = "",
        osc_progress: str = "",
    ) -> DetectionExplain:
        """Explain detection for an agent label (any accepted spelling)."""
        if agent_label is None:
            return DetectionExplain(agent=None, state="unknown")
        canonical = parse_agent_label(agent_label)
        if canonical is None:
            return DetectionExplain(
                agent=agent_label, state="unknown", fallback_reason=UNKNOWN_AGENT_FALLBACK
            )
        loaded = self.manifests.get(canonical)
        if loaded is None:
            return _fallback(canonical, None, ())
        return evaluate(loaded, screen, osc_title, osc_progress)

    def detect(
        self,
        agent_label: str | None,
        screen: str,
        *,
        osc_title: str = "",
        osc_progress: str = "",
    ) -> Detection:
        """Detect the state for an agent label; ``None`` or an unknown label is ``unknown``."""
        explained = self.explain(
            agent_label, screen, osc_title=osc_title, osc_progress=osc_progress
        )
        return explained.to_detection()

    def summaries(self) -> list[dict[str, Any]]:
        """``AgentManifestInfo`` objects for ``server.agent_manifests``, in Herdr's agent order."""
        return [
            {
                "agent": loaded.agent,
                "source": loaded.source.label,
                "source_kind": loaded.source.kind,
                "active_version": loaded.manifest.version,
                "cached_remote_version": None,
                "local_override_shadowing_remote": False,
                "remote_update_result": None,
                "remote_update_error": None,
                "remote_last_checked_unix": None,
                "warning": loaded.warning,
            }
            for label in SCREEN_MANIFEST_AGENTS
            if (loaded := self.manifests.get(label)) is not None
        ]

    def reload(self) -> ManifestSet:
        """A fresh set read from the same directories (Herdr re-reads on explicit reload)."""
        return load_manifests(self.directory, override_directory=self.override_directory)


def _agent_for(manifest: Manifest) -> str | None:
    for label in SCREEN_MANIFEST_AGENTS:
        if manifest_matches_agent(manifest, label):
            return label
    return None


def _toml_files(directory: Path) -> Iterable[Path]:
    return sorted(path for path in directory.glob("*.toml") if path.is_file())


def load_manifests(
    directory: str | Path | None,
    *,
    override_directory: str | Path | None = None,
    source_kind: str = "bundled",
) -> ManifestSet:
    """Load every ``*.toml`` manifest in ``directory`` (and ``<label>.toml`` overrides).

    Each file is mapped to the agent its ``id`` or an alias names (so
    ``antigravity.toml`` with ``id = "agy"`` serves ``agy``).  Files that fail
    validation or name no known agent are recorded in ``errors``; the first file
    for an agent wins.  ``directory`` must exist; ``override_directory`` may not.
    """
    base = Path(directory) if directory is not None else None
    overrides = Path(override_directory) if override_directory is not None else None
    result = ManifestSet(directory=base, override_directory=overrides)
    if base is not None:
        if not base.is_dir():
            raise FileNotFoundError(f"manifest directory not found: {base}")
        for path in _toml_files(base):
            try:
                manifest = read_manifest(path)
            except ManifestError as exc:
                result.errors[path] = str(exc)
                continue
            label = _agent_for(manifest)
            if label is None:
                result.errors[path] = f"manifest id {manifest.id} does not match a known agent"
                continue
            if label in result.manifests:
                result.errors[path] = f"duplicate manifest for {label}"
                continue
            source = ManifestSource(source_kind, path if source_kind != "bundled" else None)
            result.manifests[label] = LoadedManifest(label, manifest, source, path)
    if overrides is not None:
        _apply_overrides(result, overrides)
    return result


def _apply_overrides(result: ManifestSet, overrides: Path) -> None:
    for label in SCREEN_MANIFEST_AGENTS:
        path = overrides / f"{label}.toml"
        if not path.exists():
            continue
        current = result.manifests.get(label)
        warning: str | None = None
        try:
            manifest = read_manifest(path)
        except ManifestError as exc:
            warning = f"ignored override {path} because it could not be loaded: {exc}"
        else:
            if manifest_matches_agent(manifest, label):
                result.manifests[label] = LoadedManifest(
                    label, manifest, ManifestSource("local override", path), path
                )
                continue
            warning = (
                f"ignored override {path} because manifest id {manifest.id} does not match {label}"
            )
        if current is not None:
            result.manifests[label] = replace(current, warning=warning)
        else:
            result.errors[path] = warning
