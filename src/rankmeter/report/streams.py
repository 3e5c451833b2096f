"""The standard streams a command writes to: standard output guarded so that a failed write
is one error line (:class:`GuardedOutput`, raising :class:`rankmeter.errors.OutputError`),
stand-ins for streams the process was started without, descriptors 0-2 plugged, and
:func:`standard_streams`, which sets all of that up around a command and restores it after;
:func:`note` writes a line for the person on stderr.
No Typer here: the evaluate command's fast start writes through these too."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

from rankmeter._escape import visible
from rankmeter.errors import OutputError

__all__ = [
    "ClosedOutput",
    "DiscardedOutput",
    "GuardedOutput",
    "note",
    "plug_closed_descriptors",
    "silence_stdout",
    "standard_streams",
]


class ClosedOutput(io.TextIOBase):
    """Stands for a standard output the command was started without (``>&-``)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")


class DiscardedOutput(io.TextIOBase):
    """Stands for a standard error the command was started without (``2>&-``): diagnostics
    and the progress bar go nowhere (the exit status still tells), and never to stdout, where
    ``print(file=None)`` would send them."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)

    def isatty(self) -> bool:
        return False


def plug_closed_descriptors() -> None:
    """Open the null device on each of descriptors 0, 1 and 2 that the process started
    without: otherwise the next file opened (an input, the output's temporary file) would get
    that number, and whatever a library writes to "stderr" would land in it. Python's
    ``sys.stdin``/``sys.stdout``/``sys.stderr`` stay None: reading or writing them is still
    the error (or silence) the command chooses. Read-only, so a write there fails (EBADF)."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            with contextlib.suppress(OSError):
                plug = os.open(os.devnull, os.O_RDONLY)
                if plug != descriptor:  # a lower one was free too: plugged in its own turn
                    os.dup2(plug, descriptor)
                    os.close(plug)


class GuardedOutput:
    """Standard output whose write errors are :class:`OutputError` (one line), whoever writes:
    our emit, Rich, or Click printing the help. A closed reader (EPIPE) stays
    BrokenPipeError, which ends the command quietly. Everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self.stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def silence_stdout() -> None:
    """After a failed write, send what is still buffered for stdout to /dev/null, so that
    Python's final flush at exit adds no "Exception ignored" message to the one error line."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def standard_streams() -> Iterator[None]:
    """While a command runs: descriptors 0-2 plugged (:func:`plug_closed_descriptors`),
    ``sys.stdout`` guarded (:class:`GuardedOutput`; a :class:`ClosedOutput` where the process
    was started without one, ``>&-``) and ``sys.stderr`` a :class:`DiscardedOutput` where it
    was started without one (``2>&-``: no diagnostics, no progress bar; the exit status still
    tells). Both streams are restored after."""
    stdout, stderr = sys.stdout, sys.stderr
    plug_closed_descriptors()
    # Started with standard output closed (`>&-`), Python has None: say so when it is needed.
    sys.stdout = GuardedOutput(ClosedOutput() if stdout is None else stdout)  # type: ignore[assignment]
    if stderr is None:
        sys.stderr = DiscardedOutput()
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def note(line: str) -> None:
    """Write ``line`` for the person on stderr, as ``rankmeter: <line>``, its control
    characters made visible (a run name or a path in it must not drive the terminal)."""
    print(f"rankmeter: {visible(line)}", file=sys.stderr)
