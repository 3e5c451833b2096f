"""The command-line interface: a thin Typer app over the library.

Typer is imported when a command line needs it: a plain ``rankmeter evaluate`` is read without
it (:mod:`rankmeter.cli._fast`), and ``rankmeter.cli.app`` (the Typer app) is built on first use.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from rankmeter.cli._output import (
    ClosedOutput,
    DiscardedOutput,
    GuardedOutput,
    OutputError,
    plug_closed_descriptors,
    silence_stdout,
)
from rankmeter.errors import MetricError, PolicyError, RankmeterError
from rankmeter.report import visible

#: Set (to anything) to read every command line with Typer: no fast start (for tests).
NO_FAST_START = "RANKMETER_NO_FAST_START"


def __getattr__(name: str) -> Any:
    if name == "app":
        return _app()
    raise AttributeError(f"module 'rankmeter.cli' has no attribute {name!r}")


@functools.cache
def _app() -> Any:
    """The Typer app with every command (imports Typer and the commands' modules)."""
    import typer

    from rankmeter.cli import ab as ab_command
    from rankmeter.cli import agree as agree_command
    from rankmeter.cli import allpairs as allpairs_command
    from rankmeter.cli import (
        ann,
        check,
        clicks,
        compare,
        demo,
        embed,
        evaluate,
        explain,
        judge,
        logs,
        metrics,
        online,
        pool,
        power,
        retrieval,
        sampling,
        stability,
    )
    from rankmeter.cli import audit as audit_command
    from rankmeter.cli import interleave as interleave_command
    from rankmeter.cli import label as label_command
    from rankmeter.cli import leaderboard as leaderboard_command

    app = typer.Typer(
        name="rankmeter",
        help="Is your search any good, and did the change make it better?",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for module in (
        evaluate,
        check,
        explain,
        compare,
        allpairs_command,
        power,
        stability,
        sampling,
        demo,
        metrics,
        ann,
        retrieval,
        embed,
        pool,
        agree_command,
        label_command,
        audit_command,
        judge,
        logs,
        ab_command,
        online,
        interleave_command,
        clicks,
        leaderboard_command,
    ):
        module.register(app)
    from rankmeter.cli._help import reflow_help

    reflow_help(app)
    return app


def _one_line(text: str) -> str:
    """The message on one line, its control characters visible: a file name or an id in it
    must not drive the terminal (rankmeter._escape)."""
    return visible(" ".join(text.split()))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: data to stdout, one clear line to stderr on error (exit 2 usage, 1 data).

    Whatever ends the command ends it with one line: bad input, an output that cannot be
    written, no memory, Ctrl-C (exit 130) or SIGTERM (exit 143), and a bug (exit 70).
    """
    stdout, stderr = sys.stdout, sys.stderr
    plug_closed_descriptors()
    # Started with standard output closed (`>&-`), Python has None: say so when it is needed.
    sys.stdout = GuardedOutput(ClosedOutput() if stdout is None else stdout)  # type: ignore[assignment]
    if stderr is None:  # `2>&-`: no diagnostics, no progress bar; the exit status still tells
        sys.stderr = DiscardedOutput()
    try:
        with _signals_end_the_command():
            code = _run(argv)
    except Stopped as stop:
        code = _stopped(stop.signum)
    except KeyboardInterrupt:  # SIGINT where no handler could be installed (another thread)
        code = _stopped(signal.SIGINT)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    sys.exit(code)


def _run(argv: Sequence[str] | None) -> int:
    from rankmeter.cli import _fast

    fast = None
    if not os.environ.get(NO_FAST_START):
        fast = _fast.evaluate_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if fast is not None:
            _fast.evaluate(fast)
            code = 0
        else:
            import typer

            command = typer.main.get_command(_app())
            code = command.main(
                args=list(argv) if argv is not None else None,
                prog_name="rankmeter",
                standalone_mode=False,
            )
        sys.stdout.flush()  # anything still buffered must fail here, not at exit
    except (MetricError, PolicyError) as exc:
        return _error(str(exc), 2)
    except OutputError as exc:
        silence_stdout()
        return _error(str(exc), 1)
    except RankmeterError as exc:
        return _error(str(exc), 1)
    except BrokenPipeError:
        silence_stdout()
        return 0
    except MemoryError as exc:
        detail = f" ({_one_line(str(exc))})" if str(exc) else ""
        return _error(
            f"out of memory{detail}: try a smaller input, fewer runs or metrics, or fewer "
            "--resamples",
            1,
        )
    except Exception as exc:
        # Typer vendors click in recent versions, so its exceptions are matched by class name.
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        if "NoArgsIsHelpError" in kinds:
            return 2  # the help is already printed: no empty error line after it
        if "UsageError" in kinds:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            message = exc.format_message()  # type: ignore[attr-defined]
            return _error(f"{message}{hint}", 2)
        if "Abort" in kinds:
            return _stopped(signal.SIGINT)
        signum = _signal_behind(exc)
        if signum is not None:
            return _stopped(signum)
        if os.environ.get("RANKMETER_DEBUG"):
            raise
        # A bug, not bad input: still one line (the traceback with RANKMETER_DEBUG=1).
        print(
            f"rankmeter: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(a bug in rankmeter: please report it with the command; RANKMETER_DEBUG=1 shows "
            "the traceback)",
            file=sys.stderr,
        )
        return 70
    return code if isinstance(code, int) else 0


def _signal_behind(exc: BaseException) -> int | None:
    """The signal that ended the command when Python reports it wrapped in another error.

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


def _error(message: str, code: int) -> int:
    print(f"rankmeter: error: {_one_line(message)}", file=sys.stderr)
    return code


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
def _signals_end_the_command() -> Iterator[None]:
    """While the command runs, SIGINT and SIGTERM raise :class:`Stopped`; restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; SIGINT stays KeyboardInterrupt
        return
    previous = {
        s: signal.signal(s, _stop)
        for s in (signal.SIGINT, signal.SIGTERM)
        # None: set outside Python, it could not be restored; SIG_IGN: the caller wants this
        # signal ignored (a background job of a script, `trap '' INT`), and so it stays.
        if signal.getsignal(s) not in (None, signal.SIG_IGN)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stopped(signum: int) -> int:
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    with contextlib.suppress(Exception):
        print(f"rankmeter: {word}", file=sys.stderr)
    return 128 + signum
