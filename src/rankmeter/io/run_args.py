"""Runs named as a command line names them: ``PATH`` or ``NAME=PATH`` (what every rankmeter
command reads its runs with, and Python users can too).

A run is named, in this order, by ``NAME=`` on the command line, by its TREC tag (or a
run/name column), else by its file name without the extension(s) (``run.trec.gz`` -> ``run``).
An argument is a plain path when it names a file that exists (a path may contain ``=``), when
it has no ``=``, or when the text before its first ``=`` contains a path separator.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "RunArgument",
    "input_path",
    "read_one_run",
    "read_run_list",
    "read_runs",
    "run_argument",
    "run_arguments",
    "run_list",
    "run_names",
]


@dataclass(frozen=True)
class RunArgument:
    """One run on the command line: the name given with ``NAME=`` (None: none) and the path."""

    name: str | None
    path: str
    text: str


def input_path(value: Any, parameter: str) -> str:
    """``value`` as a path text: a ``str`` as given, an :class:`os.PathLike` (a
    :class:`pathlib.Path`) as its path; anything else a :class:`~rankmeter.errors.PolicyError`
    naming ``parameter``."""
    from rankmeter.errors import PolicyError

    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise PolicyError(
        f"{parameter}= must be a path (a str or os.PathLike), got {type(value).__name__}"
    )


def run_list(runs: Any, *, parameter: str = "runs") -> list[str | os.PathLike[str]]:
    """``runs`` as a list of run arguments: one ``str`` or :class:`os.PathLike` is one run, else
    each item of ``runs`` is one (a ``str``, ``PATH`` or ``NAME=PATH``, or a path object, never
    ``NAME=PATH``); anything else a :class:`~rankmeter.errors.PolicyError` naming
    ``parameter``."""
    from rankmeter.errors import PolicyError

    expected = f"{parameter}= must be a run (PATH or NAME=PATH) or a list of runs"
    if isinstance(runs, (str, os.PathLike)):
        return [runs]
    if runs is None or isinstance(runs, (bytes, Mapping)) or not isinstance(runs, Iterable):
        raise PolicyError(f"{expected}, got {type(runs).__name__}")
    items = list(runs)
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise PolicyError(f"{expected}, got an item of type {type(item).__name__}: {item!r}")
    return items


def run_argument(text: str | os.PathLike[str]) -> RunArgument:
    """``NAME=PATH`` or ``PATH`` read as the module says.

    Examples
    --------
    >>> run_argument("tuned=runs/b.trec")
    RunArgument(name='tuned', path='runs/b.trec', text='tuned=runs/b.trec')
    >>> run_argument("runs/b.trec").name is None
    True
    """
    from rankmeter.errors import PolicyError

    if not isinstance(text, str):  # a path object is a path, never NAME=PATH
        path_text = input_path(text, "runs")
        return RunArgument(None, path_text, path_text)
    name, equals, path = text.partition("=")
    if (
        not equals
        or text == "-"
        or os.sep in name
        or (os.altsep is not None and os.altsep in name)
        or os.path.exists(text)
    ):
        return RunArgument(None, text, text)
    if not name.strip():
        raise PolicyError(f"run {text!r}: the name before '=' is empty (write NAME=PATH)")
    if not path:
        raise PolicyError(f"run {text!r}: no file after '=' (write NAME=PATH)")
    return RunArgument(name, path, text)


def run_arguments(texts: Sequence[str | os.PathLike[str]]) -> list[RunArgument]:
    """Every run argument read (:func:`run_argument`); a name given twice is an error."""
    from rankmeter.errors import PolicyError

    arguments = [run_argument(text) for text in run_list(texts)]
    seen: dict[str, RunArgument] = {}
    for argument in arguments:
        if argument.name is None:
            continue
        if argument.name in seen:
            raise PolicyError(
                f"two runs are named {argument.name!r} ({seen[argument.name].text} and "
                f"{argument.text}): give each run its own name"
            )
        seen[argument.name] = argument
    return arguments


def run_names(arguments: Sequence[RunArgument], own: Sequence[str]) -> list[str]:
    """The runs' names: the one given with ``NAME=``, else the run's own (``own``: its tag or
    file name; runs that share one are told apart by their file). A given name that another
    run has as its own is an error: the two could not be told apart."""
    from rankmeter.data.run import unique_names
    from rankmeter.errors import PolicyError

    # Only the runs without NAME= take a default, so only they are told apart by their files.
    unnamed = [i for i, a in enumerate(arguments) if a.name is None]
    defaults = iter(unique_names([own[i] for i in unnamed], [arguments[i].path for i in unnamed]))
    names = [a.name if a.name is not None else next(defaults) for a in arguments]
    for index, name in enumerate(names):
        if name in names[:index]:
            first = arguments[names.index(name)]
            raise PolicyError(
                f"two runs are named {name!r} ({first.text} and {arguments[index].text}): "
                "give each run its own name with NAME=PATH"
            )
    return names


def read_runs(
    texts: Sequence[str | os.PathLike[str]], *, format: str | None = None, ties: str = "trec_eval"
) -> dict[str, Any]:
    """The runs of these arguments, read and keyed by their names (:func:`run_names`), in
    order; each Run carries its name."""
    loaded = read_run_list(texts, format=format, ties=ties, distinct=True)
    return {run.name: run for run in loaded}


def read_run_list(
    texts: Sequence[str | os.PathLike[str]],
    *,
    format: str | None = None,
    ties: str = "trec_eval",
    distinct: bool = True,
) -> list[Any]:
    """The runs of these arguments, read in order, each named by its ``NAME=`` else its own
    name; ``distinct``: runs that share a name are told apart (:func:`run_names`), else a
    name given twice is the only error (a command that merges runs, as fuse)."""
    from rankmeter.io import read_run

    arguments = run_arguments(texts)
    loaded = [read_run(a.path, format=format, ties=ties) for a in arguments]
    if distinct:
        names = run_names(arguments, [r.name for r in loaded])
    else:
        names = [a.name or r.name for a, r in zip(arguments, loaded, strict=True)]
    return [
        run if run.name == name else run.renamed(name)
        for name, run in zip(names, loaded, strict=True)
    ]


def read_one_run(
    text: str | os.PathLike[str], *, format: str | None = None, ties: str = "trec_eval"
) -> Any:
    """The run of one argument (``PATH`` or ``NAME=PATH``), named as :func:`run_names` says."""
    return read_run_list([text], format=format, ties=ties)[0]
