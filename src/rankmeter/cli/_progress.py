"""Progress on stderr for long work: shown only after a delay, only on a terminal.

Short commands print nothing extra, output on stdout is never touched, and `--quiet` or a
stderr that is not a terminal (a pipe, a file, CI) turns it off entirely.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import Any

from rankmeter.report import visible


class Steps:
    """A progress bar over named steps, which appears once the work has taken ``delay`` s.

    >>> with Steps(total=2, enabled=False) as steps:
    ...     steps.start("reading qrels")
    ...     steps.start("evaluating")
    >>> steps.done
    2
    """

    def __init__(
        self,
        total: int,
        *,
        enabled: bool | None = None,
        delay: float = 2.0,
        console: Any = None,
    ) -> None:
        self.total = total
        self.done = 0
        if enabled is None:  # no stderr at all (`2>&-`, an embedding host): no bar
            enabled = sys.stderr is not None and sys.stderr.isatty()
        self.enabled = enabled
        self._delay = delay
        self._console = console
        self._label = ""
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._bar: Any = None
        self._task: Any = None
        #: Set once the delay has passed and the bar is drawn (or there was nothing left to
        #: show): what waits for the bar waits for this, never for a time.
        self.shown = threading.Event()

    def __enter__(self) -> Steps:
        if self.enabled:
            self._timer = threading.Timer(self._delay, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _show(self) -> None:
        try:
            self._start_bar()
        finally:
            self.shown.set()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with self._lock:
            if self._bar is not None or self.done >= self.total:
                return
            console = self._console or Console(stderr=True)
            self._bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._task = self._bar.add_task(self._label, total=self.total, completed=self.done)
            self._bar.start()

    def start(self, label: str) -> None:
        """Begin the next step (the previous one, if any, is done)."""
        label = visible(label)  # labels name files: no [markup], no control sequences
        with self._lock:
            if self._label:
                self.done += 1
            self._label = label
            if self._bar is not None:
                self._bar.update(self._task, description=label, completed=self.done)
                self._bar.refresh()  # the new step shows now, not at the next tick

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._lock:
            if self._label:
                self.done += 1
                self._label = ""
            if self._timer is not None:
                self._timer.cancel()
            if self._bar is not None:
                self._bar.update(self._task, completed=self.done)
                self._bar.stop()
                self._bar = None
