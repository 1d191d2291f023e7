"""Configuration: file format, defaults, environment overrides, strict keys and the gates."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from orchestrator.agent_tools.remote_files import LocalFiles, SshFiles, files_for
from orchestrator.core.config import (
    Config,
    ConfigError,
    GateError,
    check_cwd,
    check_enabled,
    check_machine,
    check_spawn_machine,
    default_config_path,
    env_name,
    load_config,
    machine_hint,
    parse_config,
)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), **extra}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cfg" / "herdr-orchestrator" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(_env(tmp_path))
    assert config.enabled is True
    assert config.max_result_chars == 40_000
    assert config.max_diff_bytes == 512 * 1024
    assert config.transport == "auto"
    assert config.state_dir == tmp_path / "home" / ".local/state/herdr-orchestrator"
    assert config.artifact_dir == config.state_dir / "artifacts"
    assert config.file is None


def test_default_location_is_under_xdg_config_home(tmp_path: Path) -> None:
    path = default_config_path(_env(tmp_path))
    assert path == tmp_path / "cfg" / "herdr-orchestrator" / "config.toml"


def test_file_values_are_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'enabled = false\nmaxConcurrent = 2\nqueueTimeoutMs = 500\ntransport = "cli"\n'
        'allowCwd = ["repos"]\nstateDir = "state"\n[aliases.pi]\nfast = "x/y-1"\n',
    )
    config = load_config(_env(tmp_path))
    assert (config.enabled, config.max_concurrent, config.queue_timeout_ms) == (False, 2, 500)
    assert config.transport == "cli"
    assert config.allow_cwd == (path.parent / "repos",)
    assert config.state_dir == path.parent / "state"
    assert config.artifact_dir == path.parent / "state" / "artifacts"
    assert config.aliases == {"pi": {"fast": "x/y-1"}}
    assert config.file == path


def test_named_file_overrides_the_default_location(tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    other.write_text("maxResultChars = 5000\n")
    config = load_config(_env(tmp_path, HERDR_ORCHESTRATOR_CONFIG=str(other)))
    assert config.max_result_chars == 5000


def test_a_missing_named_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="HERDR_ORCHESTRATOR_CONFIG: no such file"):
        load_config(_env(tmp_path, HERDR_ORCHESTRATOR_CONFIG=str(tmp_path / "nope.toml")))


def test_unknown_key_in_the_file_is_an_error_naming_it(tmp_path: Path) -> None:
    _write(tmp_path, "allowCWD = []\n")
    with pytest.raises(ConfigError, match=r"allowCWD: unknown key \(did you mean allowCwd\?\)"):
        load_config(_env(tmp_path))


def test_wrong_type_is_an_error_naming_the_key(tmp_path: Path) -> None:
    _write(tmp_path, 'maxConcurrent = "two"\n')
    with pytest.raises(ConfigError) as info:
        load_config(_env(tmp_path))
    assert info.value.key == "maxConcurrent"


def test_invalid_toml_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, "enabled = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(_env(tmp_path))


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    _write(tmp_path, "maxConcurrent = 2\nenabled = true\n")
    env = _env(
        tmp_path,
        HERDR_ORCHESTRATOR_MAX_CONCURRENT="7",
        HERDR_ORCHESTRATOR_ENABLED="0",
        HERDR_ORCHESTRATOR_ALLOW_CWD=f"/a{os.pathsep}/b",
        HERDR_ORCHESTRATOR_TRANSPORT="socket",
        HERDR_ORCHESTRATOR_MACHINES="gpu,ci",
        HERDR_ORCHESTRATOR_MACHINE_TARGETS="gpu=me@gpu",
        HERDR_ORCHESTRATOR_ALIASES='{"pi": {"fast": "a/b"}}',
    )
    config = load_config(env)
    assert config.max_concurrent == 7 and config.enabled is False
    assert config.allow_cwd == (Path("/a"), Path("/b"))
    assert config.transport == "socket"
    assert config.machines == ("gpu", "ci") and config.machine_targets == {"gpu": "me@gpu"}
    assert config.aliases == {"pi": {"fast": "a/b"}}
    assert "HERDR_ORCHESTRATOR_MAX_CONCURRENT" in config.env_keys


@pytest.mark.parametrize(
    ("word", "enabled"),
    [("y", True), ("Y", True), ("on", True), ("n", False), ("OFF", False), (" no ", False)],
)
def test_enabled_reads_the_usual_spellings(tmp_path: Path, word: str, enabled: bool) -> None:
    assert load_config(_env(tmp_path, HERDR_ORCHESTRATOR_ENABLED=word)).enabled is enabled


def test_enabled_with_an_unknown_spelling_is_refused_not_read_as_on_or_off(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="HERDR_ORCHESTRATOR_ENABLED='nah' is not a boolean"):
        load_config(_env(tmp_path, HERDR_ORCHESTRATOR_ENABLED="nah"))


@pytest.mark.parametrize("value", ["", os.pathsep, f"{os.pathsep}{os.pathsep}"])
def test_an_empty_allow_cwd_variable_is_refused(tmp_path: Path, value: str) -> None:
    # Read as "no gate" before: an unset root in a wrapper turned the gate off.
    with pytest.raises(ConfigError, match="allowCwd: an empty list is refused"):
        load_config(_env(tmp_path, HERDR_ORCHESTRATOR_ALLOW_CWD=value))


def test_an_empty_allow_cwd_list_in_the_file_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "allowCwd = []\n")
    with pytest.raises(ConfigError, match="allowCwd: an empty list is refused"):
        load_config(_env(tmp_path))


def test_every_key_has_an_environment_variable() -> None:
    assert env_name("queueTimeoutMs") == "HERDR_ORCHESTRATOR_QUEUE_TIMEOUT_MS"
    assert env_name("sharedFilesystem") == "HERDR_ORCHESTRATOR_SHARED_FILESYSTEM"


def test_unknown_environment_variable_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="HERDR_ORCHESTRATOR_MAX_CONCURENT: unknown key"):
        load_config(_env(tmp_path, HERDR_ORCHESTRATOR_MAX_CONCURENT="3"))


def test_bad_environment_value_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment: transport: expected one of"):
        load_config(_env(tmp_path, HERDR_ORCHESTRATOR_TRANSPORT="pigeon"))


def test_machine_targets_must_name_enabled_machines(tmp_path: Path) -> None:
    _write(tmp_path, '[machineTargets]\ngpu = "me@gpu"\n')
    with pytest.raises(ConfigError, match="machineTargets: machine 'gpu' is not listed"):
        load_config(_env(tmp_path))


@pytest.mark.parametrize("target", ["-oProxyCommand=touch x", "me@gpu box", "me@gpu\x07"])
def test_an_ssh_target_ssh_would_misread_is_refused_naming_the_fix(
    tmp_path: Path, target: str
) -> None:
    _write(tmp_path, f'machines = ["gpu"]\n[machineTargets]\ngpu = {json.dumps(target)}\n')
    with pytest.raises(ConfigError, match=r"machineTargets\.gpu: bad SSH target .*\[user@\]host"):
        load_config(_env(tmp_path))


def test_files_for_picks_this_host_or_ssh_with_the_configured_ssh_config(tmp_path: Path) -> None:
    _write(
        tmp_path,
        'machines = ["gpu", "nas", "bare"]\nsharedFilesystem = ["nas"]\n'
        'sshConfig = "ssh/config"\n[machineTargets]\ngpu = "me@gpu"\nnas = "me@nas"\n',
    )
    config = load_config(_env(tmp_path))
    assert config.ssh_config == tmp_path / "cfg" / "herdr-orchestrator" / "ssh" / "config"
    assert isinstance(files_for(config, "local"), LocalFiles)
    assert isinstance(files_for(config, "nas"), LocalFiles)  # shared wins: no SSH needed
    gpu = files_for(config, "gpu")
    assert isinstance(gpu, SshFiles) and gpu.ssh_argv(["true"])[:3] == [
        "ssh",
        "-F",
        str(config.ssh_config),
    ]
    with pytest.raises(ValueError, match="no file access"):
        files_for(config, "bare")
    with pytest.raises(ValueError, match="sshConfig is not set"):
        files_for(replace(config, ssh_config=None), "gpu")


def test_alias_for_a_kind_without_model_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, '[aliases.agy]\nfast = "a/b"\n')
    with pytest.raises(ConfigError, match=r"aliases\.agy"):
        load_config(_env(tmp_path))


def test_disabled_refuses() -> None:
    with pytest.raises(GateError) as info:
        check_enabled(Config(enabled=False))
    assert info.value.code == "DISABLED"


def test_cwd_inside_allowed_root_is_resolved(tmp_path: Path) -> None:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    config = Config(allow_cwd=(tmp_path / "root",))
    assert check_cwd(config, tmp_path / "root" / "sub") == (tmp_path / "root" / "sub").resolve()


def test_cwd_outside_allowed_roots_is_refused(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "rootless").mkdir()
    with pytest.raises(GateError) as info:
        check_cwd(Config(allow_cwd=(tmp_path / "root",)), tmp_path / "rootless")
    assert info.value.code == "CWD_NOT_ALLOWED" and info.value.field == "cwd"


def test_symlink_escaping_the_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(GateError, match="resolves to") as info:
        check_cwd(Config(allow_cwd=(tmp_path / "root",)), tmp_path / "root" / "link")
    assert info.value.code == "CWD_NOT_ALLOWED"


def test_root_given_through_a_symlink_still_matches(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    config = Config(allow_cwd=(tmp_path / "alias",))
    assert check_cwd(config, tmp_path / "real") == (tmp_path / "real").resolve()


def test_missing_cwd_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GateError) as info:
        check_cwd(Config(), tmp_path / "nope")
    assert info.value.code == "CWD_NOT_FOUND"


def test_local_machine_is_accepted() -> None:
    assert check_machine(Config(), None) == "local"
    assert check_machine(Config(), "local") == "local"


def test_an_enabled_remote_machine_is_accepted_for_api_calls() -> None:
    assert check_machine(Config(machines=("gpu",)), "gpu") == "gpu"


def test_a_remote_spawn_needs_an_absolute_cwd_and_file_access() -> None:
    shared = Config(machines=("gpu",), shared_filesystem=("gpu",))
    assert check_spawn_machine(shared, "gpu", "/srv/repo") == "gpu"
    assert check_spawn_machine(Config(), None, None) == "local"
    for cwd in (None, "", "repo", "~/repo"):
        with pytest.raises(GateError, match="absolute path on that machine") as info:
            check_spawn_machine(shared, "gpu", cwd)
        assert (info.value.code, info.value.field) == ("CWD_NOT_ABSOLUTE", "cwd")
    with pytest.raises(GateError, match="list it in sharedFilesystem") as info:
        check_spawn_machine(Config(machines=("gpu",)), "gpu", "/srv/repo")
    assert (info.value.code, info.value.field) == ("MACHINE_NO_FILE_ACCESS", "machine")
    # an SSH-only machine is accepted here; remote_task checks what it needs (sshConfig,
    # machineArtifactDirs) before anything runs (test_machines_ssh.py)
    ssh_only = Config(machines=("gpu",), machine_targets={"gpu": "dev@gpu"})
    assert check_spawn_machine(ssh_only, "gpu", "/srv/repo") == "gpu"


@pytest.mark.parametrize("path", ["relative/dir", "/srv/../etc", "/srv/a\nb", ""])
def test_a_machine_artifact_dir_must_be_an_absolute_plain_path(tmp_path: Path, path: str) -> None:
    _write(
        tmp_path,
        f'machines = ["gpu"]\n[machineArtifactDirs]\ngpu = {json.dumps(path)}\n',
    )
    with pytest.raises(ConfigError, match=r"machineArtifactDirs(\.gpu: bad directory|: expected)"):
        load_config(_env(tmp_path))


def test_machine_artifact_dirs_name_enabled_machines_and_come_from_the_environment(
    tmp_path: Path,
) -> None:
    _write(tmp_path, '[machineArtifactDirs]\ngpu = "/srv/agents"\n')
    with pytest.raises(ConfigError, match="machineArtifactDirs: machine 'gpu' is not listed"):
        load_config(_env(tmp_path))
    _write(tmp_path, 'machines = ["gpu"]\n')
    env = _env(tmp_path, HERDR_ORCHESTRATOR_MACHINE_ARTIFACT_DIRS="gpu=/srv/agents/")
    assert load_config(env).machine_artifact_dirs == {"gpu": "/srv/agents"}


@pytest.mark.parametrize("label", ["-F/tmp/x", " box", "a\nb", "x" * 129])
def test_a_machine_label_herdr_cannot_take_is_refused(label: str) -> None:
    with pytest.raises(ConfigError, match="bad machine label") as info:
        parse_config({"machines": [label]}, base=Path("/"))
    assert info.value.key == "machines[0]"


def test_herdr_machine_refusals_get_their_fix() -> None:
    assert "herdr machine enable" in str(machine_hint("box", "error: machine 'box' is disabled"))
    unknown = "error: unknown machine 'x'; use `herdr machine list`"
    assert "herdr machine add" in str(machine_hint("x", unknown))
    assert machine_hint("local", "error: machine 'box' is disabled") is None
    assert machine_hint("box", "agent_not_found: no agent w") is None


def test_unknown_machine_is_refused_as_not_enabled() -> None:
    with pytest.raises(GateError, match="not enabled in machines") as info:
        check_machine(Config(), "gpu")
    assert info.value.code == "MACHINE_NOT_ENABLED"
