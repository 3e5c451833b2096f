"""Which metrics answer which question: the advice on choosing metrics, in one place.

A *goal* is what an evaluation is for. Each goal names a few metrics (canonical names that
:func:`rankmeter.metrics.parse_metric` reads back unchanged) and one line on why each fits, and,
where it matters, what it ignores. ``rankmeter metrics --goal GOAL`` and
``rankmeter evaluate --goal GOAL`` read it from here.

>>> [m.metric for m in metrics_for_goal("single-answer")]
['RR@10', 'Success@1', 'Success@10']
>>> metrics_for_goal("top results")[0].metric
'nDCG@10'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from rankmeter._validate import number_text
from rankmeter.errors import MetricError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from rankmeter.metrics._spec import Metric

__all__ = [
    "GOALS",
    "GOAL_NAMES",
    "Goal",
    "GoalMetric",
    "get_goal",
    "goal_notes",
    "metrics_for_goal",
]


class GoalMetric(NamedTuple):
    """One metric chosen for a goal: its canonical name and one line on why."""

    metric: str
    why: str


@dataclass(frozen=True)
class Goal:
    """What an evaluation is for, and the metrics that answer it."""

    name: str
    description: str
    metrics: tuple[GoalMetric, ...]


def _goal(name: str, description: str, *metrics: tuple[str, str]) -> tuple[str, Goal]:
    return name, Goal(name, description, tuple(GoalMetric(m, why) for m, why in metrics))


#: goal name -> Goal, in the order goals are listed to users.
GOALS: Mapping[str, Goal] = MappingProxyType(
    dict(
        [
            _goal(
                "coverage",
                "Does the search find everything relevant? Recall-oriented search: legal "
                "e-discovery, patents, systematic reviews, recruiting.",
                (
                    "R@100",
                    "Share of all relevant documents found in the top 100: what a reviewer "
                    "reading 100 results can find. Ignores the order within those 100.",
                ),
                (
                    "R@1000",
                    "Share found in the top 1000, the usual run depth (so about R over the "
                    "whole run): how much the system finds at all. Ignores order entirely.",
                ),
                (
                    "AP",
                    "One number for the whole ranking: precision at each relevant document, "
                    "averaged over all of them (missed ones count 0); harder to explain.",
                ),
                (
                    "IPrec@0.8",
                    "Precision left once 80% of the relevant documents are found (0 if they "
                    "never are): how much reading it takes to find most of them.",
                ),
            ),
            _goal(
                "top-results",
                "Is the first page good? Web, product and site search, where people read the "
                "top 10 and the labels are graded.",
                (
                    "nDCG@10",
                    "Uses the grades and the positions: a very relevant result near the top "
                    "counts most; 1 = the best possible top 10. Ignores ranks below 10.",
                ),
                (
                    "P@10",
                    "Share of the top 10 that is relevant: easy to explain, but binary, blind "
                    "to order, and below 1 for queries with under 10 relevant documents.",
                ),
            ),
            _goal(
                "single-answer",
                "Is the one right answer at the top? Navigational queries, question "
                "answering, known-item search: one document satisfies the query.",
                (
                    "RR@10",
                    "1 / rank of the first relevant result (1, 1/2, 1/3 ...), 0 if it is not "
                    "in the top 10; its mean is MRR. Ignores every later relevant result.",
                ),
                (
                    "Success@1",
                    "1 if the top result is relevant, else 0: did the user get the answer "
                    "at once? (Equals R@1 when each query has one relevant document.)",
                ),
                (
                    "Success@10",
                    "1 if a relevant result is anywhere in the top 10: was the answer on "
                    "the first page at all, whatever its position.",
                ),
            ),
            _goal(
                "candidate-pool",
                "Is every relevant document in the pool handed to the reranker? A first-stage "
                "retriever (BM25, dense, ANN) feeding a reranker that reads its top k.",
                (
                    "R@100",
                    "Share of relevant documents inside a 100-document pool: a reranker can "
                    "only promote what is in the pool. Order within the pool does not count.",
                ),
                (
                    "R@1000",
                    "The same for a 1000-document pool: how much a deeper (slower) pool "
                    "would buy the reranker.",
                ),
                (
                    "Judged@100",
                    "Share of the pool that has judgments: unjudged documents count as not "
                    "relevant, so when this is low the recall above is a lower bound.",
                ),
            ),
            _goal(
                "browsing",
                "How much does a reader scanning down the list get before they stop? Graded "
                "web and product search, compared with user-model results (ERR, RBP).",
                (
                    "ERR@10",
                    "The reader stops at the first very relevant result, so a second perfect "
                    "one below it adds little. Grades on gdeval's 0-4 scale (else max_grade=).",
                ),
                (
                    "RBP",
                    "A reader who goes on to the next result 4 times in 5 (p=0.8): the share "
                    "of their reading that is relevant. Binary: grade >= rel counts.",
                ),
                (
                    "RBP_resid",
                    "How much RBP could still rise were the unjudged results relevant: when it "
                    "is large, judge deeper before trusting RBP or comparing runs on it.",
                ),
                (
                    "Compat",
                    "Closeness of the whole ranking to the ideal order of the judgments, grades "
                    "and all depths (p=0.95): 1 = as the judgments would rank it.",
                ),
            ),
            _goal(
                "sampled-pool",
                "Only a sample of the pool judged (rankmeter pool --max-per-query, or TREC's "
                "-1 marks)? Estimates from the sample: an unjudged document is not non-relevant.",
                (
                    "statAP",
                    "AP estimated from the sample, each judgment weighing 1/pi: a ratio of "
                    "estimates, it read 0.04 high on Cranfield with a third of the pool judged.",
                ),
                (
                    "stat_nDCG@10",
                    "nDCG@10 with gains weighed 1/pi and the ideal built from the estimated "
                    "count of each grade; also reads high, more so on a small sample.",
                ),
                (
                    "stat_P@10",
                    "Share of the top 10 that is relevant, estimated without bias (Horvitz-"
                    "Thompson); binary and blind to order, as P@10.",
                ),
                (
                    "infAP",
                    "AP estimated from the judged sample: pooled results left unjudged (grade -1) "
                    "count as relevant in the judged proportion, unpooled ones as non-relevant.",
                ),
                (
                    "Bpref",
                    "Relevant results against judged non-relevant ones above them; unjudged "
                    "results are skipped, so it does not assume the judgments are complete.",
                ),
            ),
            _goal(
                "robustness",
                "Does the search fail no query badly? Robust retrieval (the TREC Robust "
                "track): a few queries with nothing found matter more than small gains elsewhere.",
                (
                    "GMAP",
                    "Geometric mean of AP: one query near 0 pulls it down hard, so it rewards "
                    "doing reasonably on every query (per query: log AP).",
                ),
                (
                    "AP",
                    "The arithmetic mean (MAP) beside it: when MAP rises but GMAP falls, the "
                    "gains came from easy queries while hard ones got worse.",
                ),
            ),
            _goal(
                "ambiguous",
                "Does the top serve every meaning of the query? Ambiguous or broad queries "
                "(jaguar, java) judged per subtopic: qrels lines qid subtopic docid grade.",
                (
                    "alpha_nDCG@20",
                    "Gain per subtopic a result covers, halved each time that subtopic was "
                    "covered above it: rewards new intents early (TREC Web track, ndeval).",
                ),
                (
                    "ERR_IA@20",
                    "Reciprocal-rank gain per subtopic, less for intents already served: how "
                    "soon each meaning finds a relevant result (ndeval's ERR-IA).",
                ),
                (
                    "StRecall@20",
                    "Share of the query's subtopics with a relevant result in the top 20: did "
                    "every intent get something. Ignores order and redundancy.",
                ),
            ),
        ]
    )
)

#: The goal names, in order.
GOAL_NAMES: tuple[str, ...] = tuple(GOALS)


def get_goal(name: str) -> Goal:
    """The goal called ``name`` (case, spaces and underscores do not matter).

    Raises
    ------
    MetricError
        For an unknown or empty name; the message lists the valid goals and suggests the
        nearest one.

    >>> get_goal("Candidate_Pool").name
    'candidate-pool'
    >>> get_goal("coverge")
    Traceback (most recent call last):
    ...
    rankmeter.errors.MetricError: unknown goal 'coverge'; did you mean coverage? Valid goals: coverage, top-results, single-answer, candidate-pool, browsing, sampled-pool, robustness, ambiguous
    """
    if not isinstance(name, str):
        raise MetricError(f"a goal must be a string, not {type(name).__name__}")
    key = _normalize(name)
    if not key:
        raise MetricError(f"no goal given; choose one of {_valid()}")
    found = GOALS.get(key)
    if found is None:
        raise MetricError(f"unknown goal {name!r}{_suggest(key)} Valid goals: {_valid()}")
    return found


def metrics_for_goal(goal: str) -> tuple[GoalMetric, ...]:
    """The metrics that answer ``goal``, each with one line on why.

    ``goal`` is one of ``coverage``, ``top-results``, ``single-answer``, ``candidate-pool``,
    ``browsing``, ``sampled-pool``, ``robustness``.
    Unknown names raise :class:`~rankmeter.errors.MetricError` listing the valid goals.

    >>> for m in metrics_for_goal("top-results"):
    ...     print(m.metric)
    nDCG@10
    P@10
    """
    return get_goal(goal).metrics


#: The goals whose binary metrics should count only the answer itself (one right answer; all
#: that is relevant): on a graded scale, a partial match counted as a hit flatters them. (Top
#: results has nDCG, which reads the grades; a candidate pool wants partial matches too.)
_STRICT_GOALS = ("single-answer", "coverage")


def goal_notes(
    goal: Goal,
    *,
    grades: ArrayLike,
    rel: float = 1,
    depths: Mapping[str, int] | None = None,
    measures: Sequence[Metric] = (),
) -> tuple[str, ...]:
    """What to know before reading ``goal``'s metrics on these qrels and runs, one line each.

    - On graded qrels (``grades``: the qrels' grades), the single-answer and coverage goals'
      binary metrics count the lowest positive grade, a partial match, as relevant when the
      evaluation's ``rel`` lets it in: the note names the ``rel=`` thresholds of the scale.
    - A cutoff beyond a run's depth (``depths``: run name -> the most results any of its
      queries has) measures no deeper than the run goes: R@1000 on a 100-deep run is R@100.

    A goal metric among ``measures`` (the metrics as they were asked for) is named as it was
    asked (``ndcg_cut.10``), as the table and the reasons name it.

    >>> (note,) = goal_notes(get_goal("single-answer"), grades=[0, 1, 2])
    >>> note[:62]
    'the qrels are graded 0-2 and RR@10, Success@1, Success@10 coun'
    >>> note[note.index("scale:"):]
    'scale: RR(rel=2)@10 (grade 2 only), or --rel for every metric'
    """
    from rankmeter.metrics._parse import parse_metric

    metrics = [parse_metric(m.metric) for m in goal.metrics]
    # The goal's metrics as they were asked for, when they were (ndcg_cut.10 for nDCG@10).
    metrics = [next((a for a in measures if a == m), m) for m in metrics]
    notes: list[str] = []
    import numpy as np

    scale = [float(g) for g in np.unique(np.asarray(grades, dtype=np.float64))]
    positive = [g for g in scale if g > 0]
    counted = [g for g in positive if g >= rel]
    loose = [m for m in metrics if m.spec.param("rel") is not None and m.get("rel") is None]
    if goal.name in _STRICT_GOALS and loose and len(counted) > 1 and counted[0] == positive[0]:
        top = counted[-1]
        # The next grade up and the top one: enough to choose from on any scale.
        thresholds = dict.fromkeys([counted[1], top])
        example = loose[0]
        choices = ", ".join(
            f"{_with_rel(example, t)} (grade {number_text(t)} {'only' if t == top else 'or more'})"
            for t in thresholds
        )
        notes.append(
            f"the qrels are graded {number_text(min(g for g in scale if g >= 0))}-{number_text(top)} and "
            f"{', '.join(m.label for m in loose)} count a grade-{number_text(counted[0])} document (a "
            f"partial match) as relevant; to count only better ones, give rel= from the "
            f"scale: {choices}, or --rel for every metric"
        )
    for metric in metrics:
        scale_top = metric.get("max_grade") if metric.spec.param("max_grade") else None
        if scale_top is not None and positive and positive[-1] < scale_top:
            highest, low = number_text(positive[-1]), number_text(positive[0])
            stop = (2.0 ** positive[0] - 1) / 2.0 ** float(scale_top)
            fix = _with_param(metric, f"max_grade={number_text(np.ceil(positive[-1]))}")
            notes.append(
                f"the qrels' grades go up to {highest}, but {metric.label} reads them on gdeval's "
                f"0-{number_text(scale_top)} scale: a grade-{low} result stops the reader with "
                f"probability (2^{low} - 1) / 2^{number_text(scale_top)} = {stop:.3g} only; "
                f"give the top of your scale: {fix}"
            )
    for metric in metrics:
        k = metric.cutoff
        if k is None or not depths:
            continue
        shallow = {run: depth for run, depth in depths.items() if depth < k}
        if not shallow:
            continue
        if len(shallow) == 1:
            ((run, depth),) = shallow.items()
            who = f"run {run!r} has at most {depth} results a query"
            what = f"for it {metric.label} measures the top {depth} only"
        else:
            listed = ", ".join(f"{run!r} ({depth})" for run, depth in shallow.items())
            who = f"runs {listed} have fewer results a query"
            what = f"for them {metric.label} measures only as deep as they go"
        notes.append(
            f"{metric.label} reads the top {k} but {who}: {what}; compare runs at least {k} "
            f"deep, or use a cutoff of {min(shallow.values())}"
        )
    return tuple(notes)


def _with_rel(metric: Metric, rel: float) -> str:
    """``metric`` with its own relevance level: ``RR@10`` -> ``RR(rel=2)@10``."""
    return _with_param(metric, f"rel={number_text(rel)}")


def _with_param(metric: Metric, params: str) -> str:
    """``metric`` with one more parameter: ``ERR@10`` -> ``ERR(max_grade=1)@10``."""
    from rankmeter.metrics._parse import parse_metric

    name = str(metric)
    base, at, cutoff = name.partition("@")
    # A name with parameters gets one more: nDCG(gain=exp)@10 -> nDCG(gain=exp,rel=2)@10.
    base = f"{base[:-1]},{params})" if base.endswith(")") else f"{base}({params})"
    return str(parse_metric(f"{base}{at}{cutoff}"))


def _normalize(name: str) -> str:
    return "-".join(name.strip().lower().replace("_", " ").replace("-", " ").split())


def _valid() -> str:
    return ", ".join(GOAL_NAMES)


def _suggest(key: str) -> str:
    import difflib

    # A goal is known by its name and by each word of it ("top", "pool"), typos included.
    names = {name: name for name in GOAL_NAMES}
    names.update((part, name) for name in GOAL_NAMES for part in name.split("-"))
    close = [names[c] for c in difflib.get_close_matches(key, list(names), n=1, cutoff=0.6)]
    if not close:
        # A word of a goal's description ("patents", "reranker", "navigational") points to it
        # when exactly one goal mentions it.
        close = [g.name for g in GOALS.values() if key and key in _words(g.description)]
    return f"; did you mean {close[0]}?" if len(close) == 1 else "."


def _words(text: str) -> set[str]:
    cleaned = "".join(c.lower() if c.isalnum() or c == "-" else " " for c in text)
    words = cleaned.split()
    return {*words, *(part for word in words for part in word.split("-"))}
