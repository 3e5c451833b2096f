"""check(qrels, runs) -> DataCheck: is the data fit to be evaluated, before a number is trusted?

A run can evaluate without an error and still give a meaningless number. :func:`check` looks
at the data itself, run by run:

- **query overlap**: judged queries without results and result queries without judgments
  (ids from another id scheme, such as ir_datasets' Cranfield ids, match only in part). No
  query in common is fatal; a partial overlap is a warning.
- **score order**: whether the scores rise with the rank, as when the rank and score columns
  are swapped or lower scores mean better (distances). Defined in :func:`score_order`. Fatal:
  rankmeter ranks by score descending, so the ranking it evaluates is upside down.
- **duplicates**: every repeated (query, doc) pair, counted (the readers stop at the first).
  Fatal: the readers refuse the run.
- **ties**: the share of tied positions in the top k, and how far each metric can move across
  the orders of the tied results (:class:`TieRange`); a warning when it can move by
  :data:`TIE_SPREAD` or more.
- **Judged@k**: how much of each run's top k is judged; a warning below :data:`JUDGED_BELOW`.
- **depth**: each run's depth (the most results any of its queries has); runs cut at
  different depths get a warning (:func:`depth_warning`), since every metric that reads past
  the shallower depth favours the deeper run.
- the qrels' **grade distribution**, and whether they hold only relevant documents (some
  grade of ``rel`` or more and none from 0 up to it, as CISI's and click-derived qrels):
  then every unjudged document is assumed not relevant, Judged@k is precision rather than
  coverage, and one ``"relevant_only"`` warning says so in place of each run's Judged@k
  warning. Qrels that judge no document relevant (only negative grades, trec_eval's "pooled
  but not judged", or none of ``rel`` or more) make every metric 0: a fatal
  ``"no_relevant"`` finding.

:func:`data_warnings` gives the cheap checks (overlap and score order) for commands that
evaluate (``rankmeter evaluate``, ``rankmeter compare``), to be printed beside their numbers.

Result objects are frozen and know ``to_dict()``; :mod:`rankmeter.report.checking` words them.

The entry points that read the data (:func:`check`, :func:`check_files`, :func:`data_warnings`,
:func:`result_warnings`) live here; the records in ``_records``, :func:`score_order` in
``_score_order`` and the parts of a check (duplicates, ties, the qrels' summary) in ``_parts``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from rankmeter._validate import integer, real
from rankmeter.checking._parts import _check_run, _named_runs, _overlap, _qrels_summary
from rankmeter.checking._records import (
    JUDGED_BELOW,
    TIE_SPREAD,
    DataCheck,
    DataWarning,
    Duplicates,
    QrelsSummary,
    RunCheck,
    TieRange,
    Ties,
    _measures,
    _order_and_overlap,
    depth_warning,
)
from rankmeter.checking._score_order import _query_codes, clearly_rising, score_order
from rankmeter.data.run import unique_names
from rankmeter.io import as_qrels, read_qrels
from rankmeter.io.rows import read_run_rows
from rankmeter.results import EXAMPLES, DepthGap, Overlap, ScoreOrder

__all__ = [
    "EXAMPLES",
    "JUDGED_BELOW",
    "TIE_SPREAD",
    "DataCheck",
    "DataWarning",
    "DepthGap",
    "Duplicates",
    "Overlap",
    "QrelsSummary",
    "RunCheck",
    "ScoreOrder",
    "TieRange",
    "Ties",
    "check",
    "check_files",
    "clearly_rising",
    "data_warnings",
    "depth_warning",
    "result_warnings",
    "score_order",
]


def check(
    qrels: Any,
    runs: Any,
    *,
    k: int = 10,
    metrics: str | Iterable[str] | None = None,
    rel: float = 1,
    qrels_format: str | None = None,
    run_format: str | None = None,
) -> DataCheck:
    """Check qrels and runs before trusting the numbers they give.

    Parameters
    ----------
    qrels : what :func:`rankmeter.evaluate` takes (a path, a dict, a frame, a Qrels)
    runs : one run (a path, a dict, a frame, a Run) or a list of them, or ``{name: run}``
    k : the top k looked at for ties and Judged@k (an integer >= 1)
    metrics : the metrics whose range across tie orders is reported; default ``nDCG@k``.
        Asked for, they are also the metrics the depth warning names (those the runs'
        depths affect: none, no warning); by default it warns of any difference in depth
    rel : the minimum grade counted relevant (trec_eval -l), for the metrics and for what
        the qrels hold (relevant only, no relevant judgment)
    qrels_format, run_format : the file formats, when not detected (``"trec"``, ``"csv"``, ...)

    Returns
    -------
    DataCheck, whose ``ok`` is False when a run's numbers would be meaningless: no query in
    common with the qrels, scores rising with the rank, or repeated (query, doc) pairs; or
    when the qrels judge no document relevant.

    Examples
    --------
    A run whose scores rise with its rank (the best document last):

    >>> qrels = {"q1": {"a": 1, "n": 0}, "q2": {"b": 1}}
    >>> run = {"q1": {"a": 1.0, "x": 2.0, "y": 3.0}, "q3": {"b": 1.0}}
    >>> result = check(qrels, run, k=3)
    >>> result.ok, [w.kind for w in result.warnings]
    (False, ['score_order', 'partial_overlap', 'judged'])
    >>> result.runs[0].overlap.judged_without_results_examples
    ('q2',)
    """
    from rankmeter.evaluation import resolve_metrics

    k = integer("k", k, low=1, what="the cutoff looked at")
    rel = real("rel", rel, what="the minimum grade counted relevant")
    measures = resolve_metrics(f"nDCG@{k}" if metrics is None else metrics)
    loaded = (
        read_qrels(qrels, format=qrels_format)
        if qrels_format is not None and isinstance(qrels, str)
        else as_qrels(qrels)
    )
    named = _named_runs(runs)
    read = [read_run_rows(value, format=run_format, name=name) for name, value in named]
    # Runs that share a name (their TREC tag) are told apart by their files, as evaluate does.
    unique = unique_names([r.name for r in read], [r.source for r in read])
    summary = _qrels_summary(loaded, rel)
    checked = [
        replace(
            _check_run(loaded, replace(rows, name=name), k, measures, rel),
            relevant_only=summary.relevant_only,
        )
        for rows, name in zip(read, unique, strict=True)
    ]
    labels = tuple(m.label for m in measures)
    return DataCheck(summary, tuple(checked), k, labels, asked=metrics is not None)


def check_files(
    qrels: str | os.PathLike[str],
    runs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    k: int = 10,
    metrics: str | Iterable[str] | None = None,
    rel: float = 1,
    qrels_format: str | None = None,
    run_format: str | None = None,
) -> DataCheck:
    """:func:`check` on files named as ``rankmeter check`` names them: each run ``PATH`` or
    ``NAME=PATH`` (a name given twice is an error), at most one ``"-"`` (stdin); each run's
    check carries its name (:func:`rankmeter.io.run_args.run_names`: the one given, else its
    own, runs sharing one told apart by their files).

    >>> check_files("-", ["-"])
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: only one input can be read from stdin ('-')
    """
    from rankmeter.errors import PolicyError
    from rankmeter.io.run_args import input_path, run_arguments, run_list, run_names

    qrels = input_path(qrels, "qrels")
    runs = run_list(runs)
    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    arguments = run_arguments(runs)
    result = check(
        qrels, [a.path for a in arguments], k=k, metrics=metrics, rel=rel,
        qrels_format=qrels_format, run_format=run_format,
    )  # fmt: skip
    names = run_names(arguments, [r.name for r in result.runs])
    return replace(
        result,
        runs=tuple(
            r if r.name == n else replace(r, name=n)
            for r, n in zip(result.runs, names, strict=True)
        ),
    )


def data_warnings(
    qrels: Any, runs: Any, *, run_format: str | None = None
) -> tuple[DataWarning, ...]:
    """The warnings a command that evaluates prints beside its numbers: for each run, its
    query overlap with the qrels (``"no_overlap"``, fatal; ``"partial_overlap"``) and its
    score order (``"score_order"``, fatal: scores rising with the rank). Cheap: one read of
    each run, no evaluation.

    ``runs``: one run or several, as :func:`check` takes them; a Run object has no written
    order, so only its overlap is checked. Word each with
    :func:`rankmeter.report.checking.warning_line`.

    >>> [w.kind for w in data_warnings({"q1": {"a": 1}}, {"q2": {"a": 1.0}})]
    ['no_overlap']
    """
    loaded = as_qrels(qrels)
    found: list[DataWarning] = []
    for name, value in _named_runs(runs):
        rows = read_run_rows(value, format=run_format, name=name, docs=False)
        queries = _query_codes(rows)
        overlap = _overlap(loaded, queries[1])
        order = score_order(rows, queries[0]) if rows.written else None
        found += _order_and_overlap(rows.name, rows.source, overlap, order)
    return tuple(found)


def result_warnings(result: Any, *, run_format: str | None = None) -> tuple[DataWarning, ...]:
    """The warnings to print beside the numbers of an evaluation or a comparison, from what
    it saw of each run (:class:`~rankmeter.results.RunFacts`): a partial query overlap, and
    scores that rise with the rank; for a comparison (``compare``, ``all-pairs``), last, runs
    cut at different depths when a metric compared reads past the shallower depth
    (:func:`depth_warning`).

    No second read of a run, but for one case: when a run's written order says its results
    were given lowest score first, a run read from a regular file is read again and judged by
    its rank column as :func:`check` does (a run written bottom-up, rank 1000 first, is then
    fine); a run from a pipe or an object is judged by its written order. The evaluation went
    on, so each finding is a warning here (``fatal`` False), even one that :func:`check`
    calls fatal. An empty overlap gets here only from ``evaluate(..., include_missing=True)``
    (``compare`` and ``evaluate`` without it refuse such a run), as a ``no_overlap`` warning.

    Parameters
    ----------
    result : an :class:`~rankmeter.results.EvalResult`, an
        :class:`~rankmeter.results.EvalResults`, a :class:`~rankmeter.comparison.Comparison`
        or an :class:`~rankmeter.comparison.AllPairsComparison`
    run_format : the runs' format, for the one re-read (None: from the file name)

    >>> from rankmeter import evaluate
    >>> result = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, "P@1")
    >>> [w.kind for w in result_warnings(result)]
    ['partial_overlap']
    """
    import os

    depths: dict[str, int | None] = {}
    measures: tuple[Any, ...] = ()
    if hasattr(result, "facts") and hasattr(result, "policies"):  # one EvalResult
        named = [(result.run, result.facts)]
        scored = bool(result.policies.include_missing)
    elif hasattr(result, "results"):  # EvalResults: their numbers side by side
        named = [(r.run, r.facts) for r in result.results]
        scored = bool(result.policies.include_missing)
        depths = {r.run: r.depth for r in result.results}
        measures = tuple(result.results[0].measures) if result.results else ()
    else:  # a Comparison (every judged query is compared unless include_missing is False)
        # or an all-pairs comparison, which keeps no facts
        named = list(getattr(result, "facts", {}).items())
        scored = bool(result.settings.policies.include_missing)
        depths = dict(getattr(result, "depths", {}))
        measures = _measures(getattr(result, "metrics", ())) if depths else ()
    # Runs cut at different depths, shown side by side (evaluate of several runs, compare,
    # all-pairs): a warning naming the metrics asked for that favour the deeper runs.
    sources = {name: facts.source for name, facts in named if facts is not None}
    gap = depth_warning(depths, measures, sources=sources)
    found: list[DataWarning] = []
    for name, facts in named:
        if facts is None:
            continue
        order: ScoreOrder | None = facts.written_order
        if (
            order is not None
            and order.reversed
            and order.by == "written order"  # not yet read by its rank column
            and os.path.isfile(facts.source)
        ):
            rows = read_run_rows(facts.source, format=run_format, name=name, docs=False)
            order = score_order(rows) if rows.written else order
        if facts.overlap.empty:
            # Only with include_missing (every judged query scored 0 here) does such a run
            # get this far; it would read as a plain 0 without a word.
            found.append(DataWarning(name, facts.source, "no_overlap", False, facts.overlap))
        if facts.overlap.partial:
            found.append(
                DataWarning(
                    name, facts.source, "partial_overlap", False, facts.overlap, None, scored
                )
            )
        if order is not None and order.reversed:
            found.append(DataWarning(name, facts.source, "score_order", False, order))
    return tuple(found if gap is None else [*found, gap])
