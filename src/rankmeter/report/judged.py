"""The warning every report gives about a run whose top k is poorly judged.

A document nobody judged counts as not relevant, so a run that retrieves many of them scores
low whatever it is worth. Results carry each run's Judged@k
(:attr:`rankmeter.results.EvalResult.judged`, :attr:`rankmeter.comparison.Comparison.judged`);
their ``judged_warnings(threshold)`` say which runs are below the threshold, and this module
words the warning, one line per run. Each format escapes the line as it escapes any text (the run
name is untrusted); JSON carries the warnings as data (:func:`warnings_data`). Qrels that hold
only relevant documents get one line for every run instead (:func:`relevant_only_line`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rankmeter.results import JudgedWarning

__all__ = ["relevant_only_line", "warning_line", "warning_lines", "warnings_data"]


def warning_line(warning: JudgedWarning) -> str:
    """The warning as one plain line (not escaped).

    >>> print(warning_line(JudgedWarning("bm25", 10, 0.62, 0.9)))
    warning: run 'bm25' has Judged@10 = 0.62 (below 0.90): 38% of its top 10 is unjudged and counts as not relevant; judge more (rankmeter pool RUN --depth 10 --qrels QRELS) or use --judged-only / Bpref
    """
    k = warning.k
    judged, threshold = f"{warning.judged:.2f}", f"{warning.threshold:.2f}"
    if judged == threshold:  # 0.897 below 0.9 must not read "0.90 (below 0.90)"
        judged, threshold = f"{warning.judged:.4f}", f"{warning.threshold:.4f}"
    unjudged = 1 - warning.judged
    share = f"{unjudged:.0%}" if round(unjudged * 100) >= 1 else "under 1%"
    return (
        f"warning: run '{warning.run}' has Judged@{k} = {judged} (below {threshold}): {share} "
        f"of its top {k} is unjudged and counts as not relevant; judge more (rankmeter pool RUN "
        f"--depth {k} --qrels QRELS) or use --judged-only / Bpref"
    )


def relevant_only_line(warnings: Sequence[JudgedWarning]) -> str:
    """The one line said instead of the Judged@k warnings when the qrels hold only relevant
    documents (not escaped): an unjudged document is then assumed not relevant by design, and
    Judged@k is precision, so "judge more" would be the wrong advice for every run.

    >>> print(relevant_only_line([JudgedWarning("bm25", 10, 0.13, 0.9, relevant_only=True)]))
    warning: the qrels hold only relevant documents (none is judged not relevant): every unjudged document is assumed not relevant, so Judged@10 measures precision (the share of the top 10 that is relevant), not how much of a run is judged ('bm25' 0.13, below 0.90)
    """
    k = warnings[0].k
    listed = ", ".join(f"'{w.run}' {w.judged:.2f}" for w in warnings)
    return (
        "warning: the qrels hold only relevant documents (none is judged not relevant): every "
        f"unjudged document is assumed not relevant, so Judged@{k} measures precision (the "
        f"share of the top {k} that is relevant), not how much of a run is judged ({listed}, below {warnings[0].threshold:.2f})"
    )


def warning_lines(warnings: Iterable[JudgedWarning]) -> list[str]:
    """One plain line per warning (not escaped); when the qrels hold only relevant documents,
    one line for all of them (:func:`relevant_only_line`)."""
    listed = list(warnings)
    if any(w.relevant_only for w in listed):
        return [relevant_only_line(listed)]
    return [warning_line(w) for w in listed]


def warnings_data(warnings: Iterable[JudgedWarning]) -> list[dict[str, Any]]:
    """The warnings as JSON-ready dicts: run, k, judged, threshold."""
    return [w.to_dict() for w in warnings]
