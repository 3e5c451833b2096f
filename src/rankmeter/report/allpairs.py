"""Render an all-pairs comparison (:class:`rankmeter.comparison.AllPairsComparison`): a
terminal table (rich), strict JSON, Markdown, LaTeX and a self-contained HTML page with a
matrix plot of the pairs (``templates/allpairs.html.j2``).

Every format says the same things per metric: the two-way ANOVA's line, the systems by mean
with their letters (systems that share a letter are not significantly different), every pair
with the better system first (its difference, Tukey's simultaneous interval, the family-wise
p-value), the smallest significant difference, and what each of these means. System names and
metric labels are untrusted text: rich ``Text``, the one Markdown table writer and escaper, the
LaTeX escaper, the HTML escaper, strict JSON.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rankmeter._escape import latex_text, markdown_text
from rankmeter.checking import DataWarning
from rankmeter.comparison import AllPairsComparison
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, pvalue, signed
from rankmeter.report.checking import warning_line
from rankmeter.stats import AllPairs, PairDifference

__all__ = [
    "pair_rows",
    "payload",
    "render_html",
    "render_json",
    "render_latex",
    "render_markdown",
    "render_table",
    "system_rows",
]

TEMPLATE = "allpairs.html.j2"
SYSTEM_HEADER = ("system", "mean", "group")
_SYSTEM_ALIGN: tuple[Align, ...] = (None, "right", "left")
#: Colours of the matrix: the row's system significantly better, worse, or not different.
BETTER, WORSE, SAME, DIAGONAL = "#b9d9f2", "#f6cfb5", "#ececec", "#ffffff"


def payload(
    result: AllPairsComparison,
    *,
    per_query: bool = False,
    data_warnings: Sequence[DataWarning] = (),
) -> dict[str, Any]:
    """The JSON document: the result's ``to_dict()``, the headline, each metric's sentences,
    the legend and the notes; and ``"data_warnings"`` when there are any (those of
    :func:`rankmeter.checking.result_warnings`: runs cut at different depths), each its
    ``to_dict()`` with its ``"message"``, as ``compare`` writes them."""
    data = result.to_dict(per_query=per_query)
    data["headline"] = headline(result)
    data["sentences"] = {label: _sentences(label, a) for label, a in result.analyses.items()}
    data["legend"] = _legend(result)
    data["notes"] = _notes(result)
    if data_warnings:
        data["data_warnings"] = [{**w.to_dict(), "message": warning_line(w)} for w in data_warnings]
    return data


@renders("rankmeter.comparison.AllPairsComparison", "json")
def render_json(
    result: AllPairsComparison,
    *,
    per_query: bool = False,
    data_warnings: Sequence[DataWarning] = (),
) -> str:
    """:func:`payload` as strict JSON (``inf`` and NaN are null)."""
    return json_text(payload(result, per_query=per_query, data_warnings=data_warnings))


def headline(result: AllPairsComparison) -> str:
    """``all pairs of 3 systems on 225 queries: Tukey HSD (two-way: system + query),
    family-wise alpha 0.05 per metric``."""
    first = next(iter(result.analyses.values()))
    return (
        f"all pairs of {len(result.systems)} systems on {result.n_queries:,} queries: "
        f"{first.label}, family-wise alpha {result.settings.alpha:g} per metric"
    )


def _anova_line(analysis: AllPairs) -> str:
    a = analysis.anova
    return (
        f"two-way ANOVA (system + query): systems F({a.df_systems}, {a.df_residual}) = "
        f"{num(a.f_systems, 2)}, p {_p_phrase(a.p_systems)}; queries F({a.df_queries}, "
        f"{a.df_residual}) = {num(a.f_queries, 2)}; residual mean square {num(a.ms_residual, 5)}"
    )


def _p_phrase(value: float) -> str:
    shown_p = pvalue(value)
    return f"< {shown_p[1:]}" if shown_p.startswith("<") else f"= {shown_p}"


def _hsd_line(label: str, analysis: AllPairs) -> str:
    if analysis.hsd == float("inf"):
        return (
            f"no difference in {label} can be significant with {analysis.resamples:,} "
            "permutations at this alpha; use more"
        )
    return (
        f"a difference of more than {num(analysis.hsd)} {label} is significant "
        f"(the honestly significant difference, HSD)"
    )


def _sentences(label: str, analysis: AllPairs) -> list[str]:
    differ = sum(p.significant for p in analysis.pairs)
    return [
        _anova_line(analysis),
        _hsd_line(label, analysis),
        f"{differ} of {len(analysis.pairs)} pairs differ significantly",
    ]


def _oriented(analysis: AllPairs) -> Iterator[PairDifference]:
    """Every pair with the system of the higher mean first (the order given on a tie)."""
    mean = dict(zip(analysis.systems, analysis.means, strict=True))
    for p in analysis.pairs:
        sign = -1.0 if analysis.better == "lower" else 1.0
        yield (
            analysis.pair(p.second, p.first) if sign * mean[p.second] > sign * mean[p.first] else p
        )


def _tukey(analysis: AllPairs) -> bool:
    return analysis.method == "tukey"


def pair_header(analysis: AllPairs) -> tuple[str, ...]:
    if _tukey(analysis):
        level = f"{1 - analysis.alpha:.0%}"
        return ("pair", "Δ", f"{level} simultaneous CI", "q", "p (family-wise)", "sig.")
    return ("pair", "Δ", "p (family-wise)", "sig.")


def pair_rows(analysis: AllPairs) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for p in _oriented(analysis):
        name = f"{p.first} vs {p.second}"
        mark = "*" if p.significant else ""
        if _tukey(analysis):
            interval = f"[{signed(p.low)}, {signed(p.high)}]"
            rows.append(
                (name, signed(p.difference), interval, num(p.statistic, 2), pvalue(p.p_value), mark)
            )
        else:
            rows.append((name, signed(p.difference), pvalue(p.p_value), mark))
    return rows


def system_rows(analysis: AllPairs) -> list[tuple[str, str, str]]:
    """The systems best mean first (the highest; the lowest where lower is better), the order
    given on a tie, with their letters."""
    sign = -1.0 if analysis.better == "lower" else 1.0
    order = sorted(range(len(analysis.systems)), key=lambda j: -sign * analysis.means[j])
    return [(analysis.systems[j], num(analysis.means[j]), analysis.letters[j]) for j in order]


def _legend(result: AllPairsComparison) -> list[str]:
    first = next(iter(result.analyses.values()))
    lines = [
        "group: systems that share a letter are not significantly different (compact letter "
        "display); a is the group of the best mean",
        "Δ: the first system's mean minus the second's; * = significant, p (family-wise) below "
        f"alpha {result.settings.alpha:g}, the error held over all "
        f"{len(first.pairs)} pairs of a metric",
    ]
    if _tukey(first):
        lines.append(
            "Tukey HSD on the two-way model: q = |Δ| / sqrt(residual mean square / queries), "
            "p from the studentized range with the residual degrees of freedom; the query term "
            "pairs the systems by query (a one-way Tukey HSD ignores that and finds less)"
        )
    else:
        lines.append(
            f"randomised Tukey HSD: each of {first.resamples:,} random permutations of every "
            "query's scores among the systems gives the largest difference of two means; a "
            "pair's p = (permutations reaching its |Δ| + 1) / (permutations + 1)"
        )
    return lines


def _notes(result: AllPairsComparison) -> list[str]:
    policies = result.settings.policies
    queries = (
        f"every judged query ({result.n_queries:,}); a system without results for one scores 0 "
        "on it (trec_eval -c)"
        if policies.include_missing
        else f"the judged queries some system answered ({result.n_queries:,}); a system "
        "without results for one scores 0 on it"
    )
    filled = ", ".join(f"{name} {count:,}" for name, count in result.filled.items())
    return [
        f"queries: {queries}; without results: {filled}",
        policies.describe(queries=""),
        *result.notes,
    ]


@renders("rankmeter.comparison.AllPairsComparison", "table")
def render_table(result: AllPairsComparison) -> Any:
    """A rich renderable: the headline, then per metric the ANOVA, the systems with their
    letters, the pairs, the HSD; the legend and the notes."""
    from rich.console import Group

    parts: list[Any] = [shown(headline(result), "bold")]
    for label, analysis in result.analyses.items():
        systems = FittedTable(title=f"{label}: systems", title_justify="left")
        systems.add_column("system", text=True)
        systems.add_column("mean", justify="right")
        systems.add_column("group")
        for name, mean, letters in system_rows(analysis):
            systems.add_row(shown(name), mean, letters)
        pairs = FittedTable(title=f"{label}: every pair", title_justify="left")
        for index, head in enumerate(pair_header(analysis)):
            pairs.add_column(head, text=index == 0, justify="left" if index == 0 else "right")
        for row in pair_rows(analysis):
            pairs.add_row(shown(row[0]), *row[1:])
        parts += [shown(label, "bold"), shown(_anova_line(analysis)), systems, pairs]
        parts += [shown(line) for line in _sentences(label, analysis)[1:]]
    parts += [shown(line, "dim") for line in [*_legend(result), *_notes(result)]]
    return Group(*parts)


@renders("rankmeter.comparison.AllPairsComparison", "markdown")
def render_markdown(
    result: AllPairsComparison, *, data_warnings: Sequence[DataWarning] = ()
) -> str:
    """The same as Markdown: every cell and line escaped; the ``data_warnings`` (runs cut at
    different depths) under the headline, as ``compare`` puts them."""
    lines = [f"**{markdown_text(headline(result))}**", ""]
    found = [warning_line(w) for w in data_warnings]
    if found:
        lines += [*(f"> {markdown_text(line)}" for line in found), ""]
    for label, analysis in result.analyses.items():
        lines += [f"### {markdown_text(label)}", ""]
        lines += [f"{markdown_text(_anova_line(analysis))}", ""]
        lines += markdown_table(SYSTEM_HEADER, system_rows(analysis), _SYSTEM_ALIGN)
        lines.append("")
        header = pair_header(analysis)
        right: list[Align] = ["right"] * (len(header) - 2)
        align: list[Align] = [None, *right, "left"]
        lines += markdown_table(header, pair_rows(analysis), align)
        lines.append("")
        lines += [f"- {markdown_text(s)}" for s in _sentences(label, analysis)[1:]]
        lines.append("")
    lines += [f"- {markdown_text(line)}" for line in [*_legend(result), *_notes(result)]]
    return "\n".join(lines) + "\n"


@renders("rankmeter.comparison.AllPairsComparison", "latex")
def render_latex(result: AllPairsComparison, *, data_warnings: Sequence[DataWarning] = ()) -> str:
    """A booktabs table: rows = systems by the first metric's mean, per metric its mean and
    group letters (superscripts); the caption says what the letters mean and how they were
    tested, with each metric's ANOVA. Under it, in small type, the ``data_warnings`` (runs
    cut at different depths) and the notes."""
    metrics = result.metrics
    first = result.analyses[metrics[0]]
    lines = [
        "% requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\begin{tabular}{l" + "r" * len(metrics) + "}",
        "\\toprule",
        "System & " + " & ".join(latex_text(m) for m in metrics) + " \\\\",
        "\\midrule",
    ]
    for name, _, _ in system_rows(first):
        cells = []
        for label in metrics:
            analysis = result.analyses[label]
            j = analysis.systems.index(name)
            cells.append(f"{num(analysis.means[j])}$^{{\\mathrm{{{analysis.letters[j]}}}}}$")
        lines.append(latex_text(name) + " & " + " & ".join(cells) + " \\\\")
    anovas = "; ".join(
        f"{latex_text(label)}: {latex_text(_anova_line(a).removeprefix('two-way ANOVA (system + query): '))}"
        for label, a in result.analyses.items()
    )
    caption = (
        f"Mean over {result.n_queries:,} queries. Within a column, systems that share a "
        f"letter are not significantly different by the {latex_text(first.label)} at "
        f"family-wise $\\alpha={result.settings.alpha:g}$ over all "
        f"{len(first.pairs)} pairs. Two-way ANOVA (system + query): {anovas}."
    )
    notes = " ".join(
        [
            *(f"Warning: {latex_text(_plain(w))}." for w in data_warnings),
            *(f"Note: {latex_text(n.rstrip('.'))}." for n in _notes(result)),
        ]
    )
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        "\\par\\smallskip",
        f"{{\\footnotesize {notes}\\par}}",
        f"\\caption{{{caption}}}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _matrix(label: str, analysis: AllPairs, ident: str) -> str:
    from rankmeter.report._svg import Cell, matrix_chart

    order = [row[0] for row in system_rows(analysis)]
    index = {name: j for j, name in enumerate(analysis.systems)}
    rows = []
    for a in order:
        cells = []
        for b in order:
            if a == b:
                letters = analysis.letters[index[a]]
                cells.append(Cell(letters, DIAGONAL, f"{a}: mean {num(analysis.means[index[a]])}"))
                continue
            p = analysis.pair(a, b)
            gain = -p.difference if analysis.better == "lower" else p.difference
            color = SAME if not p.significant else BETTER if gain > 0 else WORSE
            verdict = "significant" if p.significant else "not significant"
            cells.append(
                Cell(
                    signed(p.difference, 3),
                    color,
                    f"{a} vs {b}: Δ {signed(p.difference)}, p {pvalue(p.p_value)} ({verdict})",
                )
            )
        rows.append(cells)
    return matrix_chart(
        ident=ident,
        title=f"{label}: every pair",
        desc=(
            f"Row system minus column system, {label}; blue: the row's system is significantly "
            "better, orange: significantly worse, grey: not significantly different; the "
            "diagonal shows each system's group letters."
        ),
        labels=order,
        cells=rows,
    )


def _plain(warning: DataWarning) -> str:
    """A warning's line without its ``warning:`` (the formats that say it their own way)."""
    return warning_line(warning).split(": ", 1)[1].rstrip(".")


@renders("rankmeter.comparison.AllPairsComparison", "html")
def render_html(result: AllPairsComparison, *, data_warnings: Sequence[DataWarning] = ()) -> str:
    """One self-contained page: the settings, then per metric the ANOVA, the systems with
    their letters, the pairs and the matrix plot; the legend and the notes. The
    ``data_warnings`` (runs cut at different depths) come first, under the headline."""
    from rankmeter.report._html import PageIds, render, safe, template_ids

    ids = PageIds(reserved=template_ids(TEMPLATE))
    sections = []
    for label, analysis in result.analyses.items():
        sections.append(
            {
                "id": ids.claim("metric"),
                "label": label,
                "anova": _anova_line(analysis),
                "systems": system_rows(analysis),
                "pair_header": pair_header(analysis),
                "pairs": pair_rows(analysis),
                "sentences": _sentences(label, analysis)[1:],
                "plot": safe(_matrix(label, analysis, ids.claim("pairs-plot"))),
            }
        )
    return render(
        TEMPLATE,
        title=f"rankmeter: all pairs of {len(result.systems)} systems",
        headline=headline(result),
        sections=sections,
        legend=_legend(result),
        notes=_notes(result),
        systems=", ".join(result.systems),
        warnings=[_plain(w) for w in data_warnings],
    )
