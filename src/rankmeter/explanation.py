"""Explain a number: how one query's value of one metric follows from its ranking.

``explain(qrels, run, query, metric)`` shows the per-rank table (rank, doc, score, grade and the
columns the metric reads: gain, discount and contribution for DCG and nDCG; relevant and precision
at rank for AP; ...), the ideal ordering where the metric normalises by one, and the steps from
the table to the value. ``explain_grades([3, 0, 2], "nDCG(gain=exp)@3")`` does the same for a
ranking given by hand. :meth:`Explanations.for_query` and :meth:`Explanations.for_grades`
explain several metrics of one query, joining it once. The value is computed by the metric's own kernel on the same join as
:func:`rankmeter.evaluate`, so it is exactly the number evaluate gives for that query.

What each metric shows lives with the metric: ``MetricSpec.uses`` names its columns and the
family's ``explain`` hook computes them (see ``rankmeter.metrics.Breakdown``).

An Explanation is data (``to_dict``); :mod:`rankmeter.report.explanation` renders it as text,
Markdown or HTML.

The module is named explanation, not explain, so that importing it never rebinds the package
attribute ``rankmeter.explain`` (the function) to a module.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from rankmeter import _items
from rankmeter._validate import identifier
from rankmeter.errors import PolicyError, RankmeterError

if TYPE_CHECKING:
    from rankmeter.data import Qrels, Run
    from rankmeter.metrics import Metric, Ranked

__all__ = ["Explanation", "Explanations", "explain", "explain_grades", "parse_grades"]

#: The first ranks are always shown (up to the metric's cutoff), whatever they contribute.
HEAD = 10


@dataclass(frozen=True)
class Explanation:
    """How one query's value of one metric follows from its ranking.

    Attributes
    ----------
    metric : str
        The metric's name as asked for (``"nDCG@10"``, ``"MRR@10"``); the steps use its
        canonical name (``RR@10``).
    query : str or None
        The query id; None for a ranking given by hand (:func:`explain_grades`).
    value : float
        The metric's value for the query: exactly what :func:`rankmeter.evaluate` gives.
    columns : tuple of str
        Keys of every row, in display order (``rank``, ``doc``, ``score``, ``grade``, ...).
    rows : tuple of dict
        One per rank shown; ranks that do not change the value may be summarised in ``notes``.
    steps : tuple of str
        How the value follows from the table, line by line.
    ideal_columns, ideal_rows
        The ideal ordering (for nDCG), or empty; for a query of a run its rows name the
        judged documents (``doc``: best grade first, equal grades in doc id order).
    notes : tuple of str
        What the table leaves out (ranks summarised or cut off) and which policies matter.
    run : str or None
        The run's name.
    evaluated : bool
        False when :func:`rankmeter.evaluate` leaves the query out (no results, or no
        judgments); the notes say why and what the value would be.
    policies : mapping
        ``rel``, and for files ``judged_only`` and ``ties``.
    query_text : str or None
        The query's text, when it was given (``explain --queries``).
    cutoff : int or None
        The ranks the metric reads: the top ``cutoff`` (R for R-Prec); None for every rank.
    """

    metric: str
    query: str | None
    value: float
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    steps: tuple[str, ...]
    ideal_columns: tuple[str, ...] = ()
    ideal_rows: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    run: str | None = None
    evaluated: bool = True
    policies: Mapping[str, Any] = field(default_factory=dict)
    integer: bool = False  # a count (NumRet, ...): shown without decimals
    query_text: str | None = None
    cutoff: int | None = None

    @property
    def anchor(self) -> str:
        """The HTML id this explanation asks for: ``explain-<run>-<query>-<metric>``, slugified
        (``explain-grades-<metric>`` for given grades), so that one page can hold the same
        query explained for several runs. The renderer gives it out, or ``<anchor>-2``, ...
        where the page already has it (two runs with the same name)."""
        if self.query is None:
            return f"explain-grades-{_slug(self.metric)}"
        run = "" if self.run is None else _slug(self.run, exact=True) + "-"
        return f"explain-{run}{_slug(self.query, exact=True)}-{_slug(self.metric)}"

    @property
    def title(self) -> str:
        """One line naming the metric, the query, the run and the value."""
        where = "the grades given" if self.query is None else f"query {self.query!r}"
        run = f" in run {self.run!r}" if self.run is not None else ""
        return f"{self.metric} for {where}{run} = {self.shown_value}"

    @property
    def shown_value(self) -> str:
        """The value as shown: four decimals, or a whole number for a count."""
        if self.integer:
            return str(round(self.value))
        return f"{self.value:.4f}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready)."""
        return {
            "metric": self.metric,
            "query": self.query,
            "run": self.run,
            "value": self.value,
            "evaluated": self.evaluated,
            "policies": dict(self.policies),
            "columns": list(self.columns),
            "rows": [dict(r) for r in self.rows],
            "ideal_columns": list(self.ideal_columns),
            "ideal_rows": [dict(r) for r in self.ideal_rows],
            "steps": list(self.steps),
            "notes": list(self.notes),
            "anchor": self.anchor,
            **({} if self.query_text is None else {"query_text": self.query_text}),
        }


@dataclass(frozen=True)
class Explanations(Sequence[Explanation]):
    """Several metrics explained for one query (or one ranking given by hand), in the order
    they were asked for: a sequence of :class:`Explanation`.

    Build it with :meth:`for_query` (a query of a run and its qrels) or :meth:`for_grades` (a
    ranking given as grades); the query is joined once, whatever the number of metrics.

    Attributes
    ----------
    explanations : tuple of Explanation
    query : str or None
        The query id; None for a ranking given by hand.
    run : str or None
        The run's name; None for a ranking given by hand.
    grades : tuple or None
        The grades given, for a ranking given by hand (None for a query of a run).
    policies : mapping
        ``rel``, and for a query of a run ``judged_only`` and ``ties``.
    query_text : str or None
        The query's text, when it was given.
    """

    explanations: tuple[Explanation, ...]
    query: str | None = None
    run: str | None = None
    grades: tuple[Any, ...] | None = None
    policies: Mapping[str, Any] = field(default_factory=dict)
    query_text: str | None = None

    @classmethod
    def for_query(
        cls, qrels: Any, run: Any, query: str, metrics: str | Metric | Iterable[str | Metric] |
        None = None, *, rel: float = 1, judged_only: bool = False, ties: str = "trec_eval",
        query_text: str | None = None,
    ) -> Explanations:  # fmt: skip
        """Explain each metric for one query of a run, as :func:`explain` explains one.

        ``metrics`` defaults to nDCG@10, P@10, R@100, RR and AP (as :func:`rankmeter.evaluate`);
        ``query_text``, the query's text, goes with each explanation (``explain --queries``).

        >>> qrels = {"q1": {"a": 1, "c": 1}}
        >>> run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}}
        >>> explained = Explanations.for_query(qrels, run, "q1", ["AP", "P@2"])
        >>> [(e.metric, e.shown_value) for e in explained]
        [('AP', '0.8333'), ('P@2', '0.5000')]
        """
        case = _from_files(qrels, run, query, rel, judged_only, ties, metrics)
        if query_text is not None:
            case = dataclasses.replace(case, query_text=str(query_text))
        return cls._of(case, metrics, grades=None)

    @classmethod
    def for_files(
        cls, qrels: Any, run: Any, query: str, metrics: Any = None, *, queries: str | None = None,
        qrels_format: str | None = None, run_format: str | None = None, **policies: Any,
    ) -> Explanations:  # fmt: skip
        """:meth:`for_query` on files read as ``rankmeter explain`` reads them: ``NAME=PATH``
        names the run, one file may be ``"-"`` (stdin), ``queries`` a file of query texts;
        ``policies``: ``rel``, ``judged_only``, ``ties``."""
        from rankmeter.io import read_qrels
        from rankmeter.io.annotations import read_queries
        from rankmeter.io.run_args import input_path, read_one_run

        if [qrels := input_path(qrels, "qrels"), run].count("-") > 1:
            raise PolicyError("only one input can be read from stdin ('-')")
        loaded_qrels = qrels if qrels_format is None else read_qrels(qrels, format=qrels_format)
        loaded_run = read_one_run(run, format=run_format, ties=policies.get("ties", "trec_eval"))
        text = None if queries is None else read_queries(queries).get(query)
        return cls.for_query(loaded_qrels, loaded_run, query, metrics, query_text=text, **policies)

    @classmethod
    def for_grades(
        cls,
        grades: str | Sequence[float | None],
        metrics: str | Metric | Iterable[str | Metric] | None = None,
        *,
        judgments: str | Sequence[float] | None = None,
        rel: float = 1,
    ) -> Explanations:
        """Explain each metric on a ranking given as grades, as :func:`explain_grades` explains
        one.

        >>> explained = Explanations.for_grades("3,0,2", ["nDCG@3", "RR"])
        >>> [e.title for e in explained]
        ['nDCG@3 for the grades given = 0.9386', 'RR for the grades given = 1.0000']
        """
        case = _from_grades(grades, judgments, rel)
        return cls._of(case, metrics, grades=tuple(case.shown_grades))

    @classmethod
    def _of(cls, case: _Case, metrics: Any, *, grades: tuple[Any, ...] | None) -> Explanations:
        from rankmeter.metrics import DEFAULT_METRICS, parse_metrics

        if metrics is None:
            metrics = DEFAULT_METRICS
        elif isinstance(metrics, str) or not isinstance(metrics, Iterable):
            metrics = [metrics]
        explained = tuple(_build(case, m) for m in parse_metrics(metrics))
        return cls(explained, case.query, case.run, grades, dict(case.policies), case.query_text)

    @overload
    def __getitem__(self, index: int) -> Explanation: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Explanation]: ...

    def __getitem__(self, index: int | slice) -> Explanation | Sequence[Explanation]:
        return self.explanations[index]

    def __len__(self) -> int:
        return len(self.explanations)

    def __iter__(self) -> Iterator[Explanation]:
        return iter(self.explanations)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready): the query, the run (and the grades given), the policies,
        and each metric's explanation keyed by its name."""
        out: dict[str, Any] = {"query": self.query, "run": self.run}
        if self.query_text is not None:
            out["query_text"] = self.query_text
        if self.grades is not None:
            out["grades"] = list(self.grades)
        out["policies"] = dict(self.policies)
        out["metrics"] = {e.metric: e.to_dict() for e in self.explanations}
        return out


# -- the front door -------------------------------------------------------------------------------


def explain(
    qrels: Any,
    run: Any,
    query: str,
    metric: str | Metric,
    *,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
) -> Explanation:
    """Explain one query's value of one metric, rank by rank, as :func:`rankmeter.evaluate`
    computes it.

    Parameters
    ----------
    qrels, run : anything :func:`rankmeter.evaluate` accepts (paths, dicts, Qrels, Run, frames)
    query : the query id
    metric : a metric name (``"nDCG@10"``, ``"AP"``, ``"P(rel=2)@5"``) or a Metric
    rel, judged_only, ties : the evaluation policies, as in :func:`rankmeter.evaluate`

    Returns
    -------
    Explanation
        ``value`` equals evaluate's value for the query. A query that evaluate leaves out
        (judged but without results, or with results but no judgments) is still explained,
        with ``evaluated=False`` and a note saying why and what it would score.

    Raises
    ------
    RankmeterError
        The query is in neither the qrels nor the run (the message names the nearest ids).

    Examples
    --------
    >>> import rankmeter
    >>> qrels = {"q1": {"a": 1, "c": 1, "d": 1}}
    >>> run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}}
    >>> e = explain(qrels, run, "q1", "AP")
    >>> e.steps[0]
    'AP = (1/1 + 2/3) / 3 relevant judged = 1.667 / 3 = 0.56'
    >>> e.value == rankmeter.evaluate(qrels, run, "AP").per_query.to_dict()["q1"]["AP"]
    True
    """
    return _build(_from_files(qrels, run, query, rel, judged_only, ties, [metric]), _metric(metric))  # fmt: skip


def explain_grades(
    grades: str | Sequence[float | None],
    metric: str | Metric,
    *,
    judgments: str | Sequence[float] | None = None,
    rel: float = 1,
) -> Explanation:
    """Explain a metric on a ranking given as the grades of its results, top first.

    Parameters
    ----------
    grades : the grade of the result at each rank (``[3, 0, 2]`` or ``"3,0,2"``); None or
        ``"?"`` for an unjudged result; a negative grade is judged-unjudged, as in qrels
    metric : a metric name or a Metric
    judgments : the grades of all the query's judged documents (retrieved or not): the ideal
        ordering and the number relevant come from them. Default: the grades given. Judged
        grades of the ranking that the list lacks are added to it.
    rel : minimum grade counted relevant (trec_eval -l)

    Examples
    --------
    The lesson's example: grades 3, 0, 2 with gain 2^g - 1.

    >>> e = explain_grades([3, 0, 2], "nDCG(gain=exp)@3")
    >>> e.steps[-1]
    'nDCG(gain=exp)@3 = 8.5 / 8.89 = 0.96'
    >>> round(e.value, 4)
    0.9558
    """
    return _build(_from_grades(grades, judgments, rel), _metric(metric))


def parse_grades(
    text: str | Sequence[float | None],
    *,
    what: str = "grades",
    unjudged: bool = True,
    required: bool = True,
) -> list[float | None]:
    """Grades from ``"3,0,2"`` (commas or spaces; ``?`` for unjudged) or a sequence.

    >>> parse_grades("3, 0,?,-1")
    [3.0, 0.0, None, -1.0]
    >>> parse_grades("3,x")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: grades: item 2, 'x', is not a grade; give numbers separated by commas, e.g. 3,0,2 (? for an unjudged result)

    An empty item is an error, never dropped (``3,,2`` is a typo, not the list 3, 2); a wrong
    item is named by its position.
    """
    hint = "give numbers separated by commas, e.g. 3,0,2" + (
        " (? for an unjudged result)" if unjudged else ""
    )
    tokens: list[Any]
    if isinstance(text, str):
        if not text.strip() and not required:
            return []
        tokens = _items.split(text, what, hint, spaces=True)
    elif isinstance(text, Sequence):
        tokens = list(text)
    else:
        raise PolicyError(f"{what}: expected text like '3,0,2' or a list of numbers, not {text!r}")
    if not tokens and required:
        raise PolicyError(f"{what}: none given; {hint}")
    out: list[float | None] = []
    for position, token in enumerate(tokens, start=1):
        if token is None or token == "?":
            if not unjudged:
                raise PolicyError(
                    f"{what}: item {position}, {token!r}, is not a grade here; {hint}"
                )
            out.append(None)
            continue
        out.append(_items.number(token, position, what, hint, noun="grade"))
    return out


# -- one query, joined ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Case:
    """One query's ranking joined with its judgments, ready to explain any metric."""

    query: str | None
    ranked: Ranked
    grades: list[float | None]  # the raw grade of each ranked result (None: no judgment)
    docs: list[str] | None = None
    scores: list[float] | None = None
    run: str | None = None
    ties: str | None = None
    evaluated: bool = True
    notes: tuple[str, ...] = ()
    policies: Mapping[str, Any] = field(default_factory=dict)
    judgments: Mapping[str, float] | None = None  # doc id -> grade, for a query of a run
    query_text: str | None = None

    @property
    def shown_grades(self) -> list[Any]:
        return [_plain(g) for g in self.grades]


def _metric(metric: Any) -> Metric:
    from rankmeter.metrics import parse_metric

    return parse_metric(metric)


def _from_files(qrels: Any, run: Any, query: Any, rel: Any, judged_only: Any, ties: str, metrics: Any = None) -> _Case:  # fmt: skip
    import numpy as np

    from rankmeter.io import as_qrels, as_run
    from rankmeter.metrics import join, reads_subtopics
    from rankmeter.results import Policies

    policies = Policies(rel, False, judged_only, ties)
    query = identifier("query", query, what="the query id")
    loaded_qrels = as_qrels(qrels, subtopics=reads_subtopics(metrics))
    loaded_run = as_run(run, ties=policies.ties)
    qrels_row = loaded_qrels.query_rows().get(query)
    one = loaded_run.subset([query])
    if qrels_row is None and one.n_queries == 0:
        raise _unknown_query(query, loaded_qrels, loaded_run)
    shown_policies = {
        "rel": _plain(policies.rel),
        "judged_only": policies.judged_only,
        "ties": policies.ties,
    }
    if one.n_queries == 0 and qrels_row is not None:
        ranked = join(
            loaded_qrels, None, rel=policies.rel, only=np.array([qrels_row], dtype=np.int64)
        )
        note = (
            f"run {loaded_run.name!r} has no results for query {query!r}: evaluate leaves the "
            "query out, as trec_eval does; with include_missing=True (trec_eval -c) it counts "
            "as an empty ranking and scores as below"
        )
        return _Case(
            query=query,
            ranked=ranked,
            grades=[],
            docs=[],
            scores=[],
            run=loaded_run.name,
            ties=policies.ties,
            evaluated=False,
            notes=(note,),
            policies=shown_policies,
        )
    # The query's results alone, in rank order, joined exactly as evaluate joins them.
    docs = one.doc_ids(slice(None))
    scores = np.array(one.scores, dtype=np.float64)
    n = len(one)
    doc_list = [str(d) for d in docs.to_pylist()]
    judgments = _judgments(loaded_qrels, qrels_row)
    notes: list[str] = []
    if qrels_row is None:
        ranked = _no_judgments_ranked(query, n, policies.rel, policies.judged_only)
        keep = np.zeros(n, dtype=bool) if policies.judged_only else np.ones(n, dtype=bool)
        notes.append(
            f"the qrels have no judgments for query {query!r}: evaluate leaves it out, as "
            "trec_eval does (even with -c); were it scored, every result would count as "
            "unjudged and not relevant, as below"
        )
    else:
        ranked = join(loaded_qrels, one, rel=policies.rel, judged_only=policies.judged_only)
        keep = (
            join(loaded_qrels, one, rel=policies.rel).judged
            if policies.judged_only
            else np.ones(n, dtype=bool)
        )
    if policies.judged_only and not keep.all():
        removed = int((~keep).sum())
        notes.append(
            f"judged_only (-J): {removed} unjudged result{'s were' if removed != 1 else ' was'} "
            "removed before scoring; ranks count after the removal"
        )
    kept = np.flatnonzero(keep).tolist()
    return _Case(
        query=query,
        ranked=ranked,
        grades=[judgments.get(doc_list[i]) for i in kept],
        docs=[doc_list[i] for i in kept],
        scores=[float(scores[i]) for i in kept],
        run=loaded_run.name,
        ties=policies.ties,
        evaluated=qrels_row is not None,
        notes=tuple(notes),
        policies=shown_policies,
        judgments=judgments,
    )


def _judgments(qrels: Qrels, row: int | None) -> dict[str, float]:
    """doc id -> raw grade (negative ones too) of one query's judgments."""
    if row is None:
        return {}
    start, stop = int(qrels.offsets[row]), int(qrels.offsets[row + 1])
    docs = qrels.doc_ids(slice(start, stop)).to_pylist()
    return dict(zip(map(str, docs), qrels.grades[start:stop].tolist(), strict=True))


def _no_judgments_ranked(query: str, n: int, rel: float, judged_only: bool) -> Ranked:
    """A query with results but no judgments: every result unjudged (none left under -J)."""
    import numpy as np

    from rankmeter.metrics import Ranked

    n = 0 if judged_only else n
    return Ranked(
        np.array([query], dtype=object),
        np.array([0, n], dtype=np.int64),
        np.zeros(n, dtype=np.float64),
        np.zeros(n, dtype=bool),
        np.zeros(2, dtype=np.int64),
        np.zeros(0, dtype=np.float64),
        float(rel),
    )


def _from_grades(
    grades: str | Sequence[float | None], judgments: str | Sequence[float] | None, rel: Any
) -> _Case:
    import numpy as np

    from rankmeter.metrics import Ranked, num
    from rankmeter.results import Policies

    policies = Policies(rel)
    given = parse_grades(grades)
    judged = [g is not None and g >= 0 for g in given]
    values = [g if j and g is not None else 0.0 for g, j in zip(given, judged, strict=True)]
    ranked_judged = [v for v, j in zip(values, judged, strict=True) if j]
    notes: list[str] = []
    if judgments is None:
        pool = list(ranked_judged)
    else:
        listed = parse_grades(judgments, what="judgments", unjudged=False, required=False)
        pool = [g for g in listed if g is not None and g >= 0]
        lacking = Counter(ranked_judged) - Counter(pool)
        if lacking:
            pool += list(lacking.elements())
            shown = ", ".join(
                num(g) + (f" ({c} times)" if c > 1 else "")
                for g, c in sorted(lacking.items(), reverse=True)
            )
            notes.append(
                f"the judgments given lack grades the ranking has: {shown}; those results "
                "are counted as judged too"
            )
    pool.sort(reverse=True)
    pooled = np.flatnonzero([g is not None and g < 0 for g in given])  # pooled, not judged
    ranked = Ranked(
        np.array(["grades"], dtype=object),
        np.array([0, len(given)], dtype=np.int64),
        np.array(values, dtype=np.float64),
        np.array(judged, dtype=bool),
        np.array([0, len(pool)], dtype=np.int64),
        np.array(pool, dtype=np.float64),
        float(policies.rel),
        pooled=(np.zeros_like(pooled), pooled),
    )
    return _Case(
        query=None,
        ranked=ranked,
        grades=given,
        notes=tuple(notes),
        policies={"rel": _plain(policies.rel)},
    )


def _unknown_query(query: str, qrels: Qrels, run: Run) -> RankmeterError:
    known = list(dict.fromkeys([*qrels.query_ids, *run.query_ids]))
    numbers = [k for k in known if _is_number(k)] if _is_number(query) else []
    if numbers:  # numeric ids: the numerically nearest
        nearest = sorted(numbers, key=lambda k: abs(float(k) - float(query)))[:3]
    else:
        nearest = difflib.get_close_matches(query, known, n=3, cutoff=0.5)
    if not nearest:
        nearest = known[:3]
    return RankmeterError(
        f"query {query!r} is in neither the qrels ({qrels.source}) nor the run "
        f"{run.name!r} ({run.source}); nearest known ids: {', '.join(map(repr, nearest))}"
    )


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# -- from a joined query to an Explanation --------------------------------------------------------


def _build(case: _Case, metric: Metric) -> Explanation:
    import numpy as np

    from rankmeter.metrics import Breakdown, GainOverflow, approx

    ranked = case.ranked
    try:
        value = float(metric.compute(ranked)[0])
    except GainOverflow as overflow:
        if case.query is not None:
            raise
        # Grades typed by hand are an argument, not data: a usage error about them.
        raise overflow.elsewhere("the grades given", PolicyError) from None
    spec = metric.spec
    breakdown = (
        spec.explain(ranked, metric, value)
        if spec.explain is not None
        else Breakdown(steps=(f"{metric} = {approx(value)}",), limit=metric.cutoff)
    )
    n = len(ranked.positions)
    relevant = np.asarray(ranked.relevant(metric.rel(ranked)), dtype=bool)
    judged = np.asarray(ranked.judged, dtype=bool)
    contributes = (
        relevant if breakdown.contributes is None else np.asarray(breakdown.contributes, dtype=bool)
    )
    considered = n if breakdown.limit is None else min(n, breakdown.limit)
    shown = _shown_positions(contributes[:considered], considered)

    base = ("rank",) if case.docs is None else ("rank", "doc", "score")
    columns = base + tuple(c for c in spec.uses if c not in base)
    rows = []
    for p in shown:
        row: dict[str, Any] = {"rank": p + 1}
        for column in columns[1:]:
            if column == "doc":
                row[column] = case.docs[p] if case.docs is not None else None
            elif column == "score":
                row[column] = case.scores[p] if case.scores is not None else None
            elif column == "grade":
                row[column] = _plain(case.grades[p])
            elif column == "judged":
                row[column] = bool(judged[p])
            elif column == "relevant":
                row[column] = bool(relevant[p])
            else:
                row[column] = _scalar(breakdown.columns[column][p])
        rows.append(row)

    notes = [*case.notes, *_hidden_notes(shown, considered, breakdown.quiet)]
    if n > considered:
        notes.append(
            f"{n - considered} more result{'s' if n - considered != 1 else ''} below rank "
            f"{considered} {'are' if n - considered != 1 else 'is'} cut off: {metric} looks at "
            f"the top {breakdown.limit} only"
        )
    if case.scores is not None:
        notes += _tie_notes(case.scores[:considered], case.ties)
    ideal_columns = tuple(breakdown.ideal[0]) if breakdown.ideal else ()
    ideal_rows = tuple(
        {k: _plain(v) if k == "grade" else _scalar(v) for k, v in r.items()}
        for r in breakdown.ideal
    )
    if ideal_rows and case.judgments and "doc" not in ideal_columns:
        ideal_columns, ideal_rows = _with_ideal_docs(ideal_columns, ideal_rows, case.judgments)
    return Explanation(
        metric=metric.label,
        query=case.query,
        value=value,
        columns=columns,
        rows=tuple(rows),
        steps=breakdown.steps,
        ideal_columns=ideal_columns,
        ideal_rows=ideal_rows,
        notes=tuple(notes),
        run=case.run,
        evaluated=case.evaluated,
        policies=dict(case.policies),
        integer=spec.integer,
        query_text=case.query_text,
        cutoff=breakdown.limit,
    )


def _with_ideal_docs(
    columns: tuple[str, ...], rows: tuple[dict[str, Any], ...], judgments: Mapping[str, float]
) -> tuple[tuple[str, ...], tuple[dict[str, Any], ...]]:
    """The ideal ordering with a ``doc`` column after ``rank``: the judged documents best grade
    first, equal grades in doc id order (any order of equal grades is ideal; this one is
    stable). A row whose grade is not the document's is left without one."""
    best_first = sorted(judgments.items(), key=lambda item: (-item[1], item[0]))
    named = []
    for i, row in enumerate(rows):
        doc = None
        if i < len(best_first) and _plain(best_first[i][1]) == row.get("grade"):
            doc = best_first[i][0]
        named.append({"rank": row["rank"], "doc": doc, **row})
    at = columns.index("rank") + 1 if "rank" in columns else 0
    return (*columns[:at], "doc", *columns[at:]), tuple(named)


def _shown_positions(contributes: Any, considered: int) -> list[int]:
    """The first ranks, every rank that contributes, and single ranks between them."""
    import numpy as np

    keep = set(range(min(HEAD, considered)))
    keep.update(int(p) for p in np.flatnonzero(contributes))
    ordered = sorted(keep)
    filled = set(ordered)  # a gap of one rank is shown rather than summarised
    for a, b in itertools.pairwise(ordered):
        if b - a == 2:
            filled.add(a + 1)
    return sorted(filled)


def _hidden_notes(shown: list[int], considered: int, quiet: str) -> list[str]:
    gaps = [(a + 1, b) for a, b in itertools.pairwise(shown) if b - a > 1]
    notes = []
    if len(gaps) > 3:
        hidden = sum(b - a for a, b in gaps)
        notes.append(
            f"{hidden} results in {len(gaps)} stretches between the ranks shown are not "
            f"shown: {quiet}"
        )
    else:
        notes += [f"ranks {a + 1}-{b}: {b - a} results not shown: {quiet}" for a, b in gaps]
    last = shown[-1] + 1 if shown else 0
    if considered > last:
        rest = considered - last
        notes.append(
            f"ranks {last + 1}-{considered}: {rest} more result{'s' if rest != 1 else ''} not "
            f"shown: {quiet}"
        )
    return notes


def _tie_notes(scores: list[float], ties: str | None) -> list[str]:
    from rankmeter.metrics import ranks

    tied = [
        i
        for i in range(len(scores))
        if (i > 0 and scores[i] == scores[i - 1])
        or (i + 1 < len(scores) and scores[i] == scores[i + 1])
    ]
    if not tied:
        return []
    how = (
        "by doc id, descending, as trec_eval does (ties=trec_eval)"
        if ties == "trec_eval"
        else "in the order they were given (ties=input)"
    )
    return [f"results with equal scores (ranks {ranks(tied)}) are ordered {how}"]


# -- helpers --------------------------------------------------------------------------------------


def _scalar(value: Any) -> Any:
    """NumPy scalars as Python ones."""
    return value.item() if hasattr(value, "item") else value


def _plain(value: Any) -> Any:
    """A grade (or rel) as Qrels.to_dict gives it: int when integral, else float."""
    value = _scalar(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _slug(text: str, *, exact: bool = False) -> str:
    """Letters, digits, ``-`` and ``_``; with ``exact``, a short hash keeps ids that differ only
    in other characters apart."""
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-") or "x"
    if exact and slug != text:
        slug += f"-{zlib.crc32(text.encode('utf-8')):08x}"
    return slug
