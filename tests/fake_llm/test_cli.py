"""``herdr-sim fake-llm``: serves a script file, prints the requests, refuses bad scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from herdr_sim.command import main


def test_a_bad_script_exits_2_naming_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[[turns]]\ntxt = 'x'\n")
    assert main(["fake-llm", "--script", str(path)]) == 2
    err = capsys.readouterr().err
    assert "turns[0]: unknown key(s) txt" in err and str(path) in err


def test_serves_the_script_and_prints_each_request(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[[turns]]\ntext = "from the file"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "herdr_sim", "fake-llm", "--port", "0", "--script", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None and process.stdout is not None
        first = process.stderr.readline()
        assert "listening on http://127.0.0.1:" in first
        url = first.rsplit(" ", 1)[1].strip()
        body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        request = urllib.request.Request(
            url + "/v1/chat/completions", data=json.dumps(body).encode()
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.load(response)
        assert answer["choices"][0]["message"]["content"] == "from the file"
        line = json.loads(process.stdout.readline())
        assert line["last_user_text"] == "hello" and line["turn"] == 0 and line["status"] == 200
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
