"""``worktree.list/create/open/remove`` against real temporary git repositories.

Each test follows Herdr's worktree rules (herdrdev/herdr ``src/app/api/worktrees.rs``,
``src/app/api/worktrees/deferred.rs``, ``src/worktree.rs``); the docstrings name the
function or test there. Every response and event is also checked against the protocol-22
schema by the suite's autouse contract check.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call
from herdr_sim.host import gitrepo
from tests.waits import SCALE

Api = Callable[..., dict[str, Any]]

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Herdr Test",
    "GIT_AUTHOR_EMAIL": "herdr@example.invalid",
    "GIT_COMMITTER_NAME": "Herdr Test",
    "GIT_COMMITTER_EMAIL": "herdr@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return its stdout (the test fails when git does)."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=_GIT_ENV,
        timeout=30,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(short_dir: Path) -> Path:
    """A committed repository ``proj`` on branch ``main`` (Herdr's ``create_committed_repo``)."""
    path = short_dir / "proj"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    (path / "README.md").write_text("test\n")
    git(path, "add", "README.md")
    git(path, "commit", "--quiet", "-m", "initial")
    return path


def error_of(raw: Callable[..., dict[str, Any]], method: str, **params: Any) -> dict[str, str]:
    response = raw(method, **params)
    assert "error" in response, response
    error: dict[str, str] = response["error"]
    return error


def restartable(short_dir: Path) -> dict[str, Any]:
    """Settings of a simulator that a second one restores (same socket, so same session)."""
    home = short_dir / "home"
    home.mkdir()
    return {
        "socket_path": short_dir / "herdr.sock",
        "base_env": {"HOME": str(home), "PATH": "/usr/bin:/bin"},
        "worktree_directory": short_dir / "wt",
    }


def kinds(sim: Simulator, since: int = 0) -> list[str]:
    return [str(event["event"]) for event in sim.events[since:]]


def test_list_reports_the_repository_and_its_main_checkout(
    sim: Simulator, api: Api, repo: Path
) -> None:
    """``handle_worktree_list``: the source is the workspace's repository (key = common git
    dir, name = the checkout's directory) and each ``git worktree list`` entry carries the
    workspace showing it."""
    ws = api("workspace.create", cwd=str(repo))["workspace"]
    result = api("worktree.list", workspace_id=ws["workspace_id"])
    assert result["source"] == {
        "repo_key": str((repo / ".git").resolve()),
        "repo_name": "proj",
        "repo_root": str(repo),
        "source_checkout_path": str(repo),
        "source_workspace_id": ws["workspace_id"],
    }
    assert result["worktrees"] == [
        {
            "path": str(repo.resolve()),
            "branch": "main",
            "is_bare": False,
            "is_detached": False,
            "is_prunable": False,
            "is_linked_worktree": False,
            "open_workspace_id": ws["workspace_id"],
            "label": "proj",
        }
    ]
    by_cwd = api("worktree.list", cwd=str(repo))
    assert by_cwd["worktrees"] == result["worktrees"]


def test_source_errors_use_herdrs_codes(
    sim: Simulator, api: Api, raw: Callable[..., dict[str, Any]], repo: Path, short_dir: Path
) -> None:
    """``resolve_worktree_list_source`` / ``absolute_user_path``: one target at most, an
    absolute path, inside a git work tree (the workspace and path wordings differ)."""
    plain = short_dir / "plain"
    plain.mkdir()
    assert error_of(raw, "worktree.list") == {
        "code": "invalid_request",
        "message": "workspace_id or cwd is required when no workspace is active",
    }
    ws = api("workspace.create", cwd=str(plain))["workspace"]
    assert error_of(raw, "worktree.list", workspace_id=ws["workspace_id"]) == {
        "code": "not_git_worktree",
        "message": "Herdr worktree actions require a workspace inside a Git work tree",
    }
    assert error_of(raw, "worktree.list", cwd=str(plain)) == {
        "code": "not_git_worktree",
        "message": "Herdr worktree actions require a path inside a Git work tree",
    }
    assert error_of(raw, "worktree.list", cwd="proj") == {
        "code": "invalid_request",
        "message": "worktree path must be absolute",
    }
    assert error_of(raw, "worktree.list", workspace_id="w9") == {
        "code": "workspace_not_found",
        "message": "workspace w9 not found",
    }
    assert error_of(raw, "worktree.create", workspace_id=ws["workspace_id"], cwd=str(repo)) == {
        "code": "invalid_request",
        "message": "only one of workspace_id or cwd may be supplied",
    }
    assert error_of(raw, "worktree.create", cwd=str(repo), branch="  ") == {
        "code": "invalid_request",
        "message": "branch is required",
    }


def test_create_checks_out_a_new_branch_and_opens_it(sim: Simulator, api: Api, repo: Path) -> None:
    """``api_worktree_create_opens_workspace_and_marks_membership``: the checkout lands in
    ``<worktree dir>/<repo>/<branch slug>`` on a new branch; the parent workspace is marked
    (``workspace_updated``), the new one is linked, and the events end with
    workspace_created, tab_created, pane_created, layout_updated, worktree_created."""
    parent = api("workspace.create", cwd=str(repo), focus=True)["workspace"]
    since = len(sim.events)
    ws_id = parent["workspace_id"]
    result = api("worktree.create", workspace_id=ws_id, branch="worktree/api-create")
    checkout = Path(result["worktree"]["path"])
    assert checkout == sim.socket_path.with_name("worktrees") / "proj" / "worktree-api-create"
    assert (checkout / "README.md").read_text() == "test\n"
    assert git(checkout, "branch", "--show-current").strip() == "worktree/api-create"
    assert result["worktree"]["branch"] == "worktree/api-create"
    assert result["worktree"]["is_linked_worktree"] is True
    workspace = result["workspace"]
    assert workspace["worktree"]["is_linked_worktree"] is True
    assert workspace["worktree"]["checkout_path"] == str(checkout)
    assert result["tab"]["workspace_id"] == workspace["workspace_id"]
    assert result["root_pane"]["workspace_id"] == workspace["workspace_id"]
    marked = api("workspace.get", workspace_id=parent["workspace_id"])["workspace"]
    assert marked["worktree"] == {
        "repo_key": str((repo / ".git").resolve()),
        "repo_name": "proj",
        "repo_root": str(repo),
        "checkout_path": str(repo),
        "is_linked_worktree": False,
    }
    events = kinds(sim, since)
    assert events.count("worktree_created") == 1
    assert events[0] == "workspace_updated"
    assert events[-5:] == [
        "workspace_created",
        "tab_created",
        "pane_created",
        "layout_updated",
        "worktree_created",
    ]
    listed = api("worktree.list", workspace_id=parent["workspace_id"])["worktrees"]
    linked = [entry for entry in listed if entry["is_linked_worktree"]]
    assert [entry["open_workspace_id"] for entry in linked] == [workspace["workspace_id"]]
    # listed from the linked workspace: the same repository, its parent as the source
    # (``worktree_list_source_from_workspace``)
    from_child = api("worktree.list", workspace_id=workspace["workspace_id"])
    assert from_child["source"]["source_workspace_id"] == parent["workspace_id"]
    assert from_child["source"]["source_checkout_path"] == str(repo)
    assert from_child["worktrees"] == listed
    from_path = api("worktree.list", cwd=str(checkout))
    assert from_path["source"] == from_child["source"]


def test_create_checks_out_an_existing_branch(sim: Simulator, api: Api, repo: Path) -> None:
    """``deferred_api_worktree_create_checks_out_existing_branch``: a local branch that
    exists is checked out (``git worktree add PATH BRANCH``), not created from ``base``."""
    git(repo, "branch", "foo")
    result = api("worktree.create", cwd=str(repo), branch="foo", base="does-not-matter")
    checkout = Path(result["worktree"]["path"])
    assert git(checkout, "branch", "--show-current").strip() == "foo"


def test_a_branch_checked_out_elsewhere_fails_with_gits_message(
    sim: Simulator, api: Api, raw: Callable[..., dict[str, Any]], repo: Path, short_dir: Path
) -> None:
    """``handle_api_worktree_add_finished``: a failing ``git worktree add`` answers
    ``worktree_create_failed`` with git's own message, and no workspace is opened."""
    api("worktree.create", cwd=str(repo), branch="dup")
    count = len(api("workspace.list")["workspaces"])
    error = error_of(
        raw, "worktree.create", cwd=str(repo), branch="dup", path=str(short_dir / "second")
    )
    assert error["code"] == "worktree_create_failed"
    assert "dup" in error["message"] and "fatal:" in error["message"]
    assert len(api("workspace.list")["workspaces"]) == count


def test_branch_names_never_reach_a_shell(sim: Simulator, api: Api, repo: Path) -> None:
    """``build_worktree_add_new_branch_command``: git gets the branch as one argv element,
    so shell syntax in a (valid) branch name is just part of the name."""
    branch = "a;touch${IFS}pwned$(touch${IFS}pwned2)"
    result = api("worktree.create", cwd=str(repo), branch=branch)
    assert result["worktree"]["branch"] == branch
    assert not (repo / "pwned").exists()
    assert not list(Path(result["worktree"]["path"]).glob("pwned*"))
    assert git(repo, "branch", "--list", branch).strip().endswith(branch)


def test_generated_branch_name_and_slug() -> None:
    """``generated_branch_slug_is_worktree_namespaced_and_stable`` and ``branch_to_path_slug``
    (src/worktree.rs)."""
    assert gitrepo.generated_branch(0) == "worktree/brave-river-0000"
    assert gitrepo.generated_branch(9) == "worktree/calm-cloud-0009"
    assert gitrepo.branch_slug("Feature/ABC__x") == "feature-abc-x"
    assert gitrepo.branch_slug("///") == "worktree"


def test_open_finds_checkouts_by_branch_or_path(
    sim: Simulator, api: Api, raw: Callable[..., dict[str, Any]], repo: Path, short_dir: Path
) -> None:
    """``handle_worktree_open`` / ``find_worktree_entry``: a checkout already shown by a
    workspace answers ``already_open``; one only git knows is opened as a new workspace,
    linked, with ``worktree_opened`` after its open events."""
    parent = api("workspace.create", cwd=str(repo))["workspace"]
    created = api("worktree.create", workspace_id=parent["workspace_id"], branch="one")
    again = api("worktree.open", workspace_id=parent["workspace_id"], branch="one")
    assert again["already_open"] is True
    assert again["workspace"]["workspace_id"] == created["workspace"]["workspace_id"]

    outside = short_dir / "outside"
    git(repo, "worktree", "add", "--quiet", "-b", "two", str(outside), "HEAD")
    since = len(sim.events)
    opened = api("worktree.open", workspace_id=parent["workspace_id"], path=str(outside))
    assert opened["already_open"] is False
    assert opened["worktree"]["branch"] == "two"
    assert opened["worktree"]["open_workspace_id"] == opened["workspace"]["workspace_id"]
    assert opened["workspace"]["worktree"]["is_linked_worktree"] is True
    assert kinds(sim, since)[-5:] == [
        "workspace_created",
        "tab_created",
        "pane_created",
        "layout_updated",
        "worktree_opened",
    ]
    assert sim.events[-1]["data"]["already_open"] is False

    assert error_of(raw, "worktree.open", workspace_id=parent["workspace_id"]) == {
        "code": "invalid_request",
        "message": "exactly one of path or branch is required",
    }
    assert error_of(raw, "worktree.open", cwd=str(repo), branch="nope") == {
        "code": "worktree_not_found",
        "message": "worktree branch not found",
    }
    assert error_of(raw, "worktree.open", cwd=str(repo), path=str(short_dir)) == {
        "code": "worktree_not_found",
        "message": "worktree path not found",
    }
    linked = created["workspace"]["workspace_id"]
    assert error_of(raw, "worktree.create", workspace_id=linked, branch="x") == {
        "code": "linked_worktree_source",
        "message": "New and open worktree actions start from the repo parent workspace.",
    }


def test_remove_closes_the_workspace_then_reports(sim: Simulator, api: Api, repo: Path) -> None:
    """``handle_api_worktree_remove_finished``: ``git worktree remove`` runs in the
    repository, the linked workspace closes (``workspace_closed``) and ``worktree_removed``
    follows with the workspace snapshot."""
    parent = api("workspace.create", cwd=str(repo))["workspace"]
    created = api("worktree.create", workspace_id=parent["workspace_id"], branch="gone")
    child = created["workspace"]["workspace_id"]
    checkout = Path(created["worktree"]["path"])
    since = len(sim.events)
    result = api("worktree.remove", workspace_id=child)
    assert result == {
        "type": "worktree_removed",
        "workspace_id": child,
        "path": str(checkout),
        "forced": False,
    }
    assert not checkout.exists()
    assert str(checkout) not in git(repo, "worktree", "list", "--porcelain")
    assert kinds(sim, since)[-2:] == ["workspace_closed", "worktree_removed"]
    removed = sim.events[-1]["data"]
    assert removed["workspace"]["workspace_id"] == child
    assert removed["worktree"]["path"] == str(checkout)
    assert removed["forced"] is False
    ids = [ws["workspace_id"] for ws in api("workspace.list")["workspaces"]]
    assert ids == [parent["workspace_id"]]


def test_a_dirty_checkout_needs_force(
    sim: Simulator, api: Api, raw: Callable[..., dict[str, Any]], repo: Path
) -> None:
    """``is_dirty_worktree_remove_error``: git's refusal of a checkout with untracked files
    is ``dirty_worktree_requires_force`` (git's message); ``force`` removes it."""
    created = api("worktree.create", cwd=str(repo), branch="dirty")
    child = created["workspace"]["workspace_id"]
    checkout = Path(created["worktree"]["path"])
    (checkout / "scratch.txt").write_text("work in progress\n")
    error = error_of(raw, "worktree.remove", workspace_id=child)
    assert error["code"] == "dirty_worktree_requires_force"
    assert "contains modified or untracked files, use --force to delete it" in error["message"]
    assert checkout.exists()
    assert child in [ws["workspace_id"] for ws in api("workspace.list")["workspaces"]]
    forced = api("worktree.remove", workspace_id=child, force=True)
    assert forced["forced"] is True
    assert not checkout.exists()


def test_only_linked_checkouts_are_removed(
    sim: Simulator, api: Api, raw: Callable[..., dict[str, Any]], repo: Path
) -> None:
    """``start_api_worktree_remove``: a workspace outside any worktree group, and the
    group's parent, are ``not_linked_worktree`` with Herdr's two messages."""
    plain = api("workspace.create", cwd=str(repo))["workspace"]["workspace_id"]
    assert error_of(raw, "worktree.remove", workspace_id=plain) == {
        "code": "not_linked_worktree",
        "message": "workspace is not a Herdr-managed worktree checkout",
    }
    api("worktree.create", workspace_id=plain, branch="child")
    assert error_of(raw, "worktree.remove", workspace_id=plain) == {
        "code": "not_linked_worktree",
        "message": "workspace is not a linked worktree checkout",
    }


def test_a_hanging_git_is_killed_at_its_time_bound(short_dir: Path) -> None:
    """Herdr waits for git on a thread; the simulator bounds every git command instead, so a
    git that hangs (a network filesystem, a credential helper) fails the request in time."""
    bin_dir = short_dir / "bin"
    bin_dir.mkdir()
    fake_git = bin_dir / "git"
    fake_git.write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 30\n")
    fake_git.chmod(0o755)
    env = gitrepo.git_env({"PATH": str(bin_dir)})
    started = time.monotonic()
    with pytest.raises(gitrepo.GitFailure, match=r"timed out after 0\.5s"):
        asyncio.run(gitrepo.list_worktrees(short_dir, env, 0.5))
    assert time.monotonic() - started < 10 * SCALE


def test_membership_survives_a_restart(short_dir: Path, repo: Path) -> None:
    """Herdr saves a workspace's ``worktree_space`` with the session and restores it
    (``restored_worktree_space_membership``, src/persist/restore.rs): after a restart the
    linked workspace is still a group member and can still be removed."""
    settings = restartable(short_dir)
    first = Simulator(**settings).start()
    try:
        created = call(first.socket_path, "worktree.create", {"cwd": str(repo), "branch": "keep"})
    finally:
        first.stop()
    again = Simulator(**settings).start()
    try:
        child = created["workspace"]["workspace_id"]
        info = call(again.socket_path, "workspace.get", {"workspace_id": child})["workspace"]
        assert info["worktree"] == created["workspace"]["worktree"]
        assert Path(info["worktree"]["checkout_path"]).parent == short_dir / "wt" / "proj"
        removed = call(again.socket_path, "worktree.remove", {"workspace_id": child})
        assert removed["path"] == created["worktree"]["path"]
    finally:
        again.stop()


def test_a_membership_whose_checkout_is_gone_is_dropped_on_restore(
    short_dir: Path, repo: Path
) -> None:
    """``restored_worktree_space_membership_drops_missing_checkout`` (src/persist/restore.rs):
    a saved membership whose checkout no longer exists is not restored."""
    settings = restartable(short_dir)
    first = Simulator(**settings).start()
    try:
        created = call(first.socket_path, "worktree.create", {"cwd": str(repo), "branch": "lost"})
    finally:
        first.stop()
    shutil.rmtree(created["worktree"]["path"])
    again = Simulator(**settings).start()
    try:
        child = created["workspace"]["workspace_id"]
        info = call(again.socket_path, "workspace.get", {"workspace_id": child})["workspace"]
        assert "worktree" not in info
    finally:
        again.stop()


def test_subscribers_receive_the_worktree_events(sim: Simulator, api: Api, repo: Path) -> None:
    """``worktree.created`` / ``worktree.removed`` subscriptions (the protocol-22
    ``events.subscribe`` kinds) carry the events ``emit_worktree_created_event`` and
    ``emit_worktree_removed_event`` build."""
    from herdr_sim.client import Subscription

    sub = Subscription(
        sim.socket_path, [{"type": "worktree.created"}, {"type": "worktree.removed"}]
    )
    try:
        assert sub.ack["result"]["type"] == "subscription_started"
        created = api("worktree.create", cwd=str(repo), branch="sub")
        line = sub.next(timeout=10)
        assert line["event"] == "worktree_created"
        assert line["data"]["worktree"] == created["worktree"]
        api("worktree.remove", workspace_id=created["workspace"]["workspace_id"])
        line = sub.next(timeout=10)
        assert line["event"] == "worktree_removed"
        assert line["data"]["forced"] is False
    finally:
        sub.close()


def test_a_group_parent_closes_only_with_its_group(
    sim: Simulator, api: Api, raw: Callable[..., dict[str, Any]], repo: Path
) -> None:
    """Herdr 0.9's group close (#2874, herdrdev/herdr commit 549d58b6:
    ``handle_workspace_close``, ``workspace_close_indices``): closing the parent of a worktree
    group needs ``close_group`` and then closes every member, one ``workspace_closed`` each;
    closing its last tab or pane asks for confirmation (``confirm_implicit_worktree_group_close``,
    src/app/api/tabs.rs and panes.rs); a linked member closes alone."""
    parent = api("workspace.create", cwd=str(repo))
    parent_id = parent["workspace"]["workspace_id"]
    first = api("worktree.create", workspace_id=parent_id, branch="g1")["workspace"]
    second = api("worktree.create", workspace_id=parent_id, branch="g2")["workspace"]
    assert error_of(raw, "workspace.close", workspace_id=parent_id) == {
        "code": "workspace_group_close_required",
        "message": "workspace has linked worktree workspaces; use --group "
        "(close_group=true in the API) to close the group",
    }
    assert error_of(raw, "tab.close", tab_id=parent["tab"]["tab_id"]) == {
        "code": "confirmation_required",
        "message": "closing this tab would close a worktree group",
    }
    assert error_of(raw, "pane.close", pane_id=parent["root_pane"]["pane_id"]) == {
        "code": "confirmation_required",
        "message": "closing this pane would close a worktree group",
    }
    api("workspace.close", workspace_id=second["workspace_id"])
    since = len(sim.events)
    api("workspace.close", workspace_id=parent_id, close_group=True)
    closed = [
        e["data"]["workspace_id"] for e in sim.events[since:] if e["event"] == "workspace_closed"
    ]
    assert closed == [parent_id, first["workspace_id"]]
    assert api("workspace.list")["workspaces"] == []
