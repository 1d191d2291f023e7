"""``Simulator(config, **overrides)`` works on its own copy of the config."""

from __future__ import annotations

from pathlib import Path

from herdr_sim import Simulator, SimulatorConfig


def test_overrides_and_path_coercion_leave_the_callers_config_alone(tmp_path: Path) -> None:
    shared = SimulatorConfig(runtime_dir=tmp_path, cols=80)
    socket = str(tmp_path / "a.sock")
    first = Simulator(shared, cols=100, socket_path=socket)
    assert (first.config.cols, first.config.socket_path) == (100, Path(socket))
    assert (shared.cols, shared.socket_path, shared.runtime_dir) == (80, None, tmp_path)
    second = Simulator(shared, socket_path=tmp_path / "b.sock")
    assert second.config.cols == 80, "an earlier simulator's overrides leaked into the config"
    assert first.config is not shared and second.config is not first.config
