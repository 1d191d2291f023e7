"""Pane I/O over the socket and the `herdr` CLI: send text/keys/input, read, wait for output.

Every test drives a real shell in a real pty. Commands print markers computed by the shell
(``echo M$((20+1))`` prints ``M21``), so a marker in the output proves the command ran and
never matches the echoed command line itself.
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from herdr_sim import Simulator
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    Raw,
    cli_error,
    cli_json,
    cli_quiet,
    enter,
    failure,
    foreground_names,
    invalid_request,
    process_info,
    reply_after,
    split,
    wait_line,
    wait_output,
)
from tests.waits import SCALE, wait_until

_marks = itertools.count(1)
ANY_TEXT = {"type": "substring", "value": "x"}
READ_FIELDS = {
    "pane_id", "workspace_id", "tab_id", "source", "format", "text", "revision", "truncated",
}  # fmt: skip


# -- helpers -----------------------------------------------------------------------------------


def run(herdr_client: HerdrClient, pane: str, command: str) -> None:
    """Run a command, then wait until it finished and the prompt is back (stable screen)."""
    mark = next(_marks)
    enter(herdr_client, pane, f"{command}; echo done{mark}$((0))")
    wait_line(herdr_client, pane, rf"^done{mark}0$")
    wait_line(herdr_client, pane, r"^\$$", lines=1)


def read(
    herdr_client: HerdrClient, pane: str, source: str = "recent", **params: Any
) -> dict[str, Any]:
    """``pane.read`` → the PaneReadResult."""
    result = herdr_client.call("pane.read", pane_id=pane, source=source, **params)
    assert result["type"] == "pane_read"
    read_result: dict[str, Any] = result["read"]
    return read_result


def foreground_group(herdr_client: HerdrClient, pane: str) -> int | None:
    """The pane's foreground process group id."""
    group: int | None = process_info(herdr_client, pane).get("foreground_process_group_id")
    return group


def wait_foreground(herdr_client: HerdrClient, pane: str, name: str) -> None:
    """Wait until ``name`` alone is the pane's foreground job."""
    wait_until(
        lambda: foreground_names(herdr_client, pane) == [name], what=f"{name} in the foreground"
    )


# -- pane.send_text ----------------------------------------------------------------------------


def test_send_text_writes_the_text_without_enter(herdr_client: HerdrClient, pane: str) -> None:
    assert herdr_client.call("pane.send_text", pane_id=pane, text="echo A$((1+1))") == {
        "type": "ok"
    }
    herdr_client.call("pane.send_text", pane_id=pane, text="3")  # still the same command line
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["Enter"])
    assert wait_line(herdr_client, pane, r"^A2") == "A23"


def test_send_text_writes_control_characters_raw(herdr_client: HerdrClient, pane: str) -> None:
    reader = "import sys; print(repr(sys.stdin.buffer.readline()))"
    herdr_client.call("pane.send_text", pane_id=pane, text=f'python3 -c "{reader}"\r')
    wait_foreground(herdr_client, pane, "python3")
    herdr_client.call("pane.send_text", pane_id=pane, text="a\x01b\x1bc\x07e\r")
    assert wait_line(herdr_client, pane, "^b'") == r"b'a\x01b\x1bc\x07e\n'"


def test_send_text_carries_non_bmp_and_emoji(herdr_client: HerdrClient, pane: str) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="echo 😀x$((1))é中𝄞\r")
    assert wait_line(herdr_client, pane, "^😀") == "😀x1é中𝄞"
    assert "😀x1é中𝄞\n" in read(herdr_client, pane, "visible")["text"]


def test_send_text_of_200_kib_reaches_a_reading_program(
    herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="stty -echo; wc -c; stty echo\r")
    wait_foreground(herdr_client, pane, "wc")
    text = ("x" * 1023 + "\n") * 200
    started = time.monotonic()
    assert herdr_client.call("pane.send_text", pane_id=pane, text=text) == {"type": "ok"}
    assert time.monotonic() - started < 5 * SCALE
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["ctrl+d"])
    assert wait_line(herdr_client, pane, r"^\d+$") == str(len(text))


def test_send_text_of_200_kib_to_a_pane_that_never_reads_answers_at_once(
    herdr_client: HerdrClient, pane: str
) -> None:
    run(herdr_client, pane, "stty -echo")
    herdr_client.call("pane.send_text", pane_id=pane, text="sleep 100\r")
    wait_foreground(herdr_client, pane, "sleep")
    other = split(herdr_client, pane)
    started = time.monotonic()
    assert herdr_client.call("pane.send_text", pane_id=pane, text=("z" * 99 + "\n") * 2048) == {
        "type": "ok"
    }
    assert herdr_client.call("pane.send_keys", pane_id=pane, keys=["Enter"]) == {"type": "ok"}
    assert time.monotonic() - started < 2 * SCALE
    herdr_client.call("pane.send_text", pane_id=other, text="echo B$((2+2))\r")
    assert wait_line(herdr_client, other, "^B4$") == "B4"


# -- pane.send_keys ----------------------------------------------------------------------------


def test_send_keys_c_c_interrupts_sleep(herdr_client: HerdrClient, pane: str) -> None:
    shell = process_info(herdr_client, pane)["shell_pid"]
    herdr_client.call("pane.send_text", pane_id=pane, text="sleep 100\r")
    wait_foreground(herdr_client, pane, "sleep")
    assert herdr_client.call("pane.send_keys", pane_id=pane, keys=["C-c"]) == {"type": "ok"}
    wait_until(
        lambda: foreground_group(herdr_client, pane) == shell, what="the shell in front again"
    )


def test_send_keys_enter_submits_the_line(herdr_client: HerdrClient, pane: str) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="echo E$((4+4))")
    assert herdr_client.call("pane.send_keys", pane_id=pane, keys=["Enter"]) == {"type": "ok"}
    assert wait_line(herdr_client, pane, "^E") == "E8"


def test_send_keys_types_characters_and_named_keys_in_order(
    herdr_client: HerdrClient, pane: str
) -> None:
    keys = ["e", "c", "h", "o", "space", "K", "$", "(", "(", "6", "plus", "1", ")", ")", "Enter"]
    herdr_client.call("pane.send_keys", pane_id=pane, keys=keys)
    assert wait_line(herdr_client, pane, "^K") == "K7"


def test_send_keys_ctrl_l_clears_the_screen(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "echo L$((1+1))")
    assert "L2" in read(herdr_client, pane, "visible")["text"]
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["ctrl+l"])
    wait_until(
        lambda: read(herdr_client, pane, "visible")["text"].strip() == "$", what="a cleared screen"
    )


@pytest.mark.parametrize("bad", ["bogus", "ctrl+", "a+b", "prefix+c", "", "C-x"])
def test_send_keys_one_invalid_key_fails_and_writes_nothing(
    herdr_client: HerdrClient, pane: str, bad: str
) -> None:
    assert failure(
        herdr_client.call, "pane.send_keys", pane_id=pane, keys=["x", "y", bad, "Enter"]
    ) == (
        "invalid_key",
        f"unsupported key {bad}",
    )
    # Had "xy" been written, this command line would start with it and not print Q3.
    herdr_client.call("pane.send_text", pane_id=pane, text="echo Q$((1+2))\r")
    assert wait_line(herdr_client, pane, "^Q") == "Q3"
    assert "$ echo Q$((1+2))\n" in read(herdr_client, pane, "visible")["text"]


# -- pane.send_input ---------------------------------------------------------------------------


def test_send_input_defaults_write_nothing(herdr_client: HerdrClient, pane: str) -> None:
    assert herdr_client.call("pane.send_input", pane_id=pane) == {"type": "ok"}
    herdr_client.call("pane.send_text", pane_id=pane, text="echo D$((1+1))\r")
    assert wait_line(herdr_client, pane, "^D") == "D2"
    assert "$ echo D$((1+1))\n" in read(herdr_client, pane, "visible")["text"]


def test_send_input_text_alone_has_no_enter_and_keys_follow_text(
    herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.send_input", pane_id=pane, text="echo T$((2+3))")
    herdr_client.call("pane.send_input", pane_id=pane, text="9", keys=["Enter"])
    assert wait_line(herdr_client, pane, "^T") == "T59"


def test_send_input_invalid_key_writes_no_text(herdr_client: HerdrClient, pane: str) -> None:
    assert failure(
        herdr_client.call,
        "pane.send_input",
        pane_id=pane,
        text="echo NO$((1))",
        keys=["Enter", "nope"],
    ) == ("invalid_key", "unsupported key nope")
    herdr_client.call("pane.send_text", pane_id=pane, text="echo Y$((5+5))\r")
    assert wait_line(herdr_client, pane, "^Y") == "Y10"
    assert "NO" not in read(herdr_client, pane, "visible")["text"]


def test_send_input_brackets_text_only_when_the_app_enabled_paste_mode(
    herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call(
        "pane.send_input",
        pane_id=pane,
        text="cat -v; printf '\\033[?2004hREADY%s\\n' 1; cat -v",
        keys=["Enter"],
    )
    wait_foreground(herdr_client, pane, "cat")
    herdr_client.call("pane.send_input", pane_id=pane, text="plain", keys=["Enter"])
    assert wait_line(herdr_client, pane, "plain$") == "plain"
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["ctrl+d"])
    wait_line(herdr_client, pane, "^READY1$")
    herdr_client.call("pane.send_input", pane_id=pane, text="hello", keys=["Enter"])
    assert wait_line(herdr_client, pane, r"^\^\[\[200~") == "^[[200~hello^[[201~"
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["ctrl+d"])


def test_python_program_with_bracketed_paste_sees_the_pasted_text(
    herdr_client: HerdrClient, pane: str
) -> None:
    program = (
        "import sys,tty; tty.setraw(0); sys.stdout.write('\\033[?2004hGO\\r\\n'); "
        "sys.stdout.flush(); data=b''\n"
        "while not data.endswith(b'\\r'): data += sys.stdin.buffer.read(1)\n"
        "tty.setcbreak(0); print(repr(data))"
    )
    herdr_client.call(
        "pane.send_input", pane_id=pane, text=f'python3 -c "{program}"', keys=["Enter"]
    )
    wait_line(herdr_client, pane, "^GO$")
    herdr_client.call("pane.send_input", pane_id=pane, text="two\nlines", keys=["Enter"])
    assert wait_line(herdr_client, pane, "^b'") == r"b'\x1b[200~two\nlines\x1b[201~\r'"


# -- CLI: send-text, send-keys, run ------------------------------------------------------------


def test_cli_send_text_and_send_keys_are_silent_and_write(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    cli_quiet(herdr_cli("pane", "send-text", pane, "echo", "C$((3+4))"))
    cli_quiet(herdr_cli("pane", "send-keys", pane, "Enter"))
    assert wait_line(herdr_client, pane, "^C7") == "C7"


def test_cli_send_keys_invalid_key_is_the_server_error_on_stderr(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    assert cli_error(herdr_cli("pane", "send-keys", pane, "a", "bogus")) == {
        "error": {"code": "invalid_key", "message": "unsupported key bogus"},
        "id": "cli:request",
    }


@pytest.mark.parametrize(
    "args",
    [["send-text", "w9:p9", "x"], ["send-keys", "w9:p9", "Enter"], ["run", "w9:p9", "true"]],
)
def test_cli_input_commands_on_an_unknown_pane_exit_1(herdr_cli: HerdrCli, args: list[str]) -> None:
    assert cli_error(herdr_cli("pane", *args)) == {
        "error": {"code": "pane_not_found", "message": "pane w9:p9 not found"},
        "id": "cli:request",
    }


def test_cli_run_sends_one_input_with_enter(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    cli_quiet(herdr_cli("pane", "run", pane, "echo", "R$((5+5))"))
    assert wait_line(herdr_client, pane, "^R") == "R10"


def test_cli_run_text_is_bracketed_for_a_paste_mode_app(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    herdr_client.call(
        "pane.send_text", pane_id=pane, text="printf '\\033[?2004hREADY%s\\n' 2; cat -v\r"
    )
    wait_line(herdr_client, pane, "^READY2$")
    assert herdr_cli("pane", "run", pane, "hello", "world").code == 0
    assert wait_line(herdr_client, pane, r"^\^\[\[200~") == "^[[200~hello world^[[201~"


# -- pane not found ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("pane.send_text", {"text": "x"}),
        ("pane.send_keys", {"keys": ["Enter"]}),
        ("pane.send_input", {"text": "x"}),
        ("pane.read", {"source": "visible"}),
        ("pane.wait_for_output", {"source": "recent", "match": ANY_TEXT}),
    ],
)
def test_unknown_pane_is_pane_not_found_naming_it(
    raw: Raw, method: str, params: dict[str, Any]
) -> None:
    assert raw(method, pane_id="w9:p9", **params) == {
        "id": "t",
        "error": {"code": "pane_not_found", "message": "pane w9:p9 not found"},
    }


# -- pane.read ---------------------------------------------------------------------------------


def test_read_result_shape_and_revision_is_always_zero(
    herdr_client: HerdrClient, pane: str
) -> None:
    run(herdr_client, pane, "echo S$((1))")
    for source in ("visible", "recent", "recent_unwrapped", "detection"):
        for fmt in ("text", "ansi"):
            result = read(herdr_client, pane, source, format=fmt)
            assert set(result) == READ_FIELDS
            assert (result["pane_id"], result["workspace_id"], result["tab_id"]) == (
                "w1:p1", "w1", "w1:t1",
            )  # fmt: skip
            assert (result["source"], result["format"], result["revision"]) == (source, fmt, 0)


def test_read_format_defaults_to_text(herdr_client: HerdrClient, pane: str) -> None:
    assert read(herdr_client, pane, "visible")["format"] == "text"


@pytest.mark.parametrize("legacy", ["w1-1", "1-1", "w_1:p1", "1:p1"])
def test_read_accepts_legacy_ids_and_answers_the_canonical_id(
    herdr_client: HerdrClient, pane: str, legacy: str
) -> None:
    answer = herdr_client.call("pane.read", pane_id=legacy, source="visible")["read"]
    assert (answer["pane_id"], answer["workspace_id"], answer["tab_id"]) == (
        "w1:p1", "w1", "w1:t1",
    )  # fmt: skip


def test_sent_command_output_is_in_recent_and_lines_2_limits_visible_and_detection(
    herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="echo H$((3*3))")
    herdr_client.call("pane.send_keys", pane_id=pane, keys=["Enter"])
    wait_line(herdr_client, pane, "^H9$")
    assert "\nH9\n" in read(herdr_client, pane, "recent")["text"]
    for source in ("visible", "detection"):
        assert len(read(herdr_client, pane, source, lines=2)["text"].splitlines()) <= 2


@pytest.mark.parametrize("source", ["visible", "detection"])
def test_visible_and_detection_lines_keep_the_last_lines_with_endings(
    herdr_client: HerdrClient, pane: str, source: str
) -> None:
    run(herdr_client, pane, "printf 'V%s\\n' 1 2 3 4 5")
    whole = read(herdr_client, pane, source)
    assert whole["truncated"] is False
    rows = whole["text"].splitlines(keepends=True)
    assert len(rows) > 3
    last3 = read(herdr_client, pane, source, lines=3)
    assert (last3["text"], last3["truncated"]) == ("".join(rows[-3:]), True)
    exact = read(herdr_client, pane, source, lines=len(rows))
    assert (exact["text"], exact["truncated"]) == (whole["text"], False)


@pytest.mark.parametrize("source", ["visible", "recent", "recent_unwrapped", "detection"])
def test_lines_zero_is_empty_and_truncated(
    herdr_client: HerdrClient, pane: str, source: str
) -> None:
    result = read(herdr_client, pane, source, lines=0)
    assert (result["text"], result["truncated"]) == ("", True)


def test_recent_defaults_to_the_last_80_rows(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "seq 200")
    result = read(herdr_client, pane, "recent")
    rows = result["text"].splitlines()
    assert len(rows) == 80 and result["truncated"] is True
    assert rows[-1] == "$" and rows[-2].startswith("done") and rows[-3] == "200"


def test_recent_lines_counts_rows_from_the_end(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "seq 50")
    result = read(herdr_client, pane, "recent", lines=4)
    assert result["text"].splitlines()[0] == "49" and result["truncated"] is True
    assert len(result["text"].splitlines()) == 4


def test_recent_lines_are_capped_at_1000(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "seq 1500")
    assert len(read(herdr_client, pane, "recent", lines=5000)["text"].splitlines()) == 1000


def test_recent_keeps_soft_wraps_and_recent_unwrapped_joins_them(
    herdr_client: HerdrClient, pane: str
) -> None:
    run(herdr_client, pane, "printf 'W%.0s' $(seq 300); echo")
    wrapped = read(herdr_client, pane, "recent", lines=6)["text"].splitlines()
    unwrapped = read(herdr_client, pane, "recent_unwrapped", lines=6)["text"].splitlines()
    assert "W" * 300 in unwrapped
    assert "W" * 300 not in wrapped
    assert "".join(row for row in wrapped if set(row) == {"W"}) == "W" * 300


def test_ansi_format_keeps_escapes_text_strips_them(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "printf '\\033[31mRED%s\\033[0m\\n' 1")
    for source in ("visible", "recent", "recent_unwrapped"):
        ansi = read(herdr_client, pane, source, format="ansi")["text"]
        text = read(herdr_client, pane, source, format="text")["text"]
        assert "\x1b[" in ansi and "RED1" in ansi
        assert "\x1b" not in text and "\nRED1\n" in text


def test_detection_is_always_plain_text(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "printf '\\033[31mRED%s\\033[0m\\n' 2")
    result = read(herdr_client, pane, "detection", format="ansi")
    assert result["format"] == "ansi"
    assert "\x1b" not in result["text"] and "\nRED2\n" in result["text"]


def test_strip_ansi_false_does_not_change_a_text_read(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "printf '\\033[32mGREEN%s\\033[0m\\n' 1")
    for source in ("visible", "recent"):
        kept = read(herdr_client, pane, source, format="text", strip_ansi=False)
        assert kept["text"] == read(herdr_client, pane, source, format="text")["text"]
        assert "\x1b" not in kept["text"]


def test_read_rejects_an_unknown_source_as_invalid_request(raw: Raw, pane: str) -> None:
    reply = raw("pane.read", pane_id=pane, source="recent-unwrapped")
    assert "unknown variant `recent-unwrapped`" in invalid_request(reply)


# -- CLI: pane read ----------------------------------------------------------------------------


def test_cli_read_prints_the_raw_text_without_adding_a_newline(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    run(herdr_client, pane, "echo P$((1+1))")
    result = herdr_cli("pane", "read", pane, "--source", "visible")
    assert (result.code, result.stderr) == (0, "")
    assert result.stdout == read(herdr_client, pane, "visible")["text"]
    assert "\nP2\n" in result.stdout


def test_cli_read_source_recent_unwrapped_and_lines(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    run(herdr_client, pane, "printf 'U%.0s' $(seq 250); echo")
    result = herdr_cli("pane", "read", pane, "--source", "recent-unwrapped", "--lines", "5")
    assert result.code == 0
    assert result.stdout == read(herdr_client, pane, "recent_unwrapped", lines=5)["text"]
    assert "U" * 250 in result.stdout.splitlines()


def test_cli_read_defaults_to_recent_and_accepts_equals_forms(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    run(herdr_client, pane, "seq 30")
    assert herdr_cli("pane", "read", pane).stdout == read(herdr_client, pane, "recent")["text"]
    equals = herdr_cli("pane", "read", pane, "--source=visible", "--lines=3")
    assert equals.stdout == read(herdr_client, pane, "visible", lines=3)["text"]


def test_cli_read_ansi_keeps_escapes(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    run(herdr_client, pane, "printf '\\033[31mRED%s\\033[0m\\n' 3")
    assert "\x1b[" in herdr_cli("pane", "read", pane, "--source", "visible", "--ansi").stdout
    assert "\x1b[" in herdr_cli("pane", "read", pane, "--source", "visible", "--raw").stdout
    assert "\x1b" not in herdr_cli("pane", "read", pane, "--source", "visible").stdout


def test_cli_read_unknown_pane_prints_the_error_json(herdr_cli: HerdrCli) -> None:
    assert cli_error(herdr_cli("pane", "read", "w9:p9")) == {
        "error": {"code": "pane_not_found", "message": "pane w9:p9 not found"},
        "id": "cli:pane:read",
    }


def test_cli_read_bogus_source_is_a_usage_error(herdr_cli: HerdrCli) -> None:
    result = herdr_cli("pane", "read", "w1:p1", "--source", "bogus")
    assert (result.code, result.stdout) == (2, "")
    assert "invalid read source: bogus" in result.stderr


# -- pane.wait_for_output ----------------------------------------------------------------------


def test_wait_substring_answers_output_matched(herdr_client: HerdrClient, pane: str) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="echo SUB$((7*6))\r")
    result = wait_output(herdr_client.call, pane, text="SUB42", timeout_ms=5000)
    assert set(result) == {"type", "pane_id", "revision", "matched_line", "read"}
    assert (result["type"], result["pane_id"], result["revision"]) == ("output_matched", pane, 0)
    assert result["matched_line"] == "SUB42"
    assert result["read"]["revision"] == 0
    assert "SUB42" in result["read"]["text"]


def test_wait_reads_recent_as_recent_unwrapped(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "echo RU$((1))")
    result = wait_output(herdr_client.call, pane, text="RU1", timeout_ms=1000)
    assert result["read"]["source"] == "recent_unwrapped"
    assert result["read"]["format"] == "text"


def test_wait_regex_matches_a_line(herdr_client: HerdrClient, pane: str) -> None:
    herdr_client.call("pane.send_text", pane_id=pane, text="echo id=$((40+2)) ok\r")
    assert wait_line(herdr_client, pane, r"^id=\d+ ok$") == "id=42 ok"


def test_wait_returns_the_first_matching_line_top_to_bottom(
    herdr_client: HerdrClient, pane: str
) -> None:
    run(herdr_client, pane, "printf 'row%s\\n' 1 2 3")
    assert wait_line(herdr_client, pane, r"^row\d$", timeout_ms=0) == "row1"


def test_wait_matches_existing_output_immediately(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "echo OLD$((1))")
    started = time.monotonic()
    assert wait_line(herdr_client, pane, "^OLD1$", timeout_ms=0) == "OLD1"
    assert time.monotonic() - started < 1 * SCALE


def test_wait_sees_output_that_arrives_later(herdr_client: HerdrClient, pane: str) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(wait_line, herdr_client, pane, "^LATE9$", 5000)
        herdr_client.call("pane.send_text", pane_id=pane, text="sleep 0.2; echo LATE$((3*3))\r")
        assert waiting.result(timeout=10) == "LATE9"


def test_wait_regex_never_spans_two_lines(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "printf 'A%s\\nB%s\\n' 1 2")
    assert failure(wait_line, herdr_client, pane, r"(?s)A1.*B2", timeout_ms=200)[0] == "timeout"
    failure(wait_line, herdr_client, pane, r"A1\nB2", timeout_ms=0)


def test_wait_times_out_with_herdrs_message(raw: Raw, pane: str) -> None:
    started = time.monotonic()
    reply = wait_output(raw, pane, text="never printed", timeout_ms=200)
    elapsed = time.monotonic() - started
    assert reply == {
        "id": "t",
        "error": {"code": "timeout", "message": "timed out waiting for output match"},
    }
    assert 0.2 <= elapsed < 3 * SCALE


def test_wait_lines_limits_the_window_searched(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "echo FAR$((1)); seq 10")
    assert wait_line(herdr_client, pane, "^FAR1$", timeout_ms=0) == "FAR1"
    assert failure(wait_line, herdr_client, pane, "^FAR1$", timeout_ms=0, lines=5)[0] == "timeout"


def test_wait_invalid_regex_is_checked_first_with_rusts_message(raw: Raw) -> None:
    reply = wait_output(raw, "w9:p9", regex="(unclosed", timeout_ms=None)
    assert reply == {
        "id": "t",
        "error": {
            "code": "invalid_regex",
            "message": "regex parse error:\n    (unclosed\n    ^\nerror: unclosed group",
        },
    }


@pytest.mark.parametrize(
    ("pattern", "marks", "message"),
    [
        ("a(?=b)", " ^^^", "look-around, including look-ahead and look-behind, is not supported"),
        ("(?<!x)y", "^^^^", "look-around, including look-ahead and look-behind, is not supported"),
        ("(a)\\1", "   ^^", "backreferences are not supported"),
        ("x\\q", " ^^", "unrecognized escape sequence"),
        ("a)", " ^", "unopened group"),
    ],
)
def test_wait_rejects_what_rusts_regex_rejects(
    raw: Raw, pane: str, pattern: str, marks: str, message: str
) -> None:
    reply = wait_output(raw, pane, regex=pattern, timeout_ms=0)
    assert reply["error"] == {
        "code": "invalid_regex",
        "message": f"regex parse error:\n    {pattern}\n    {marks}\nerror: {message}",
    }


def test_wait_accepts_rust_only_escapes(herdr_client: HerdrClient, pane: str) -> None:
    run(herdr_client, pane, "echo 'tab:' Z$((1))")
    assert wait_line(herdr_client, pane, r"^\x{74}ab:\x20Z1\z", timeout_ms=0) == "tab: Z1"


def test_wait_answers_the_canonical_pane_id_for_a_legacy_id(
    herdr_client: HerdrClient, pane: str
) -> None:
    run(herdr_client, pane, "echo LEG$((1))")
    result = wait_output(herdr_client.call, "w1-1", text="LEG1", source="visible", timeout_ms=0)
    assert result["pane_id"] == result["read"]["pane_id"] == "w1:p1"
    assert result["read"]["source"] == "visible"


@pytest.mark.herdr_sim_only
def test_wait_pane_closing_mid_wait_is_pane_not_found(
    sim: Simulator, herdr_client: HerdrClient, raw: Raw, pane: str
) -> None:
    reply = reply_after(
        sim,
        lambda: wait_output(raw, pane, text="never printed", timeout_ms=10_000),
        lambda: herdr_client.call("pane.close", pane_id=pane),
    )
    assert reply == {
        "id": "t",
        "error": {"code": "pane_not_found", "message": f"pane {pane} not found"},
    }


# -- CLI: pane wait-output ---------------------------------------------------------------------


def test_cli_wait_output_match_prints_the_response(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    run(herdr_client, pane, "echo CW$((2+2))")
    result = herdr_cli("pane", "wait-output", pane, "--match", "CW4", "--timeout", "2000")
    matched = cli_json(result, "cli:pane:wait-output")
    assert result.stderr == ""
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1
    assert matched["matched_line"] == "CW4"
    assert matched["type"] == "output_matched"
    assert list(matched) == sorted(matched)  # keys sorted like Herdr


def test_cli_wait_output_regex_and_source(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    run(herdr_client, pane, "echo CR$((9+1))")
    result = herdr_cli(
        "pane", "wait-output", pane, "--regex", r"^CR\d+$", "--source", "visible",
        "--timeout=2000",
    )  # fmt: skip
    matched = cli_json(result, "cli:pane:wait-output")
    assert matched["matched_line"] == "CR10"
    assert matched["read"]["source"] == "visible"


def test_cli_wait_output_timeout_is_the_error_json_exit_1(
    herdr_client: HerdrClient, pane: str, herdr_cli: HerdrCli
) -> None:
    result = herdr_cli("pane", "wait-output", pane, "--match", "never printed", "--timeout", "200")
    assert cli_error(result) == {
        "error": {"code": "timeout", "message": "timed out waiting for output match"},
        "id": "cli:pane:wait-output",
    }


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["w9:p9", "--match", "x", "--timeout", "100"], "pane_not_found"),
        (["w1:p1", "--regex", "(x", "--timeout", "100"], "invalid_regex"),
    ],
)
def test_cli_wait_output_server_errors_exit_1(
    pane: str, herdr_cli: HerdrCli, args: list[str], code: str
) -> None:
    error = cli_error(herdr_cli("pane", "wait-output", *args))
    assert error["id"] == "cli:pane:wait-output"
    assert error["error"]["code"] == code


def test_cli_wait_output_match_and_regex_are_exclusive(herdr_cli: HerdrCli) -> None:
    result = herdr_cli("pane", "wait-output", "w1:p1", "--match", "a", "--regex", "b")
    assert result.code == 2
    assert "--match and --regex are mutually exclusive" in result.stderr
