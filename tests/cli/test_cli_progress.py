"""Progress on stderr: only on a terminal, only after a delay, never on stdout."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console

from rankmeter.cli._progress import Steps

from ._cli_support import CLI


def _console(buffer: io.StringIO) -> Console:
    return Console(file=buffer, force_terminal=True, width=80)


def test_long_work_shows_the_current_step() -> None:
    buffer = io.StringIO()
    with Steps(total=2, enabled=True, delay=0.0, console=_console(buffer)) as steps:
        steps.start("reading run.txt")
        time.sleep(0.3)  # the bar starts on a timer thread
        steps.start("evaluating")
        time.sleep(0.3)
    shown = buffer.getvalue()
    assert "reading run.txt" in shown
    assert steps.done == 2


def test_short_work_shows_nothing() -> None:
    buffer = io.StringIO()
    with Steps(total=1, enabled=True, delay=5.0, console=_console(buffer)) as steps:
        steps.start("reading")
    assert buffer.getvalue() == ""


def test_disabled_progress_starts_no_timer() -> None:
    with Steps(total=1, enabled=False) as steps:
        steps.start("reading")
        assert steps._timer is None
    assert steps.done == 1


def test_quiet_and_piped_stderr_print_nothing(cli: CLI, files: dict[str, Path]) -> None:
    for extra in ([], ["--quiet"]):
        result = cli("evaluate", files["qrels"], files["a"], "-f", "json", *extra)
        assert result.code == 0
        assert result.err == ""
        assert result.out.startswith("{")
