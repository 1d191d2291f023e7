"""Starting a pane's program on a pty without forking the simulator: glibc's ``posix_spawn``.

A ``fork`` copies the page tables of the whole simulator, a process that hosts hundreds of
panes, and the thread that forks holds the GIL meanwhile: measured with 100 panes starting
at once (``bench/spawn_fanout.py``), the simulator's loop answered nothing for 2.6–3.8 s.
glibc's ``posix_spawn`` starts the child with ``clone(CLONE_VM | CLONE_VFORK)``: nothing is
copied, only the calling thread waits (without the GIL, in a ``ctypes`` call) until the
child has exec'd, and a failure of any step is returned as an errno, which is how a missing
program or cwd is reported as before (``FileNotFoundError`` naming it).

Python's :func:`os.posix_spawn` has no ``chdir`` action (3.13 neither), so glibc is called
through ``ctypes``. In the child, in glibc's order: ``setsid`` (a new session, the program
its leader), every signal to its default action, then the file actions: ``chdir`` to the
pane's cwd, ``open`` of the pty's slave by path onto fd 0 — a session leader without a
controlling terminal that opens a terminal without ``O_NOCTTY`` acquires it (Linux's
``tty_open``), so job control works as after ``TIOCSCTTY`` — ``dup2`` onto 1 and 2, every
other fd closed; then the empty signal mask and the ``execve``. The window size is set on
the master before, so the program's first ``TIOCGWINSZ`` sees it.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["spawn_on_pty"]

# glibc's <spawn.h> flags (Linux)
_SETSIGDEF = 0x04
_SETSIGMASK = 0x08
_SETSID = 0x80
#: opaque glibc structures, allocated larger than their size (80, 336 and 128 bytes on x86-64)
_OPAQUE = 1024

_libc = ctypes.CDLL(None, use_errno=True)
_CLOSEFROM = getattr(_libc, "posix_spawn_file_actions_addclosefrom_np", None)


def _cstrings(items: Sequence[bytes]) -> ctypes.Array[ctypes.c_char_p]:
    """A NULL-terminated ``char *[]``; a NUL inside an item is refused as ``execve`` does."""
    for item in items:
        if b"\0" in item:
            raise ValueError("embedded null byte")
    array = (ctypes.c_char_p * (len(items) + 1))()
    array[:-1] = list(items)
    array[-1] = None
    return array


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(result, f"{what}: {os.strerror(result)}")


def spawn_on_pty(
    program: str, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], slave: str
) -> int:
    """Start ``program`` (an absolute path) with ``argv`` in ``cwd`` and ``env`` as the
    leader of a new session whose controlling terminal is the pty slave at path ``slave``;
    its pid. Raises the ``OSError`` of the step that failed (``chdir``, ``open``, ``execve``)
    with ``errno``, before any child runs the program."""
    path = os.fsencode(program)
    args = _cstrings([os.fsencode(arg) for arg in argv])
    envp = _cstrings([os.fsencode(key) + b"=" + os.fsencode(value) for key, value in env.items()])
    if b"=" in b"".join(os.fsencode(key) for key in env):
        raise ValueError("illegal environment variable name")
    actions = ctypes.create_string_buffer(_OPAQUE)
    attr = ctypes.create_string_buffer(_OPAQUE)
    # sigset_t with every bit set, glibc's two internal signals included: glibc's
    # sigfillset leaves them out, and its child ignores them unless told otherwise, an
    # ignored disposition that would survive the exec (Herdr's children start with none)
    everything = ctypes.create_string_buffer(b"\xff" * _OPAQUE, _OPAQUE)
    nothing = ctypes.create_string_buffer(_OPAQUE)  # zeroed: the empty mask
    _check(_libc.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init")
    try:
        _check(_libc.posix_spawnattr_init(attr), "posix_spawnattr_init")
        try:
            _check(_libc.posix_spawnattr_setsigdefault(attr, everything), "setsigdefault")
            _check(_libc.posix_spawnattr_setsigmask(attr, nothing), "setsigmask")
            flags = ctypes.c_short(_SETSID | _SETSIGDEF | _SETSIGMASK)
            _check(_libc.posix_spawnattr_setflags(attr, flags), "setflags")
            add = _libc.posix_spawn_file_actions_addchdir_np(actions, os.fsencode(cwd))
            _check(add, "addchdir")
            add = _libc.posix_spawn_file_actions_addopen(
                actions, 0, os.fsencode(slave), ctypes.c_int(os.O_RDWR), ctypes.c_uint(0)
            )
            _check(add, "addopen")
            _check(_libc.posix_spawn_file_actions_adddup2(actions, 0, 1), "adddup2")
            _check(_libc.posix_spawn_file_actions_adddup2(actions, 0, 2), "adddup2")
            if _CLOSEFROM is not None:
                _check(_CLOSEFROM(actions, 3), "addclosefrom")
            pid = ctypes.c_int(0)
            result = _libc.posix_spawn(ctypes.byref(pid), path, actions, attr, args, envp)
        finally:
            _libc.posix_spawnattr_destroy(attr)
    finally:
        _libc.posix_spawn_file_actions_destroy(actions)
    if result != 0:
        # Which step failed is not reported; the cwd was checked just before, so a
        # vanished cwd is the likelier cause only when it is gone now.
        name = cwd if not Path(cwd).is_dir() else argv[0]
        raise OSError(result, os.strerror(result), name)
    return pid.value
