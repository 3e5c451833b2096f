"""Render a Comparison: terminal (rich), Markdown, LaTeX (booktabs) and JSON.

Every number a reader sees has its interval or its n beside it. Significance marks, the kind of
interval and every "–" are explained where they appear (:func:`legend`); every format shows how
many queries each system left without results, and the comparison's cautions as warnings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rankmeter._escape import latex_text, markdown_fence, markdown_text
from rankmeter.checking import DataWarning, DepthGap
from rankmeter.comparison import ComparedFiles, Comparison, Difference, Gate, Regression
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import Rendered, renders, with_notes
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, pvalue, signed
from rankmeter.report.checking import warning_line as data_warning_line
from rankmeter.report.checking import warning_lines as data_warning_lines
from rankmeter.report.judged import warning_lines, warnings_data
from rankmeter.results import JUDGED_BELOW

__all__ = [
    "gate_lines",
    "gate_passed_line",
    "regression_line",
    "render_json",
    "render_latex",
    "render_markdown",
    "render_table",
    "verdict",
]


@renders("rankmeter.comparison.Comparison", "json")
def render_json(
    comparison: Comparison,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[DataWarning] = (),
) -> str:
    """The comparison's ``to_dict()`` (its ``"cautions"`` are the statistical warnings), with
    ``"queries"``: the sentence saying which queries the means average over,
    ``"warnings": [{"run", "k", "judged", "threshold"}]`` when a system's Judged@k is below
    ``judged_below`` (only then), and ``"data_warnings"``: each of ``data_warnings``
    (:func:`rankmeter.checking.result_warnings`: a partial query overlap, scores rising with
    the rank, runs cut at different depths) as its ``to_dict()`` with its ``"message"``
    (only when there are some). A difference (or segment row) of a geometric metric (GMAP)
    has ``"delta_scale": "log"``: its difference and interval are of log AP."""
    payload = comparison.to_dict(per_query=per_query)
    # Which queries the means average over, in the sentence every other format shows.
    items = list(payload.items())
    after = next((i + 1 for i, (key, _) in enumerate(items) if key == "n_queries"), len(items))
    items.insert(after, ("queries", queries_phrase(comparison)))
    payload = dict(items)
    logs = log_metrics(comparison)
    for row in (*payload.get("differences", ()), *payload.get("segments", ())):
        if row.get("metric") in logs:  # its difference is log(system / baseline)
            row["delta_scale"] = "log"
    warnings = comparison.judged_warnings(judged_below)
    if warnings:
        payload["warnings"] = warnings_data(warnings)
    if data_warnings:
        payload["data_warnings"] = [
            {**w.to_dict(), "message": data_warning_line(w)} for w in data_warnings
        ]
    # NaN (statistics of fewer than two queries) and infinities become null.
    return json_text(payload, ensure_ascii=True)


def percent(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value:+.1%}"


def interval(low: float, high: float, digits: int = 4, sign: bool = False) -> str:
    show = signed if sign else num
    return f"[{show(low, digits)}, {show(high, digits)}]"


def _mark(d: Difference) -> str:
    return "*" if d.significant else ""


def headline(comparison: Comparison) -> str:
    others = len(comparison.systems) - 1
    return (
        f"{others} {'system' if others == 1 else 'systems'} against baseline "
        f"{comparison.baseline!r} on {_queries(comparison.n_queries)}: "
        f"{comparison.settings.describe()}."
    )


def legend(comparison: Comparison) -> str:
    """What the marks, the interval, d_z, W/T/L and every "–" of the tables mean: one
    paragraph that starts with a word (a Markdown line starting with ``*`` would be a bullet)."""
    from rankmeter.stats import correction_phrase

    s = comparison.settings
    family = _comparisons(len(comparison.differences))
    if s.correction == "none":
        mark = f"* = p below alpha {s.alpha:g} (no correction for {family})"
    else:
        mark = (
            f"* = significant at alpha {s.alpha:g} after the {correction_phrase(s.correction)} "
            f"over {family}"
        )
    parts = [
        mark,
        interval_legend(comparison),
        "d_z = mean difference / standard deviation of the differences (paired effect size)",
        "W/T/L = queries won / tied / lost against the baseline",
        policies(comparison),
    ]
    lower = sorted({d.metric for d in comparison.differences if d.better == "lower"})
    if lower:
        parts.insert(
            4,
            f"lower is better on {_and(lower)}: a query it is lower on is won, and a rise is "
            "a regression",
        )
    return "Legend: " + "; ".join(parts) + "." + "".join(f" {d}" for d in dash_reasons(comparison))


def log_metrics(comparison: Comparison) -> list[str]:
    """The compared metrics whose per-query values are logs (GMAP: log AP, its means geometric):
    their differences, intervals and d_z are on the logs."""
    from rankmeter.metrics import parse_metric

    return [m for m in comparison.metrics if parse_metric(m).spec.aggregate == "geometric"]


def log_scale_line(comparison: Comparison) -> str | None:
    """What Δ means for a geometric metric (GMAP), said wherever Δ is shown; None without one."""
    logs = log_metrics(comparison)
    if not logs:
        return None
    return (
        f"{_and(logs)}: Δ and its interval are differences of log AP (Δ = log of the ratio of "
        "the GMAPs; relative = the ratio - 1)"
    )


def interval_legend(comparison: Comparison) -> str:
    """Which interval the difference column shows, and why it may disagree with the mark."""
    from rankmeter.stats import interval_phrase, paired_test_label

    s = comparison.settings
    k = len(comparison.differences)
    test = paired_test_label(s.test)
    if s.simultaneous and k > 1:
        return (
            f"CI = simultaneous {interval_phrase(s.interval, s.level)}s of the differences "
            f"(Bonferroni: each at {comparison.difference_level:.2%}, so all {k} hold together "
            f"with probability at least {s.level:.0%}); they come from the bootstrap and p from "
            f"the {test}, so near alpha the two can still disagree"
        )
    uncorrected = (
        f", not corrected for the {k} comparisons (it can exclude 0 where the corrected p is "
        "above alpha; --simultaneous gives intervals corrected for the family)"
        if k > 1 and s.correction != "none"
        else ""
    )
    return (
        f"CI = {interval_phrase(s.interval, s.level)} of each difference on its own"
        f"{uncorrected}; intervals come from the bootstrap and p from the {test}"
    )


def dash_reasons(comparison: Comparison) -> list[str]:
    """Why a "–" stands where a number would, one sentence per reason that occurs."""
    found = comparison.differences
    out = []
    if any(d.n < 2 for d in found):
        out.append("– in CI, d_z and p: fewer than 2 queries, nothing to test.")
    if any(d.n >= 2 and not math.isfinite(d.effect_size) for d in found):
        out.append(
            "– in d_z: the difference is the same on every query (no spread), so d_z is infinite."
        )
    if any(not math.isfinite(d.relative) for d in found):
        out.append(
            "– in rel.: the baseline's mean is 0, so there is no relative change (e.g. no "
            "relevant document found by the baseline, or only queries without one)."
        )
    return out


def queries_phrase(comparison: Comparison) -> str:
    """Which queries the comparison counts, in the policy sentence (Policies.describe)."""
    if comparison.settings.policies.include_missing:
        return (
            "queries: every judged query (trec_eval -c: a system without results for one "
            "scores 0 there)"
        )
    return (
        "queries: judged and answered by at least one of the compared systems (a system "
        "without results for one scores 0 there; this set changes with the systems compared)"
    )


def policies(comparison: Comparison) -> str:
    return comparison.settings.policies.describe(queries=queries_phrase(comparison))


def filled_line(comparison: Comparison) -> str | None:
    """How many compared queries each system returned nothing for (each scored 0); None for
    a comparison that does not know."""
    if not comparison.filled:
        return None
    counts = ", ".join(f"{s} {comparison.filled.get(s, 0)}" for s in comparison.systems)
    return (
        f"Queries without results, each scored 0, of the {_queries(comparison.n_queries)}: "
        f"{counts}."
    )


def warning_texts(comparison: Comparison, judged_below: float) -> list[str]:
    """Every warning, one plain line each (not escaped): a run's Judged@k below
    ``judged_below``, then the comparison's cautions (too few queries or resamples)."""
    warnings = warning_lines(comparison.judged_warnings(judged_below))
    return [*warnings, *(f"warning: {c}" for c in comparison.cautions)]


def failure_lines(comparison: Comparison, *, limit: int = 10) -> list[str]:
    """Plain-text lines: the worst queries, empty answers, misses, the spread."""
    out = []
    k = comparison.settings.cutoff
    logs = log_metrics(comparison)
    for f in comparison.failures:
        head = f"{f.system}" + (" (baseline)" if f.system == comparison.baseline else "")
        q = f.quantiles
        if f.system != comparison.baseline:
            out.append(
                f"{head}: per-query {f.metric}{' (log AP)' * (f.metric in logs)} differences: min {signed(q['min'])}, "
                f"5% {signed(q['5%'])}, median {signed(q['median'])}, 95% {signed(q['95%'])}, "
                f"max {signed(q['max'])}"
            )
            if f.worst:
                out.append(f"  lost most on {f.metric}{' (log AP)' * (f.metric in logs)}:")
                for w in f.worst[:limit]:
                    text = f"  {w.text!r}" if w.text else ""
                    out.append(
                        f"    {w.query}: {num(w.baseline)} -> {num(w.system)} "
                        f"({signed(w.difference)}){text}"
                    )
        else:
            out.append(f"{head}:")
        out.append(f"  returned nothing: {_listing(f.no_results, limit)}")
        out.append(f"  nothing relevant in the top {k}: {_listing(f.nothing_relevant, limit)}")
    return out


def _listing(ids: tuple[str, ...], limit: int) -> str:
    if not ids:
        return "none"
    shown = ", ".join(ids[:limit])
    more = f", … ({len(ids)} in all)" if len(ids) > limit else f" ({len(ids)})"
    return shown + more


def segment_rows(comparison: Comparison) -> list[list[str]]:
    rows = []
    for s in comparison.segments:
        flag = "WORSE" if s.flagged else ("small" if s.small else "")
        rows.append(
            [
                s.segment,
                str(s.n),
                s.metric,
                s.system,
                num(s.baseline_mean),
                num(s.system_mean),
                f"{signed(s.difference)} {interval(s.low, s.high, sign=True)}",
                pvalue(s.p_corrected),
                flag,
            ]
        )
    return rows


#: The columns of :data:`SEGMENT_HEADER` that hold names (segment, metric, system): aligned
#: left in every format, the numbers right.
SEGMENT_NAME_COLUMNS = (0, 2, 3)
SEGMENT_HEADER = [
    "segment",
    "n",
    "metric",
    "system",
    "baseline",
    "system mean",
    "Δ [CI]",
    "p (corr.)",
    "",
]


def means_rows(comparison: Comparison, digits: int = 4) -> list[list[str]]:
    """One row per metric: each system's mean and its interval."""
    rows = []
    for metric in comparison.metrics:
        row = [metric]
        for system in comparison.systems:
            m = comparison.mean(system, metric)
            row.append(f"{num(m.mean, digits)} {interval(m.low, m.high, 3)}")
        rows.append(row)
    return rows


def difference_rows(comparison: Comparison) -> list[list[str]]:
    """One row per (system, metric) against the baseline."""
    rows = []
    for system in comparison.systems[1:]:
        for metric in comparison.metrics:
            d = comparison.difference(system, metric)
            rows.append(
                [
                    system,
                    metric,
                    signed(d.difference),
                    interval(d.low, d.high, 3, sign=True),
                    percent(d.relative),
                    num(d.effect_size, 2),
                    pvalue(d.p_value),
                    pvalue(d.p_corrected) + _mark(d),
                    f"{d.wins}/{d.ties}/{d.losses}",
                ]
            )
    return rows


def difference_header(comparison: Comparison) -> list[str]:
    from rankmeter.stats import correction_label

    s = comparison.settings
    correction = correction_label(s.correction, short=True)
    return [
        "system",
        "metric",
        "Δ",
        f"{s.level:.0%} CI" + (" (simult.)" if s.simultaneous else ""),
        "rel.",
        "d_z",
        "p",
        f"p ({correction})",
        "W/T/L",
    ]


@renders("rankmeter.comparison.Comparison", "table")
def render_table(comparison: Comparison, *, judged_below: float = JUDGED_BELOW) -> Any:
    """A rich renderable for the terminal: means, differences, failures, segments; a warning
    for each system whose Judged@k is below ``judged_below``. Every name, id and text goes in
    as a ``Text`` with control characters visible (report._rich.shown)."""
    from rich import box
    from rich.console import Group
    from rich.text import Text

    def table(title: str) -> FittedTable:
        # Fitted: names fold and numbers stay whole at any width, or the rows are stacked.
        return FittedTable(
            title=shown(title, style="table.title"),  # the style rich gives str titles
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )

    level = f"{comparison.settings.level:.0%}"
    means = table(f"Means over {_queries(comparison.n_queries)} [{level} CI]")
    means.add_column("metric", text=True, no_wrap=True)
    for system in comparison.systems:
        label = system + (" (baseline)" if system == comparison.baseline else "")
        means.add_column(shown(label), justify="right", no_wrap=True)
    for row in means_rows(comparison):
        means.add_row(*map(shown, row))
    differences = table(f"Against {comparison.baseline}")
    for i, h in enumerate(difference_header(comparison)):
        differences.add_column(
            h,
            text=i < 2,
            justify="left" if i < 2 else "right",
            no_wrap=i >= 2,
            min_width=6 if i < 2 else None,
        )
    previous = None
    for row in difference_rows(comparison):
        if previous is not None and row[0] != previous:
            differences.add_section()
        previous = row[0]
        differences.add_row(*map(shown, row), style="bold" if row[7].endswith("*") else None)
    filled = filled_line(comparison)
    parts: list[Any] = [
        shown(headline(comparison)),
        *([shown(filled)] if filled else []),
        means,
        differences,
        *([shown(logs)] if (logs := log_scale_line(comparison)) else []),
        shown(legend(comparison), style="dim"),
    ]
    warnings = warning_texts(comparison, judged_below)
    parts += [shown(line, style="yellow") for line in warnings]
    if comparison.notes:
        parts += [shown(f"note: {n}", style="yellow") for n in comparison.notes]
    parts.append(Text(""))
    parts += [shown(line) for line in failure_lines(comparison)]
    if comparison.segments:
        segments = table("Segments")
        for i, h in enumerate(SEGMENT_HEADER):
            names = i in SEGMENT_NAME_COLUMNS
            segments.add_column(h, text=names, justify="left" if names else "right")
        for row in segment_rows(comparison):
            style = "bold red" if row[-1] == "WORSE" else ("dim" if row[-1] == "small" else None)
            segments.add_row(*map(shown, row), style=style)
        parts += [
            Text(""),
            segments,
            Text(
                f"WORSE = significantly worse than the baseline after the correction across "
                f"segments; small = fewer than {comparison.settings.min_segment} queries (shown, "
                "not tested for flags)",
                style="dim",
            ),
        ]
    return Group(*parts)


def _md_table(header: list[str], rows: list[list[str]], left: int = 2) -> list[str]:
    """The first ``left`` columns are names, the rest numbers (right-aligned)."""
    align: list[Align] = [None if i < left else "right" for i in range(len(header))]
    return markdown_table(header, rows, align)


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _difference_numbers(d: Difference, correction: str) -> str:
    return (
        f"{signed(d.difference, 3)} {interval(d.low, d.high, 3, sign=True)}, "
        f"{corrected_p(d.p_corrected, correction)}"
    )


def _system_verdict(comparison: Comparison, system: str) -> str:
    base = comparison.baseline
    correction = comparison.settings.correction
    found = [comparison.difference(system, m) for m in comparison.metrics]
    if len(found) == 1:
        (d,) = found
        verb = (
            "shows no significant difference from"
            if not d.significant
            else ("beats" if d.gain > 0 else "is worse than")
        )
        return f"{system} {verb} {base} on {d.metric}: {_difference_numbers(d, correction)}"
    better = [d for d in found if d.significant and d.gain > 0]
    worse = [d for d in found if d.significant and d.gain < 0]
    same = [d for d in found if d not in better and d not in worse]
    parts = []
    with_numbers = [f"{d.metric} ({_difference_numbers(d, correction)})" for d in better]
    if better:
        parts.append(f"beats {base} on {_and(with_numbers)}")
    if worse:
        against = " than " + base if not parts else ""
        listed = _and([f"{d.metric} ({_difference_numbers(d, correction)})" for d in worse])
        parts.append(f"is worse{against} on {listed}")
    if same:
        against = " from " + base if not parts else ""
        parts.append(
            f"shows no significant difference{against} on {_and([d.metric for d in same])}"
        )
    return f"{system} {_and(parts)}"


def verdict(comparison: Comparison) -> str:
    """The comparison in one sentence (plain, not escaped): for each system, whether it beats
    the baseline, is worse or shows no significant difference on each metric, with the
    difference, its interval and the corrected p-value; then, with segments, whether any got
    worse. E.g. ``tuned beats keyword on nDCG@10: +0.148 [+0.083, +0.205], Holm p 0.0015; no
    segment got worse.``"""
    clauses = [_system_verdict(comparison, s) for s in comparison.systems[1:]]
    if comparison.segments:
        worse: dict[str, dict[str, list[str]]] = {}
        for s in comparison.segments:
            if s.flagged:
                worse.setdefault(s.segment, {}).setdefault(s.system, []).append(s.metric)
        if not worse:
            clauses.append("no segment got worse")
        else:
            count = "1 segment" if len(worse) == 1 else f"{len(worse)} segments"
            listed = ", ".join(
                f"{name} ({_and([f'{system} on {_and(metrics)}' for system, metrics in by.items()])})"
                for name, by in worse.items()
            )
            clauses.append(f"{count} got worse: {listed}")
    return "; ".join(clauses) + "."


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsible block GitHub renders: raw HTML around Markdown, blank lines between (an
    HTML block ends at a blank line, so the body is read as Markdown). ``summary`` is plain
    text, escaped here."""
    from rankmeter._escape import html_text

    return [
        "<details>",
        f"<summary>{html_text(summary)}</summary>",
        "",
        *body,
        "",
        "</details>",
        "",
    ]


def render_markdown(
    comparison: Comparison,
    *,
    judged_below: float = JUDGED_BELOW,
    data_warnings: tuple[str, ...] = (),
) -> str:
    """Markdown for a pull-request comment: a one-line verdict (:func:`verdict`), the table of
    differences against the baseline and the warnings, then the details in collapsible
    ``<details>`` blocks: the means with how the numbers were made and the notes, the
    failures, the segments.

    Every name, id and text shows as exactly that text: escaped for Markdown and its raw HTML
    (rankmeter._escape.markdown_text); the failure lists in a code block whose fence no line
    can close. A system whose Judged@k is below ``judged_below`` gets a warning under the
    table, after ``data_warnings`` (lines of
    :func:`rankmeter.report.checking.warning_lines`: a partial query overlap, scores rising
    with the rank), which the command line prints on stderr too."""
    systems = [s + (" (baseline)" if s == comparison.baseline else "") for s in comparison.systems]
    queries = _queries(comparison.n_queries)
    out = [
        f"**Verdict:** {markdown_text(verdict(comparison))}",
        "",
        f"**Against {markdown_text(comparison.baseline)}** on {queries}:",
        "",
        *_md_table(difference_header(comparison), difference_rows(comparison)),
        "",
        *([markdown_text(logs), ""] if (logs := log_scale_line(comparison)) else []),
    ]
    warnings = [*data_warnings, *warning_texts(comparison, judged_below)]
    if warnings:
        out += [*(f"> {markdown_text(line)}" for line in warnings), ""]
    settings = (
        f"Against baseline {comparison.baseline} on {queries}: {comparison.settings.describe()}."
    )
    means = [
        markdown_text(settings),
        "",
        *([markdown_text(filled), ""] if (filled := filled_line(comparison)) else []),
        *_md_table(["metric", *systems], means_rows(comparison), left=1),
        "",
        markdown_text(legend(comparison)),
    ]
    if comparison.notes:
        means += ["", *(f"> note: {markdown_text(n)}" for n in comparison.notes)]
    out += _details(f"Means over {queries}, how the numbers were made, notes", means)
    out += _details(
        "Failures: the queries each system lost most on, or answered badly",
        markdown_fence(failure_lines(comparison)),
    )
    if comparison.segments:
        worse = len({s.segment for s in comparison.segments if s.flagged})
        out += _details(
            f"Segments: {worse or 'none'} got worse",
            [
                *markdown_table(
                    [*SEGMENT_HEADER[:-1], "flag"],
                    segment_rows(comparison),
                    [
                        None if i in SEGMENT_NAME_COLUMNS else "right"
                        for i in range(len(SEGMENT_HEADER))
                    ],
                ),
                "",
                f"WORSE = significantly worse than the baseline after the correction across "
                f"segments; small = fewer than {comparison.settings.min_segment} queries.",
            ],
        )
    return "\n".join(out)


@renders("rankmeter.comparison.Comparison", "latex")
def render_latex(comparison: Comparison, *, judged_below: float = JUDGED_BELOW) -> str:
    """A booktabs table: rows = systems, columns = metrics; each cell the mean and, for a
    system, its difference from the baseline with the interval; significance marked and
    explained in the caption. Under it, in small type, the notes and a warning for each system
    whose Judged@k is below ``judged_below``."""
    from rankmeter.stats import correction_label, paired_test_label

    s = comparison.settings
    metrics = comparison.metrics
    lines = [
        "% requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\begin{tabular}{l" + "r" * len(metrics) + "}",
        "\\toprule",
        "System & " + " & ".join(latex_text(m) for m in metrics) + " \\\\",
        "\\midrule",
    ]
    for system in comparison.systems:
        cells = []
        for metric in metrics:
            mean = comparison.mean(system, metric)
            if system == comparison.baseline:
                cells.append(num(mean.mean))
            else:
                d = comparison.difference(system, metric)
                mark = "$^{*}$" if d.significant else ""
                # As in every format: a number that cannot be computed (an interval from one
                # query) is "–", never "nan".
                cells.append(
                    f"{num(mean.mean)}{mark} ({signed(d.difference)}, "
                    f"{interval(d.low, d.high, 3, sign=True)})"
                )
        name = latex_text(system) + (" (baseline)" if system == comparison.baseline else "")
        lines.append(name + " & " + " & ".join(cells) + " \\\\")
    test = paired_test_label(s.test, resamples=s.resamples, seed=s.seed, article=True)
    # Every piece of text is escaped: the level's percent sign would start a comment.
    family = _comparisons(len(comparison.differences))
    if s.correction == "none":
        corrected = f"without correction for {family}"
    else:
        corrected = (
            f"after the {latex_text(correction_label(s.correction))} correction over {family}"
        )
    filled = filled_line(comparison)
    caption = (
        f"Mean over {_queries(comparison.n_queries)}. "
        f"Queries: {latex_text(queries_phrase(comparison).removeprefix('queries: '))}. "
        f"{latex_text(filled) + ' ' if filled else ''}"
        f"For each system: difference from the baseline {latex_text(comparison.baseline)} and "
        f"its {latex_text(interval_legend(comparison).removeprefix('CI = '))}. "
        f"$^{{*}}$: {'p below' if s.correction == 'none' else 'significant at'} "
        f"$\\alpha={s.alpha:g}$ by {latex_text(test)} {corrected}."
        f"{''.join(' ' + latex_text(d) for d in dash_reasons(comparison))}"
        f"{_latex_log_scale(comparison)}"
    )
    lines += ["\\bottomrule", "\\end{tabular}"]
    warnings = warning_texts(comparison, judged_below)
    if comparison.notes or warnings:
        # What the other formats say under their tables (coverage of segments, queries left
        # out, a test not recommended), in small type under this one; escaped as all text.
        said = [*(w.replace("warning: ", "", 1) for w in warnings), *comparison.notes]
        heads = ["Warning"] * len(warnings) + ["Note"] * len(comparison.notes)
        notes = " ".join(
            f"{head}: {latex_text(note.rstrip('.'))}."
            for head, note in zip(heads, said, strict=True)
        )
        lines += ["\\par\\smallskip", f"{{\\footnotesize {notes}\\par}}"]
    lines += [f"\\caption{{{caption}}}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _latex_log_scale(comparison: Comparison) -> str:
    """:func:`log_scale_line` for a caption (with a space before it), Δ as TeX's (latex_text
    writes a character beyond ASCII as its code); empty without a geometric metric."""
    logs = log_scale_line(comparison)
    if logs is None:
        return ""
    return " " + "$\\Delta$".join(latex_text(part) for part in logs.split("Δ")) + "."


def corrected_p(p_value: float, correction: str) -> str:
    """A corrected p-value named by its correction: ``Holm p 0.0015``; ``p 0.0015`` without."""
    from rankmeter.stats import correction_label

    name = "" if correction == "none" else correction_label(correction, short=True) + " "
    return f"{name}p {pvalue(p_value)}"


def regression_line(regression: Regression, depth: DepthGap | None = None) -> str:
    """One reason a regression gate failed, on one plain line (not escaped), e.g.
    ``regression: new is worse than base on nDCG@10 (60 queries): -0.0521 [-0.081, -0.024],
    Holm p 0.0002``. With the runs' ``depth`` gap (:func:`rankmeter.results.depth_gap`), a
    metric it names, on which the system is the shallower run, says so: the cut alone can
    make that gap."""
    r = regression
    where = f" in segment {r.segment}" if r.segment is not None else ""
    threshold = f", a drop of more than --min-effect {r.min_effect:g}" if r.min_effect else ""
    depths = dict(depth.depths) if depth is not None else {}
    cut = ""
    if (
        depth is not None
        and r.metric in depth.metrics
        and depths.get(r.system, 0) < depths.get(r.baseline, 0)
    ):
        cut = (
            f"; but the runs differ in depth ({r.system} {depths[r.system]:,}, {r.baseline} "
            f"{depths[r.baseline]:,}: see the warning), and {r.metric} reads past rank "
            f"{depths[r.system]:,}, so the cut alone can make this gap"
        )
    return (
        f"regression: {r.system} is worse than {r.baseline} on {r.metric}{where} "
        f"({_queries(r.n)}): {signed(r.difference)} {interval(r.low, r.high, 3, sign=True)}, "
        f"{corrected_p(r.p_corrected, r.correction)}{threshold}{cut}"
    )


def gate_passed_line(comparison: Comparison | Gate, min_effect: float) -> str:
    """The line of a regression gate that passed (plain, not escaped)."""
    what = "no metric or segment is" if comparison.segments else "no metric is"
    by = f" by more than {min_effect:g}" if min_effect else ""
    return f"gate passed: {what} significantly worse than {comparison.baseline}{by}"


def gate_lines(gate: Gate) -> tuple[str, ...]:
    """What a regression gate says (plain lines, not escaped): one line per reason it failed
    (:func:`regression_line`, with the runs' depth gap), else the one line that it passed."""
    if gate.regressions:
        return tuple(regression_line(r, gate.depth) for r in gate.regressions)
    return (gate_passed_line(gate, gate.min_effect),)


def _comparisons(k: int) -> str:
    return "the 1 comparison" if k == 1 else f"the {k} comparisons"


def _queries(n: int) -> str:
    return f"{n} query" if n == 1 else f"{n} queries"


@renders("rankmeter.comparison.Comparison", "markdown")
def _markdown(
    comparison: Comparison,
    *,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[DataWarning] = (),
) -> str:
    """:func:`render_markdown` with the data's warnings as found
    (:func:`rankmeter.checking.result_warnings`)."""
    lines = tuple(data_warning_lines(data_warnings))
    return render_markdown(comparison, judged_below=judged_below, data_warnings=lines)


# Run files compared (rankmeter.comparison.compare_files), rendered as `rankmeter compare`
# renders them: the comparison, the goal's notes before it on standard error.


@renders(ComparedFiles, "json")
def _files_json(
    done: ComparedFiles,
    *,
    per_query: bool = False,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[DataWarning] = (),
) -> Rendered:
    """The comparison as :func:`render_json` renders it."""
    made = render_json(
        done.comparison, per_query=per_query, judged_below=judged_below,
        data_warnings=data_warnings,
    )  # fmt: skip
    return with_notes(made, done.goal_notes)


@renders(ComparedFiles, "table")
def _files_table(done: ComparedFiles, *, judged_below: float = JUDGED_BELOW) -> Rendered:
    """The comparison as :func:`render_table` renders it."""
    return with_notes(render_table(done.comparison, judged_below=judged_below), done.goal_notes)


@renders(ComparedFiles, "latex")
def _files_latex(done: ComparedFiles, *, judged_below: float = JUDGED_BELOW) -> Rendered:
    """The comparison as :func:`render_latex` renders it."""
    return with_notes(render_latex(done.comparison, judged_below=judged_below), done.goal_notes)


@renders(ComparedFiles, "markdown")
def _files_markdown(
    done: ComparedFiles,
    *,
    judged_below: float = JUDGED_BELOW,
    data_warnings: Sequence[DataWarning] = (),
) -> Rendered:
    """The comparison as its Markdown renderer renders it."""
    made = _markdown(done.comparison, judged_below=judged_below, data_warnings=data_warnings)
    return with_notes(made, done.goal_notes)
