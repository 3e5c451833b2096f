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

    run_command()


if __name__ == "__main__":
    main()
