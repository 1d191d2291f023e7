"""Tests for the pane terminal emulator (``herdr_sim.terminal``).

Expected renderings follow Herdr's own terminal tests (``src/pane/terminal.rs``) where
they exist, e.g. a 5-column terminal fed ``ABCDEFGHIJ`` reads ``"ABCDE\\nFGHIJ\\n"`` as
``recent`` and ``"ABCDEFGHIJ"`` as ``recent_unwrapped``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herdr_sim.terminal import MAX_READ_LINES, Terminal

CAPTURED = Path(__file__).parent / "captured"


def make(cols: int = 80, rows: int = 24, data: str | bytes = b"", **kwargs: object) -> Terminal:
    terminal = Terminal(cols, rows, **kwargs)  # type: ignore[arg-type]
    feed(terminal, data)
    return terminal


def feed(terminal: Terminal, data: str | bytes) -> None:
    terminal.feed(data.encode() if isinstance(data, str) else data)


def text(terminal: Terminal, source: str = "visible", lines: int | None = None) -> str:
    return terminal.read(source, lines)[0]  # type: ignore[arg-type]


def numbered(count: int, start: int = 0) -> str:
    return "".join(f"line {i}\r\n" for i in range(start, start + count))


# -- Herdr's pinned read behaviour ---------------------------------------------------------


def test_recent_keeps_soft_wraps_and_recent_unwrapped_joins_them() -> None:
    terminal = make(5, 3, "ABCDEFGHIJ")
    assert terminal.read("recent", 3) == ("ABCDE\nFGHIJ\n", False)
    assert terminal.read("recent_unwrapped", 3) == ("ABCDEFGHIJ", False)


def test_recent_snapshots_report_omitted_rendered_rows() -> None:
    terminal = make(20, 3, "one\r\ntwo\r\nthree\r\nfour")
    for source in ("recent", "recent_unwrapped"):
        for fmt in ("text", "ansi"):
            assert terminal.read(source, 2, fmt)[1] is True
    assert terminal.read("recent", 100) == ("one\ntwo\nthree\nfour\n", False)
    assert terminal.read("recent", 2) == ("three\nfour\n", True)
    assert terminal.read("recent_unwrapped", 2) == ("three\nfour", True)
    assert terminal.history_len() == 1


def test_plain_reads_skip_wide_character_spacer_cells() -> None:
    terminal = make(40, 3, "日本語テスト ABC 123")
    assert text(terminal, "visible") == "日本語テスト ABC 123\n"
    assert text(terminal, "recent", 3) == "日本語テスト ABC 123\n"
    assert text(terminal, "recent_unwrapped", 3) == "日本語テスト ABC 123"
    assert text(terminal, "detection") == "日本語テスト ABC 123\n"


def test_recent_reads_screen_output_before_it_scrolls_into_history() -> None:
    # Herdr 0.9 fixed #3444: a small --lines on a mostly blank screen returned nothing.
    terminal = make(40, 24, "$ echo hello123\r\nhello123\r\n$ ")
    assert terminal.read("recent", 10) == ("$ echo hello123\nhello123\n$\n", False)
    assert terminal.read("recent", 2) == ("hello123\n$\n", True)
    assert terminal.read("recent_unwrapped", 2) == ("hello123\n$", True)


def test_recent_defaults_to_80_rows_and_clamps_to_1000() -> None:
    terminal = make(20, 10, numbered(1500))
    recent, truncated = terminal.read("recent")
    assert truncated
    assert recent.splitlines() == [f"line {i}" for i in range(1420, 1500)]
    recent, truncated = terminal.read("recent", 5000)
    assert truncated
    assert len(recent.splitlines()) == MAX_READ_LINES
    assert recent.splitlines()[-1] == "line 1499"


def test_recent_on_empty_terminal_is_empty() -> None:
    terminal = make(20, 5)
    for source in ("visible", "recent", "recent_unwrapped", "detection"):
        assert terminal.read(source) == ("", False)


def test_visible_trims_trailing_spaces_and_blank_rows() -> None:
    terminal = make(20, 6, "a   \r\n\r\n  b  \x1b[5;1H    ")
    assert text(terminal) == "a\n\n  b\n"


def test_visible_line_limit_keeps_last_lines_and_reports_truncation() -> None:
    terminal = make(20, 6, "one\r\ntwo\r\nthree")
    assert terminal.read("visible", 2) == ("two\nthree\n", True)
    assert terminal.read("visible", 3) == ("one\ntwo\nthree\n", False)
    assert terminal.read("visible", 50) == ("one\ntwo\nthree\n", False)
    assert terminal.read("visible", 0) == ("", True)
    assert terminal.read("visible") == ("one\ntwo\nthree\n", False)


def test_visible_shows_only_the_screen() -> None:
    terminal = make(20, 3, numbered(10))
    assert text(terminal) == "line 8\nline 9\n"
    assert terminal.history_len() == 8


def test_detection_is_the_bottom_screen_plain_even_for_ansi() -> None:
    terminal = make(20, 3, "\x1b[31m" + numbered(10) + "$ ")
    assert terminal.read("detection", fmt="ansi") == ("line 8\nline 9\n$\n", False)
    assert terminal.read("detection", 1) == ("$\n", True)
    assert terminal.read("detection", 0) == ("", True)


def test_negative_lines_and_unknown_source_are_rejected() -> None:
    terminal = make(10, 3, "x")
    with pytest.raises(ValueError, match="negative"):
        terminal.read("recent", -1)
    with pytest.raises(ValueError, match="source"):
        terminal.read("everything")  # type: ignore[arg-type]


# -- soft wraps ---------------------------------------------------------------------------


def test_wrapped_rows_that_reached_history_still_join() -> None:
    terminal = make(5, 2, "ABCDEFGHIJKLMNO\r\nxy")
    assert terminal.history_len() == 2
    assert text(terminal, "recent", 10) == "ABCDE\nFGHIJ\nKLMNO\nxy\n"
    assert text(terminal, "recent_unwrapped", 10) == "ABCDEFGHIJKLMNO\nxy"


def test_newline_at_exact_width_is_not_a_soft_wrap() -> None:
    terminal = make(5, 4, "12345\r\nabc")
    assert text(terminal, "recent_unwrapped") == "12345\nabc"


def test_recent_unwrapped_keeps_interior_blank_lines_and_leading_spaces() -> None:
    terminal = make(10, 6, "a\r\n\r\n\r\n   b   \r\n")
    assert text(terminal, "recent_unwrapped") == "a\n\n\n   b"


def test_spaces_before_a_soft_wrap_are_kept_when_joining() -> None:
    terminal = make(5, 3, "ab   cd")
    assert text(terminal, "recent") == "ab\ncd\n"
    assert text(terminal, "recent_unwrapped") == "ab   cd"


def test_erase_to_end_of_line_clears_the_wrap_flag() -> None:
    # libghostty resets a row's wrap state on EL 0, as readline does when redrawing.
    terminal = make(5, 3, "ABCDEFG\x1b[1;5H\x1b[K")
    assert text(terminal, "recent_unwrapped") == "ABCD\nFG"


def test_wide_character_that_does_not_fit_wraps_whole() -> None:
    terminal = make(5, 3, "abcd日x")
    assert text(terminal) == "abcd\n日x\n"
    assert text(terminal, "recent_unwrapped") == "abcd日x"


# -- scrollback ---------------------------------------------------------------------------


def test_scrollback_is_bounded() -> None:
    terminal = make(20, 5, numbered(200), scrollback=50)
    assert terminal.history_len() == 50
    recent = text(terminal, "recent", 1000).splitlines()
    assert recent[0] == "line 146"
    assert recent[-1] == "line 199"


def test_zero_scrollback_keeps_only_the_screen() -> None:
    terminal = make(20, 3, numbered(10), scrollback=0)
    assert terminal.history_len() == 0
    assert terminal.read("recent", 100) == ("line 8\nline 9\n", False)


def test_erase_display_keeps_history_but_erase_saved_lines_clears_it() -> None:
    terminal = make(20, 3, numbered(10))
    feed(terminal, "\x1b[H\x1b[2J")
    assert text(terminal) == ""
    assert terminal.history_len() == 8
    assert "line 7" in text(terminal, "recent")
    feed(terminal, "\x1b[3J")
    assert terminal.history_len() == 0
    assert text(terminal, "recent") == ""


def test_clear_command_sequence_empties_screen_and_history() -> None:
    terminal = make(20, 3, numbered(10) + "\x1b[H\x1b[2J\x1b[3J$ ")
    assert terminal.read("recent") == ("$\n", False)
    assert terminal.history_len() == 0


def test_scroll_region_at_top_feeds_history_like_libghostty() -> None:
    # A TUI with a fixed status line: region rows 1-3 of 4, output scrolls inside it.
    terminal = make(20, 4, "\x1b[4;1Hstatus\x1b[1;3r\x1b[1;1H" + "a\r\nb\r\nc\r\nd\r\ne")
    assert terminal.history_len() == 2
    assert text(terminal) == "c\nd\ne\nstatus\n"
    assert text(terminal, "recent", 10) == "a\nb\nc\nd\ne\nstatus\n"


def test_scroll_region_not_at_top_does_not_feed_history() -> None:
    terminal = make(20, 4, "title\x1b[2;4r\x1b[2;1H" + "a\r\nb\r\nc\r\nd\r\ne")
    assert terminal.history_len() == 0
    assert text(terminal) == "title\nc\nd\ne\n"


def test_scroll_up_and_down_sequences() -> None:
    terminal = make(10, 3, "a\r\nb\r\nc\x1b[S")
    assert text(terminal) == "b\nc\n"
    assert terminal.history_len() == 1
    feed(terminal, "\x1b[2T")
    assert text(terminal) == "\n\nb\n"


def test_insert_and_delete_lines_and_characters() -> None:
    terminal = make(10, 4, "1111\r\n2222\r\n3333\x1b[2;1H\x1b[L")
    assert text(terminal) == "1111\n\n2222\n3333\n"
    feed(terminal, "\x1b[M\x1b[1;2H\x1b[2P")
    assert text(terminal) == "11\n2222\n3333\n"
    feed(terminal, "\x1b[1;1H\x1b[3@X")
    assert text(terminal) == "X  11\n2222\n3333\n"


# -- alternate screen -----------------------------------------------------------------------


def test_alternate_screen_1049_is_separate_and_restores_main_and_cursor() -> None:
    terminal = make(20, 4, "main 1\r\nmain 2\r\n$ ")
    assert terminal.cursor == (2, 2)
    feed(terminal, "\x1b[?1049h")
    assert terminal.alternate_screen
    assert text(terminal) == ""
    feed(terminal, "\x1b[1;1Hfull screen\r\n" + numbered(10))
    assert terminal.history_len() == 0
    assert text(terminal, "recent", 100) == "line 7\nline 8\nline 9\n"
    feed(terminal, "\x1b[?1049l")
    assert not terminal.alternate_screen
    assert terminal.cursor == (2, 2)
    assert text(terminal) == "main 1\nmain 2\n$\n"


def test_alternate_screen_47_keeps_its_contents_and_1047_clears_on_exit() -> None:
    terminal = make(20, 3, "main")
    feed(terminal, "\x1b[?47h\x1b[3;1Halt text\x1b[?47l")
    assert text(terminal) == "main\n"
    feed(terminal, "\x1b[?47h")
    assert text(terminal) == "\n\nalt text\n"
    feed(terminal, "\x1b[?47l\x1b[?1047h\x1b[1;1Hxyz\x1b[?1047l\x1b[?47h")
    assert text(terminal) == ""
    feed(terminal, "\x1b[?47l")
    assert text(terminal) == "main\n"


def test_reset_returns_to_the_main_screen() -> None:
    terminal = make(20, 3, "main\x1b[?1049hvim\x1bc")
    assert not terminal.alternate_screen
    assert text(terminal) == ""


# -- replies ------------------------------------------------------------------------------


def test_device_status_and_attribute_replies() -> None:
    replies: list[bytes] = []
    terminal = make(80, 24, reply=replies.append)
    feed(terminal, "abc\r\n\x1b[6n")
    feed(terminal, "\x1b[5n\x1b[c\x1b[0c\x1b[>c\x1b[>0c\x1b[=c")
    assert replies == [
        b"\x1b[2;1R",
        b"\x1b[0n",
        b"\x1b[?62;22c",
        b"\x1b[?62;22c",
        b"\x1b[>1;0;0c",
        b"\x1b[>1;0;0c",
        b"\x1bP!|00000000\x1b\\",
    ]


def test_cursor_report_at_pending_wrap_is_the_last_column() -> None:
    replies: list[bytes] = []
    terminal = make(5, 3, reply=replies.append)
    feed(terminal, "12345\x1b[6n")
    assert replies == [b"\x1b[1;5R"]


def test_cursor_report_is_relative_to_the_region_in_origin_mode() -> None:
    replies: list[bytes] = []
    make(10, 10, "\x1b[3;8r\x1b[?6h\x1b[2;4H\x1b[6n", reply=replies.append)
    assert replies == [b"\x1b[2;4R"]


def test_query_split_across_feeds_is_answered_once() -> None:
    replies: list[bytes] = []
    terminal = make(80, 24, reply=replies.append)
    for byte in b"\x1b[6n":
        terminal.feed(bytes([byte]))
    assert replies == [b"\x1b[1;1R"]


def test_mode_and_size_reports() -> None:
    replies: list[bytes] = []
    terminal = make(30, 7, "\x1b[?2004h", reply=replies.append)
    feed(terminal, "\x1b[?2004$p\x1b[?1$p\x1b[?4242$p\x1b[4$p\x1b[18t")
    assert replies == [
        b"\x1b[?2004;1$y",
        b"\x1b[?1;2$y",
        b"\x1b[?4242;0$y",
        b"\x1b[4;2$y",
        b"\x1b[8;7;30t",
    ]


def test_kitty_keyboard_query_is_not_answered() -> None:
    # Unanswered, programs keep the legacy key encoding the simulator sends.
    replies: list[bytes] = []
    terminal = make(reply=replies.append)
    feed(terminal, "\x1b[?u\x1b[c")
    assert replies == [b"\x1b[?62;22c"]


def test_queries_without_reply_callback_and_failing_callback_do_not_break() -> None:
    terminal = make(20, 3, "\x1b[6n\x1b[cok")
    assert text(terminal) == "ok\n"

    def broken(_: bytes) -> None:
        raise OSError("pty closed")

    terminal = make(20, 3, "\x1b[6nstill ok", reply=broken)
    assert text(terminal) == "still ok\n"
    assert terminal.parse_errors == 0


# -- modes and titles -----------------------------------------------------------------------


def test_bracketed_paste_and_application_cursor_modes() -> None:
    terminal = make()
    assert not terminal.bracketed_paste
    assert not terminal.application_cursor
    feed(terminal, "\x1b[?2004h\x1b[?1h")
    assert terminal.bracketed_paste
    assert terminal.application_cursor
    feed(terminal, "\x1b[?2004;1l")
    assert not terminal.bracketed_paste
    assert not terminal.application_cursor


def test_titles_from_osc_0_and_2() -> None:
    terminal = make()
    assert terminal.title is None
    feed(terminal, "\x1b]0;first\x07")
    assert terminal.title == "first"
    feed(terminal, "\x1b]2;second title\x1b\\")
    assert terminal.title == "second title"
    feed(terminal, "\x1b]1;icon only\x07\x1b]22;pointer\x07\x1b]133;A\x07")
    assert terminal.title == "second title"
    feed(terminal, "\x1b]2;\x07")
    assert terminal.title == ""
    assert text(terminal) == ""


def test_title_stack_push_and_pop() -> None:
    terminal = make(data="\x1b]2;shell\x07\x1b[22;0t\x1b]2;vim\x07")
    assert terminal.title == "vim"
    feed(terminal, "\x1b[23;0t")
    assert terminal.title == "shell"


def test_bell_is_counted_and_not_drawn() -> None:
    terminal = make(20, 3, "a\x07b\x1b]0;t\x07")
    assert terminal.bells == 1
    assert text(terminal) == "ab\n"


# -- decoding and parsing ------------------------------------------------------------------


def test_utf8_split_across_every_byte_boundary() -> None:
    data = "héllo 日本 🙂 done".encode()
    for split in range(1, len(data)):
        terminal = make(40, 3)
        terminal.feed(data[:split])
        terminal.feed(data[split:])
        assert text(terminal) == "héllo 日本 🙂 done\n", split


def test_invalid_utf8_becomes_replacement_characters() -> None:
    terminal = make(20, 3, b"a\xffb\xc3(c\xe6\x97")
    feed(terminal, b"d")
    assert text(terminal) == "a\ufffdb\ufffd(c\ufffdd\n"
    assert terminal.parse_errors == 0


def test_wide_characters_render_once_and_overwrites_clear_halves() -> None:
    terminal = make(10, 3, "日本")
    assert text(terminal) == "日本\n"
    feed(terminal, "\x1b[1;2Hx")
    assert text(terminal) == " x本\n"
    feed(terminal, "\x1b[1;3Hy")
    assert text(terminal) == " xy\n"


def test_combining_characters_attach_to_the_previous_cell() -> None:
    terminal = make(10, 3, "e\u0301x \u2764\ufe0f")
    assert text(terminal) == "e\u0301x \u2764\ufe0f\n"


def test_modern_sequences_are_not_drawn_or_misread() -> None:
    terminal = make(
        30,
        3,
        "\x1b[>4;2m"  # modifyOtherKeys (pyte would read it as underline)
        "\x1b[>1u\x1b[<u\x1b[=1;1u"  # kitty keyboard push/pop/set
        "\x1bP+q5463\x1b\\"  # XTGETTCAP
        "\x1b_Gi=1,a=q;AAAA\x1b\\"  # kitty graphics
        "\x1b[2 q\x1b[?2026h\x1b[?2026l"  # cursor style, synchronized output
        "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"  # hyperlink
        "\x1b(0qq\x1b(B ok",  # DEC line drawing
    )
    assert text(terminal) == "link── ok\n"
    assert "\x1b[4m" not in terminal.read("visible", fmt="ansi")[0]


def test_controls_inside_csi_are_executed() -> None:
    terminal = make(10, 3, "ab\x1b[1\r;2Hx")
    assert text(terminal) == "ax\n"


def test_cancel_aborts_a_sequence() -> None:
    terminal = make(10, 3, "a\x1b[12\x18b\x1b]0;no\x18c")
    assert text(terminal) == "abc\n"
    assert terminal.title is None


def test_repeat_tabs_and_back_tab() -> None:
    terminal = make(30, 3, "a\x1b[3b\tb\x1b[2Ic\x1b[Zd")
    # REP repeats "a" three times; HT to 8; CHT x2 to 24; CBT back to 24 overwrites "c".
    assert text(terminal) == "aaaa    b" + " " * 15 + "d\n"


def test_autowrap_off_overwrites_the_last_column() -> None:
    terminal = make(5, 2, "\x1b[?7labcdefg")
    assert text(terminal) == "abcdg\n"


def test_insert_mode_shifts_text_right() -> None:
    terminal = make(10, 2, "world\x1b[1;1H\x1b[4hhello \x1b[4l")
    assert text(terminal) == "hello worl\n"


# -- ANSI output ------------------------------------------------------------------------------


def test_ansi_read_re_emits_styles_like_libghostty() -> None:
    terminal = make(20, 3, "\x1b[31;1mred\x1b[0m plain")
    assert terminal.read("visible", fmt="ansi") == (
        "\x1b[0m\x1b[1m\x1b[38;5;1mred\x1b[0m plain",
        False,
    )
    assert terminal.read("visible") == ("red plain\n", False)


def test_ansi_read_colours_and_attributes() -> None:
    terminal = make(
        40,
        3,
        "\x1b[38;5;208mA\x1b[48;2;1;2;3mB\x1b[0;2;3;4;7;9mC\x1b[0m\r\n"
        "\x1b[38:2::10:20:30mD\x1b[92mE\x1b[22;23;24;27;29;39;49mF",
    )
    ansi, _ = terminal.read("recent", fmt="ansi")
    assert ansi == (
        "\x1b[0m\x1b[38;5;208mA"
        "\x1b[0m\x1b[38;5;208m\x1b[48;2;1;2;3mB"
        "\x1b[0m\x1b[2m\x1b[3m\x1b[7m\x1b[9m\x1b[4mC"
        "\x1b[0m\r\n"
        "\x1b[0m\x1b[38;2;10;20;30mD"
        "\x1b[0m\x1b[38;5;10mE"
        "\x1b[0mF"
    )


def test_ansi_recent_unwrapped_joins_rows() -> None:
    terminal = make(4, 3, "\x1b[32mabcdef\x1b[0m\r\nxy")
    assert terminal.read("recent", fmt="ansi")[0] == (
        "\x1b[0m\x1b[38;5;2mabcd\x1b[0m\r\n\x1b[0m\x1b[38;5;2mef\x1b[0m\r\nxy"
    )
    assert terminal.read("recent_unwrapped", fmt="ansi")[0] == (
        "\x1b[0m\x1b[38;5;2mabcdef\x1b[0m\r\nxy"
    )


def test_styled_erase_keeps_background_in_ansi_only() -> None:
    terminal = make(6, 2, "\x1b[44m\x1b[2Kx\x1b[0m")
    assert text(terminal) == "x\n"
    assert terminal.read("visible", fmt="ansi")[0] == "\x1b[0m\x1b[48;5;4mx     \x1b[0m"


# -- resize --------------------------------------------------------------------------------


def test_resize_narrower_reflows_into_history_and_keeps_logical_lines() -> None:
    terminal = make(10, 3, "0123456789abcdefghij\r\n$ ")
    assert text(terminal) == "0123456789\nabcdefghij\n$\n"
    terminal.resize(5, 3)
    assert (terminal.cols, terminal.rows) == (5, 3)
    assert text(terminal) == "abcde\nfghij\n$\n"
    assert terminal.cursor == (2, 2)
    assert terminal.history_len() == 2
    assert text(terminal, "recent_unwrapped") == "0123456789abcdefghij\n$"


def test_resize_wider_joins_soft_wrapped_rows() -> None:
    terminal = make(10, 3, "0123456789abcdefghij\r\n$ ")
    terminal.resize(20, 3)
    assert text(terminal) == "0123456789abcdefghij\n$\n"
    assert terminal.cursor == (2, 1)
    feed(terminal, "ok")
    assert text(terminal) == "0123456789abcdefghij\n$ ok\n"


def test_resize_fewer_rows_keeps_the_cursor_row_visible() -> None:
    terminal = make(10, 6, "a\r\nb\r\nc\r\nd\r\n$ ")
    terminal.resize(10, 3)
    assert text(terminal) == "c\nd\n$\n"
    assert terminal.cursor == (2, 2)
    assert terminal.history_len() == 2
    terminal.resize(10, 8)
    assert text(terminal) == "c\nd\n$\n"
    assert terminal.cursor == (2, 2)


def test_resize_drops_blank_rows_below_the_cursor_first() -> None:
    terminal = make(10, 6, "$ ")
    terminal.resize(10, 2)
    assert text(terminal) == "$\n"
    assert terminal.history_len() == 0


def test_resize_on_alternate_screen_clips_and_reflows_main_behind_it() -> None:
    terminal = make(10, 3, "0123456789abc\r\n$ \x1b[?1049h\x1b[1;1Hfullscreen\x1b[3;1Hbottom")
    terminal.resize(5, 3)
    assert text(terminal) == "fulls\n\nbotto\n"
    feed(terminal, "\x1b[?1049l")
    assert text(terminal, "recent_unwrapped") == "0123456789abc\n$"
    assert terminal.cursor == (2, 2)


def test_resize_rejects_empty_sizes_and_ignores_no_ops() -> None:
    terminal = make(10, 3, "x")
    before = terminal.changes
    terminal.resize(10, 3)
    assert terminal.changes == before
    with pytest.raises(ValueError, match="1x1"):
        terminal.resize(0, 3)
    with pytest.raises(ValueError, match="1x1"):
        Terminal(3, 0)


# -- change counter ------------------------------------------------------------------------


def test_changes_counts_feeds_that_changed_something() -> None:
    terminal = make(20, 3)
    assert terminal.changes == 0
    feed(terminal, "hello")
    assert terminal.changes == 1
    feed(terminal, "\x1b[6n")
    assert terminal.changes == 1
    feed(terminal, "")
    assert terminal.changes == 1
    feed(terminal, "\x1b]2;title\x07")
    assert terminal.changes == 2
    terminal.resize(30, 3)
    assert terminal.changes == 3


# -- golden captures -------------------------------------------------------------------------


def _captures() -> list[Path]:
    return sorted(CAPTURED.glob("*.input"))


@pytest.mark.parametrize("path", _captures(), ids=lambda p: p.stem)
def test_golden_capture(path: Path) -> None:
    expected = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    data = path.read_bytes()
    # Feed in uneven chunks so split sequences and split UTF-8 are covered too.
    for chunk_size in (len(data) or 1, 7, 1):
        terminal = Terminal(expected["cols"], expected["rows"])
        for start in range(0, len(data), chunk_size):
            terminal.feed(data[start : start + chunk_size])
        for name, want in expected["reads"].items():
            source, _, fmt = name.partition(":")
            assert terminal.read(source, None, fmt or "text")[0] == want, (name, chunk_size)
        assert terminal.alternate_screen == expected["alternate_screen"]
        assert terminal.title == expected["title"]
        assert terminal.parse_errors == 0


# -- properties --------------------------------------------------------------------------------

_ESCAPE_HEAVY = st.lists(
    st.one_of(
        st.binary(max_size=8),
        st.sampled_from(
            [
                b"\x1b",
                b"\x1b[",
                b"\x1b]",
                b"\x1bP",
                b"\x1b\\",
                b"\x07",
                b"\r\n",
                b"\n",
                b";",
                b"?",
                b">",
                b"1049h",
                b"1049l",
                b"2J",
                b"3J",
                b"6n",
                b"31m",
                b"38;5;",
                b"H",
                b"r",
                b"\xe6\x97\xa5",
                b"\xe2\x9d\xa4\xef\xb8\x8f",
                b"x" * 30,
            ]
        ),
    ),
    max_size=40,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(data=_ESCAPE_HEAVY, cols=st.integers(1, 12), rows=st.integers(1, 6))
def test_random_output_never_raises(data: bytes, cols: int, rows: int) -> None:
    replies: list[bytes] = []
    terminal = Terminal(cols, rows, scrollback=20, reply=replies.append)
    terminal.feed(data)
    assert terminal.parse_errors == 0
    for source in ("visible", "recent", "recent_unwrapped", "detection"):
        for fmt in ("text", "ansi"):
            terminal.read(source, None, fmt)
    terminal.resize(max(1, cols // 2), rows + 1)
    terminal.feed(data)
    assert terminal.parse_errors == 0
    assert terminal.history_len() <= 20


@settings(max_examples=200, deadline=None)
@given(data=_ESCAPE_HEAVY, cuts=st.lists(st.integers(0, 400), max_size=6))
def test_chunking_does_not_change_the_result(data: bytes, cuts: list[int]) -> None:
    whole = Terminal(10, 4, scrollback=50)
    whole.feed(data)
    pieces = Terminal(10, 4, scrollback=50)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    for start, end in itertools.pairwise(bounds):
        pieces.feed(data[start:end])
    for source in ("visible", "recent", "recent_unwrapped"):
        assert pieces.read(source, 100, "ansi") == whole.read(source, 100, "ansi")
    assert pieces.title == whole.title
    assert pieces.cursor == whole.cursor


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab 日\t", max_size=25), max_size=60),
    limit=st.integers(0, 70),
)
def test_reads_never_exceed_the_line_bound(lines: list[str], limit: int) -> None:
    terminal = make(8, 5, "\r\n".join(lines))
    for source in ("visible", "recent", "detection"):
        result, truncated = terminal.read(source, limit)
        assert result.count("\n") <= limit
        if not truncated:
            assert result == terminal.read(source, 1000)[0]
    unwrapped, _ = terminal.read("recent_unwrapped", limit)
    assert unwrapped.count("\n") <= max(limit - 1, 0)


# -- performance ---------------------------------------------------------------------------------


def test_feed_and_read_of_ten_thousand_lines() -> None:
    # How fast this is, is bench/pane_read.py's job (timed asserts flake on loaded machines).
    data = "".join(f"line {i} of some build output\r\n" for i in range(10_000)).encode()
    terminal = Terminal(80, 24)
    terminal.feed(data)
    recent, truncated = terminal.read("recent", 1000)
    assert truncated
    lines = recent.splitlines()
    assert len(lines) == 1000
    assert lines[-1] == "line 9999 of some build output"
    assert lines[0] == "line 9000 of some build output"


def test_resize_reflows_a_wrapped_row_whose_continuation_was_erased() -> None:
    # Found by hypothesis: text that auto-wraps on a 2-column screen, then a clear, then a
    # resize used to trip an assertion in the reflow.
    term = Terminal(2, 1)
    term.feed(b"   \x1b[2J")
    term.resize(3, 2)
    text, _ = term.read("visible")
    assert text.strip() == ""
