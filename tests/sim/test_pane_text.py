"""Copy mode's text model (:class:`herdr_sim.terminal.PaneText`) against Herdr's own tests.

Herdr: ``src/app/input/copy_mode.rs`` (tests ``copy_mode_word_motions_use_visible_row_words``,
``copy_mode_word_motions_cross_rows_and_respect_separators``,
``copy_mode_big_word_motions_skip_punctuation_runs``,
``copy_mode_line_end_stops_at_last_character``,
``copy_mode_search_wraps_and_repeats_in_both_directions``,
``copy_mode_backward_search_uses_last_match_before_cursor``), ``src/pane/terminal.rs``
(``extract_selection_reads_screen_rows_not_current_viewport``, ``RetainedTextBuffer``) and
``src/app/actions.rs`` (``url_at_column_returns_safe_visible_url_only``).
"""

from __future__ import annotations

from herdr_sim.methods.pane_copy import current_match
from herdr_sim.terminal import Terminal, TextPoint, WordMotion, url_at_index


def screen(data: bytes, cols: int = 40, rows: int = 5) -> Terminal:
    terminal = Terminal(cols, rows)
    terminal.feed(data)
    return terminal


def walk(terminal: Terminal, start: TextPoint, motions: list[WordMotion]) -> list[TextPoint]:
    text = terminal.text()
    out, point = [], start
    for motion in motions:
        point = text.word_motion(point, motion) or point
        out.append(point)
    return out


def test_selection_reads_absolute_rows_not_the_current_viewport() -> None:
    """``extract_selection_reads_screen_rows_not_current_viewport``: 8 numbered lines in an
    8x3 pane; rows are absolute, so scrolling does not change what a selection holds."""
    terminal = Terminal(8, 3)
    terminal.feed("\r\n".join(f"{n:06d}" for n in range(8)).encode())
    terminal.set_scroll_offset(3)
    top = terminal.viewport_top_row()
    assert top == 2
    selection = (TextPoint(top + 0, 0), TextPoint(top + 2, 5))
    assert terminal.text().selection_text(*selection) == "000002\n000003\n000004"
    terminal.set_scroll_offset(0)
    assert terminal.text().selection_text(*selection) == "000002\n000003\n000004"


def test_selection_joins_soft_wrapped_rows_and_trims_line_ends() -> None:
    """libghostty's plain formatter with unwrap and trim (``read_text_screen``)."""
    terminal = screen(b"ABCDEFGHIJ\r\nKLMNO  \r\n", cols=5)
    text = terminal.text()
    assert text.selection_text(TextPoint(0, 0), TextPoint(2, 4)) == "ABCDEFGHIJ\nKLMNO"
    # either order, both cells included
    assert text.selection_text(TextPoint(0, 1), TextPoint(0, 0)) == "AB"


def test_word_motions_use_row_words() -> None:
    """``copy_mode_word_motions_use_visible_row_words``: w → 4, e → 6, b → 4."""
    terminal = screen(b"foo bar baz\n")
    steps = walk(terminal, TextPoint(0, 0), ["next_word_start", "next_word_end"])
    assert steps == [TextPoint(0, 4), TextPoint(0, 6)]
    assert walk(terminal, steps[-1], ["previous_word_start"]) == [TextPoint(0, 4)]


def test_word_motions_cross_rows_and_respect_separators() -> None:
    """``copy_mode_word_motions_cross_rows_and_respect_separators``."""
    terminal = screen(b"foo.bar_baz\r\nqux\r\n")
    steps = walk(
        terminal,
        TextPoint(0, 0),
        ["next_word_start", "next_word_start", "next_word_start", "previous_word_start"],
    )
    assert steps == [TextPoint(0, 3), TextPoint(0, 4), TextPoint(1, 0), TextPoint(0, 4)]


def test_big_word_motions_skip_punctuation_runs() -> None:
    """``copy_mode_big_word_motions_skip_punctuation_runs``."""
    terminal = screen(b"foo.bar baz qux\r\n")
    big = walk(
        terminal,
        TextPoint(0, 0),
        [
            "next_big_word_start",
            "next_big_word_start",
            "next_big_word_end",
            "previous_big_word_start",
            "previous_big_word_start",
            "previous_big_word_start",
            "next_word_start",
            "next_word_start",
        ],
    )
    assert [point.col for point in big] == [8, 12, 14, 12, 8, 0, 3, 4]


def test_line_end_and_first_non_blank() -> None:
    """``copy_mode_line_end_stops_at_last_character`` and ``^``."""
    text = screen(b"  hello  \r\n\r\n").text()
    assert text.line_end(TextPoint(0, 0)) == TextPoint(0, 6)
    assert text.first_non_blank(TextPoint(0, 8)) == TextPoint(0, 2)
    assert text.line_end(TextPoint(1, 3)) == TextPoint(1, 0)  # an empty row: column 0


def test_paragraph_motions_stop_on_blank_rows() -> None:
    """``copy_mode_paragraph``: step row by row, stop on a blank row or the edge."""
    text = screen(b"a\r\nb\r\n\r\nc\r\nd", rows=5).text()
    assert text.paragraph(TextPoint(0, 0), 1, 100) == TextPoint(2, 0)
    assert text.paragraph(TextPoint(4, 0), -1, 100) == TextPoint(2, 0)
    assert text.paragraph(TextPoint(3, 0), 1, 100) == TextPoint(4, 0)  # the bottom edge


def test_search_wraps_and_repeats_in_both_directions() -> None:
    """``copy_mode_search_wraps_and_repeats_in_both_directions`` and
    ``copy_mode_backward_search_uses_last_match_before_cursor``."""
    terminal = screen(b"alpha needle\r\nbeta needle\r\ngamma\r\n")
    matches = terminal.text().search("needle")
    assert [(m.start, m.end) for m in matches] == [
        (TextPoint(0, 6), TextPoint(0, 11)),
        (TextPoint(1, 5), TextPoint(1, 10)),
    ]
    cursor = TextPoint(3, 0)
    first = current_match(matches, True, cursor, None)
    assert first == 0  # nothing after the cursor: wraps to the first
    again = current_match(matches, True, matches[0].start, matches[0])
    assert again == 1
    assert current_match(matches, False, matches[1].start, matches[1]) == 0
    assert current_match(matches, False, cursor, None) == 1


def test_search_is_smart_case_literal_and_crosses_soft_wraps() -> None:
    text = screen(b"Needle needle ne.dle\r\nxxxxxneedle", cols=8, rows=6).text()
    assert len(text.search("needle")) == 3  # case-insensitive: no uppercase in the query
    assert len(text.search("Needle")) == 1  # an uppercase letter makes it case-sensitive
    assert len(text.search("ne.dle")) == 1  # literal, not a pattern
    wrapped = screen(b"xxxxxxneedle", cols=8).text().search("needle")
    assert [(m.start, m.end) for m in wrapped] == [(TextPoint(0, 6), TextPoint(1, 3))]


def test_url_under_a_cell_is_trimmed_and_web_only() -> None:
    """``url_at_column_returns_safe_visible_url_only`` (``src/app/actions.rs``)."""
    line = "see (https://example.com/a_(b)), ftp://x.y and http://h.test."
    assert url_at_index(line, line.index("example")) == "https://example.com/a_(b)"
    assert url_at_index(line, line.index("ftp")) is None
    assert url_at_index(line, line.index("h.test")) == "http://h.test"
    assert url_at_index(line, 0) is None


def test_url_lookup_joins_a_url_wrapped_over_viewport_rows() -> None:
    terminal = screen(b"go https://example.com/long/path now", cols=16, rows=4)
    text = terminal.text()
    assert text.url_at(TextPoint(1, 3), 0, 4) == "https://example.com/long/path"


def test_scrollback_text_keeps_logical_lines() -> None:
    """``edit_scrollback_key_preserves_logical_lines_in_editor_pane``: a 5-column pane fed
    ``ABCDEFGHIJ\\r\\nKLMNO`` opens as ``ABCDEFGHIJ\\nKLMNO``."""
    terminal = Terminal(5, 5)
    terminal.feed(b"ABCDEFGHIJ\r\nKLMNO")
    assert terminal.scrollback_text() == "ABCDEFGHIJ\nKLMNO"


def test_the_text_is_a_snapshot_later_output_does_not_change() -> None:
    """``pane.copy_search`` reads it in a thread while the pane keeps printing."""
    terminal = screen(b"first\r\n")
    text = terminal.text()
    terminal.feed(b"\x1b[1;1Hxxxxx")
    assert text.row_text(0) == "first"
    assert terminal.text().row_text(0) == "xxxxx"
