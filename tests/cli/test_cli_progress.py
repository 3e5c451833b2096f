"""Progress on stderr: only on a terminal, only after a delay, never on stdout."""

from __future__ import annotations

import io
import math
import sys
from pathlib import Path

import pytest
from rich.console import Console

from rankmeter.report import Steps

from ._cli_support import CLI


def _console(buffer: io.StringIO) -> Console:
    return Console(file=buffer, force_terminal=True, width=80)


#: How long a test waits for the timer thread at most: a loaded machine may take its time,
#: the test never depends on how much (it waits for the event, not for a delay).
PATIENCE_S = 60


def test_long_work_shows_the_current_step() -> None:
    buffer = io.StringIO()
    with Steps(total=2, enabled=True, delay=0.0, console=_console(buffer)) as steps:
        steps.start("reading run.txt")
        # The bar starts on a timer thread, before or after the step began: either way the
        # step is drawn by the time the bar is shown (a step redraws a bar already there).
        assert steps.shown.wait(PATIENCE_S)
        assert "reading run.txt" in buffer.getvalue()
        steps.start("evaluating")
        assert "evaluating" in buffer.getvalue()
    assert steps.done == 2


def test_a_step_begun_after_the_bar_appeared_is_drawn_at_once() -> None:
    buffer = io.StringIO()
    with Steps(total=2, enabled=True, delay=0.0, console=_console(buffer)) as steps:
        assert steps.shown.wait(PATIENCE_S)  # the bar is up, with no step yet
        steps.start("reading run.txt")
        assert "reading run.txt" in buffer.getvalue()


def test_the_bar_waits_for_its_delay() -> None:
    buffer = io.StringIO()
    with Steps(total=1, enabled=True, delay=3600.0, console=_console(buffer)) as steps:
        steps.start("reading")
        assert not steps.shown.is_set()
    assert buffer.getvalue() == "" and not steps.shown.is_set()


def test_work_done_before_the_bar_shows_nothing() -> None:
    buffer = io.StringIO()
    steps = Steps(total=1, enabled=True, delay=0.0, console=_console(buffer))
    steps.done = 1  # as if the work were done when the timer fires
    steps._show()
    assert steps.shown.is_set() and buffer.getvalue() == ""


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


# -- issue 22, item 21: long work says it is alive on a stderr that is not a terminal ----------
def test_lines_where_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankmeter.report import progress as _progress

    stderr = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(_progress, "LINE_DELAY", 0.0)
    monkeypatch.setattr(_progress, "LINE_EVERY", math.inf)  # stage changes only
    with Steps(total=5, lines=True) as steps:
        for label in ("embedding corpus 0/3633", "embedding corpus 256/3633", "evaluating"):
            steps.start(f"{label}\x1b]0;x\x07" if label == "evaluating" else label)
    assert stderr.getvalue() == (
        "rankmeter: embedding corpus 0/3,633\nrankmeter: evaluating\\x1b]0;x\\x07\n"
    )
    monkeypatch.setattr(_progress, "LINE_EVERY", 0.0)  # within a stage too, at most this often
    stderr.truncate(0)
    stderr.seek(0)
    with Steps(total=2, lines=True) as steps:
        steps.start("embedding queries 0/300")
        steps.start("embedding queries 256/300")
    assert stderr.getvalue() == (
        "rankmeter: embedding queries 0/300\nrankmeter: embedding queries 256/300\n"
    )


def test_no_lines_before_the_delay_nor_without_asking(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankmeter.report import progress as _progress

    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(_progress, "LINE_DELAY", math.inf)  # quick work: no line at all
    with Steps(total=1, lines=True) as steps:
        steps.start("evaluating")
    monkeypatch.setattr(_progress, "LINE_DELAY", 0.0)
    with Steps(total=1) as steps:  # a command that did not ask for lines
        steps.start("evaluating")
    with Steps(total=1, enabled=False, lines=True) as steps:  # --quiet
        steps.start("evaluating")
    assert stderr.getvalue() == ""
