"""The ``rankmeter`` command's entry point, also run by ``python -m rankmeter``.

It is deliberately tiny: it takes over Ctrl-C (SIGINT) before the command's heavy imports
(Typer, Rich, NumPy: about 0.3 s), so that an interrupt during them ends with the line
``rankmeter: interrupted`` and exit status 130, not a traceback. Nothing has been read or
written yet then, so the process simply ends. Once the command runs, :func:`rankmeter.cli.main`
handles interrupts itself (temporary files are removed first).

Python's own start (``site``) and ``import rankmeter`` come before this module and remain
Python's: an interrupt in those first few tens of milliseconds is reported by Python.
"""

# Only modules Python has loaded before any code runs (`signal` would import enum first).
import _signal  # type: ignore[import-not-found]  # (no stub: the C half of signal)
import os


def _interrupted_while_starting(signum: int, frame: object) -> None:
    message = b"rankmeter: interrupted\n" if signum == _signal.SIGINT else b""
    try:  # noqa: SIM105 (contextlib is not loaded yet: this module stays light)
        os.write(2, message)
    except OSError:  # no standard error to tell: the exit status still says it
        pass
    os._exit(128 + signum)


def main() -> None:
    """Run the ``rankmeter`` command line (``sys.argv``); exit with its status."""
    # An ignored SIGINT stays ignored: a shell starts background jobs (`cmd &` in a script)
    # and `trap '' INT` users with it ignored, so that Ctrl-C meant for others spares them.
    if _signal.getsignal(_signal.SIGINT) != _signal.SIG_IGN:
        _signal.signal(_signal.SIGINT, _interrupted_while_starting)
    from rankmeter.cli import main as run_command

    try:
        run_command()
    except SystemExit as done:
        code = done.code
    else:
        code = 0
    _end(code)


def _end(code: object) -> None:
    """End the process now, once the command has written and flushed what it had to say.

    The command has finished: its output is flushed (or its failure reported), its temporary
    files removed, its threads joined. What Python would still do at exit is tear down every
    module, and in that teardown Arrow's C++ thread pool can meet one of its own workers
    still alive and abort the process (``terminate called without an active exception``,
    exit 134; apache/arrow#34314, #39862) after a command that succeeded. Ending here skips
    that teardown.
    """
    import sys

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): Python prints it and exits with 1
        try:  # noqa: SIM105 (contextlib is not needed for this)
            print(code, file=sys.stderr)
        except (OSError, ValueError, AttributeError):
            pass
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # closed or full: the command has said what it could
            pass
    os._exit(status & 0xFF if status >= 0 else 1)


if __name__ == "__main__":
    main()
