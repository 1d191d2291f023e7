"""``worktree.*`` handlers: git worktrees of a workspace's repository, opened as workspaces.

Herdr's rules (``src/app/api/worktrees.rs`` and ``worktrees/deferred.rs``): a *source* is
the repository's parent checkout, named by ``workspace_id``, ``cwd`` or the active
workspace; ``create`` checks a branch out under ``<worktree dir>/<repo>/<branch-slug>``
(or ``path``) and opens it as a new workspace; ``open`` opens a checkout git already lists
(by ``path`` or ``branch``); ``remove`` removes a linked checkout and closes its workspace.
Workspaces opened this way carry a worktree membership (``WorkspaceInfo.worktree``), and
the parent workspace is marked as the group's parent (``workspace_updated``). Each success
emits ``worktree_created`` / ``worktree_opened`` / ``worktree_removed`` after the workspace
events, in Herdr's order. Git runs through :mod:`herdr_sim.host.gitrepo` (argv lists, off the
loop, bounded in time); one create or remove per checkout at a time
(``worktree_operation_in_progress``).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herdr_sim.host import gitrepo
from herdr_sim.host.gitrepo import ExistingWorktree, GitFailure, GitSpace
from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, Obj

from ..model.session import PaneRef, Workspace, WorktreeSpace
from .specs import FOCUS, OPT_STR, REQ_STR
from .workspace import open_workspace, publish_opened

_TRUST = F(Bool(), default=False)
_LIST = Obj(fields={"workspace_id": OPT_STR, "cwd": OPT_STR, "trust_repository": _TRUST})
_CREATE = Obj(
    fields={
        "workspace_id": OPT_STR,
        "cwd": OPT_STR,
        "branch": OPT_STR,
        "base": OPT_STR,
        "path": OPT_STR,
        "label": OPT_STR,
        "focus": FOCUS,
        "trust_repository": _TRUST,
    }
)
_OPEN = Obj(
    fields={
        "workspace_id": OPT_STR,
        "cwd": OPT_STR,
        "path": OPT_STR,
        "branch": OPT_STR,
        "label": OPT_STR,
        "focus": FOCUS,
        "trust_repository": _TRUST,
    }
)
_REMOVE = Obj(
    fields={"workspace_id": REQ_STR, "force": F(Bool(), default=False), "trust_repository": _TRUST}
)

_LINKED_SOURCE = "New and open worktree actions start from the repo parent workspace."
_IN_PROGRESS = "worktree operation is already in progress for this checkout"


@dataclass
class _Source:
    """Herdr's ``WorktreeSource``: the parent checkout an action starts from."""

    workspace: Workspace | None
    checkout: Path
    repo_root: Path
    key: str
    name: str


@dataclass
class _InFlight:
    """Checkouts with a create or a remove running (Herdr's pending operation maps)."""

    creates: set[Path] = field(default_factory=set)
    removes: set[Path] = field(default_factory=set)
    removing_workspaces: set[int] = field(default_factory=set)


_IN_FLIGHT: weakref.WeakKeyDictionary[Runtime, _InFlight] = weakref.WeakKeyDictionary()


def _in_flight(rt: Runtime) -> _InFlight:
    return _IN_FLIGHT.setdefault(rt, _InFlight())


# -- git helpers bound to this server ----------------------------------------------------------


def _env(rt: Runtime) -> dict[str, str]:
    return gitrepo.git_env(rt.config.base_env)


async def _list(rt: Runtime, repo_root: Path) -> list[ExistingWorktree]:
    try:
        return await gitrepo.list_worktrees(repo_root, _env(rt), rt.config.git_timeout)
    except GitFailure as exc:
        raise HerdrError(errors.WORKTREE_LIST_FAILED, str(exc)) from None


def _user_path(rt: Runtime, text: str) -> Path:
    path = gitrepo.absolute_user_path(text, rt.config.base_env.get("HOME"))
    if path is None:
        raise HerdrError(errors.INVALID_REQUEST, "worktree path must be absolute")
    return path


def _worktree_dir(rt: Runtime) -> Path:
    """Where checkouts go: the setting, else beside the socket like the session file
    (``worktrees`` next to ``herdr.sock``, else ``<stem>.worktrees``), so they outlive the
    simulator as its saved session does."""
    if rt.config.worktree_directory is not None:
        return rt.config.worktree_directory
    stem = rt.socket_path.stem
    return rt.socket_path.with_name("worktrees" if stem == "herdr" else f"{stem}.worktrees")


# -- which workspace shows what ----------------------------------------------------------------


def _identity_cwd(rt: Runtime, ws: Workspace) -> Path:
    """Herdr's resolved identity cwd: the first tab's root pane's live cwd."""
    tab = ws.tabs[0]
    keys = tab.layout.panes()
    if not keys:
        return Path(ws.identity_cwd)
    return Path(rt.live_cwd(PaneRef(ws, tab, rt.session.panes[keys[0]])))


def _space_of(rt: Runtime, ws: Workspace) -> GitSpace | None:
    return gitrepo.git_space(_identity_cwd(rt, ws))


def _open_workspace_for(rt: Runtime, checkout: Path) -> Workspace | None:
    """The first workspace showing ``checkout`` (membership, git checkout or cwd)."""
    wanted = gitrepo.canonical(checkout)
    for ws in rt.session.workspaces:
        if ws.worktree is not None and gitrepo.canonical(Path(ws.worktree.checkout_path)) == wanted:
            return ws
        cwd = _identity_cwd(rt, ws)
        space = gitrepo.git_space(cwd)
        if space is not None and space.checkout_key == str(wanted):
            return ws
        if gitrepo.canonical(cwd) == wanted:
            return ws
    return None


def _parent_by_key(rt: Runtime, key: str) -> Workspace | None:
    for ws in rt.session.workspaces:
        member = ws.worktree
        if member is not None and member.key == key and not member.is_linked_worktree:
            return ws
        space = _space_of(rt, ws)
        if space is not None and space.key == key and not space.is_linked_worktree:
            return ws
    return None


def _parent_for_space(rt: Runtime, space: GitSpace) -> Workspace | None:
    return _parent_by_key(rt, space.key) or _open_workspace_for(rt, space.repo_root)


async def _parent_checkout(rt: Runtime, space: GitSpace) -> Path:
    """The main checkout of a linked worktree's repository (itself when not linked)."""
    if not space.is_linked_worktree:
        return space.repo_root
    try:
        entries = await gitrepo.list_worktrees(space.repo_root, _env(rt), rt.config.git_timeout)
    except GitFailure:
        return space.repo_root
    for entry in entries:
        other = gitrepo.git_space(entry.path)
        if other is not None and other.key == space.key and not other.is_linked_worktree:
            return other.repo_root
    return space.repo_root


# -- sources -------------------------------------------------------------------------------------


def _default_workspace(rt: Runtime) -> Workspace:
    ws = rt.session.active_workspace
    if ws is None and rt.session.workspaces:
        ws = rt.session.workspaces[0]
    if ws is None:
        raise HerdrError(
            errors.INVALID_REQUEST, "workspace_id or cwd is required when no workspace is active"
        )
    return ws


def _check_one_target(p: dict[str, Any]) -> None:
    if p["workspace_id"] is not None and p["cwd"] is not None:
        raise HerdrError(errors.INVALID_REQUEST, "only one of workspace_id or cwd may be supplied")


def _not_git(where: str) -> HerdrError:
    return HerdrError(
        errors.NOT_GIT_WORKTREE, f"Herdr worktree actions require {where} inside a Git work tree"
    )


def _source_for_action(rt: Runtime, p: dict[str, Any]) -> _Source:
    """The parent checkout ``create`` and ``open`` start from (a linked one is refused)."""
    _check_one_target(p)
    if p["cwd"] is not None:
        space = gitrepo.git_space(_user_path(rt, p["cwd"]))
        if space is None:
            raise _not_git("a path")
        if space.is_linked_worktree:
            raise HerdrError(errors.LINKED_WORKTREE_SOURCE, _LINKED_SOURCE)
        return _Source(
            _parent_for_space(rt, space),
            space.repo_root,
            space.repo_root,
            space.key,
            space.repo_name,
        )
    ws = (
        rt.workspace(p["workspace_id"]) if p["workspace_id"] is not None else _default_workspace(rt)
    )
    member = ws.worktree
    if member is not None:
        if member.is_linked_worktree:
            raise HerdrError(errors.LINKED_WORKTREE_SOURCE, _LINKED_SOURCE)
        return _Source(
            ws, Path(member.checkout_path), Path(member.repo_root), member.key, member.label
        )
    space = _space_of(rt, ws)
    if space is None:
        raise _not_git("a workspace")
    if space.is_linked_worktree:
        raise HerdrError(errors.LINKED_WORKTREE_SOURCE, _LINKED_SOURCE)
    return _Source(ws, space.repo_root, space.repo_root, space.key, space.repo_name)


async def _source_from_space(rt: Runtime, space: GitSpace) -> _Source:
    """``list`` from a path: the repository's main checkout, and the workspace showing it."""
    checkout = await _parent_checkout(rt, space)
    if space.is_linked_worktree:
        ws = _open_workspace_for(rt, checkout)
    else:
        ws = _parent_for_space(rt, space)
    return _Source(ws, checkout, checkout, space.key, space.repo_name)


async def _source_for_list(rt: Runtime, p: dict[str, Any]) -> _Source:
    """The repository ``list`` lists (a linked checkout lists its whole repository)."""
    _check_one_target(p)
    if p["cwd"] is not None:
        space = gitrepo.git_space(_user_path(rt, p["cwd"]))
        if space is None:
            raise _not_git("a path")
        return await _source_from_space(rt, space)
    ws = (
        rt.workspace(p["workspace_id"]) if p["workspace_id"] is not None else _default_workspace(rt)
    )
    member = ws.worktree
    if member is not None:
        if member.is_linked_worktree:
            root = Path(member.repo_root)
            return _Source(_open_workspace_for(rt, root), root, root, member.key, member.label)
        return _Source(
            ws, Path(member.checkout_path), Path(member.repo_root), member.key, member.label
        )
    space = _space_of(rt, ws)
    if space is None:
        raise _not_git("a workspace")
    if not space.is_linked_worktree:
        return _Source(ws, space.repo_root, space.repo_root, space.key, space.repo_name)
    return await _source_from_space(rt, space)


# -- wire shapes -------------------------------------------------------------------------------


def _source_info(source: _Source) -> dict[str, Any]:
    info: dict[str, Any] = {
        "repo_key": source.key,
        "repo_name": source.name,
        "repo_root": str(source.repo_root),
        "source_checkout_path": str(source.checkout),
    }
    if source.workspace is not None:
        info["source_workspace_id"] = source.workspace.public_id
    return info


def _worktree_info(
    path: Path,
    branch: str | None,
    *,
    bare: bool,
    detached: bool,
    prunable: bool,
    linked: bool,
    open_ws: Workspace | None,
    label: str,
) -> dict[str, Any]:
    """WorktreeInfo in Herdr's field order (absent options left out)."""
    info: dict[str, Any] = {"path": str(path)}
    if branch is not None:
        info["branch"] = branch
    info.update(is_bare=bare, is_detached=detached, is_prunable=prunable, is_linked_worktree=linked)
    if open_ws is not None:
        info["open_workspace_id"] = open_ws.public_id
    info["label"] = label
    return info


def _entry_info(rt: Runtime, source: _Source, entry: ExistingWorktree) -> dict[str, Any]:
    path = gitrepo.canonical(entry.path)
    return _worktree_info(
        entry.path,
        entry.branch,
        bare=entry.is_bare,
        detached=entry.is_detached,
        prunable=entry.is_prunable,
        linked=path != gitrepo.canonical(source.repo_root),
        open_ws=_open_workspace_for(rt, path),
        label=source.name,
    )


def _member_info(member: WorktreeSpace, open_ws: Workspace | None) -> dict[str, Any]:
    """WorktreeInfo of a workspace's membership (its branch read from the checkout now)."""
    branch = gitrepo.checkout_branch(Path(member.checkout_path))
    return _worktree_info(
        Path(member.checkout_path),
        branch,
        bare=False,
        detached=branch is None,
        prunable=False,
        linked=member.is_linked_worktree,
        open_ws=open_ws,
        label=member.label,
    )


def _opened(rt: Runtime, ws: Workspace) -> dict[str, Any]:
    """``workspace``, ``tab`` and ``root_pane`` of a result: the active tab and its root."""
    tab = ws.tabs[ws.active_tab]
    root = rt.session.panes[tab.layout.panes()[0]]
    return {
        "workspace": rt.workspace_view(ws),
        "tab": rt.tab_view(ws, tab),
        "root_pane": rt.pane_view(PaneRef(ws, tab, root)),
    }


# -- membership --------------------------------------------------------------------------------


def _set_member(rt: Runtime, ws: Workspace, member: WorktreeSpace, announce: bool) -> None:
    """Record a membership; ``workspace_updated`` when it changed and ``announce``."""
    if ws.worktree == member:
        return
    ws.worktree = member
    if announce:
        rt.hub.publish(lifecycle.workspace_updated(rt.workspace_view(ws)))


def _member(source: _Source, checkout: Path, linked: bool) -> WorktreeSpace:
    return WorktreeSpace(
        key=source.key,
        label=source.name,
        repo_root=str(source.repo_root),
        checkout_path=str(checkout),
        is_linked_worktree=linked,
    )


def _ensure_parent(rt: Runtime, source: _Source, announce_created: bool) -> bool:
    """Make sure the repository's parent workspace exists and is marked as the parent; True
    when it had to be opened (its open events are published when ``announce_created``)."""
    if source.workspace is not None and source.workspace not in rt.session.workspaces:
        source.workspace = None
    if source.workspace is None:
        source.workspace = _parent_by_key(rt, source.key)
    created = False
    if source.workspace is None:
        try:
            source.workspace, _tab, _ref = open_workspace(rt, str(source.checkout), None, False, {})
        except HerdrError as exc:
            raise HerdrError(errors.WORKTREE_OPEN_FAILED, exc.message) from None
        created = True
    _set_member(rt, source.workspace, _member(source, source.checkout, False), not created)
    if created and announce_created:
        _announce_open(rt, source.workspace)
    return created


def _open_at(rt: Runtime, checkout: Path, focus: bool, failed: str) -> Workspace:
    """A new workspace on a checkout (its events are published later by the caller)."""
    try:
        ws, _tab, _ref = open_workspace(rt, str(checkout), None, focus, {})
    except HerdrError as exc:
        raise HerdrError(errors.WORKTREE_OPEN_FAILED, f"{failed}{exc.message}") from None
    return ws


def _announce_open(rt: Runtime, ws: Workspace) -> None:
    tab = ws.tabs[ws.active_tab]
    publish_opened(rt, ws, tab, PaneRef(ws, tab, rt.session.panes[tab.layout.panes()[0]]))


# -- handlers ----------------------------------------------------------------------------------


@method("worktree.list", _LIST, result="worktree_list", mutates=False)
async def list_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The git worktrees of a workspace's (or a path's) repository."""
    source = await _source_for_list(rt, p)
    entries = await _list(rt, source.repo_root)
    return {
        "type": "worktree_list",
        "source": _source_info(source),
        "worktrees": [_entry_info(rt, source, entry) for entry in entries],
    }


@method("worktree.create", _CREATE, result="worktree_created")
async def create(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Check a branch out as a new linked worktree and open it as a workspace."""
    branch = p["branch"]
    if branch is None:
        branch = gitrepo.generated_branch(time.time_ns() // 1000)
    branch = branch.strip()
    if not branch:
        raise HerdrError(errors.INVALID_REQUEST, "branch is required")
    base = p["base"] if p["base"] is not None else "HEAD"
    source = _source_for_action(rt, p)
    if p["path"] is not None:
        checkout = _user_path(rt, p["path"])
    else:
        checkout = _worktree_dir(rt) / source.name / gitrepo.branch_slug(branch)
    key = gitrepo.canonical(checkout)
    flight = _in_flight(rt)
    if key in flight.creates or key in flight.removes:
        raise HerdrError(errors.WORKTREE_OPERATION_IN_PROGRESS, _IN_PROGRESS)
    flight.creates.add(key)
    try:
        await gitrepo.add_worktree(
            source.checkout, checkout, branch, base, _env(rt), rt.config.git_timeout
        )
    except GitFailure as exc:
        raise HerdrError(errors.WORKTREE_CREATE_FAILED, str(exc)) from None
    finally:
        flight.creates.discard(key)

    _ensure_parent(rt, source, announce_created=True)
    ws = _open_workspace_for(rt, checkout)
    created = ws is None
    if ws is None:
        ws = _open_at(rt, checkout, p["focus"], "created worktree but failed to open workspace: ")
    elif p["focus"]:
        rt.session.focus_workspace(ws)
    _set_member(rt, ws, _member(source, checkout, True), not created)
    if p["label"] is not None:
        ws.label = p["label"]
    if created:
        _announce_open(rt, ws)
    assert ws.worktree is not None
    worktree = _member_info(ws.worktree, ws)
    rt.hub.publish(lifecycle.worktree_created(rt.workspace_view(ws), worktree))
    return {"type": "worktree_created", **_opened(rt, ws), "worktree": worktree}


def _find_entry(
    entries: list[ExistingWorktree], path: Path | None, branch: str | None
) -> ExistingWorktree:
    if path is not None:
        wanted = gitrepo.canonical(path)
        for entry in entries:
            if gitrepo.canonical(entry.path) == wanted:
                return entry
        raise HerdrError(errors.WORKTREE_NOT_FOUND, "worktree path not found")
    matches = [
        entry
        for entry in entries
        if not (entry.is_bare or entry.is_prunable or entry.is_detached) and entry.branch == branch
    ]
    if not matches:
        raise HerdrError(errors.WORKTREE_NOT_FOUND, "worktree branch not found")
    if len(matches) > 1:
        raise HerdrError(errors.AMBIGUOUS_WORKTREE_BRANCH, "multiple worktrees matched branch")
    return matches[0]


@method("worktree.open", _OPEN, result="worktree_opened")
async def open_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Open a checkout git lists (by path or branch) as a workspace, or find it open."""
    if (p["path"] is None) == (p["branch"] is None):
        raise HerdrError(errors.INVALID_REQUEST, "exactly one of path or branch is required")
    source = _source_for_action(rt, p)
    entries = await _list(rt, source.repo_root)
    wanted = _user_path(rt, p["path"]) if p["path"] is not None else None
    entry = _find_entry(entries, wanted, p["branch"])
    if entry.is_bare or entry.is_prunable:
        raise HerdrError(errors.WORKTREE_NOT_FOUND, "worktree cannot be opened")
    path = gitrepo.canonical(entry.path)
    is_source = path == gitrepo.canonical(source.checkout)
    already = _open_workspace_for(rt, path)
    source_created = _ensure_parent(
        rt, source, announce_created=not (is_source and already is None)
    )
    if already is not None:
        ws, created = already, False
    elif is_source:
        assert source.workspace is not None
        ws, created = source.workspace, source_created
    else:
        ws, created = _open_at(rt, entry.path, p["focus"], ""), True
    if p["focus"] and not (created and not is_source):
        rt.session.focus_workspace(ws)
    linked = path != gitrepo.canonical(source.repo_root)
    _set_member(rt, ws, _member(source, entry.path, linked), not created)
    if p["label"] is not None:
        ws.label = p["label"]
        if not created:
            rt.hub.publish(lifecycle.workspace_renamed(ws.public_id, p["label"]))
    if created:
        _announce_open(rt, ws)
    worktree = _entry_info(rt, source, entry)
    rt.hub.publish(lifecycle.worktree_opened(rt.workspace_view(ws), worktree, already is not None))
    return {
        "type": "worktree_opened",
        **_opened(rt, ws),
        "worktree": worktree,
        "already_open": already is not None,
    }


@method("worktree.remove", _REMOVE, result="worktree_removed")
async def remove(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Remove a linked worktree checkout (git) and close the workspace showing it."""
    ws = rt.workspace(p["workspace_id"])
    member = ws.worktree
    if member is None:
        raise HerdrError(
            errors.NOT_LINKED_WORKTREE, "workspace is not a Herdr-managed worktree checkout"
        )
    if not member.is_linked_worktree:
        raise HerdrError(errors.NOT_LINKED_WORKTREE, "workspace is not a linked worktree checkout")
    checkout = Path(member.checkout_path)
    key = gitrepo.canonical(checkout)
    flight = _in_flight(rt)
    if ws.number in flight.removing_workspaces or key in flight.removes or key in flight.creates:
        raise HerdrError(errors.WORKTREE_OPERATION_IN_PROGRESS, _IN_PROGRESS)
    snapshot = rt.workspace_view(ws)
    worktree = _member_info(member, None)
    force = p["force"]
    flight.removing_workspaces.add(ws.number)
    flight.removes.add(key)
    try:
        await gitrepo.remove_worktree(
            Path(member.repo_root), checkout, force, _env(rt), rt.config.git_timeout
        )
    except GitFailure as exc:
        message = str(exc)
        dirty = not force and gitrepo.is_dirty_remove_error(message)
        raise HerdrError(
            errors.DIRTY_WORKTREE_REQUIRES_FORCE if dirty else errors.WORKTREE_REMOVE_FAILED,
            message,
        ) from None
    finally:
        flight.removing_workspaces.discard(ws.number)
        flight.removes.discard(key)

    workspace_id = snapshot["workspace_id"]
    current = ws.worktree
    if (
        ws in rt.session.workspaces
        and current is not None
        and current.is_linked_worktree
        and current.checkout_path == member.checkout_path
    ):
        workspace_id = ws.public_id
        was_active = rt.session.active_workspace is ws
        keys = rt.session.close_workspace(ws)
        if was_active:
            parent = next(
                (
                    other
                    for other in rt.session.workspaces
                    if other.worktree is not None
                    and not other.worktree.is_linked_worktree
                    and other.worktree.key == member.key
                ),
                None,
            )
            if parent is not None:
                rt.session.focus_workspace(parent)
        rt.hub.publish(lifecycle.workspace_closed(workspace_id, snapshot))
        await rt.reap(keys)
    rt.hub.publish(lifecycle.worktree_removed(workspace_id, snapshot, worktree, force))
    return {
        "type": "worktree_removed",
        "workspace_id": workspace_id,
        "path": member.checkout_path,
        "forced": force,
    }
