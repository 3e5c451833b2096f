"""Write output files so that nothing is half-written and nothing but a file is ever replaced.

What happens depends on what the target is (checked before anything is written):

- A regular file, or a name that does not exist yet: the text goes to a temporary file in the
  same directory, renamed over the target when complete (atomic: a reader sees the old or the
  new file, never half of one; a failure or a kill leaves the old file as it was). The new file
  keeps the replaced file's permission bits, and its owner and group where the writer may set
  them.
- A symbolic link is followed, link after link, like the shell's ``>`` does: the file it points
  to is replaced as above and the link stays a link. A dangling link creates the file it points
  to (again as ``>`` does); its directory must exist.
- ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and ``/proc/self/fd/N``: written through the
  descriptor the process already has open, so a shell's redirection (``>>``, a pipe, a
  terminal) behaves as it would for the shell itself.
- A FIFO or a character device (``/dev/null``, a terminal): opened for writing in place, without
  truncating it, and written there. Renaming a temporary file over it would replace the device
  node or the pipe with a regular file: the reader would get nothing, and as root ``-o
  /dev/null`` would break the system. Such a write cannot be atomic; nothing else is possible.
- Refused with a :class:`FormatError` naming the path: an empty name, a directory, a block
  device, a socket, and a target whose owner may not write it (mode 0444, or 0464), even for
  root, whom the operating system would let replace it: a read-only file is its owner's "do
  not overwrite".

:func:`check_target` applies these rules before any work is done (commands check every output
first); :func:`same_target` tells two names of one file apart from two files.

A hard link is another name of the same file: the atomic replace gives the written name a new
file, and the other names keep the old content.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from rankmeter.errors import FormatError

#: Paths that name one of the process's open file descriptors.
_DESCRIPTOR_PATH = re.compile(r"/dev/fd/(\d+)|/proc/(?:self|thread-self|\d+)/fd/(\d+)")
_STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
#: The kernel's limit on symbolic links followed in one path (Linux MAXSYMLINKS).
_MAX_LINKS = 40


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Yield a text handle (UTF-8, ``\\n`` line ends) whose contents replace ``path``.

    A regular file is replaced only when the block succeeds; other kinds of target are handled
    as the module docstring says. A failure to create, write or rename raises
    :class:`FormatError` naming the path; the temporary file is removed and an existing file at
    ``path`` is left untouched.
    """
    target = _named(path)
    descriptor = _descriptor(target)
    if descriptor is not None:
        with _in_place(target, lambda: _duplicate(descriptor)) as handle:
            yield handle
        return
    resolved = os.path.realpath(target)
    info = _existing(target, resolved)
    if info is not None:
        _check_writable(target, resolved, info)
        if stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode):
            # O_NOCTTY: writing to a terminal must not make it the controlling one.
            with _in_place(target, lambda: os.open(target, os.O_WRONLY | os.O_NOCTTY)) as handle:
                yield handle
            return
    with _replaced(target, resolved, info) as handle:
        yield handle


def check_target(path: str | os.PathLike[str]) -> None:
    """Raise the :class:`FormatError` that :func:`atomic_write` would raise for ``path``, now,
    before any work: a command checks its outputs before it reads its inputs, so that an hour
    of work is not lost to a read-only file or a missing directory. Nothing is created.

    A target that passes can still fail later (a full disk, a directory removed meanwhile);
    the write then fails as it always did, leaving an existing file untouched.
    """
    target = _named(path)
    descriptor = _descriptor(target)
    if descriptor is not None:
        try:
            os.fstat(descriptor)
        except OSError as exc:
            raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
        return
    resolved = os.path.realpath(target)
    info = _existing(target, resolved)
    if info is not None:
        _check_writable(target, resolved, info)
        return
    # A new file: its directory must exist and take a file (what mkstemp will need).
    directory = os.path.dirname(resolved)
    try:
        mode = os.stat(directory).st_mode
    except OSError as exc:
        raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
    problem = None
    if not stat.S_ISDIR(mode):
        problem = errno.ENOTDIR
    elif not os.access(directory, os.W_OK | os.X_OK):
        problem = errno.EACCES
    if problem is not None:
        raise FormatError(target, f"cannot write: {os.strerror(problem)}")


def same_target(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two output paths write the same file: one path after links and ``..`` are
    resolved, or one existing file under two names (a hard link), or one descriptor."""
    names = (os.fspath(first), os.fspath(second))
    descriptors = [_descriptor(name) for name in names]
    if descriptors[0] is not None or descriptors[1] is not None:
        return descriptors[0] == descriptors[1]
    if os.path.realpath(names[0]) == os.path.realpath(names[1]):
        return True
    try:
        return os.path.samefile(*names)
    except OSError:  # one of them does not exist yet: the paths differ, so the files do
        return False


def _named(path: str | os.PathLike[str]) -> str:
    target = os.fspath(path)
    if target == "":
        # Else it would resolve to the current directory: ": is a directory".
        raise FormatError("''", "empty file name; give a file to write to")
    return target


def _existing(target: str, resolved: str) -> os.stat_result | None:
    """The target's status, None for a new file (or what a dangling link points to)."""
    try:
        return os.stat(resolved)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a symlink loop, a path through a file, no permission ...
        raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None


def _descriptor(target: str) -> int | None:
    """The descriptor number if ``target`` (or a link on its way) names an open descriptor."""
    path = os.path.abspath(target)
    for _ in range(_MAX_LINKS):
        if path in _STANDARD_STREAMS:
            return _STANDARD_STREAMS[path]
        match = _DESCRIPTOR_PATH.fullmatch(path)
        if match:
            return int(match.group(1) or match.group(2))
        try:
            link = os.readlink(path)
        except OSError:  # not a link, or not there
            return None
        path = os.path.normpath(os.path.join(os.path.dirname(path), link))
    return None


def _duplicate(descriptor: int) -> int:
    # What Python has buffered for the stream must come out before what is written here.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None and stream.fileno() == descriptor:
                stream.flush()
    return os.dup(descriptor)


def _check_writable(target: str, resolved: str, info: os.stat_result) -> None:
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise FormatError(target, "is a directory; give a file name to write to")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        kind = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else ""
        raise FormatError(
            target,
            f"is {kind or 'not a regular file'}; rankmeter writes only to files, pipes (FIFOs) "
            "and character devices such as /dev/null",
        )
    # Root passes every access check, so the owner's write bit is read as the owner's intent
    # (0464: the owner may not write, even if the group may).
    if not mode & stat.S_IWUSR or not os.access(resolved, os.W_OK):
        bits = stat.S_IMODE(mode)
        raise FormatError(
            target,
            f"is read-only (mode {bits:04o}); rankmeter does not replace it: make it writable "
            "(chmod u+w) or write to another file",
        )


@contextlib.contextmanager
def _in_place(target: str, opener: Callable[[], int]) -> Iterator[TextIO]:
    """Write into an already existing pipe, device or descriptor (no temporary file)."""
    try:
        fd = opener()
        handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
    try:
        with handle:
            yield handle
    except OSError as exc:
        raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _replaced(target: str, resolved: str, info: os.stat_result | None) -> Iterator[TextIO]:
    """Write a temporary file beside ``resolved`` and rename it over ``resolved``."""
    directory = os.path.dirname(resolved)
    # An interrupt between the file's creation and the return of its name would leave the file
    # behind: Ctrl-C and SIGTERM are held (blocked) until the cleanup below is in place.
    held = _hold_signals()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankmeter-", suffix=".tmp", dir=directory)
    except OSError as exc:
        _release_signals(held)
        raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
    handle = None
    try:
        _release_signals(held)  # a held signal is raised here, where the cleanup catches it
        handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        with handle:
            yield handle
        _take_over(tmp, info)
        os.replace(tmp, resolved)
    except BaseException as exc:
        if handle is None:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise FormatError(target, f"cannot write: {exc.strerror or exc}") from None
        raise


_Held = tuple[dict[int, Any], list[int]]


def _hold_signals() -> _Held | None:
    """Hold SIGINT and SIGTERM: noted, not acted on, until :func:`_release_signals`. Only the
    main thread can set handlers (elsewhere nothing is held: None). Blocking the signals with
    a mask would not do: the kernel hands a process's signal to any thread that does not block
    it, such as a BLAS worker."""
    if threading.current_thread() is not threading.main_thread():
        return None
    arrived: list[int] = []
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is None:  # set outside Python: it could not be restored
            continue
        previous[signum] = signal.signal(signum, lambda number, frame: arrived.append(number))
    return previous, arrived


def _release_signals(held: _Held | None) -> None:
    """Restore the handlers; a signal that arrived meanwhile is raised again, now."""
    if held is None:
        return
    previous, arrived = held
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    for signum in dict.fromkeys(arrived):
        signal.raise_signal(signum)


def _take_over(tmp: str, replaced: os.stat_result | None) -> None:
    """Give the temporary file the mode (and owner) of the file it replaces, or a new file's."""
    if replaced is None:
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        return
    if (replaced.st_uid, replaced.st_gid) != (os.geteuid(), os.getegid()):
        # Only root may give a file away; anyone else keeps the file as theirs, as an editor does.
        with contextlib.suppress(OSError):
            os.chown(tmp, replaced.st_uid, replaced.st_gid)
    os.chmod(tmp, stat.S_IMODE(replaced.st_mode) & 0o777)
