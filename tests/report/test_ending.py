"""rankmeter.report.ending and rankmeter.report.streams: how a command ends (one line on stderr
and an exit status, whatever ended it) and the standard streams it writes to, as Python
functions (rankmeter.cli.main ends through them; tests/cli/test_cli_errors.py and
test_cli_process_end.py pin the command line's side)."""

from __future__ import annotations

import io
import os
import signal
import sys
import threading

import pytest

from rankmeter.errors import FormatError, MetricError, OutputError, PolicyError
from rankmeter.report.ending import (
    Ending,
    Stopped,
    ending,
    one_line,
    signal_behind,
    stop_on_signals,
    stopped,
    tell,
)
from rankmeter.report.streams import (
    ClosedOutput,
    DiscardedOutput,
    GuardedOutput,
    note,
    standard_streams,
)


class UsageError(Exception):
    """Stands for Click's (matched by class name, as Typer vendors Click)."""

    class _Ctx:
        command_path = "rankmeter evaluate"

    ctx = _Ctx()

    def format_message(self) -> str:
        return "Missing argument 'RUNS...'."


class NoArgsIsHelpError(UsageError):
    pass


class Abort(RuntimeError):
    pass


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (MetricError("unknown metric 'x'"), 2, "rankmeter: error: unknown metric 'x'"),
        (PolicyError("ties='x' must be ..."), 2, "rankmeter: error: ties='x' must be ..."),
        (FormatError("r.txt", "bad line", line=3), 1, "rankmeter: error: r.txt:3: bad line"),
        (OutputError("cannot write to standard output: No space"), 1,
         "rankmeter: error: cannot write to standard output: No space"),
        (BrokenPipeError(), 0, None),
        (MemoryError(), 1, "rankmeter: error: out of memory: try a smaller input, fewer runs "
         "or metrics, or fewer --resamples"),
        (MemoryError("Unable to allocate 8 GiB"), 1, "rankmeter: error: out of memory (Unable "
         "to allocate 8 GiB): try a smaller input, fewer runs or metrics, or fewer --resamples"),
        (UsageError(), 2,
         "rankmeter: error: Missing argument 'RUNS...'. (see 'rankmeter evaluate --help')"),
        (NoArgsIsHelpError(), 2, None),
        (Abort(), 130, "rankmeter: interrupted"),
        (KeyboardInterrupt(), 130, "rankmeter: interrupted"),
        (Stopped(signal.SIGTERM), 143, "rankmeter: terminated"),
    ],
)  # fmt: skip
def test_every_ending_has_its_line_and_status(
    error: BaseException, code: int, line: str | None
) -> None:
    end = ending(error)
    assert (end.code, end.line, end.bug) == (code, line, False)
    assert end.output_failed == isinstance(error, (OutputError, BrokenPipeError))
    assert end.by_signal == (code > 128)


def test_a_bug_is_one_line_with_its_type_and_control_characters_made_visible() -> None:
    end = ending(ZeroDivisionError("bad\n  \x1b]0;x\x07 thing"))
    assert end.bug and end.code == 70
    assert end.line == (
        "rankmeter: internal error: ZeroDivisionError: bad \\x1b]0;x\\x07 thing (a bug in "
        "rankmeter: please report it with the command; RANKMETER_DEBUG=1 shows the traceback)"
    )
    assert one_line("a\n\tb\x1b") == "a b\\x1b"


def test_a_signal_wrapped_in_another_error_is_the_signal() -> None:
    try:
        try:
            raise Stopped(signal.SIGTERM)
        except Stopped as stop:
            raise RuntimeError("Error calling __set_name__") from stop
    except RuntimeError as wrapped:
        assert signal_behind(wrapped) == signal.SIGTERM
        assert ending(wrapped) == stopped(signal.SIGTERM)
    assert signal_behind(ValueError("x")) is None


def test_tell_writes_the_line_and_gives_the_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert tell(Ending(2, "rankmeter: error: x")) == 2
    assert tell(Ending(0)) == 0
    assert capsys.readouterr() == ("", "rankmeter: error: x\n")


def test_the_line_of_a_signal_never_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError("gone")

    monkeypatch.setattr(sys, "stderr", Broken())
    assert tell(stopped(signal.SIGINT)) == 130
    with pytest.raises(OSError, match="gone"):
        tell(Ending(1, "rankmeter: error: x"))


def test_signals_raise_stopped_while_the_work_runs_and_are_restored_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped) as caught, stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs between bytecodes of the main thread
            pass
    assert caught.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_ignored_signal_stays_ignored_and_threads_change_nothing() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        seen: list[object] = []

        def in_a_thread() -> None:
            with stop_on_signals():
                seen.append(signal.getsignal(signal.SIGINT))

        thread = threading.Thread(target=in_a_thread)
        thread.start()
        thread.join()
        assert seen == [signal.getsignal(signal.SIGINT)]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_standard_streams_guard_stdout_and_stand_in_for_missing_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    with standard_streams():
        assert isinstance(sys.stdout, GuardedOutput)
        assert isinstance(sys.stdout.stream, ClosedOutput)
        assert isinstance(sys.stderr, DiscardedOutput) and not sys.stderr.isatty()
        print("nowhere", file=sys.stderr)
        with pytest.raises(OutputError, match=r"^cannot write to standard output: it is closed$"):
            print("data")
    assert sys.stdout is None and sys.stderr is None


def test_a_guarded_stdout_keeps_a_broken_pipe_and_words_other_failures() -> None:
    class Failing(io.StringIO):
        def __init__(self, error: OSError) -> None:
            super().__init__()
            self.error = error

        def write(self, text: str) -> int:
            raise self.error

    with pytest.raises(BrokenPipeError):
        GuardedOutput(Failing(BrokenPipeError())).write("x")
    full = GuardedOutput(Failing(OSError(28, "No space left on device")))
    with pytest.raises(OutputError, match=r"^cannot write to standard output: No space left"):
        full.writelines(["x"])
    assert GuardedOutput(io.StringIO()).getvalue() == ""  # the stream's own attributes


def test_a_note_is_one_line_on_stderr_its_controls_visible(
    capsys: pytest.CaptureFixture[str],
) -> None:
    note("run b\x1b[2J.txt: scores rise with the rank")
    assert capsys.readouterr() == ("", "rankmeter: run b\\x1b[2J.txt: scores rise with the rank\n")
