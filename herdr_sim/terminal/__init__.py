"""The terminal emulator behind every simulated pane.

Each pane's pty output is fed, as raw bytes, into one :class:`Terminal`. The server reads
panes through it (``pane.read``, ``pane.wait_for_output``), so it must render what Herdr's
own emulator (libghostty) would show. It is built on pyte 0.8.2 (a ``pyte.Screen``
subclass fed by a ``pyte.ByteStream`` subclass) and replaces the parts where pyte falls
short for real programs:

* **Parser.** pyte's state machine mis-parses modern sequences (``CSI > 4;2 m`` sets
  underline, ``CSI < u`` prints ``u``, DCS/APC payloads are drawn as text, OSC codes
  longer than one digit are misread). :class:`_Stream` parses ECMA-48 properly:
  parameter, intermediate and final bytes, private markers, colon sub-parameters, and
  string sequences that are consumed until ST.
* **Scrollback.** pyte's ``HistoryScreen`` is slow and drops wrap information. Rows that
  scroll off the top of the main screen go straight into a bounded deque. Like
  libghostty, a scroll region whose top is the first row also feeds scrollback (TUIs
  with a fixed status line at the bottom still build history).
* **Soft wraps.** Each row remembers whether the text auto-wrapped out of it, so
  ``recent_unwrapped`` can join rows into logical lines, including rows in history.
* **Alternate screen** (``?47``, ``?1047``, ``?1049``) with its own buffer, no history.
* **Replies** to DSR/CPR, DA1/DA2/DA3, DECRQM and window-size queries, which readline and
  TUIs wait for.
* **Resize** reflows the main screen and its history (no reflow on the alternate
  screen), as libghostty does, instead of pyte's truncation.

Reads follow Herdr's rendering (``src/pane/terminal.rs`` and libghostty's formatter):

* ``visible``: screen rows with trailing whitespace trimmed, trailing blank rows dropped,
  each line ending in ``\\n``; ``lines`` keeps the last N ``\\n``-separated lines.
* ``recent``: the last N rendered rows of history + screen, rendered like ``visible``.
  The N rows end at the last row with text, so output that has not scrolled into history
  is included even when ``lines`` is smaller than the screen (Herdr 0.9's fix for #3444;
  0.8.2 counted the blank rows under the prompt). ``truncated`` says older rows exist.
* ``recent_unwrapped``: the same rows with soft-wrapped rows joined, rendered like
  libghostty's plain formatter: no newline after the last line.
* ``detection``: ``recent`` with N = the screen height, always plain text.
* ``fmt="ansi"``: libghostty's VT formatter: every style change re-emitted as ``ESC[0m``
  followed by one SGR per attribute, palette colours as ``38;5;N``, rows joined by
  ``\\r\\n``, no trailing newline.

* The **viewport** (``Terminal.scroll_metrics``/``set_scroll_offset``, ``pane.scroll``):
  ``visible`` shows the rows the viewport is scrolled to; the other sources read the bottom.

The package is split along those seams: cells and rows (``_cells``), rendering rows as
Herdr's reads do (``_render``), the screen model (``_screen``), the parser (``_parser``)
and the :class:`Terminal` facade (``_terminal``). Only the names below are public.
"""

from __future__ import annotations

from ._cells import Cell
from ._terminal import (
    DEFAULT_RECENT_LINES,
    DEFAULT_SCROLLBACK,
    DETECTION_MIN_ROWS,
    MAX_READ_LINES,
    ReadFormat,
    ReadSource,
    ScrollMetrics,
    Terminal,
)

__all__ = [
    "DEFAULT_RECENT_LINES",
    "DEFAULT_SCROLLBACK",
    "DETECTION_MIN_ROWS",
    "MAX_READ_LINES",
    "Cell",
    "ReadFormat",
    "ReadSource",
    "ScrollMetrics",
    "Terminal",
]
