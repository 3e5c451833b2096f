"""Progress on stderr for long work (:class:`Steps`): shown only after a delay, only on a
terminal. The command line passes a ``Steps`` to the library functions that take progress (a
``stages`` or ``progress`` callable) or steps through one around its calls.

Short commands print nothing extra, output on stdout is never touched, and `--quiet` or a
stderr that is not a terminal (a pipe, a file, CI) turns it off entirely, except for work
that runs for minutes (``lines=True``: embed-eval): once it has run LINE_DELAY seconds, it
writes there a plain line per stage instead of a bar (and one every LINE_EVERY seconds within
a long stage), so that a log shows it is alive. Quick runs and their error lines stay alone.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from types import TracebackType
from typing import Any

from rankmeter._escape import visible

__all__ = ["LINE_DELAY", "LINE_EVERY", "Steps"]

#: A step label that counts through a stage: "embedding documents 2048/3633".
_COUNTED = re.compile(r"(?P<stage>.+) (?P<done>[0-9]+)/(?P<total>[0-9]+)")
#: Plain progress lines start once the work has run this long (seconds): quick runs, and
#: the one error line of a command that fails early, have none.
LINE_DELAY = 10.0
#: Within one long stage, the most often a plain progress line is written (seconds).
LINE_EVERY = 30.0


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
        lines: bool = False,
    ) -> None:
        self.total = total
        self.done = 0
        #: Where the bar is off only because stderr is not a terminal and ``lines`` is asked
        #: for: plain lines there instead ("rankmeter: embedding corpus 0/3,633").
        self.lines = False
        if enabled is None:  # no stderr at all (`2>&-`, an embedding host): no bar
            enabled = sys.stderr is not None and sys.stderr.isatty()
            self.lines = lines and sys.stderr is not None and not enabled
        self.enabled = enabled
        self._stage = ""
        self._last_line = 0.0
        self._began = time.monotonic()
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
        if self.lines:
            self._line(label)
        with self._lock:
            if self._label:
                self.done += 1
            self._label = label
            if self._bar is not None:
                self._bar.update(self._task, description=label, completed=self.done)
                self._bar.refresh()  # the new step shows now, not at the next tick

    def _line(self, label: str) -> None:
        """Once the work has run LINE_DELAY seconds: a line when a stage begins ("embedding
        corpus 0/3633" begins "embedding corpus"), and within a stage one every LINE_EVERY
        seconds at most."""
        counted = _COUNTED.fullmatch(label)
        stage = counted["stage"] if counted else label
        now = time.monotonic()
        if now - self._began < LINE_DELAY:
            return
        if stage == self._stage and not (counted and now - self._last_line >= LINE_EVERY):
            return
        self._stage, self._last_line = stage, now
        shown = f"{stage} {int(counted['done']):,}/{int(counted['total']):,}" if counted else label
        try:
            print(f"rankmeter: {shown}", file=sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr closed meanwhile: progress is not worth failing
            self.lines = False

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
