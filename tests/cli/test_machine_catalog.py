"""`herdr machine` and its catalog, ``<state>/client/endpoints.json``: Herdr's limits and messages.

Every test runs the CLI in-process against a private config directory; none needs SSH
(``machine add`` fails its checks before it would run ``ssh``). The SSH side is
``test_machine_ssh.py``.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.machines.endpoints import CatalogError, EndpointCatalog
from tests.cli.conftest import Run

ID_A = "0123456789abcdef0123456789abcdef"
ID_B = "fedcba9876543210fedcba9876543210"


def profile(pid: str = ID_A, **fields: Any) -> dict[str, Any]:
    """One stored profile (Herdr's field order)."""
    base: dict[str, Any] = {
        "id": pid,
        "label": "box",
        "target": "dev@box",
        "session": "default",
        "enabled": True,
    }
    base.update(fields)
    return base


@pytest.fixture
def catalog_file(clean_env: Path) -> Path:
    """Where the CLI reads the catalog for ``clean_env``."""
    return clean_env / "state" / "client" / "endpoints.json"


@pytest.fixture
def write_catalog(catalog_file: Path) -> Callable[[Any], Path]:
    """``write_catalog(obj_or_text)`` stores a catalog file as a user (or attacker) might."""

    def write(content: Any) -> Path:
        catalog_file.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content)
        catalog_file.write_text(text)
        catalog_file.chmod(0o600)
        return catalog_file

    return write


def fatal_message(run: Run) -> str:
    """The message of an ``Error: Custom { kind: Other, error: "..." }`` exit."""
    assert run.code == 1, run
    prefix = 'Error: Custom { kind: Other, error: "'
    line = run.err.strip()
    assert line.startswith(prefix) and line.endswith('" }'), line
    return line[len(prefix) : -3]


def test_empty_catalog_lists_nothing(cli: Callable[..., Run], clean_env: Path) -> None:
    assert cli("machine", "list") == Run(0, "No saved SSH machines.\n", "")
    assert cli("machine", "list", "--json") == Run(0, "[]\n", "")
    assert cli("machine", "list", "--yaml") == Run(2, "", "usage: herdr machine list [--json]\n")


def test_list_shows_rows_and_selection(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path], catalog_file: Path
) -> None:
    write_catalog({"version": 1, "ssh": [profile(), profile(ID_B, label="b", enabled=False)]})
    selection = catalog_file.with_name("endpoint-selection.json")
    selection.write_text(json.dumps({"version": 1, "selected_profile": ID_A}))
    text = cli("machine", "list")
    assert text.out == (
        f"{ID_A}\tbox\tdev@box\tdefault\tenabled\n{ID_B}\tb\tdev@box\tdefault\tdisabled\n"
    )
    rows = json.loads(cli("machine", "list", "--json").out)
    assert rows[0] == {**profile(), "selected": True, "windows_desktop": False}
    assert rows[1]["selected"] is False


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"version": 2, "ssh": []}, "unsupported endpoint catalog version 2; expected 1"),
        (
            {"version": 1, "ssh": [profile(f"{i:032x}") for i in range(65)]},
            "endpoint catalog contains more than 64 SSH profiles",
        ),
        ({"version": 1, "ssh": [profile(label="x" * 129)]}, "label must be at most 128 bytes"),
        ({"version": 1, "ssh": [profile(label="a\u0007b")]}, "no control characters"),
        ({"version": 1, "ssh": [profile(label="   ")]}, "SSH endpoint label cannot be empty"),
        ({"version": 1, "ssh": [profile(target="h" * 1025)]}, "at most 1024 bytes"),
        ({"version": 1, "ssh": [profile(target="dev@box\n")]}, "contain no control characters"),
        (
            {"version": 1, "ssh": [profile(target="dev:hunter2@box")]},
            "SSH target must not contain a password",
        ),
        (
            {"version": 1, "ssh": [profile(target="ssh://dev:pw@box:22")]},
            "SSH target must not contain a password",
        ),
        (
            {"version": 1, "ssh": [profile(target="-oProxyCommand=x")]},
            "--remote target must not start with '-'",
        ),
        ({"version": 1, "ssh": [profile(session="a/b")]}, "session name may only contain"),
        ({"version": 1, "ssh": [profile(), profile()]}, f"duplicate endpoint profile id {ID_A}"),
        ({"version": 1, "ssh": [profile("BOX")]}, "invalid SSH endpoint profile id"),
        ({"version": 1, "ssh": [], "extra": 1}, "unknown field `extra`"),
        ({"version": 1, "ssh": [profile(password="pw")]}, "unknown field `password`"),
        ({"version": 1, "ssh": [{"id": ID_A}]}, "missing field `label`"),
        ({"ssh": []}, "missing field `version`"),
        ("{not json", "stored endpoint catalog is invalid"),
        (
            {"version": 1, "selected_profile": ID_B, "ssh": [profile()]},
            "selected SSH endpoint is absent or disabled in the catalog",
        ),
    ],
    ids=[
        "version",
        "count",
        "label-length",
        "label-control",
        "label-empty",
        "target-length",
        "target-control",
        "password",
        "password-url",
        "leading-dash",
        "session",
        "duplicate-id",
        "bad-id",
        "unknown-field",
        "unknown-profile-field",
        "missing-field",
        "missing-version",
        "not-json",
        "selection",
    ],
)
def test_catalog_that_breaks_a_limit_is_refused(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path], content: Any, message: str
) -> None:
    write_catalog(content)
    run = cli("machine", "list")
    assert message in fatal_message(run)
    assert run.out == ""
    # --machine reads the same catalog and refuses it the same way, before any SSH
    remote = cli("--machine", "box", "pane", "list")
    assert message in fatal_message(remote)


def test_oversized_catalog_is_refused(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path]
) -> None:
    padded = json.dumps({"version": 1, "ssh": []}) + " " * (64 * 1024)
    write_catalog(padded)
    assert fatal_message(cli("machine", "list")) == "endpoint catalog exceeds the storage limit"


def test_symlinked_catalog_is_not_followed(
    cli: Callable[..., Run], catalog_file: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "theirs.json"
    elsewhere.write_text(json.dumps({"version": 1, "ssh": [profile(target="evil")]}))
    catalog_file.parent.mkdir(parents=True)
    catalog_file.symlink_to(elsewhere)
    message = fatal_message(cli("machine", "list"))
    assert message.startswith(f"failed to open endpoint catalog {catalog_file}:")
    assert fatal_message(cli("--machine", "box", "pane", "list")) == message


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_catalog_owned_by_another_user_is_refused(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path]
) -> None:
    path = write_catalog({"version": 1, "ssh": [profile()]})
    os.chown(path, 65534, 65534)
    assert fatal_message(cli("machine", "list")).endswith("owned by another user")


def test_store_refuses_to_replace_a_symlink(clean_env: Path, tmp_path: Path) -> None:
    env = {"HERDR_SIM_CONFIG_DIR": str(clean_env)}
    target = tmp_path / "victim"
    target.write_text("keep")
    path = clean_env / "state" / "client" / "endpoints.json"
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    with pytest.raises(CatalogError, match="refusing to replace endpoint catalog through a non"):
        EndpointCatalog().store(env)
    assert target.read_text() == "keep"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "usage: herdr machine add <ssh-target>"),
        (("box", "--label"), "missing value for --label"),
        (("box", "--label", "a", "--label", "b"), "--label can only be specified once"),
        (("box", "--remote-session=a", "--remote-session=b"), "--remote-session can only be"),
        (("box", "--remote-desktop", "--remote-desktop"), "--remote-desktop can only be"),
        (("-oProxyCommand=x",), "unknown machine add option: -oProxyCommand=x"),
        (("box", "other"), "unknown machine add option: other"),
    ],
)
def test_add_usage_errors(
    cli: Callable[..., Run], clean_env: Path, argv: tuple[str, ...], message: str
) -> None:
    run = cli("machine", "add", *argv)
    assert run.code == 2 and run.err.startswith(message), run


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("dev:pw@box", "--label", "b"), "error: SSH target must not contain a password"),
        (("box", "--label", "x" * 129), "error: SSH endpoint label must be at most 128 bytes"),
        (("box", "--label", " "), "error: SSH endpoint label cannot be empty"),
        (("box", "--remote-session", "a b"), "error: session name may only contain"),
    ],
)
def test_add_validates_before_contacting_the_machine(
    cli: Callable[..., Run], catalog_file: Path, argv: tuple[str, ...], message: str
) -> None:
    run = cli("machine", "add", *argv)
    assert run.code == 2 and run.err.startswith(message), run
    assert not catalog_file.exists()


def untrusted_ssh_config(clean_env: Path, tmp_path: Path, how: str) -> Path:
    """An ssh config whose ProxyCommand would leave a mark, made untrusted by ``how``."""
    mark = tmp_path / "proxy-ran"
    config = clean_env / "ssh" / "config"
    config.parent.mkdir(parents=True)
    config.write_text(f"Host *\n  ProxyCommand touch {mark}\n")
    config.chmod(0o600)
    if how == "writable":
        config.chmod(0o666)
    elif how == "foreign":
        os.chown(config, 65534, 65534)
    return mark


@pytest.mark.parametrize("how", ["writable", "foreign"])
@pytest.mark.parametrize("command", ["add", "status"])
def test_an_ssh_config_others_control_is_refused_not_run(
    cli: Callable[..., Run],
    clean_env: Path,
    tmp_path: Path,
    write_catalog: Callable[[Any], Path],
    how: str,
    command: str,
) -> None:
    # `ssh -F` does not check the file's owner as it checks ~/.ssh/config: the simulated
    # `herdr machine` refuses it as it refuses such a machine catalog
    if how == "foreign" and os.geteuid() != 0:
        pytest.skip("needs root to give the file to another user")
    mark = untrusted_ssh_config(clean_env, tmp_path, how)
    if command == "add":
        run = cli("machine", "add", "dev@box")
    else:
        write_catalog({"version": 1, "ssh": [profile()]})
        run = cli("machine", "status", "box")
    said = {"writable": "is writable by other users", "foreign": "is owned by another user"}
    reason = f"ssh config {clean_env / 'ssh' / 'config'} {said[how]}: refusing to use it"
    if command == "add":  # not saved
        assert run.code == 1 and reason in run.err, run
    else:  # the machine's status says why it cannot be reached
        assert run.code == 0 and f"\tunreachable\t{reason}" in run.out, run
    assert not mark.exists()


def test_add_refuses_the_65th_machine(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path]
) -> None:
    write_catalog({"version": 1, "ssh": [profile(f"{i:032x}") for i in range(64)]})
    run = cli("machine", "add", "box", "--label", "one-more")
    assert run == Run(2, "", "error: at most 64 SSH endpoints can be saved\n")


def test_profile_commands_change_the_catalog_privately(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path], catalog_file: Path
) -> None:
    write_catalog({"version": 1, "ssh": [profile(), profile(ID_B, label="b")]})
    catalog_file.with_name("endpoint-selection.json").write_text(
        json.dumps({"version": 1, "selected_profile": ID_A})
    )
    assert cli("machine", "rename", ID_A, "--label=Build") == Run(
        0, f"Renamed SSH machine {ID_A}.\n", ""
    )
    assert cli("machine", "disable", ID_A) == Run(0, f"Disabled SSH machine {ID_A}.\n", "")
    selection = json.loads(catalog_file.with_name("endpoint-selection.json").read_text())
    assert selection == {"version": 1, "selected_profile": None}
    assert cli("machine", "enable", ID_A) == Run(0, f"Enabled SSH machine {ID_A}.\n", "")
    assert cli("machine", "remove", ID_B) == Run(0, f"Removed SSH machine {ID_B}.\n", "")
    stored = json.loads(catalog_file.read_text())
    assert stored == {
        "version": 1,
        "ssh": [{**profile(label="Build"), "windows_desktop": False}],
    }
    assert catalog_file.read_text().startswith('{\n  "version": 1,')
    assert stat.S_IMODE(catalog_file.stat().st_mode) == 0o600
    assert [p.name for p in catalog_file.parent.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("sub", ["remove", "enable", "disable"])
def test_profile_commands_need_a_known_profile_id(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path], sub: str
) -> None:
    write_catalog({"version": 1, "ssh": [profile()]})
    assert cli("machine", sub, ID_B) == Run(1, "", f"machine profile {ID_B} was not found\n")
    assert cli("machine", sub, "box") == Run(2, "", "error: invalid SSH endpoint profile id\n")
    assert cli("machine", sub) == Run(2, "", f"usage: herdr machine {sub} <profile-id>\n")


def test_rename_checks_the_new_label(
    cli: Callable[..., Run], write_catalog: Callable[[Any], Path], catalog_file: Path
) -> None:
    write_catalog({"version": 1, "ssh": [profile()]})
    before = catalog_file.read_text()
    run = cli("machine", "rename", ID_A, "--label", "a\tb")
    assert run.code == 2 and "no control characters" in run.err
    assert catalog_file.read_text() == before
    assert cli("machine", "rename", ID_A).code == 2
    assert cli("machine", "rename", ID_B, "--label", "x").code == 1


def test_unknown_subcommand_prints_help_and_exits_2(cli: Callable[..., Run]) -> None:
    run = cli("machine", "frobnicate")
    assert run.code == 2 and "herdr machine list [--json]" in run.err
    assert cli("machine", "help").code == 0
