"""The fake pi loads extensions as pi does: from its agent dir and its ``-e`` files, running
the Python twin an extension's header names, never one of the simulator's own choosing."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from herdr_sim.fake_agent.extensions import attach_extensions, extension_files, twin_module
from orchestrator.managed.extension_install import EXTENSION_SOURCE, install_child_extension
from tests.fresh_python import fresh_python

TWIN = "orchestrator.managed.pi_extension.fake_pi"


def test_the_managed_child_extension_names_its_twin() -> None:
    assert twin_module(EXTENSION_SOURCE) == TWIN


def test_pi_s_default_agent_dir_is_read_without_the_variable(tmp_path: Path) -> None:
    installed = install_child_extension(tmp_path / ".pi" / "agent" / "extensions")
    assert extension_files([], {"HOME": str(tmp_path)}) == [installed]


def test_the_agent_dirs_extensions_then_the_named_ones_each_once(tmp_path: Path) -> None:
    installed = install_child_extension(tmp_path / "agent" / "extensions")
    (tmp_path / "agent" / "extensions" / "notes.txt").write_text("// fake pi: os\n")
    named = tmp_path / "other.ts"
    named.write_text("// no twin here\n")
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    assert extension_files([str(named), str(installed)], env) == [installed, named]
    assert twin_module(named) is None
    assert extension_files([], {"HOME": str(tmp_path / "home")}) == []  # none installed
    assert extension_files([], {"HOME": str(tmp_path)}) == []  # ~/.pi/agent: none either


def test_a_fifo_or_a_missing_file_names_no_twin(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.ts"
    os.mkfifo(fifo)
    assert twin_module(fifo) is None  # and does not block
    assert twin_module(tmp_path / "missing.ts") is None


def _attach(named: list[str], env: dict[str, str], said: list[str]) -> object:
    return attach_extensions(
        named,
        env,
        session_id="s",
        session_file="/nonexistent",
        cwd="/",
        pid=os.getpid(),
        submit=lambda _text: None,
        interrupt=threading.Event(),
        deliver=lambda _text: None,
        say=said.append,
    )


def test_an_unloadable_twin_is_shown_and_skipped(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ts"
    broken.write_text("// fake pi: no_such_package.twin\n")
    said: list[str] = []
    assert _attach([str(broken)], {"HOME": str(tmp_path)}, said) is None
    assert said and "no_such_package.twin" in said[0]


def test_the_twin_stays_inactive_outside_a_managed_child(tmp_path: Path) -> None:
    said: list[str] = []
    assert _attach([str(EXTENSION_SOURCE)], {"HOME": str(tmp_path)}, said) is None
    assert said == []


def test_the_loader_imports_nothing_of_the_orchestrator() -> None:
    code = (
        "import sys\nimport herdr_sim.fake_agent.extensions\n"
        "print(sorted(m for m in sys.modules if m.startswith('orchestrator.managed')))\n"
    )
    assert fresh_python(code) == ["[]"]
