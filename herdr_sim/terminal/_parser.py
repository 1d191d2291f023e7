"""The ECMA-48 parser: pty bytes to calls on the screen, where pyte's own parser falls short.

Parameters, intermediates and final bytes, private markers, colon sub-parameters, and
string sequences (DCS, OSC, APC, PM, SOS) consumed until ST instead of drawn as text;
replies to the queries readline and TUIs wait for (DSR/CPR, DA1-3, DECRQM, window size).
Limits (parameter length, OSC length, title stack) keep hostile output bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator

import pyte
from pyte import charsets

from ._screen import _Screen

# libghostty's default device attributes: VT220 with ANSI colour; device type VT220.
_DA1_REPLY = "\x1b[?62;22c"
_DA2_REPLY = "\x1b[>1;0;0c"
_DA3_REPLY = "\x1bP!|00000000\x1b\\"

_MAX_PARAM_VALUE = 65535
_MAX_PARAM_CHARS = 256
_MAX_OSC_CHARS = 4096
_MAX_TITLE_STACK = 16

_C1_STRINGS = frozenset("\x90\x98\x9e\x9f")  # DCS, SOS, PM, APC
# A complete CSI sequence: parameters, intermediates, final byte.
_CSI_SEQUENCE = re.compile(f"\x1b\\[([0-?]{{0,{_MAX_PARAM_CHARS}}})([ -/]*)([@-~])")
_CANCEL = frozenset("\x18\x1a")
_Parser = Generator[bool | None, str, None]
_SubParser = Generator[bool | None, str, str | None]


class _Stream(pyte.ByteStream):
    """A ByteStream whose parser follows ECMA-48 instead of pyte's simplified one.

    The generator protocol is pyte's: yielding ``True`` means "ground state, plain text
    may be drawn directly"; yielding ``None`` asks for the next character. Every C0/C1
    control is routed through the parser, so :meth:`_Screen.draw` only sees text.
    """

    _text_pattern = re.compile("[^\x00-\x1f\x7f-\x9f]+")

    def __init__(self, screen: _Screen) -> None:
        self.screen = screen
        super().__init__(screen)

    def feed(self, data: bytes) -> None:  # type: ignore[override]  # as pyte's ByteStream
        # Incremental decoding keeps UTF-8 characters split across chunks intact and
        # turns invalid bytes into U+FFFD instead of raising.
        self._feed_text(self.utf8_decoder.decode(data))

    def _feed_text(self, data: str) -> None:
        """pyte's feed loop plus shortcuts taken only in the ground state.

        Text runs, single controls and CSI sequences complete within the chunk are
        handled without stepping the parser generator one character at a time, which
        is what makes coloured output cheap. Anything else goes through the generator.
        """
        draw = self.screen.draw
        match_text = self._text_pattern.match
        match_csi = _CSI_SEQUENCE.match
        send = self._send_to_parser
        ground = self._taking_plain_text
        offset, length = 0, len(data)
        while offset < length:
            if ground:
                match = match_text(data, offset)
                if match is not None:
                    draw(match[0])
                    offset = match.end()
                    continue
                char = data[offset]
                if char == "\x1b":
                    match = match_csi(data, offset)
                    if match is not None:
                        self._csi_dispatch(match[1], match[2], match[3])
                        offset = match.end()
                        continue
                elif char < " " and char not in _CANCEL:
                    self._execute(char)
                    offset += 1
                    continue
            ground = send(data[offset])
            offset += 1
        self._taking_plain_text = ground

    def _parser_fsm(self) -> _Parser:
        pending: str | None = None
        while True:
            if pending is None:
                char = yield True
            else:
                char, pending = pending, None
            if char == "\x1b":
                pending = yield from self._escape()
            elif char == "\x9b":
                pending = yield from self._csi()
            elif char == "\x9d":
                pending = yield from self._osc()
            elif char in _C1_STRINGS:
                pending = yield from self._skip_string()
            else:
                self._execute(char)

    def _execute(self, char: str) -> None:
        screen = self.screen
        if char in "\n\x0b\x0c":
            screen.linefeed()
        elif char == "\r":
            screen.carriage_return()
        elif char == "\x08":
            screen.backspace()
        elif char == "\t":
            screen.tab()
        elif char == "\x07":
            screen.bells += 1
        elif char == "\x0e":
            screen.shift_out()
        elif char == "\x0f":
            screen.shift_in()
        elif char == "\x85":
            screen.carriage_return()
            screen.index()
        elif char == "\x84":
            screen.index()
        elif char == "\x8d":
            screen.reverse_index()
        elif char == "\x88":
            screen.set_tab_stop()
        elif char >= " " and not "\x7f" <= char <= "\x9f":
            screen.draw(char)

    def _escape(self) -> _SubParser:
        char = yield None
        while char < " " and char not in _CANCEL and char != "\x1b":
            self._execute(char)
            char = yield None
        if char == "[":
            return (yield from self._csi())
        if char == "]":
            return (yield from self._osc())
        if char in "PX^_":
            return (yield from self._skip_string())
        if char == "\x1b":
            return char
        if char in _CANCEL:
            return None
        intermediates = ""
        while " " <= char <= "/":
            intermediates += char
            char = yield None
            if char == "\x1b":
                return char
            if char in _CANCEL or len(intermediates) > 8:
                return None
        if "0" <= char <= "~":
            self._esc_dispatch(intermediates, char)
        return None

    def _esc_dispatch(self, intermediates: str, final: str) -> None:
        screen = self.screen
        if intermediates in ("(", ")"):
            if final in charsets.MAPS:
                screen.define_charset(final, intermediates)
        elif intermediates == "#":
            if final == "8":
                screen.alignment_display()
        elif intermediates:
            return  # ESC % (charset switching) would break UTF-8 decoding; ignore.
        elif final == "7":
            screen.save_cursor()
        elif final == "8":
            screen.restore_cursor()
        elif final == "c":
            screen.reset()
        elif final == "D":
            screen.index()
        elif final == "E":
            screen.carriage_return()
            screen.index()
        elif final == "M":
            screen.reverse_index()
        elif final == "H":
            screen.set_tab_stop()

    def _csi(self) -> _SubParser:
        params: list[str] = []
        intermediates = ""
        valid = True
        while True:
            char = yield None
            if "0" <= char <= "?":
                if intermediates or len(params) >= _MAX_PARAM_CHARS:
                    valid = False
                else:
                    params.append(char)
            elif " " <= char <= "/":
                intermediates += char
            elif "@" <= char <= "~":
                if valid:
                    self._csi_dispatch("".join(params), intermediates, char)
                return None
            elif char == "\x1b" or char in "\x9b\x9d" or char in _C1_STRINGS:
                return char
            elif char in _CANCEL:
                return None
            elif char < " ":
                self._execute(char)
            elif char != "\x7f":
                return None

    def _csi_dispatch(self, params: str, intermediates: str, final: str) -> None:
        marker = ""
        if params and params[0] in "<=>?":
            marker, params = params[0], params[1:]
        if any(c in "<=>?" for c in params):
            return
        groups: list[list[int | None]] = (
            [
                [min(int(p), _MAX_PARAM_VALUE) if p else None for p in group.split(":")]
                for group in params.split(";")
            ]
            if params
            else []
        )

        def raw(i: int) -> int | None:
            return groups[i][0] if i < len(groups) else None

        def count() -> int:
            return raw(0) or 1

        screen = self.screen
        if intermediates:
            if intermediates == "$" and final == "p" and marker in ("", "?"):
                for mode in (raw(0),):
                    if mode is not None:
                        screen.send_reply(screen.mode_report(mode, private=marker == "?"))
            elif intermediates == "!" and final == "p" and not marker:
                screen.soft_reset()
            return
        if marker == "?":
            if final in "hl":
                for group in groups:
                    if group[0] is not None:
                        screen.set_dec_mode(group[0], final == "h")
            elif final == "J":
                screen.erase_in_display(raw(0) or 0)
            elif final == "K":
                screen.erase_in_line(raw(0) or 0)
            # "CSI ? u" (kitty keyboard query) is deliberately unanswered: the simulator
            # only encodes keys the legacy way, so programs must not switch protocols.
            return
        if marker == ">":
            if final == "c" and not raw(0):
                screen.send_reply(_DA2_REPLY)
            return
        if marker == "=":
            if final == "c" and not raw(0):
                screen.send_reply(_DA3_REPLY)
            return
        if marker:
            return
        self._csi_plain(final, groups, raw, count)

    def _csi_plain(
        self,
        final: str,
        groups: list[list[int | None]],
        raw: Callable[[int], int | None],
        count: Callable[[], int],
    ) -> None:
        """Dispatch a CSI sequence without private marker or intermediates."""
        screen = self.screen
        match final:
            case "@":
                screen.insert_characters(count())
            case "A":
                screen.cursor_up(count())
            case "B" | "e":
                screen.cursor_down(count())
            case "C" | "a":
                screen.cursor_forward(count())
            case "D":
                screen.cursor_back(count())
            case "E":
                screen.cursor_down1(count())
            case "F":
                screen.cursor_up1(count())
            case "G" | "`":
                screen.cursor_to_column(count())
            case "H" | "f":
                screen.cursor_position(raw(0), raw(1))
            case "I":
                for _ in range(min(count(), screen.columns)):
                    screen.tab()
            case "J":
                screen.erase_in_display(raw(0) or 0)
            case "K":
                screen.erase_in_line(raw(0) or 0)
            case "L":
                screen.insert_lines(count())
            case "M":
                screen.delete_lines(count())
            case "P":
                screen.delete_characters(count())
            case "S":
                screen.scroll_up(count())
            case "T":
                if len(groups) <= 1:  # five parameters: xterm's mouse highlight reply
                    screen.scroll_down(count())
            case "X":
                screen.erase_characters(count())
            case "Z":
                screen.back_tab(count())
            case "b":
                screen.repeat_last(count())
            case "c":
                if not raw(0):
                    screen.send_reply(_DA1_REPLY)
            case "d":
                screen.cursor_to_line(count())
            case "g":
                screen.clear_tab_stop(raw(0) or 0)
            case "h" | "l":
                for group in groups:
                    if group[0] is not None:
                        screen.set_ansi_mode(group[0], final == "h")
            case "m":
                screen.apply_sgr(groups)
            case "n":
                if raw(0) == 5:
                    screen.send_reply("\x1b[0n")
                elif raw(0) == 6:
                    screen.send_reply(screen.cursor_report())
            case "r":
                screen.set_margins(raw(0), raw(1))
            case "s":
                screen.save_cursor()
            case "t":
                self._window_op(raw)
            case "u":
                screen.restore_cursor()

    def _window_op(self, raw: Callable[[int], int | None]) -> None:
        """XTWINOPS: report the size in characters; push/pop the title (vim uses it)."""
        screen = self.screen
        op = raw(0)
        if op == 18:
            screen.send_reply(f"\x1b[8;{screen.lines};{screen.columns}t")
        elif op == 22 and raw(1) in (None, 0, 2):
            screen.title_stack.append(screen.osc_title)
            del screen.title_stack[:-_MAX_TITLE_STACK]
        elif op == 23 and raw(1) in (None, 0, 2) and screen.title_stack:
            screen.osc_title = screen.title_stack.pop()
            screen.touched = True

    def _osc(self) -> _SubParser:
        chars: list[str] = []
        while True:
            char = yield None
            if char == "\x07":
                self._osc_dispatch("".join(chars), "\x07")
                return None
            if char == "\x9c":
                self._osc_dispatch("".join(chars), "\x1b\\")
                return None
            if char == "\x1b":
                # ESC ends the string; the following "\" (ST) is then a no-op escape.
                self._osc_dispatch("".join(chars), "\x1b\\")
                return char
            if char in _CANCEL:
                return None
            if char >= " " and len(chars) < _MAX_OSC_CHARS:
                chars.append(char)

    def _osc_dispatch(self, payload: str, terminator: str) -> None:
        code, separator, rest = payload.partition(";")
        if not separator:
            return
        if code in ("0", "2"):
            self.screen.osc_title = rest
            self.screen.touched = True
        # OSC 10/11 colour queries stay unanswered: headless Herdr only answers them from
        # an attached client's theme. Everything else (OSC 7, 8, 52, 133...) is ignored.

    def _skip_string(self) -> _SubParser:
        """DCS/SOS/PM/APC payloads are consumed until ST and ignored."""
        while True:
            char = yield None
            if char == "\x1b":
                return char
            if char == "\x9c" or char in _CANCEL:
                return None
