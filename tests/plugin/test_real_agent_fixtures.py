"""``herdr_fake_llm`` and ``herdr_real_agent`` as plugin users meet them (no real agent needed):
the fake LLM answers, and a real agent that is not installed skips — or fails under CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from herdr_sim.real_agents import AgentInstallError, find_pi, install_pi

USES_PI = """
from herdr_sim.fake_llm import Script

def test_uses_pi(herdr_real_agent):
    herdr_real_agent.start("pi", Script().reply("hi"))
"""


@pytest.fixture
def no_pi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty agents cache and no permission to install into it."""
    cache = tmp_path / "agents"
    monkeypatch.setenv("PYTEST_HERDR_AGENTS_DIR", str(cache))
    monkeypatch.setenv("PYTEST_HERDR_NO_AGENT_INSTALL", "1")
    monkeypatch.delenv("CI", raising=False)
    return cache


def test_a_missing_real_agent_skips_with_the_reason(pytester: pytest.Pytester, no_pi: Path) -> None:
    pytester.makepyfile(test_pi=USES_PI)
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*real pi is not installed (run `herdr-sim install-agent pi`)*"])


def test_a_missing_real_agent_fails_under_ci(
    pytester: pytest.Pytester, no_pi: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_pi=USES_PI)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=0, failed=1)
    result.stdout.fnmatch_lines(["*CI=true: real-agent tests must run, not skip*"])


def test_herdr_fake_llm_serves_the_tests_script(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_llm="""
import json, urllib.request
from herdr_sim.fake_llm import Script

def test_llm(herdr_fake_llm):
    herdr_fake_llm.set_script(Script().reply("scripted"))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    request = urllib.request.Request(
        herdr_fake_llm.openai_base_url + "/chat/completions", data=json.dumps(body).encode()
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.load(response)["choices"][0]["message"]["content"] == "scripted"
    assert [r.last_user_text for r in herdr_fake_llm.requests] == ["hi"]
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_install_without_npm_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm here
    assert find_pi(tmp_path / "agents") is None
    with pytest.raises(AgentInstallError, match="`npm` is not on PATH"):
        install_pi(tmp_path / "agents")


def test_an_unfinished_install_is_not_found(tmp_path: Path) -> None:
    from herdr_sim.real_agents.install import NODE_VERSION, PI_VERSION

    directory = tmp_path / f"pi-{PI_VERSION}-node-{NODE_VERSION}" / "bin"
    directory.mkdir(parents=True)
    (directory / "pi").touch()
    (directory / "node").touch()
    assert find_pi(tmp_path) is None  # no stamp: npm did not finish
    (directory.parent / ".installed").write_text("x")
    found = find_pi(tmp_path)
    assert found is not None and found.executable == directory / "pi"
