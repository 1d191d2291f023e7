"""Declarative option parsing with the rules of Herdr's hand-written subcommand parsers.

Every Herdr subcommand walks ``argv`` in a loop: a known option takes the next argument
(or fails with ``missing value for --x``), anything else is ``unknown option: --x`` or, for
commands that take one, the positional argument (a second one is ``unexpected argument``).
A :class:`Spec` states that loop once per command::

    _CREATE = Spec(
        Value("--workspace", "workspace_id"),
        Value("--cwd"),
        *switch("--focus", "--no-focus"),
        Pairs("--env", convert=env_assignment),
        defaults={"focus": False},
    )
    params = _CREATE.request(args)  # {"workspace_id": ..., "cwd": ..., "focus": ..., ...}

The order of the items is the order of the request's fields: :meth:`Spec.params` emits
every destination in that order and leaves out what Herdr's serializer skips (``None``,
empty lists and maps). Converters run as soon as an option is read, so the first bad
argument on the command line is the one reported, as in Herdr. Usage errors raise
:class:`~herdr_sim.herdr_cli.errors.UsageError` (exit 2); converters may instead raise
the ``Error: Custom {...}`` kind Herdr lets escape with ``?`` (``fatal=True``).
"""

from __future__ import annotations

from .errors import UsageError
from .flags import expand_equals, fatal_other, invalid_value, is_finite, parse_f32, parse_unsigned
from .output import CliExit, write_err

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    Convert = Callable[[str], Any]

__all__ = [
    "CALLER",
    "CALLER_IF_ANY",
    "HELP_WORDS",
    "U32",
    "U32_FATAL",
    "U64",
    "U64_FATAL",
    "Append",
    "Flag",
    "Help",
    "InvalidValue",
    "Lead",
    "Pairs",
    "Positional",
    "Spec",
    "Tail",
    "Value",
    "choice",
    "finite_f32",
    "pick",
    "switch",
    "unsigned",
]

#: Words every group accepts as "show my command list" (exit 0).
HELP_WORDS = ("help", "--help", "-h")


class _Caller:
    """A value standing for the calling pane (``$HERDR_PANE_ID``), resolved while parsing."""

    __slots__ = ("required",)

    def __init__(self, required: bool) -> None:
        self.required = required


#: The calling pane; without ``HERDR_PANE_ID`` a usage error (``--current`` on most commands).
CALLER: Any = _Caller(required=True)
#: The calling pane, or ``None`` outside a pane (``pane current``).
CALLER_IF_ANY: Any = _Caller(required=False)


def _resolve(value: Any, caller: str | None) -> Any:
    if isinstance(value, _Caller):
        if caller is None and value.required:
            raise UsageError("--current requires HERDR_PANE_ID")
        return caller
    return value


# -- converters ------------------------------------------------------------------------------


class InvalidValue(Exception):
    """Raised by a converter: the parser reports ``invalid value for --flag: VALUE``."""

    def __init__(self, fatal: bool) -> None:
        super().__init__()
        self.fatal = fatal


def unsigned(bits: int, *, fatal: bool = False) -> Convert:
    """Rust's ``u32``/``u64`` parsing; ``fatal`` when Herdr propagates the error with ``?``."""

    def convert(value: str) -> int:
        number = parse_unsigned(value, bits)
        if number is None:
            raise InvalidValue(fatal)
        return number

    return convert


U32 = unsigned(32)
U64 = unsigned(64)
U32_FATAL = unsigned(32, fatal=True)
U64_FATAL = unsigned(64, fatal=True)


def choice(
    allowed: Iterable[str] | dict[str, Any], message: str, *, fatal: bool = False
) -> Convert:
    """One of ``allowed`` (a dict translates to the wire value), else ``message``.

    ``{value}`` in ``message`` is replaced by the rejected argument.
    """
    table = dict(allowed) if isinstance(allowed, dict) else {item: item for item in allowed}

    def convert(value: str) -> Any:
        if value not in table:
            text = message.replace("{value}", value)
            raise fatal_other(text) if fatal else UsageError(text)
        return table[value]

    return convert


def finite_f32(what: str) -> Convert:
    """A finite Rust ``f32`` (ratios, resize amounts), else ``invalid {what}: VALUE``."""

    def convert(value: str) -> float:
        number = parse_f32(value)
        if number is None or not is_finite(number):
            raise UsageError(f"invalid {what}: {value}")
        return number

    return convert


# -- items of a spec -------------------------------------------------------------------------


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


class _Option:
    """An option selected by name; ``once``/``if_set`` are Herdr's conflict checks."""

    takes_value = False

    def __init__(self, names: tuple[str, ...], dests: tuple[str, ...]) -> None:
        self.names = names
        self.dests = dests
        self.once: str | None = None
        self.if_set: str | None = None


class Value(_Option):
    """``--flag VALUE``: the converted value, the last occurrence wins.

    ``required``: ``True`` for ``missing required --flag``, or the message to give.
    ``missing``: the message when the value is absent (default ``missing value for --flag``).
    ``once``: a message raised when another option with the same ``once`` came before
    (checked after the value is read). ``if_set``: a message raised as soon as the flag
    is seen while its destination is already set (before the value is read).
    """

    takes_value = True

    def __init__(
        self,
        flag: str,
        dest: str | None = None,
        convert: Convert | None = None,
        *,
        required: bool | str = False,
        missing: str | None = None,
        once: str | None = None,
        if_set: str | None = None,
    ) -> None:
        super().__init__((flag,), (dest or _dest(flag),))
        self.convert = convert
        self.required: str | None = None
        if required:
            self.required = f"missing required {flag}" if required is True else required
        self.missing = missing
        self.once = once
        self.if_set = if_set

    def store(self, values: dict[str, Any], value: Any) -> None:
        values[self.dests[0]] = value


class Append(Value):
    """A repeatable ``--flag VALUE``: every converted value, in order (default ``[]``)."""

    def store(self, values: dict[str, Any], value: Any) -> None:
        values[self.dests[0]].append(value)


class Pairs(Value):
    """A repeatable ``--flag K=V`` whose converter returns ``(key, value)`` (default ``{}``).

    Several options may fill one map (``--token`` and ``--clear-token``).
    """

    def store(self, values: dict[str, Any], value: Any) -> None:
        key, item = value
        values[self.dests[0]][key] = item


class Flag(_Option):
    """A switch: ``Flag("--raw", format="ansi", strip_ansi=False)`` sets each keyword.

    Without keywords it sets its own destination to ``True``. Several names may share one
    switch (``Flag("--verbose", "-v", verbose=True)``); a value may be :data:`CALLER`.
    """

    def __init__(
        self, *names: str, once: str | None = None, if_set: str | None = None, **sets: Any
    ) -> None:
        sets = sets or {_dest(names[0]): True}
        super().__init__(names, tuple(sets))
        self.sets = sets
        self.once = once
        self.if_set = if_set


def switch(on: str, off: str, dest: str | None = None) -> tuple[Flag, Flag]:
    """A ``--focus``/``--no-focus`` pair: the last one given wins."""
    name = dest or _dest(on)
    on_sets: dict[str, Any] = {name: True}
    off_sets: dict[str, Any] = {name: False}
    return Flag(on, **on_sets), Flag(off, **off_sets)


class Help(_Option):
    """``help``/``--help``/``-h`` among the options: print ``lines`` to stderr, exit 0."""

    def __init__(self, *lines: str) -> None:
        super().__init__(HELP_WORDS, ())
        self.lines = lines


class Lead:
    """A positional argument at the front, taken before any option is parsed.

    Missing, it is ``missing`` (default: the spec's usage). ``optional`` leads are taken
    only when the first argument does not start with ``--`` (``pane zoom [<pane_id>]``).
    """

    def __init__(self, dest: str, *, missing: str | None = None, optional: bool = False) -> None:
        self.dests = (dest,)
        self.missing = missing
        self.optional = optional


class Positional:
    """A positional argument anywhere among the options; anything else with ``-`` is an
    unknown option. A second one is ``if_set`` (``{arg}`` is replaced by the argument)."""

    def __init__(
        self, dest: str, *, required: bool = False, if_set: str = "unexpected argument: {arg}"
    ) -> None:
        self.dests = (dest,)
        self.required = required
        self.if_set = if_set


class Tail:
    """Everything after the first literal ``--`` (``None`` without one; ``missing`` is the
    error for a ``--`` with nothing after it). Options stop at the ``--``."""

    def __init__(self, dest: str, *, missing: str | None = None) -> None:
        self.dests = (dest,)
        self.missing = missing


Item = _Option | Lead | Positional | Tail


# -- the parser ------------------------------------------------------------------------------


def pick(values: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """``keys`` in order, without the ones Herdr's serializer skips (None, empty list/map)."""
    params: dict[str, Any] = {}
    for key in keys:
        value = values[key]
        if value is None or (isinstance(value, (list, dict)) and not value):
            continue
        params[key] = value
    return params


class Spec:
    """One command's arguments: ``items`` in request-field order.

    ``usage`` is the error for a missing required positional argument. ``defaults`` maps
    destinations to their values when no option sets them (otherwise ``None``, or a fresh
    ``[]``/``{}`` for :class:`Append`/:class:`Pairs`). ``equals`` lists the options that
    Herdr also accepts as ``--flag=value`` (``True``: every option taking a value). With
    ``errors_are_usage``, every usage error is reported as ``usage`` alone, as some Herdr
    commands do (``pane focus``, ``workspace close``).
    """

    def __init__(
        self,
        *items: Item,
        usage: str = "",
        defaults: Mapping[str, Any] | None = None,
        equals: bool | Iterable[str] = False,
        errors_are_usage: bool = False,
    ) -> None:
        self.items = items
        self.usage = usage
        self.errors_are_usage = errors_are_usage
        self.dests: tuple[str, ...] = tuple(dict.fromkeys(d for item in items for d in item.dests))
        self.defaults = dict(defaults or {})
        self.leads = [item for item in items if isinstance(item, Lead)]
        self.positional = next((item for item in items if isinstance(item, Positional)), None)
        self.tail = next((item for item in items if isinstance(item, Tail)), None)
        self.options = {
            name: item for item in items if isinstance(item, _Option) for name in item.names
        }
        if equals is True:
            equals = [name for name, item in self.options.items() if item.takes_value]
        self.equals = tuple(equals or ())
        self.lists = {item.dests[0] for item in items if isinstance(item, Append)}
        self.maps = {item.dests[0] for item in items if isinstance(item, Pairs)}

    def _initial(self, caller: str | None) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for dest in self.dests:
            if dest in self.lists:
                values[dest] = []
            elif dest in self.maps:
                values[dest] = {}
            else:
                values[dest] = _resolve(self.defaults.get(dest), caller)
        return values

    def parse(self, args: list[str], caller: str | None = None) -> dict[str, Any]:
        """Parse ``args`` into every destination's value; ``caller`` is ``$HERDR_PANE_ID``."""
        if not self.errors_are_usage:
            return self._parse(args, caller)
        try:
            return self._parse(args, caller)
        except UsageError:
            raise UsageError(self.usage) from None

    def _parse(self, args: list[str], caller: str | None) -> dict[str, Any]:
        values = self._initial(caller)
        end = len(args)
        if self.tail is not None and "--" in args:
            end = args.index("--")
            tail = args[end + 1 :]
            if not tail and self.tail.missing is not None:
                raise UsageError(self.tail.missing)
            values[self.tail.dests[0]] = tail
        index = 0
        for lead in self.leads:
            if lead.optional:
                if index < len(args) and not args[index].startswith("--"):
                    values[lead.dests[0]] = args[index]
                    index += 1
                continue
            if index >= len(args):
                raise UsageError(lead.missing or self.usage)
            values[lead.dests[0]] = args[index]
            index += 1
        region = args[index:end]
        if self.equals:
            region = expand_equals(region, self.equals)
        self._walk(region, values, caller)
        for item in self.items:
            if isinstance(item, Positional) and item.required and values[item.dests[0]] is None:
                raise UsageError(self.usage)
            if isinstance(item, Value) and item.required and values[item.dests[0]] is None:
                raise UsageError(item.required)
        return values

    def _walk(self, args: list[str], values: dict[str, Any], caller: str | None) -> None:
        seen: set[str] = set()
        index = 0
        while index < len(args):
            arg = args[index]
            option = self.options.get(arg)
            if option is None:
                positional = self.positional
                if positional is None or arg.startswith("-"):
                    raise UsageError(f"unknown option: {arg}")
                if values[positional.dests[0]] is not None:
                    raise UsageError(positional.if_set.replace("{arg}", arg))
                values[positional.dests[0]] = arg
                index += 1
                continue
            if isinstance(option, Help):
                for line in option.lines:
                    write_err(line)
                raise CliExit(0)
            if option.if_set is not None and values[option.dests[0]] is not None:
                raise UsageError(option.if_set)
            if isinstance(option, Value) and index + 1 >= len(args):
                raise UsageError(option.missing or f"missing value for {arg}")
            if option.once is not None:
                if option.once in seen:
                    raise UsageError(option.once)
                seen.add(option.once)
            if isinstance(option, Value):
                raw = args[index + 1]
                try:
                    value = raw if option.convert is None else option.convert(raw)
                except InvalidValue as err:
                    message = invalid_value(arg, raw)
                    raise fatal_other(message) if err.fatal else UsageError(message) from None
                option.store(values, value)
                index += 2
            elif isinstance(option, Flag):
                for dest, value in option.sets.items():
                    values[dest] = _resolve(value, caller)
                index += 1

    def params(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The request params: every destination in order, minus the skipped ones."""
        return pick(values, *self.dests)

    def request(self, args: list[str], caller: str | None = None) -> dict[str, Any]:
        """:meth:`parse` then :meth:`params`."""
        return self.params(self.parse(args, caller))
