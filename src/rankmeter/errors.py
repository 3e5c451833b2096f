"""Errors raised by rankmeter.

Every error is a :class:`RankmeterError` (a :class:`ValueError`), so callers can catch one type.
Messages say what was given, what was expected and how to fix it; errors about files name the
path, the line number and the offending text.
"""

from __future__ import annotations

__all__ = ["FormatError", "MetricError", "OutputError", "PolicyError", "RankmeterError"]

_MAX_SHOWN = 80


def _show(text: str) -> str:
    """Quote a piece of user input for an error message, shortened and with control characters visible."""
    if len(text) > _MAX_SHOWN:
        text = text[: _MAX_SHOWN - 1] + "…"
    return repr(text)


class RankmeterError(ValueError):
    """Base class of every error rankmeter raises about its input."""


class FormatError(RankmeterError):
    """A file or in-memory table could not be read as qrels or a run.

    Attributes
    ----------
    path : str
        The file (or a description such as ``"<stdin>"`` or ``"dict"``).
    line : int or None
        1-based line number (for files) or row number (for tables), when known.
    text : str or None
        The offending line or value.
    reason : str
        What is wrong and how to fix it.
    """

    def __init__(
        self, path: str, reason: str, *, line: int | None = None, text: str | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.text = text
        self.reason = reason
        where = path if line is None else f"{path}:{line}"
        message = f"{where}: {reason}"
        if text is not None:
            message += f": {_show(text)}"
        super().__init__(message)


class MetricError(RankmeterError):
    """A metric name or parameter is not valid."""


class PolicyError(RankmeterError):
    """An evaluation policy (ties, rel, include_missing, judged_only) is not valid."""


class OutputError(RankmeterError):
    """Standard output cannot take the output: it is closed, the disk is full, an I/O error
    (raised by :class:`rankmeter.report.streams.GuardedOutput`)."""
