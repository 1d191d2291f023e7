"""The terminal's viewport: Herdr's scroll metrics and what each read source shows while
scrolled back.

Herdr: ``scroll_metrics``, ``set_scroll_offset_from_bottom`` and the read functions in
``src/pane/terminal.rs`` (libghostty's scrollbar: offset from bottom = total − offset − len,
the most = total − len) and its tests ``detection_text_stays_at_bottom_when_viewport_is_scrolled``,
``resize_shrinks_both_axes_with_cursor_at_old_bottom`` and
``resize_reflow_keeps_scrolled_viewport_and_bottom_detection_sane``.
"""

from __future__ import annotations

from herdr_sim.terminal import ScrollMetrics, Terminal


def numbered(count: int, cols: int = 80, rows: int = 3) -> Terminal:
    terminal = Terminal(cols, rows)
    terminal.feed("\r\n".join(f"{n:06d}" for n in range(count)).encode())
    return terminal


def test_a_fresh_terminal_is_at_the_bottom_with_no_history() -> None:
    assert Terminal(80, 24).scroll_metrics() == ScrollMetrics(0, 0, 24)
    assert Terminal(80, 24).scroll_metrics().view() == {
        "offset_from_bottom": 0,
        "max_offset_from_bottom": 0,
        "viewport_rows": 24,
    }


def test_history_is_the_most_the_viewport_can_scroll() -> None:
    assert numbered(10).scroll_metrics() == ScrollMetrics(0, 7, 3)


def test_detection_text_stays_at_bottom_when_viewport_is_scrolled() -> None:
    """Herdr's test of the same name: ``visible`` follows the viewport, the other reads
    stay at the bottom."""
    terminal = numbered(10)
    bottom = terminal.read("detection")
    recent = terminal.read("recent", 3)
    assert "000009" in bottom[0]
    metrics = terminal.set_scroll_offset(terminal.scroll_metrics().max_offset_from_bottom)
    assert metrics == ScrollMetrics(7, 7, 3)
    assert terminal.read("visible")[0] == "000000\n000001\n000002\n"
    assert "000000" in terminal.read("visible", fmt="ansi")[0]
    assert terminal.read("detection") == bottom
    assert terminal.read("recent", 3) == recent


def test_an_overshoot_is_clamped_to_the_top() -> None:
    terminal = numbered(10)
    assert terminal.set_scroll_offset(1000) == ScrollMetrics(7, 7, 3)
    assert terminal.set_scroll_offset(0) == ScrollMetrics(0, 7, 3)
    assert terminal.read("visible")[0] == "000007\n000008\n000009\n"


def test_a_scrolled_viewport_stays_on_its_rows_while_output_grows_the_history() -> None:
    terminal = numbered(10)
    terminal.set_scroll_offset(2)
    shown = terminal.read("visible")
    terminal.feed(b"\r\nnew1\r\nnew2")
    assert terminal.scroll_metrics() == ScrollMetrics(4, 9, 3)
    assert terminal.read("visible") == shown


def test_at_the_bottom_output_keeps_the_viewport_at_the_bottom() -> None:
    terminal = numbered(10)
    terminal.feed(b"\r\nnew1")
    assert terminal.scroll_metrics() == ScrollMetrics(0, 8, 3)


def test_erasing_the_history_brings_the_viewport_back_into_range() -> None:
    terminal = numbered(10)
    terminal.set_scroll_offset(5)
    terminal.feed(b"\x1b[3J")
    assert terminal.scroll_metrics() == ScrollMetrics(0, 0, 3)


def test_resize_shrinks_both_axes_with_cursor_at_old_bottom() -> None:
    """Herdr's test of the same name."""
    terminal = Terminal(8, 4)
    terminal.feed(b"alpha\r\nbeta\r\ngamma\r\ndelta")
    terminal.resize(7, 3)
    assert terminal.read("visible")[0] == "beta\ngamma\ndelta\n"
    assert terminal.scroll_metrics() == ScrollMetrics(0, 1, 3)


def test_resize_keeps_a_scrolled_viewport_clamped_to_the_new_history() -> None:
    """Herdr's ``resize_reflow_keeps_scrolled_viewport_and_bottom_detection_sane``: the
    offset after a resize is the one before, at most the new history."""
    terminal = numbered(40, cols=12, rows=4)
    terminal.set_scroll_offset(18)
    for cols, rows in ((10, 4), (7, 4), (18, 6), (9, 3), (12, 5)):
        before = terminal.scroll_metrics()
        terminal.resize(cols, rows)
        after = terminal.scroll_metrics()
        assert after.viewport_rows == rows
        assert after.offset_from_bottom == min(
            before.offset_from_bottom, after.max_offset_from_bottom
        )
        assert after.offset_from_bottom > 0
        assert terminal.read("visible")[0].strip()
        assert "000039" in terminal.read("detection")[0]


def test_the_alternate_screen_has_no_history_to_scroll() -> None:
    terminal = numbered(10)
    terminal.feed(b"\x1b[?1049h")
    assert terminal.scroll_metrics() == ScrollMetrics(0, 0, 3)
    assert terminal.set_scroll_offset(5) == ScrollMetrics(0, 0, 3)
    terminal.feed(b"\x1b[?1049l")
    assert terminal.scroll_metrics() == ScrollMetrics(0, 7, 3)
