"""One renderer per (result type, format), and one way to write what it renders.

A renderer is registered in its report module with :func:`renders`; :func:`render` finds the
renderer for a result and a format name and writes what it returns, with one rule for every
format:

- text (JSON, TSV, Markdown, LaTeX, HTML, plain text) goes through
  :func:`rankmeter._escape.terminal_safe`: control characters are shown as visible escapes when
  it goes to a terminal, and it stays byte-exact in files and pipes;
- a rich renderable (a terminal table) is printed to a terminal as rich prints it, and written
  to a file as plain text (:func:`render_rich`);
- a :class:`Rendered` body is written so, and the lines for a person that a data format leaves
  out (a goal's notes, warnings) go to standard error beside it, unless ``quiet``.

Files are written atomically (:func:`rankmeter.io.atomic_write`). Adding a format is one
function registered here; the command line only names the format.

The renderers of a result type are found without importing every report module: ``_HOMES``
names, for each result type (its package and its name), the report modules that register it,
imported on first use. A test keeps ``_HOMES`` and the registrations equal.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, TypeVar

from rankmeter._escape import terminal_safe, visible
from rankmeter.errors import PolicyError

__all__ = [
    "Rendered",
    "emit",
    "formats_of",
    "render",
    "render_rich",
    "renderer",
    "renders",
    "with_notes",
]

F = TypeVar("F", bound=Callable[..., Any])

_RENDERERS: dict[tuple[str, str], Callable[..., Any]] = {}

#: For each result type, as ``package.Name`` (the package it is imported from, so that a move
#: between that package's modules changes nothing), the report modules registering renderers.
_HOMES: dict[str, tuple[str, ...]] = {
    "rankmeter.checking.DataCheck": ("rankmeter.report.checking",),
    "rankmeter.judgments.Pool": ("rankmeter.report.pool",),
    "rankmeter.comparison.QueryStability": ("rankmeter.report.stability",),
    "rankmeter.vector.Leaderboard": ("rankmeter.report.leaderboard",),
    "rankmeter.online.QuerySample": ("rankmeter.report.sampling",),
    "rankmeter.online.QueryMix": ("rankmeter.report.sampling",),
    "rankmeter.online.InterleavingResult": ("rankmeter.report.interleaving",),
    "rankmeter.online.OnlineOffline": ("rankmeter.report.online_offline",),
    "rankmeter.online.ABResult": ("rankmeter.report.ab",),
    "rankmeter.online.LogCheck": ("rankmeter.report.logs",),
    "rankmeter.metrics.MetricCatalogue": ("rankmeter.report.metrics",),
    "rankmeter.metrics.Goal": ("rankmeter.report.metrics",),
    "rankmeter.judgments.Agreement": ("rankmeter.report.agreement",),
    "rankmeter.judgments.LabelAudit": ("rankmeter.report.audit",),
    "rankmeter.report.PowerReport": ("rankmeter.report.power",),
    "rankmeter.comparison.AllPairsComparison": ("rankmeter.report.allpairs",),
    "rankmeter.comparison.RunDiff": ("rankmeter.report.diff",),
    "rankmeter.comparison.Comparison": ("rankmeter.report.comparison", "rankmeter.report.html"),
    "rankmeter.explanation.Explanations": ("rankmeter.report.explanation",),
    "rankmeter.vector.AnnRecall": ("rankmeter.report.ann",),
    "rankmeter.vector.AnnBenchmark": ("rankmeter.report.ann",),
    "rankmeter.clicks.ClickModel": ("rankmeter.report.clicks",),
    "rankmeter.vector.RetrievalResult": ("rankmeter.report.vector",),
    "rankmeter.vector.TwoStage": ("rankmeter.report.pipeline",),
    "rankmeter.vector.FusedRun": ("rankmeter.report.vector",),
    "rankmeter.vector.EmbedBenchmark": ("rankmeter.report.vector",),
    "rankmeter.results.EvalResults": ("rankmeter.report.evaluation",),
    "rankmeter.engines.EvaluatedFiles": ("rankmeter.report.evaluation",),
    "rankmeter.comparison.ComparedFiles": (
        "rankmeter.report.comparison",
        "rankmeter.report.html",
    ),
    "rankmeter.comparison.RunsPower": ("rankmeter.report.power",),
    "rankmeter.judgments.ModelLabels": ("rankmeter.report.judging",),
}


def home_key(cls: type) -> str:
    """``package.Name`` of a result type: the key of ``_HOMES``."""
    return ".".join(cls.__module__.split(".")[:2]) + "." + cls.__name__


@dataclasses.dataclass(frozen=True)
class Rendered:
    """What a renderer returns when a data format leaves lines for a person out of the data:
    ``body`` (text or a rich renderable) is the output; ``before`` and ``after`` are written to
    standard error (control characters visible) before and after it, unless ``quiet``."""

    body: Any
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def with_notes(made: Any, notes: Sequence[str]) -> Rendered:
    """What a renderer made, with a goal's ``notes`` (``note: …``) on standard error before it
    (as the commands write them: data stays data)."""
    before = tuple(f"note: {note}" for note in notes)
    if isinstance(made, Rendered):
        return Rendered(made.body, (*before, *made.before), made.after)
    return Rendered(made, before)


def renders(result_type: type | str, *formats: str) -> Callable[[F], F]:
    """Register the decorated function as the renderer of ``result_type`` in ``formats``.

    ``result_type`` is the type, or its name as ``package.Name`` (the package it is imported
    from: ``"rankmeter.online.ABResult"``), so that a report module need not import it. The
    function takes the result and keyword options, and returns text, a rich renderable or a
    :class:`Rendered`. A (type, format) pair has one renderer: a second is an error.
    """
    key = result_type if isinstance(result_type, str) else home_key(result_type)

    def register(function: F) -> F:
        for name in formats:
            if (key, name) in _RENDERERS and _RENDERERS[key, name] is not function:
                raise ValueError(f"{key} already has a {name} renderer")
            _RENDERERS[key, name] = function
        return function

    return register


def _keys(result_type: type) -> list[str]:
    """The keys of ``result_type`` and its base classes, nearest first, their renderers
    loaded."""
    keys = [home_key(cls) for cls in result_type.__mro__]
    for key in keys:
        for module in _HOMES.get(key, ()):
            importlib.import_module(module)
    return keys


def formats_of(result_type: type) -> list[str]:
    """The format names registered for ``result_type`` (or a base class of it), sorted."""
    keys = set(_keys(result_type))
    return sorted({name for (key, name) in _RENDERERS if key in keys})


def renderer(result_type: type, format: str) -> Callable[..., Any]:
    """The renderer of ``result_type`` (or of its nearest base class) in ``format``; a
    :class:`~rankmeter.errors.PolicyError` naming the formats there are when there is none."""
    for key in _keys(result_type):
        function = _RENDERERS.get((key, format))
        if function is not None:
            return function
    known = formats_of(result_type)
    raise PolicyError(
        f"{result_type.__name__} has no renderer for the format {format!r}; "
        f"its formats: {', '.join(known) if known else 'none'}"
    )


def _accepted(function: Callable[..., Any]) -> tuple[set[str], bool]:
    parameters = list(inspect.signature(function).parameters.values())[1:]
    names = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD}
    return names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class _UnknownOption(PolicyError, TypeError):
    """An option no renderer of a result type takes: a usage error (a
    :class:`~rankmeter.errors.PolicyError`), and a :class:`TypeError` as Python's own for an
    unexpected keyword, so that code catching either catches it."""


def render(
    result: Any,
    format: str | Enum,
    output: str | None = None,
    *,
    stderr: bool = False,
    quiet: bool = False,
    **options: Any,
) -> None:
    """Render ``result`` in ``format`` and write it to ``output`` (``None`` or ``"-"``:
    standard output; else a file, written atomically), or to standard error with ``stderr``.

    ``options`` go to the renderer, each to a renderer of the result type that takes it (a
    format takes what it shows: ``per_query`` means nothing to a LaTeX table); an option no
    renderer of the type takes is an error. Text is written through
    :func:`~rankmeter._escape.terminal_safe` (escaped at a terminal, exact elsewhere), a rich
    renderable through :func:`render_rich`.
    """
    name = format.value if isinstance(format, Enum) else format
    function = renderer(type(result), name)
    takes, anything = _accepted(function)
    if not anything:
        every = set().union(
            *(_accepted(renderer(type(result), f))[0] for f in formats_of(type(result)))
        )
        unknown = sorted(set(options) - every)
        if unknown:
            raise _UnknownOption(
                f"no renderer of {type(result).__name__} takes {', '.join(unknown)}; "
                f"its options: {', '.join(sorted(every)) if every else 'none'}"
            )
        options = {k: v for k, v in options.items() if k in takes}
    made = function(result, **options)
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    if isinstance(made, Rendered):
        made, before, after = made.body, made.before, made.after
    for line in () if quiet else before:
        print(visible(line), file=sys.stderr)
    if stderr:
        _to_stderr(made)
    elif isinstance(made, str):
        emit(terminal_safe(made, output), output)
    else:
        render_rich(made, output)
    for line in () if quiet else after:
        print(visible(line), file=sys.stderr)


def _to_stderr(made: Any) -> None:
    if isinstance(made, str):
        try:
            at_terminal = sys.stderr.isatty()
        except (AttributeError, ValueError):
            at_terminal = False
        sys.stderr.write(terminal_safe(made, "/dev/stderr") if at_terminal else made)
        return
    from rich.console import Console

    Console(stderr=True, soft_wrap=False).print(made)


def emit(text: str, output: str | None) -> None:
    """Write text to stdout, or to a file (atomically: see :mod:`rankmeter.io._atomic`)."""
    if output is None or output == "-":
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:
            # A terminal or pipe set to ASCII (PYTHONIOENCODING, LANG=C on old systems) cannot
            # take non-ASCII ids; data is UTF-8 then, as in every file rankmeter writes.
            sys.stdout.flush()
            sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
        return
    from rankmeter.io import atomic_write

    with atomic_write(output) as handle:
        handle.write(text)


def render_rich(renderable: Any, output: str | None) -> None:
    """Print a rich renderable to stdout (or to a file, as plain text)."""
    from rich.console import Console

    if output is None or output == "-":
        try:
            Console(soft_wrap=False).print(renderable)
            return
        except UnicodeEncodeError:  # stdout cannot take the text: plain UTF-8 text, as emit does
            output = None
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(renderable)
    emit(console.export_text(), output)
