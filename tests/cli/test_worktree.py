"""`herdr worktree ...`: argv → request, usage errors and a run against the simulator.

Follows herdrdev/herdr ``src/cli/worktree.rs`` (its parsers, usage lines and the
``normalize_path_arg`` that makes path arguments absolute before they are sent) and
``src/cli/runtime.rs`` (request ids ``cli:worktree:<sub>``, the response printed whole).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_herdr.cli_runner import HerdrCli
from tests.cli.fake_herdr import FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run

_OPEN_USAGE = (
    "usage: herdr worktree open [--workspace ID | --cwd PATH] (--path PATH | --branch NAME) "
    "[--label TEXT] [--focus] [--no-focus]"
)

_REMOVE_USAGE = "usage: herdr worktree remove --workspace ID [--force]"

CASES: list[tuple[list[str], str, str, dict[str, Any]]] = [
    (["worktree", "list"], "cli:worktree:list", "worktree.list", {}),
    (
        ["worktree", "list", "--workspace", "w1", "--json"],
        "cli:worktree:list",
        "worktree.list",
        {"workspace_id": "w1"},
    ),
    (
        ["worktree", "create", "--label", "L", "--path", "/co", "--base", "main", "--branch",
         "b", "--cwd", "/repo", "--focus"],
        "cli:worktree:create",
        "worktree.create",
        {"cwd": "/repo", "branch": "b", "base": "main", "path": "/co", "label": "L",
         "focus": True},
    ),
    (["worktree", "create"], "cli:worktree:create", "worktree.create", {"focus": False}),
    (
        ["worktree", "open", "--branch", "b", "--workspace", "w2", "--focus", "--no-focus"],
        "cli:worktree:open",
        "worktree.open",
        {"workspace_id": "w2", "branch": "b", "focus": False},
    ),
    (
        ["worktree", "remove", "--force", "--workspace", "w3"],
        "cli:worktree:remove",
        "worktree.remove",
        {"workspace_id": "w3", "force": True},
    ),
    (
        ["worktree", "remove", "--workspace", "w3"],
        "cli:worktree:remove",
        "worktree.remove",
        {"workspace_id": "w3", "force": False},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "request_id", "method", "params"), CASES)
def test_argv_maps_to_the_request(
    fake: FakeHerdr,
    cli: Callable[..., Run],
    argv: list[str],
    request_id: str,
    method: str,
    params: dict[str, Any],
) -> None:
    """Fields in the order of Herdr's params structs; ``focus``/``force`` always sent,
    ``--json`` a no-op (``worktree_list`` … ``worktree_remove`` in src/cli/worktree.rs)."""
    run = cli(*argv)
    assert run.code == 0, run.err
    operation = fake.only_operation()
    assert (operation["id"], operation["method"]) == (request_id, method)
    assert operation["params"] == params
    assert list(operation["params"]) == list(params)


def test_path_arguments_are_made_absolute_by_the_cli(
    fake: FakeHerdr,
    cli: Callable[..., Run],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """``normalize_path_arg``: ``~/x`` is joined to HOME, a relative path to the cwd."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/someone")
    assert cli("worktree", "open", "--cwd", "repo", "--path", "~/co").code == 0
    params = fake.only_operation()["params"]
    assert params == {"cwd": f"{tmp_path}/repo", "path": "/home/someone/co", "focus": False}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["worktree", "list", "--workspace", "w1", "--cwd", "/r"],
            "usage: herdr worktree list [--workspace ID | --cwd PATH]",
        ),
        (["worktree", "open", "--workspace", "w1"], _OPEN_USAGE),
        (["worktree", "open", "--path", "/a", "--branch", "b"], _OPEN_USAGE),
        (["worktree", "remove", "--force"], _REMOVE_USAGE),
        (["worktree", "create", "--branch"], "missing value for --branch"),
        (["worktree", "list", "--all"], "unknown option: --all"),
    ],
)
def test_usage_errors_send_nothing(
    fake: FakeHerdr, cli: Callable[..., Run], argv: list[str], message: str
) -> None:
    """Herdr's parsers print the message and exit 2 before any request."""
    run = cli(*argv)
    assert (run.code, run.err) == (2, message + "\n")
    assert fake.operations() == []


def test_group_help(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    """``print_worktree_help``: the command list on stderr; exit 2 without a subcommand or
    with an unknown one, 0 for ``help``."""
    bare = cli("worktree")
    assert bare.code == 2
    assert bare.err_lines[0] == "herdr worktree commands:"
    assert bare.err_lines[-1] == "  herdr worktree remove --workspace ID [--force]"
    assert cli("worktree", "help").code == 0
    assert cli("worktree", "prune").code == 2


def test_create_and_remove_against_the_simulator(herdr: HerdrCli, short_dir: Path) -> None:
    """The whole path: a real repository, the simulator's git, the CLI printing the
    response (exit 0) and an error response on stderr (exit 1)."""
    repo = short_dir / "proj"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
    }
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, timeout=30)
    created = herdr("worktree", "create", "--cwd", str(repo), "--branch", "feat")
    assert created.code == 0, created.stderr
    result = json.loads(created.stdout)["result"]
    assert result["type"] == "worktree_created"
    assert result["worktree"]["branch"] == "feat"
    child = result["workspace"]["workspace_id"]
    again = herdr("worktree", "create", "--cwd", str(repo), "--branch", "feat")
    assert again.code == 1
    assert json.loads(again.stderr)["error"]["code"] == "worktree_create_failed"
    removed = herdr("worktree", "remove", "--workspace", child)
    assert removed.code == 0, removed.stderr
    assert json.loads(removed.stdout)["result"]["type"] == "worktree_removed"
