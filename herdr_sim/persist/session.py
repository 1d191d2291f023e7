"""Session persistence: the layout and agents of a simulator, saved on every change.

Like Herdr's ``session.json`` (reference §10), the file keeps what a restart needs:
workspaces with their ids and counters, tabs with their stable numbers and layouts, and per
pane its cwd, manual label, agent name (with the kind of a managed ``agent.start`` agent),
official agent session and reported resume command. It does not keep agent state, metadata,
terminal ids or scrollback. A restarted simulator restores it: ids and numbers come back,
every pane gets a new terminal id and a fresh shell in its cwd, and — unless
``resume_agents_on_restore`` is off — the shell runs the pane's resume command: Herdr's
built-in plan for official agents, or the command a third-party agent reported.
As in Herdr, saved references are re-validated on restore, and an official session saved in
several panes is resumed only in the first of them.

Agent names follow Herdr's cold restore (``persist/snapshot.rs``, ``persist/restore.rs``):
a name is saved unless its ``agent.start`` launch is still pending or blocked, with
``managed_agent_kind`` when it belongs to a managed launch. On restore only a managed name
on a pane that Herdr's built-in plan resumes comes back, as an *active* managed agent
(``interactive_ready``); an unmanaged name, or a managed one on a pane that is not resumed
(resume off, no plan, a duplicate session), is dropped.

The file is Herdr's (``src/persist/snapshot.rs``, ``SessionSnapshot`` version 3): its
fields, its layout enum, pane ids as keys, so tools that read Herdr's ``session.json`` read
the simulator's. What a restart of the simulator needs beyond Herdr's fields (workspace
numbers, metadata tokens, the automatic label) rides in one extra top-level object,
``"herdr_sim"``, and a pane's third-party resume command in its ``resume`` field (Herdr
0.9.2 persists it; its field is not in the source we can read): Herdr's reader ignores both
(its structs do not deny unknown fields). Internally the state is built and restored in the
simulator's own shape (:func:`snapshot`, :func:`restore`); :func:`to_herdr` and
:func:`from_herdr` convert at the file's edge, and a file in the simulator's former format
(``"format": "herdr-sim-session"``, version 1) is still read. It is written atomically
(temporary file, rename) with mode 0600. Like Herdr's save (``src/persist/io.rs``: write a
temporary file, rename it over) there is no ``fsync``: the save runs on the server's loop
after every change, and an ``fsync`` there cost 4–8 ms per request on a loaded machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from herdr_sim.host.gitrepo import git_space
from herdr_sim.model.agents import AgentRecord, SessionRef, is_official, session_ref_error
from herdr_sim.model.ids import workspace_public_id
from herdr_sim.model.layout import Layout, LayoutTree, PaneNode, SplitNode
from herdr_sim.model.session import Pane, Session, Tab, Workspace, WorktreeSpace
from orchestrator.client.file_trust import private_files
from orchestrator.client.file_trust.ownership import (
    UntrustedPathError,
    check_directory,
    read_own_file,
)
from orchestrator.client.protocol import parse_canonical_agent_label

FORMAT = "herdr-sim-session"
VERSION = 1

#: Herdr's built-in resume plans for official agents (``agent_resume::plan``): the command
#: words before the session value, and whether the value is glued on with ``=``.
RESUME_PLANS: dict[str, tuple[tuple[str, ...], bool]] = {
    "claude": (("claude", "--resume"), False),
    "codex": (("codex", "resume"), False),
    "copilot": (("copilot", "--resume"), True),
    "devin": (("devin", "--resume"), False),
    "droid": (("droid", "--resume"), False),
    "kimi": (("kimi", "--session"), False),
    "mastracode": (("mastracode", "--thread"), False),
    "pi": (("pi", "--session"), False),
    "omp": (("omp", "--resume"), True),
    "hermes": (("hermes", "--resume"), False),
    "opencode": (("opencode", "--session"), False),
    "qodercli": (("qodercli", "--resume"), False),
    "qwen": (("qwen", "--resume"), False),
    "kilo": (("kilo", "--session"), False),
    "cursor": (("cursor-agent", "--resume"), False),
    "agy": (("agy", "--conversation"), False),
    "grok": (("grok", "--resume"), False),
}


def session_file(socket_path: Path) -> Path:
    """``session.json`` beside a ``herdr.sock`` (Herdr's name), else ``<stem>.session.json``.

    Two simulators whose sockets share a directory then never share a session file.
    """
    name = "session.json" if socket_path.stem == "herdr" else f"{socket_path.stem}.session.json"
    return socket_path.with_name(name)


#: agents whose official session reference may be a file path (all others: an id only)
PATH_AGENTS = ("pi", "omp")


def restorable(ref: SessionRef) -> bool:
    """Whether a saved session reference survives a restore (Herdr re-validates it: an
    official pair, a valid id, or for pi and omp a valid absolute path)."""
    if not is_official(ref.source, ref.agent):
        return False
    if ref.kind == "path":
        return ref.agent in PATH_AGENTS and not session_ref_error(None, ref.value)
    return ref.kind == "id" and not session_ref_error(ref.value, None)


def builtin_resume(ref: SessionRef) -> list[str] | None:
    """Herdr's resume command for an official session reference, if it has one."""
    plan = RESUME_PLANS.get(ref.agent)
    if plan is None or not restorable(ref):
        return None
    words, glued = plan
    if glued:
        return [*words[:-1], f"{words[-1]}={ref.value}"]
    return [*words, ref.value]


def restored_resume(rec: AgentRecord) -> list[str] | None:
    """What a restored pane runs: Herdr's built-in plan for its official session, else the
    resume command its third-party agent reported before the restart."""
    if rec.session is not None:
        planned = builtin_resume(rec.session)
        if planned is not None:
            return planned
    return None if rec.resume_argv is None else list(rec.resume_argv)


# -- managed agents (the live ``agent.start`` launches are the runtime's agent service's) ----

#: How a session's managed launches are read at save time: pane key → (kind, launch
#: pending), None for a pane without a managed launch
#: (:meth:`herdr_sim.services.agents.LaunchBook.saved`).
ManagedOf = Callable[[int], "tuple[str, bool] | None"]


def _no_managed(_key: int) -> tuple[str, bool] | None:
    return None


# -- saving -------------------------------------------------------------------------------------


def _tree(tree: LayoutTree, number_of: dict[int, int]) -> dict[str, Any]:
    if isinstance(tree, PaneNode):
        return {"pane": number_of[tree.pane]}
    return {
        "direction": tree.direction,
        "ratio": tree.ratio,
        "first": _tree(tree.first, number_of),
        "second": _tree(tree.second, number_of),
    }


def _pane(pane: Pane, cwd: str, managed: tuple[str, bool] | None) -> dict[str, Any]:
    rec = pane.agent_rec
    out: dict[str, Any] = {"cwd": cwd}
    if pane.label is not None:
        out["label"] = pane.label
    # like Herdr, nothing of a launch still pending (or blocked during startup) is saved
    if rec.name is not None and (managed is None or not managed[1]):
        out["agent_name"] = rec.name
        if managed is not None:
            out["managed_agent_kind"] = managed[0]
    if rec.session is not None:
        out["agent_session"] = rec.session.view()
    resume = rec.resume()
    if resume is not None and rec.authority is not None:
        out["resume"] = {
            "source": rec.authority.source,
            "agent": rec.authority.agent,
            "argv": list(resume),
        }
    elif rec.authority is None and rec.resume_argv is not None and rec.resume_source is not None:
        # restored and not (yet) reported again, e.g. with resume turned off: kept, like
        # Herdr keeps a restored official session reference
        out["resume"] = {"source": rec.resume_source, "argv": list(rec.resume_argv)}
    if pane.launch_argv is not None:
        out["launch_argv"] = list(pane.launch_argv)
    return out


def snapshot(
    session: Session, cwd_of: dict[int, str], managed_of: ManagedOf = _no_managed
) -> dict[str, Any]:
    """The saveable state; ``cwd_of`` maps pane keys to their current cwd, ``managed_of``
    says what a pane's managed launch is (kind, still pending), if it has one."""
    workspaces = []
    for ws in session.workspaces:
        tabs = []
        for tab in ws.tabs:
            keys = tab.layout.panes()
            tabs.append(
                {
                    "number": tab.number,
                    "label": tab.label,
                    "layout": _tree(tab.layout.to_tree(), ws.pane_numbers),
                    "focused": ws.pane_numbers[tab.layout.focused],
                    "zoomed": tab.layout.zoomed,
                    "panes": {
                        str(ws.pane_numbers[key]): _pane(
                            session.panes[key],
                            cwd_of[key],
                            managed_of(key),
                        )
                        for key in keys
                    },
                }
            )
        workspaces.append(
            {
                "number": ws.number,
                "label": ws.label,
                "identity_cwd": ws.identity_cwd,
                "auto_label": ws.auto_label,
                "next_tab_number": ws.next_tab_number,
                "next_pane_number": ws.next_pane_number,
                "active_tab": ws.active_tab,
                "tokens": dict(ws.tokens),
                "worktree": asdict(ws.worktree) if ws.worktree is not None else None,
                "tabs": tabs,
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "next_workspace_number": session.next_workspace_number,
        "active": session.active,
        "workspaces": workspaces,
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON, never leaving a half-written file (a reader
    sees the old file or the new one; no ``fsync``, as in Herdr: see the module docstring)."""
    text = json.dumps(data, separators=(",", ":"))
    private_files.write_atomic(path, text, sync=False, own_link_parent=True)


# -- Herdr's file format ------------------------------------------------------------------------

#: Herdr's ``SNAPSHOT_VERSION`` (``src/persist/snapshot.rs``)
HERDR_SNAPSHOT_VERSION = 3
#: the extra top-level object with what only the simulator needs
EXTRA = "herdr_sim"
#: our split direction ↔ ratatui's ``Direction`` as Herdr serialises it
_DIRECTIONS = {"right": "Horizontal", "down": "Vertical"}


def _herdr_tree(node: dict[str, Any], key_of: dict[int, int]) -> dict[str, Any]:
    """Our layout node (pane *numbers*) as Herdr's ``LayoutSnapshot`` (pane *ids*)."""
    if "pane" in node:
        return {"Pane": key_of[int(node["pane"])]}
    return {
        "Split": {
            "direction": _DIRECTIONS[node["direction"]],
            "ratio": node["ratio"],
            "first": _herdr_tree(node["first"], key_of),
            "second": _herdr_tree(node["second"], key_of),
        }
    }


def _our_tree(node: dict[str, Any], number_of: dict[int, int]) -> dict[str, Any]:
    """Herdr's ``LayoutSnapshot`` back to our layout node."""
    if "Pane" in node:
        return {"pane": number_of[int(node["Pane"])]}
    split = node["Split"]
    direction = {value: key for key, value in _DIRECTIONS.items()}[split["direction"]]
    return {
        "direction": direction,
        "ratio": float(split["ratio"]),
        "first": _our_tree(split["first"], number_of),
        "second": _our_tree(split["second"], number_of),
    }


def to_herdr(data: dict[str, Any]) -> dict[str, Any]:
    """The state :func:`snapshot` built, as Herdr's ``SessionSnapshot`` (version 3).

    Pane ids are the pane numbers (Herdr's are its internal ``PaneId``s, mapped to public
    numbers by ``public_pane_numbers``; ours keep that map the identity).
    """
    workspaces: list[dict[str, Any]] = []
    extras: list[dict[str, Any]] = []
    for ws in data["workspaces"]:
        tabs: list[dict[str, Any]] = []
        numbers: dict[int, int] = {}
        for tab in ws["tabs"]:
            panes: dict[str, Any] = {}
            identity = {int(n): int(n) for n in tab["panes"]}
            for number, pane in tab["panes"].items():
                numbers[int(number)] = int(number)
                panes[number] = dict(pane)  # a third-party ``resume`` stays on the pane
            order = list(identity)
            tabs.append(
                {
                    "custom_name": tab["label"],
                    "layout": _herdr_tree(tab["layout"], identity),
                    "panes": panes,
                    "zoomed": tab["zoomed"],
                    "focused": int(tab["focused"]),
                    "root_pane": order[0] if order else None,
                }
            )
        workspace: dict[str, Any] = {
            "id": workspace_public_id(int(ws["number"])),
            "custom_name": ws["label"],
            "identity_cwd": ws["identity_cwd"],
        }
        if ws["worktree"] is not None:
            workspace["worktree_space"] = ws["worktree"]
        workspace.update(
            public_pane_numbers={str(n): n for n in sorted(numbers)},
            next_public_pane_number=ws["next_pane_number"],
            public_tab_numbers=[tab["number"] for tab in ws["tabs"]],
            next_public_tab_number=ws["next_tab_number"],
            tabs=tabs,
            active_tab=ws["active_tab"],
        )
        workspaces.append(workspace)
        extras.append(
            {
                "number": ws["number"],
                "auto_label": ws["auto_label"],
                "tokens": ws["tokens"],
            }
        )
    active = data["active"]
    return {
        "version": HERDR_SNAPSHOT_VERSION,
        "workspaces": workspaces,
        "active": active,
        "selected": active if active is not None else 0,
        "sidebar_width": None,
        "sidebar_section_split": None,
        "collapsed_space_keys": [],
        EXTRA: {"next_workspace_number": data["next_workspace_number"], "workspaces": extras},
    }


def from_herdr(data: dict[str, Any]) -> dict[str, Any]:
    """A ``SessionSnapshot`` (ours or Herdr's own) in the shape :func:`restore` reads.

    Herdr's pane ids become the public numbers of ``public_pane_numbers`` (an id without
    one gets the next free number); without our extras a workspace is numbered by its
    position, and its tab numbers are ``public_tab_numbers`` (else 1, 2, …)."""
    found = data.get(EXTRA)
    extra: dict[str, Any] = found if isinstance(found, dict) else {}
    saved_extras = extra.get("workspaces") or []
    workspaces: list[dict[str, Any]] = []
    for index, ws in enumerate(data["workspaces"]):
        more = saved_extras[index] if index < len(saved_extras) else {}
        mapped = {int(k): int(v) for k, v in (ws.get("public_pane_numbers") or {}).items()}
        next_number = max(
            [int(ws.get("next_public_pane_number") or 1), *(n + 1 for n in mapped.values())]
        )
        tab_numbers = list(ws.get("public_tab_numbers") or [])
        tabs = []
        for tab_index, tab in enumerate(ws["tabs"]):
            number_of: dict[int, int] = {}
            for pane_id in tab["panes"]:
                if int(pane_id) not in mapped:
                    mapped[int(pane_id)] = next_number
                    next_number += 1
                number_of[int(pane_id)] = mapped[int(pane_id)]
            panes = {}
            for pane_id, pane in tab["panes"].items():
                number = number_of[int(pane_id)]
                panes[str(number)] = dict(pane)
            focused = tab.get("focused")
            if focused is None or int(focused) not in number_of:
                focused = next(iter(number_of))
            tabs.append(
                {
                    "number": tab_numbers[tab_index]
                    if tab_index < len(tab_numbers)
                    else tab_index + 1,
                    "label": tab.get("custom_name"),
                    "layout": _our_tree(tab["layout"], number_of),
                    "focused": number_of[int(focused)],
                    "zoomed": bool(tab.get("zoomed")),
                    "panes": panes,
                }
            )
        workspaces.append(
            {
                "number": int(more.get("number", index + 1)),
                "label": ws.get("custom_name"),
                "identity_cwd": ws["identity_cwd"],
                "auto_label": more.get("auto_label", "workspace"),
                "next_tab_number": max(
                    [int(ws.get("next_public_tab_number") or 1), *(t["number"] + 1 for t in tabs)]
                ),
                "next_pane_number": next_number,
                "active_tab": int(ws.get("active_tab") or 0),
                "tokens": dict(more.get("tokens") or {}),
                "worktree": ws.get("worktree_space"),
                "tabs": tabs,
            }
        )
    numbers = [w["number"] for w in workspaces]
    return {
        "format": FORMAT,
        "version": VERSION,
        "next_workspace_number": int(
            extra.get("next_workspace_number", max(numbers, default=0) + 1)
        ),
        "active": data.get("active"),
        "workspaces": workspaces,
    }


# -- restoring ----------------------------------------------------------------------------------


class RestoreError(ValueError):
    """The session file exists but cannot be restored (it is left in place untouched)."""


def load(path: Path) -> dict[str, Any] | None:
    """The saved state, None when there is none; :class:`RestoreError` when unusable.

    Only our own state is trusted: a session file (or its directory) that another user owns
    or can write, or a symlink, is refused (:mod:`orchestrator.client.file_trust.ownership`), as
    restoring runs each pane's ``launch_argv`` and types its resume command.
    """
    try:
        check_directory(path.parent, "session directory")
        raw = read_own_file(path, "session file")
    except FileNotFoundError:
        return None
    except UntrustedPathError as exc:
        raise RestoreError(str(exc)) from None
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise RestoreError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RestoreError(f"{path}: not a session file")
    if data.get("format") == FORMAT:  # the simulator's former format
        if data.get("version") != VERSION:
            raise RestoreError(f"{path}: unsupported session file version {data.get('version')}")
        return data
    version = data.get("version", 0)
    if not isinstance(version, int) or version > HERDR_SNAPSHOT_VERSION or version < 1:
        # Herdr refuses a newer snapshot too (src/persist/io.rs); 0 is its legacy shape
        raise RestoreError(f"{path}: unsupported session snapshot version {version}")
    try:
        return from_herdr(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RestoreError(f"malformed session file: {exc!r}") from None


def _build_tree(node: dict[str, Any], key_of: dict[int, int]) -> LayoutTree:
    if "pane" in node:
        return PaneNode(key_of[int(node["pane"])])
    return SplitNode(
        node["direction"],
        float(node["ratio"]),
        _build_tree(node["first"], key_of),
        _build_tree(node["second"], key_of),
    )


def _resume_for(
    rec: AgentRecord, resume: bool, started: set[tuple[str, str, str, str]]
) -> tuple[list[str] | None, bool]:
    """The command a restored pane runs (None: a plain shell), and whether it is Herdr's
    built-in plan for the pane's official session. Reserves that session: like Herdr, a
    session already resumed in an earlier pane (layout order, across workspaces) is not
    resumed twice; the later pane gets a plain shell and loses the reference."""
    if not resume:
        return None, False
    ref = rec.session
    planned = ref is not None and builtin_resume(ref) is not None
    if ref is not None and planned:
        key = (ref.source, ref.agent, ref.kind, ref.value)
        if key in started:
            rec.session = None
            return None, False
        started.add(key)
    return restored_resume(rec), planned


def _saved_managed(saved_pane: dict[str, Any]) -> tuple[str, str] | None:
    """A saved managed agent: its name and canonical kind (Herdr ignores an unknown kind)."""
    name, kind = saved_pane.get("agent_name"), saved_pane.get("managed_agent_kind")
    if not isinstance(name, str) or not name or not isinstance(kind, str):
        return None
    canonical = parse_canonical_agent_label(kind)
    return None if canonical is None else (name, canonical)


@dataclass(frozen=True)
class Restored:
    """What a restore brought back beyond the model itself."""

    #: in layout order, each restored pane's key and the command its shell should run
    resumes: list[tuple[int, list[str] | None]]
    #: managed agents to take over as active launches: pane key → (name, kind)
    managed: dict[int, tuple[str, str]]


def _restored_worktree(saved: dict[str, Any] | None) -> WorktreeSpace | None:
    """A saved worktree membership, kept only while its checkout exists and still belongs
    to the same repository (Herdr's ``restored_worktree_space_membership``)."""
    if not saved:
        return None
    member = WorktreeSpace(**saved)
    space = git_space(Path(member.checkout_path))
    return member if space is not None and space.key == member.key else None


def restore(session: Session, data: dict[str, Any], *, resume_agents: bool = True) -> Restored:
    """Rebuild ``session`` (which must be empty) from ``data``.

    Returns, in layout order, each restored pane's key and the resume command its shell
    should run (None for a plain shell; always None when ``resume_agents`` is off), and the
    managed agents brought back. New terminal ids are allocated by the model. Saved session
    references that Herdr would not accept are dropped. A managed agent name comes back
    (named, and in :attr:`Restored.managed` for the launch book to take over as active)
    only on a pane resumed by a built-in plan; other names go.
    """
    if session.workspaces:
        raise RestoreError("can only restore into an empty session")
    resumes: list[tuple[int, list[str] | None]] = []
    started: set[tuple[str, str, str, str]] = set()
    managed: dict[int, tuple[str, str]] = {}
    try:
        for saved in data["workspaces"]:
            ws = Workspace(
                number=int(saved["number"]),
                identity_cwd=saved["identity_cwd"],
                label=saved.get("label"),
                auto_label=saved.get("auto_label", "workspace"),
                next_tab_number=int(saved["next_tab_number"]),
                next_pane_number=int(saved["next_pane_number"]),
                tokens=dict(saved.get("tokens", {})),
                worktree=_restored_worktree(saved.get("worktree")),
            )
            for saved_tab in saved["tabs"]:
                key_of: dict[int, int] = {}
                saved_managed: dict[int, tuple[str, str] | None] = {}
                for number_text, saved_pane in saved_tab["panes"].items():
                    pane = session.adopt_pane(ws, int(number_text), saved_pane["cwd"])
                    pane.label = saved_pane.get("label")
                    pane.launch_argv = saved_pane.get("launch_argv")
                    ref = saved_pane.get("agent_session")
                    if ref is not None:
                        restored = SessionRef(
                            str(ref["source"]), str(ref["agent"]), ref["kind"], str(ref["value"])
                        )
                        pane.agent_rec.session = restored if restorable(restored) else None
                    resume = saved_pane.get("resume")
                    if resume is not None:
                        pane.agent_rec.resume_argv = list(resume["argv"])
                        pane.agent_rec.resume_source = resume["source"]
                    key_of[int(number_text)] = pane.key
                    saved_managed[pane.key] = _saved_managed(saved_pane)
                layout = Layout.from_tree(
                    _build_tree(saved_tab["layout"], key_of),
                    focused=key_of[int(saved_tab["focused"])],
                )
                ws.tabs.append(
                    Tab(
                        number=int(saved_tab["number"]), layout=layout, label=saved_tab.get("label")
                    )
                )
                for key in layout.panes():
                    rec = session.panes[key].agent_rec
                    command, planned = _resume_for(rec, resume_agents, started)
                    restored_managed = saved_managed.get(key)
                    if planned and restored_managed is not None:
                        rec.name = restored_managed[0]
                        managed[key] = restored_managed
                    resumes.append((key, command))
            ws.active_tab = min(int(saved.get("active_tab", 0)), len(ws.tabs) - 1)
            session.workspaces.append(ws)
        session.next_workspace_number = max(
            int(data["next_workspace_number"]),
            max((ws.number for ws in session.workspaces), default=0) + 1,
        )
        active = data.get("active")
        if session.workspaces:
            session.focus_workspace(
                session.workspaces[min(int(active or 0), len(session.workspaces) - 1)]
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise RestoreError(f"malformed session file: {exc!r}") from None
    return Restored(resumes, managed)
