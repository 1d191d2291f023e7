"""Worktrees, baselines and diffs against real git repositories in ``tmp_path``."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agent_tools import worktree as wt
from tests.waits import wait_until


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-C",
            str(cwd),
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout.rstrip("\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit: ``a.txt`` and an ignored ``build/``."""
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("one\n")
    (path / ".gitignore").write_text("build/\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "init")
    return path


def test_not_a_repository_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(wt.WorktreeError) as caught:
        wt.create_worktree(tmp_path, "t1", tmp_path / "wt")
    assert caught.value.code == "NOT_A_GIT_REPO"
    assert f"cwd {tmp_path} is not inside a git repository" in caught.value.message


def test_missing_cwd_is_refused(tmp_path: Path) -> None:
    with pytest.raises(wt.WorktreeError) as caught:
        wt.snapshot(tmp_path / "nowhere")
    assert caught.value.code == "CWD_NOT_FOUND"


def test_repository_without_commits_is_refused(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    with pytest.raises(wt.WorktreeError) as caught:
        wt.create_worktree(tmp_path, "t1", tmp_path / "wt")
    assert caught.value.code == "NO_COMMITS"


def test_create_makes_branch_dsh_task_at_the_base_commit(repo: Path, tmp_path: Path) -> None:
    sub = repo / "src"
    sub.mkdir()
    made = wt.create_worktree(sub, "t1", tmp_path / "wt")  # cwd deep inside the repo
    head = _git(repo, "rev-parse", "HEAD")
    assert (made.branch, made.base_commit, made.repo) == ("dsh/t1", head, str(repo))
    assert _git(Path(made.path), "rev-parse", "--abbrev-ref", "HEAD") == "dsh/t1"
    assert (Path(made.path) / "a.txt").read_text() == "one\n"
    assert made.to_json()["baseCommit"] == head


def test_base_is_resolved_to_a_commit(repo: Path, tmp_path: Path) -> None:
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("two\n")
    _git(repo, "commit", "-qam", "two")
    made = wt.create_worktree(repo, "t1", tmp_path / "wt", base="HEAD~1")
    assert made.base_commit == first
    with pytest.raises(wt.WorktreeError) as caught:
        wt.create_worktree(repo, "t2", tmp_path / "wt2", base="no-such-ref")
    assert caught.value.code == "BAD_BASE"


def test_existing_branch_and_unsafe_ids_are_refused(repo: Path, tmp_path: Path) -> None:
    wt.create_worktree(repo, "t1", tmp_path / "wt")
    with pytest.raises(wt.WorktreeError) as caught:
        wt.create_worktree(repo, "t1", tmp_path / "other")
    assert caught.value.code == "BRANCH_EXISTS"
    for bad in ("-x", "a..b", "a b", "x.lock", "", "a/b"):
        with pytest.raises(wt.WorktreeError) as caught:
            wt.branch_for(bad)
        assert caught.value.code == "INVALID_TASK_ID"


def test_non_empty_target_path_is_refused(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "x").write_text("x")
    with pytest.raises(wt.WorktreeError) as caught:
        wt.create_worktree(repo, "t1", target)
    assert caught.value.code == "PATH_EXISTS"


def test_diff_includes_commits_edits_and_untracked_files(repo: Path, tmp_path: Path) -> None:
    made = wt.create_worktree(repo, "t1", tmp_path / "wt")
    path = Path(made.path)
    (path / "a.txt").write_text("one\nmore\n")
    _git(path, "commit", "-qam", "agent commit")
    (path / "b.txt").write_text("new file\n")  # untracked
    (path / ".gitignore").write_text("build/\n*.log\n")  # uncommitted edit
    (path / "build").mkdir()
    (path / "build" / "out.o").write_text("ignored")
    result = wt.diff(path, made)
    assert {p: s for s, p in result.files} == {"a.txt": "M", "b.txt": "A", ".gitignore": "M"}
    assert "+more" in result.patch and "+new file" in result.patch and "+*.log" in result.patch
    assert "out.o" not in result.patch
    assert not result.truncated and result.bytes == len(result.patch.encode())
    assert result.base == made.base_commit


def test_diff_does_not_touch_the_real_index(repo: Path) -> None:
    (repo / "new.txt").write_text("x\n")
    wt.diff(repo, _git(repo, "rev-parse", "HEAD"))
    assert _git(repo, "status", "--porcelain") == "?? new.txt"


def test_an_edit_in_the_second_the_index_was_written_is_in_the_diff(repo: Path) -> None:
    """Git's racy-clean rule: an entry whose mtime is not older than the index file is
    checked by content. The scratch copy of the index must keep the index's own mtime, or
    a same-size edit made in the second the index was written (a fast agent right after
    the worktree checkout) looks clean once the diff runs a second later."""
    _git(repo, "config", "core.trustctime", "false")  # ctime cannot be set from a test
    a = repo / "a.txt"
    past = 1_600_000_000
    os.utime(a, (past, past))
    _git(repo, "update-index", "--refresh")  # the entry now records mtime `past`
    index = repo / ".git" / "index"
    os.utime(index, (past, past))  # ...and the index was written in that same second
    a.write_text("two\n")  # same size, same inode
    os.utime(a, (past, past))
    found = wt.diff(repo, "HEAD")
    assert found.files == (("M", "a.txt"),)
    assert "+two" in found.patch
    assert _git(repo, "status", "--porcelain") == " M a.txt"  # and git itself agrees


def test_diff_is_truncated_at_max_bytes_on_a_line_boundary(repo: Path) -> None:
    (repo / "big.txt").write_text("".join(f"line {n}\n" for n in range(2000)))
    result = wt.diff(repo, _git(repo, "rev-parse", "HEAD"), max_bytes=1000)
    assert result.truncated and len(result.patch.encode()) <= 1000
    assert result.patch.endswith("\n") and result.bytes > 1000
    assert result.to_json()["truncated"] is True


def test_diff_of_an_unchanged_tree_is_empty(repo: Path) -> None:
    result = wt.diff(repo, _git(repo, "rev-parse", "HEAD"))
    assert (result.patch, result.files, result.truncated) == ("", (), False)


def test_snapshot_excludes_changes_made_before_the_task(repo: Path) -> None:
    (repo / "a.txt").write_text("user edit\n")  # dirty before the task starts
    (repo / "draft.txt").write_text("user draft\n")
    base = wt.snapshot(repo)
    assert base.commit == _git(repo, "rev-parse", "HEAD") and base.tree
    (repo / "c.txt").write_text("agent work\n")
    result = wt.diff(repo, base)
    assert result.files == (("A", "c.txt"),)
    assert _git(repo, "status", "--porcelain").splitlines() == [
        " M a.txt",
        "?? c.txt",
        "?? draft.txt",
    ]


def test_snapshot_without_tree_diffs_against_the_spawn_commit(repo: Path) -> None:
    (repo / "a.txt").write_text("user edit\n")
    base = wt.snapshot(repo, tree=False)
    assert base.tree is None
    assert wt.diff(repo, base).files == (("M", "a.txt"),)
    assert base.to_json()["commit"] == base.commit


def test_remove_refuses_a_dirty_worktree_unless_forced(repo: Path, tmp_path: Path) -> None:
    made = wt.create_worktree(repo, "t1", tmp_path / "wt")
    (Path(made.path) / "scratch.txt").write_text("x")
    with pytest.raises(wt.WorktreeError) as caught:
        wt.remove_worktree(made)
    assert caught.value.code == "WORKTREE_DIRTY" and "scratch.txt" in caught.value.message
    assert Path(made.path).exists()
    removal = wt.remove_worktree(made, force=True)
    assert removal.removed and not Path(made.path).exists()


def test_remove_deletes_an_unchanged_branch(repo: Path, tmp_path: Path) -> None:
    made = wt.create_worktree(repo, "t1", tmp_path / "wt")
    removal = wt.remove_worktree(made)
    assert (removal.removed, removal.branch_deleted) == (True, True)
    assert _git(repo, "branch", "--list", "dsh/t1") == ""


def test_remove_keeps_a_branch_with_commits(repo: Path, tmp_path: Path) -> None:
    made = wt.create_worktree(repo, "t1", tmp_path / "wt")
    (Path(made.path) / "a.txt").write_text("work\n")
    _git(Path(made.path), "commit", "-qam", "work")
    removal = wt.remove_worktree(made)
    assert removal.removed and not removal.branch_deleted
    assert "kept" in removal.reason
    assert _git(repo, "branch", "--list", "dsh/t1").strip() == "dsh/t1"


def test_remove_of_a_vanished_directory_prunes_it(repo: Path, tmp_path: Path) -> None:
    made = wt.create_worktree(repo, "t1", tmp_path / "wt")
    subprocess.run(["rm", "-rf", made.path], check=True, timeout=10)
    removal = wt.remove_worktree(made)
    assert removal.removed and removal.branch_deleted
    assert made.path not in _git(repo, "worktree", "list")


# -- a hostile repository: its configuration must not run code ---------------------------------


def _marker_script(tmp_path: Path, name: str) -> Path:
    """An executable that leaves ``markers/<name>`` when run and passes stdin through."""
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {markers / name}\ncat\n")
    script.chmod(0o755)
    return script


def make_hostile(repo: Path, root: Path) -> Path:
    """Make ``repo``'s config name an fsmonitor, filters, diff drivers, a pager and hooks that
    each leave a marker in the returned directory when run (empty on return)."""
    config = {
        "core.fsmonitor": _marker_script(root, "fsmonitor"),
        "filter.evil.clean": _marker_script(root, "clean"),
        "filter.evil.smudge": _marker_script(root, "smudge"),
        "filter.evil.required": "true",
        "diff.evil.textconv": _marker_script(root, "textconv"),
        "diff.evil.command": _marker_script(root, "diffcommand"),
        "diff.external": _marker_script(root, "external"),
        "core.pager": _marker_script(root, "pager"),
    }
    for key, value in config.items():
        _git(repo, "config", key, str(value))
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction"):
        (hooks / hook).write_text(_marker_script(root, hook).read_text())
        (hooks / hook).chmod(0o755)
    markers = root / "markers"
    for marker in markers.iterdir():  # they ran while we set the repository up
        marker.unlink()
    return markers


@pytest.fixture
def hostile(repo: Path, tmp_path: Path) -> Path:
    """``repo``, made hostile (:func:`make_hostile`)."""
    make_hostile(repo, tmp_path)
    return repo


def test_a_hostile_repository_runs_none_of_its_code(hostile: Path, tmp_path: Path) -> None:
    (hostile / "a.txt").write_text("changed\n")
    (hostile / "new.txt").write_text("new\n")
    baseline = wt.snapshot(hostile)
    (hostile / "a.txt").write_text("changed again\n")
    changed = wt.diff(hostile, baseline)
    assert "+changed again" in changed.patch
    assert wt.dirty_files(hostile)
    made = wt.create_worktree(hostile, "t9", tmp_path / "wt")
    (Path(made.path) / "b.txt").write_text("agent\n")
    assert "+agent" in wt.diff(made.path, made).patch
    # close finds the main repository of a worktree with the same hardened git
    assert Path(wt.main_repository(made.path, "?")).resolve() == hostile.resolve()
    wt.remove_worktree(made, force=True)
    assert sorted(p.name for p in (tmp_path / "markers").iterdir()) == []


def test_a_filter_driver_that_cannot_be_disabled_stops_git(repo: Path, tmp_path: Path) -> None:
    # "-c filter.a=b.clean=" would set "filter.a" instead: refuse rather than run the filter
    _git(repo, "config", "filter.a=b.clean", str(_marker_script(tmp_path, "clean")))
    (repo / ".gitattributes").write_text("* filter=a=b\n")
    for marker in (tmp_path / "markers").iterdir():
        marker.unlink()
    with pytest.raises(wt.WorktreeError) as caught:
        wt.snapshot(repo)
    assert caught.value.code == "GIT_UNSAFE_CONFIG"
    assert list((tmp_path / "markers").iterdir()) == []


def _count_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that logs its subcommand (the word after ``-C <dir>``) and runs
    the real one: the log has one line per git process the code under test started."""
    real = shutil.which("git")
    assert real is not None
    shim = tmp_path / "shim"
    shim.mkdir()
    log = tmp_path / "git.log"
    script = shim / "git"
    script.write_text(
        "#!/bin/sh\n"
        'prev=""; sub=""\n'
        'for a in "$@"; do if [ "$prev" = "-C" ]; then sub=next; '
        'elif [ "$sub" = next ]; then sub="$a"; break; fi; prev="$a"; done\n'
        f'echo "$sub" >> {log}\n'
        f'exec {real} "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


def _started(log: Path) -> list[str]:
    started = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return started


def test_a_snapshot_starts_four_git_processes_and_a_diff_five(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty parallel spawns and their harvests started ~300 git processes: a snapshot ran
    seven (three ``rev-parse``, a filter lookup before ``add`` and before ``write-tree``), a
    diff eight (two ``rev-parse``, three lookups, two diffs). Now one ``rev-parse`` answers
    every location question, the filter drivers are looked up once per tree, and a diff is
    the working tree's tree (shared with concurrent askers, see below) against the base in
    one ``diff --raw -p`` of two trees."""
    (repo / "a.txt").write_text("user edit\n")
    log = _count_git(tmp_path, monkeypatch)
    base = wt.snapshot(repo)
    assert _started(log) == ["rev-parse", "config", "add", "write-tree"]
    (repo / "c.txt").write_text("agent work\n")
    assert wt.diff(repo, base).files == (("A", "c.txt"),)
    assert _started(log) == ["rev-parse", "config", "add", "write-tree", "diff"]
    wt.snapshot(repo, tree=False)
    assert _started(log) == ["rev-parse"]


def test_concurrent_snapshots_of_one_working_tree_share_a_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve snapshots asked while one runs: the eleven who asked during it share the next
    run, so two ``add`` runs in all, and every caller gets the tree a snapshot alone takes."""
    (repo / "a.txt").write_text("user edit\n")
    alone = wt.snapshot(repo).tree
    real = wt._take_tree
    entered, others_joined = threading.Event(), threading.Event()

    def held(place: Any, files: Any) -> str:
        tree = real(place, files)
        if not entered.is_set():
            entered.set()
            assert others_joined.wait(10)
        return tree

    monkeypatch.setattr(wt, "_take_tree", held)
    log = _count_git(tmp_path, monkeypatch)
    trees: list[str | None] = []

    def ask() -> None:
        trees.append(wt.snapshot(repo).tree)

    threads = [threading.Thread(target=ask) for _ in range(12)]
    threads[0].start()
    assert entered.wait(10)
    for thread in threads[1:]:
        thread.start()
    pending = wt._TREES._pending
    wait_until(
        lambda: sum(run.callers for run in pending.values()) == 11,
        timeout=10,
        what="the eleven later snapshots joining one run",
    )
    others_joined.set()
    for thread in threads:
        thread.join(60)
    assert trees == [alone] * 12
    started = _started(log)
    assert started.count("rev-parse") == 12  # HEAD is each caller's own question
    assert started.count("add") == started.count("write-tree") == 2


def test_a_snapshot_asked_during_a_run_gets_a_later_run_that_sees_its_changes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run in progress is never handed to a caller that asked after it started: the change
    made before the second request is in the second caller's tree, not in the first's."""
    real = wt._take_tree
    entered, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def held(place: Any, files: Any) -> str:
        tree = real(place, files)  # the first run's tree is taken before late.txt exists
        calls.append(1)
        if len(calls) == 1:
            entered.set()
            assert release.wait(10)
        return tree

    monkeypatch.setattr(wt, "_take_tree", held)
    first: list[str | None] = []
    runner = threading.Thread(target=lambda: first.append(wt.snapshot(repo).tree))
    runner.start()
    assert entered.wait(10)
    assert not wt._TREES._pending  # the run started: nobody can join it any more
    (repo / "late.txt").write_text("written after the first run began\n")
    second: list[str | None] = []
    asker = threading.Thread(target=lambda: second.append(wt.snapshot(repo).tree))
    asker.start()
    # the second caller asked while the first run was still going: it waits in a new run
    wait_until(lambda: bool(wt._TREES._pending), timeout=5, what="the second request")
    assert len(calls) == 1
    release.set()
    runner.join(30)
    asker.join(30)
    assert len(calls) == 2  # the second caller waited for a run of its own
    listed = _git(repo, "ls-tree", "--name-only", str(second[0]))
    assert "late.txt" in listed.split()
    assert first[0] != second[0]


def test_concurrent_diffs_match_a_diff_taken_alone(repo: Path) -> None:
    base = wt.snapshot(repo)
    (repo / "c.txt").write_text("agent work\n")
    alone = wt.diff(repo, base)
    results: list[wt.Diff] = []
    barrier = threading.Barrier(6)

    def ask() -> None:
        barrier.wait(10)
        results.append(wt.diff(repo, base))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [(d.files, d.patch) for d in results] == [(alone.files, alone.patch)] * 6


def test_errors_of_the_one_rev_parse_are_those_of_the_separate_questions(
    repo: Path, tmp_path: Path
) -> None:
    """When the combined ``rev-parse`` fails, the questions are asked one by one, so the
    error still says which one failed."""
    bare = tmp_path / "empty"
    bare.mkdir()
    _git(bare, "init", "-q")
    for where, code in [
        (bare, "NO_COMMITS"),
        (tmp_path / "gone", "CWD_NOT_FOUND"),
        (tmp_path, "NOT_A_GIT_REPO"),
    ]:
        with pytest.raises(wt.WorktreeError) as caught:
            wt.snapshot(where)
        assert caught.value.code == code, where
    sub = repo / "pkg"
    sub.mkdir()
    base = wt.snapshot(sub)
    assert (base.repo, base.cwd) == (str(repo), str(sub.resolve()))


def test_the_one_diff_answers_what_name_status_and_patch_answered(repo: Path) -> None:
    """``diff --raw -z -p`` in one process: its file list and patch are exactly those of
    ``diff --name-status`` and ``diff`` run separately, odd paths and binary files included."""
    (repo / "bin.dat").write_bytes(b"\0\1\2")
    (repo / "gone.txt").write_text("bye\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "more")
    head = _git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("one\ntwo\n")
    (repo / "bin.dat").write_bytes(b"\0\3")
    (repo / "gone.txt").unlink()
    (repo / "with space.txt").write_text("s\n")
    (repo / "new\nline.txt").write_text("n\n")
    (repo / ":colon").write_text("c\n")
    found = wt.diff(repo, head)
    _git(repo, "add", "-A")
    names = _git(repo, "diff", "--cached", "--name-status", "-z", "--no-renames", head)
    fields = names.split("\0")
    assert found.files == tuple(zip(fields[0:-1:2], fields[1::2], strict=True))
    assert len(found.files) == 6
    assert found.patch == _git(repo, "diff", "--cached", "--no-renames", head) + "\n"
    only = wt.diff(repo, head, paths=["a.txt"])
    assert only.files == (("M", "a.txt"),) and only.patch.startswith("diff --git a/a.txt")
