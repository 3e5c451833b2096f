"""The warning every report gives about a run whose top k is poorly judged.

A document nobody judged counts as not relevant, so a run that retrieves many of them scores
low whatever it is worth. Results carry each run's Judged@k
(:attr:`rankmeter.results.EvalResult.judged`, :attr:`rankmeter.comparison.Comparison.judged`);
their ``judged_warnings(threshold)`` say which runs are below the threshold, and this module
words the warning, one line per run. Each format escapes the line as it escapes any text (the run
name is untrusted); JSON carries the warnings as data (:func:`warnings_data`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rankmeter.results import JudgedWarning

__all__ = ["warning_line", "warning_lines", "warnings_data"]


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


def warning_lines(warnings: Iterable[JudgedWarning]) -> list[str]:
    """One plain line per warning (not escaped)."""
    return [warning_line(w) for w in warnings]


def warnings_data(warnings: Iterable[JudgedWarning]) -> list[dict[str, Any]]:
    """The warnings as JSON-ready dicts: run, k, judged, threshold."""
    return [w.to_dict() for w in warnings]
