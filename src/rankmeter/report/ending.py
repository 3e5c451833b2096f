"""How a command ends: whatever ends it, one line on stderr and an exit status.

:func:`ending` turns any exception into its :class:`Ending` (the line and the status: 2 for
usage, ``MetricError`` and ``PolicyError``; 1 for data and for an output that cannot be
written; 0 and no line for a reader that went away; 130/143 for SIGINT/SIGTERM; 70 for a bug);
:func:`tell` writes it. :func:`stop_on_signals` makes SIGINT and SIGTERM unwind the work as
:class:`Stopped`, so that temporary files are removed on the way. The command line
(:func:`rankmeter.cli.main`, the fast start of ``evaluate`` included) ends through these.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from rankmeter._escape import visible
from rankmeter.errors import MetricError, OutputError, PolicyError, RankmeterError
from rankmeter.report.streams import silence_stdout

__all__ = [
    "Ending",
    "Stopped",
    "ending",
    "one_line",
    "signal_behind",
    "stop_on_signals",
    "stopped",
    "tell",
]


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived: unwinds the command (temporary files are removed on the way).

    A BaseException of its own, not KeyboardInterrupt, so that no library code on the way
    mistakes it for something to handle.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    raise Stopped(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the work runs, SIGINT and SIGTERM raise :class:`Stopped`; restored after.

    Only the main thread may set handlers: elsewhere nothing changes (SIGINT stays
    KeyboardInterrupt). A signal set outside Python (no handler to restore) or ignored by the
    caller (a background job of a script, ``trap '' INT``) is left as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        s: signal.signal(s, _stop)
        for s in (signal.SIGINT, signal.SIGTERM)
        if signal.getsignal(s) not in (None, signal.SIG_IGN)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@dataclass(frozen=True)
class Ending:
    """How a command ends.

    Attributes
    ----------
    code : the exit status
    line : the one line for stderr (without its newline), or None for nothing to say
    output_failed : standard output failed (or its reader went away): what is still buffered
        for it is discarded, so that Python's flush at exit adds nothing to the line
    by_signal : a signal ended it (its line is written if it can be, never fails)
    bug : not bad input but a bug in rankmeter (``RANKMETER_DEBUG=1`` shows the traceback)
    """

    code: int
    line: str | None = None
    output_failed: bool = False
    by_signal: bool = False
    bug: bool = False


def one_line(text: str) -> str:
    """The message on one line, its control characters visible: a file name or an id in it
    must not drive the terminal (:mod:`rankmeter._escape`).

    >>> one_line("bad\\n  file \\x1b[2J")
    'bad file \\\\x1b[2J'
    """
    return visible(" ".join(text.split()))


def _error(message: str, code: int, *, output_failed: bool = False) -> Ending:
    return Ending(code, f"rankmeter: error: {one_line(message)}", output_failed=output_failed)


def stopped(signum: int) -> Ending:
    """The ending of a command stopped by a signal: ``rankmeter: interrupted`` (SIGINT) or
    ``rankmeter: terminated``, exit status 128 + the signal's number.

    >>> end = stopped(signal.SIGTERM)
    >>> end.code, end.line
    (143, 'rankmeter: terminated')
    """
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    return Ending(128 + signum, f"rankmeter: {word}", by_signal=True)


def ending(exc: BaseException) -> Ending:
    """The one line and the exit status for whatever ended a command.

    >>> ending(MetricError("unknown metric 'nDGC@10'")).line
    "rankmeter: error: unknown metric 'nDGC@10'"
    >>> ending(BrokenPipeError()).code
    0
    >>> ending(ZeroDivisionError("division by zero")).bug
    True

    Click's exceptions (Typer vendors Click in recent versions) are matched by class name: a
    usage error is the line with a pointer to the command's help, exit 2; the help shown for
    no arguments has no line after it; an abort is an interrupt.
    """
    if isinstance(exc, (MetricError, PolicyError)):
        return _error(str(exc), 2)
    if isinstance(exc, OutputError):
        return _error(str(exc), 1, output_failed=True)
    if isinstance(exc, RankmeterError):
        return _error(str(exc), 1)
    if isinstance(exc, BrokenPipeError):
        return Ending(0, output_failed=True)
    if isinstance(exc, MemoryError):
        detail = f" ({one_line(str(exc))})" if str(exc) else ""
        return _error(
            f"out of memory{detail}: try a smaller input, fewer runs or metrics, or fewer "
            "--resamples",
            1,
        )
    kinds = {cls.__name__ for cls in type(exc).__mro__}
    if "NoArgsIsHelpError" in kinds:
        return Ending(2)  # the help is already printed: no empty error line after it
    if "UsageError" in kinds:
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        return _error(f"{exc.format_message()}{hint}", 2)  # type: ignore[attr-defined]
    if "Abort" in kinds:
        return stopped(signal.SIGINT)
    signum = signal_behind(exc)
    if signum is not None:
        return stopped(signum)
    # A bug, not bad input: still one line (the traceback with RANKMETER_DEBUG=1).
    return Ending(
        70,
        f"rankmeter: internal error: {type(exc).__name__}: {one_line(str(exc))} "
        "(a bug in rankmeter: please report it with the command; RANKMETER_DEBUG=1 shows "
        "the traceback)",
        bug=True,
    )


def signal_behind(exc: BaseException) -> int | None:
    """The signal that ended the work, where it is ``exc`` itself (:class:`Stopped`,
    KeyboardInterrupt) or Python reports it wrapped in another error.

    Python 3.11 turns an exception raised while a class is created, in a descriptor's
    ``__set_name__`` (Ctrl-C while pydantic's classes are imported), into ``RuntimeError:
    Error calling __set_name__ ...`` caused by it: that is an interrupt, not a bug.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, Stopped):
            return current.signum
        if isinstance(current, KeyboardInterrupt):
            return signal.SIGINT
        current = current.__cause__ or current.__context__
    return None


def tell(end: Ending) -> int:
    """End as ``end`` says: what is still buffered for a failed standard output discarded, the
    line written on stderr; returns the exit status."""
    if end.output_failed:
        silence_stdout()
    if end.line is not None:
        if end.by_signal:
            with contextlib.suppress(Exception):
                print(end.line, file=sys.stderr)
        else:
            print(end.line, file=sys.stderr)
    return end.code
