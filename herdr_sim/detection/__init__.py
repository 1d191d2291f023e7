"""Agent detection as Herdr does it: screen manifests and foreground processes.

* :func:`load_manifests` reads Herdr's TOML detection manifests from a
  directory (never bundled here) into a :class:`ManifestSet`, whose
  :meth:`~ManifestSet.detect` and :meth:`~ManifestSet.explain` classify a
  detection snapshot (screen text plus OSC title/progress) for an agent.
* :data:`BUILTIN_MANIFESTS_DIR` holds the simulator's own manifests for its fake
  ``pi``, ``claude``, ``codex`` and ``opencode`` screens (not Herdr's; pass it as
  ``agent_manifests_dir`` when Herdr's manifests are not at hand).
* :func:`explain_to_json` gives ``agent.explain``'s object (the CLI renders its text).
* :func:`detect_agent_process` names the agent running in a pane from its
  foreground process group (process names, interpreter scripts, the
  ``HERDR_AGENT`` environment hint).
"""

from __future__ import annotations

from pathlib import Path

from herdr_sim.detection.engine import (
    DEFAULT_KNOWN_AGENT_IDLE_FALLBACK,
    Detection,
    DetectionExplain,
    LoadedManifest,
    ManifestSet,
    ManifestSource,
    load_manifests,
)
from herdr_sim.detection.explain import explain_to_json, hook_authority_explain
from herdr_sim.detection.manifest import Manifest, ManifestError, parse_manifest, read_manifest
from herdr_sim.detection.process import (
    ProcessAgent,
    ProcessProbe,
    detect_agent_process,
    foreground_shell_agent_action,
    probe_foreground_process,
)
from herdr_sim.regex import RustRegexError, compile_rust_regex, translate
from orchestrator.client.protocol import (
    AGENT_LABELS,
    SCREEN_MANIFEST_AGENTS,
    interactive_executable,
    parse_agent_label,
    parse_canonical_agent_label,
)

#: The simulator's own detection manifests, one per fake kind: they recognise the fake
#: agents' screens only (a real agent's screen needs Herdr's manifests).
BUILTIN_MANIFESTS_DIR: Path = Path(__file__).resolve().parent / "builtin"

__all__ = [
    "AGENT_LABELS",
    "BUILTIN_MANIFESTS_DIR",
    "DEFAULT_KNOWN_AGENT_IDLE_FALLBACK",
    "SCREEN_MANIFEST_AGENTS",
    "Detection",
    "DetectionExplain",
    "LoadedManifest",
    "Manifest",
    "ManifestError",
    "ManifestSet",
    "ManifestSource",
    "ProcessAgent",
    "ProcessProbe",
    "RustRegexError",
    "compile_rust_regex",
    "detect_agent_process",
    "explain_to_json",
    "foreground_shell_agent_action",
    "hook_authority_explain",
    "interactive_executable",
    "load_manifests",
    "parse_agent_label",
    "parse_canonical_agent_label",
    "parse_manifest",
    "probe_foreground_process",
    "read_manifest",
    "translate",
]
