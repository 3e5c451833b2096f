"""One self-contained HTML page for a Comparison: ``rankmeter compare ... --format html``.

The page needs nothing but itself: the styles are inline, the plots are inline SVG drawn here
with the standard library, there is no script, and a Content-Security-Policy forbids loading
anything from anywhere. Every string that came from the user (run names, query ids and texts,
segment names) is escaped. The same comparison always gives the same bytes, so reports can be
diffed and golden-tested.

Contents: the headline and settings; the summary table (mean [CI] and n per system and metric,
the difference from the baseline with its interval, relative change, d_z, p, corrected p,
wins/ties/losses) with its legend; notes; plots of the means with their intervals, of the
sorted per-query differences and of metric@k curves; the segment table; the failure lists
(worst queries linked to their explanations, empty answers, misses, the spread of the
differences); and the explanations themselves when the comparison carries them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np

from rankmeter._escape import visible
from rankmeter.comparison import CURVE_FAMILIES, Comparison, Difference, Failures
from rankmeter.report import _svg
from rankmeter.report.comparison import headline, interval, legend, num, percent, pvalue, signed

__all__ = ["PALETTE", "render_html"]

#: Okabe-Ito colours (safe for the common colour-vision deficiencies), the baseline in dark grey.
BASELINE_COLOR = "#4d4d4d"
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
#: Dash patterns, cycled with the colours so that lines differ in more than hue.
DASHES = ("", "7 3", "2 3", "9 3 2 3")
#: Up to this many queries, the difference plot draws a point (with a tooltip) per query.
MAX_POINTS = 300

_CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #1f1f1f;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 20px; }
h1 { font-size: 24px; margin: 0 0 6px; }
h2 { font-size: 19px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 16px; margin: 18px 0 6px; }
nav ul { list-style: none; padding: 0; margin: 8px 0 0; display: flex; flex-wrap: wrap;
  gap: 4px 18px; }
a { color: #0a5a91; }
.headline { font-size: 15px; margin: 4px 0; }
.muted, .legend-text { color: #555; }
.legend-text { font-size: 13px; }
dl.settings { display: grid; grid-template-columns: max-content 1fr max-content 1fr;
  gap: 2px 16px; margin: 0; }
dl.settings dt { font-weight: 600; }
dl.settings dd { margin: 0; }
table { border-collapse: collapse; margin: 6px 0 8px; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; color: #555; padding-bottom: 4px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e6e6e6; vertical-align: top; }
thead th { border-bottom: 2px solid #999; text-align: left; white-space: nowrap; }
tbody th { text-align: left; }
td.num, th.num { text-align: right; white-space: nowrap; }
tbody + tbody { border-top: 2px solid #bbb; }
tr.baseline td, tr.baseline th { background: #f6f6f6; }
tr.sig.better td.pc, tr.sig.better td.delta { color: #0059a0; font-weight: 600; }
tr.sig.worse td.pc, tr.sig.worse td.delta { color: #b34100; font-weight: 600; }
.ci { color: #666; }
.mark { font-weight: 700; }
tr.flagged td, tr.flagged th { background: #fde3d4; }
tr.flagged td.flag { color: #b34100; font-weight: 700; }
tr.small td, tr.small th { color: #777; }
tr.small td.flag { font-style: italic; }
ul.notes li { color: #6b4b00; }
.plots { display: flex; flex-wrap: wrap; gap: 10px; }
figure { margin: 0; width: 380px; max-width: 100%; }
figure.wide { width: 1160px; }
figcaption { font-size: 13px; color: #444; }
svg.chart { display: block; max-width: 100%; height: auto; background: #fff; }
svg.chart text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  fill: #222; }
svg.chart .axis-label { font-weight: 600; }
.swatches { list-style: none; padding: 0; margin: 4px 0 10px; display: flex; flex-wrap: wrap;
  gap: 4px 18px; }
.swatch { display: inline-block; width: 14px; height: 14px; margin-right: 6px;
  vertical-align: -2px; border-radius: 2px; }
ul.ids { columns: 3 240px; margin: 4px 0; }
details { margin: 6px 0; }
summary { cursor: pointer; }
.qtext { color: #444; }
section.explanations > section { border-left: 3px solid #ccc; padding-left: 12px;
  margin: 14px 0; }
@media print { nav { display: none; } }
"""


def render_html(comparison: Comparison) -> str:
    """The comparison as one self-contained HTML page (UTF-8 text, no external resources).

    Parameters
    ----------
    comparison : the result of :func:`rankmeter.compare`; when it carries ``explanations``
        (``{system: {query: Explanation}}``) they are embedded and the worst queries link to them

    Returns
    -------
    str
        The page; the same comparison always gives the same text.

    Examples
    --------
    >>> import rankmeter
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}}
    >>> runs = {
    ...     "old": {"q1": {"x": 2.0, "a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}},
    ...     "new <v2>": {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}},
    ... }
    >>> page = render_html(rankmeter.compare(qrels, runs, ["nDCG@10", "AP"], resamples=200))
    >>> page.startswith("<!DOCTYPE html>"), page.count("<svg "), "new &lt;v2&gt;" in page
    (True, 6, True)
    """
    explanations = _explanations_of(comparison)
    anchors, sections = _anchored(explanations)
    styles = _Styles(comparison.systems, comparison.baseline)
    parts = [
        _head(comparison),
        "<body>",
        "<main>",
        _header(comparison, bool(sections)),
        _settings(comparison),
        _summary(comparison),
        _notes(comparison),
        _plots(comparison, styles),
        _segments(comparison),
        _failures(comparison, anchors),
        _explanations(sections),
        "</main>",
        "</body>",
        "</html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


class _Styles:
    """Each system's colour and dash pattern: the baseline grey and solid, then the palette."""

    def __init__(self, systems: Sequence[str], baseline: str) -> None:
        self.color: dict[str, str] = {}
        self.dash: dict[str, str] = {}
        others = [s for s in systems if s != baseline]
        self.color[baseline] = BASELINE_COLOR
        self.dash[baseline] = ""
        for i, system in enumerate(others):
            self.color[system] = PALETTE[i % len(PALETTE)]
            self.dash[system] = DASHES[(i + 1) % len(DASHES)]


def _e(value: object) -> str:
    """Escaped for HTML text and attributes, control characters shown as visible escapes."""
    return escape(visible(str(value)), quote=True)


def _explanations_of(comparison: Comparison) -> dict[str, dict[str, Any]]:
    """``{system: {query: Explanation}}`` in a fixed order: the comparison's systems first,
    each system's worst queries first, then the rest by query id."""
    found = getattr(comparison, "explanations", None) or {}
    worst = {f.system: [w.query for w in f.worst] for f in comparison.failures}
    systems = [s for s in comparison.systems if s in found]
    systems += sorted(str(s) for s in found if s not in comparison.systems)
    out: dict[str, dict[str, Any]] = {}
    for system in systems:
        by_query = found[system]
        if not by_query:
            continue
        listed = [q for q in worst.get(system, []) if q in by_query]
        listed += sorted(str(q) for q in by_query if q not in listed)
        out[system] = {q: by_query[q] for q in listed}
    return out


def _policy_text(policies: Any) -> str:
    """The evaluation policies, without the query-set part (the Queries row says it)."""
    rel = policies.to_dict()["rel"]
    parts = [f"relevant: grade >= {rel}", f"ties: {policies.ties}"]
    if policies.judged_only:
        parts.append("judged documents only")
    return "; ".join(parts)


def _level(comparison: Comparison) -> str:
    s = comparison.settings
    method = "BCa" if s.interval == "bca" else s.interval
    return f"{s.level:.0%} {method} bootstrap interval"


def _head(comparison: Comparison) -> str:
    others = [s for s in comparison.systems if s != comparison.baseline]
    return page_head(f"rankmeter: {', '.join(others)} vs {comparison.baseline}")


def page_head(title: str) -> str:
    """The start of a self-contained page, up to ``</head>``: charset, a Content-Security-Policy
    that forbids loading anything, the title and the shared stylesheet."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">",
            '<meta name="generator" content="rankmeter">',
            '<link rel="icon" href="data:,">',
            f"<title>{_e(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
        ]
    )


def _header(comparison: Comparison, explained: bool) -> str:
    links = [
        ("settings", "Settings"),
        ("summary", "Summary"),
        ("plots", "Plots"),
        ("segments", "Segments"),
        ("failures", "Failures"),
    ]
    if explained:
        links.append(("explanations", "Explanations"))
    items = "".join(f'<li><a href="#{k}">{t}</a></li>' for k, t in links)
    return (
        "<header>\n"
        f"<h1>Comparison against {_e(comparison.baseline)}</h1>\n"
        f'<p class="headline">{_e(headline(comparison))}</p>\n'
        f'<nav aria-label="Sections"><ul>{items}</ul></nav>\n'
        "</header>"
    )


def _settings(comparison: Comparison) -> str:
    s = comparison.settings
    test = {
        "randomization": f"paired randomization test ({s.resamples:,} sign flips, seed {s.seed})",
        "t": "paired t-test",
        "bootstrap": f"paired bootstrap test ({s.resamples:,} resamples, seed {s.seed})",
        "wilcoxon": "Wilcoxon signed-rank test",
        "sign": "sign test",
    }.get(s.test, s.test)
    correction = {
        "holm": "Holm",
        "bonferroni": "Bonferroni",
        "bh": "Benjamini-Hochberg",
        "none": "none",
    }.get(s.correction, s.correction)
    metric = comparison.failures[0].metric if comparison.failures else comparison.metrics[0]
    rows = [
        ("Baseline", s.baseline),
        ("Systems", ", ".join(comparison.systems)),
        (
            "Queries",
            f"{comparison.n_queries} (judged queries answered by at least one system; "
            "a system without results for one scores 0 on it)",
        ),
        ("Metrics", ", ".join(comparison.metrics)),
        ("Test", test),
        ("Correction", f"{correction}, over {len(comparison.differences)} comparisons"),
        ("Alpha", f"{s.alpha:g}"),
        ("Intervals", f"{_level(comparison)}s ({s.resamples:,} resamples)"),
        ("Resamples", f"{s.resamples:,}"),
        ("Seed", str(s.seed)),
        ("Policies", _policy_text(s.policies)),
        ("Segments", f"segments under {s.min_segment} queries are shown but never flagged"),
        ("Failure lists", f"on {metric}; nothing relevant = none in the top {s.cutoff}"),
    ]
    items = "\n".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    return (
        '<section id="settings" aria-labelledby="settings-h">\n'
        '<h2 id="settings-h">Settings</h2>\n'
        f'<dl class="settings">\n{items}\n</dl>\n'
        "</section>"
    )


def _summary_header(comparison: Comparison) -> list[str]:
    s = comparison.settings
    level = f"{s.level:.0%} CI"
    correction = {"holm": "Holm", "bonferroni": "Bonf.", "bh": "BH", "none": "uncorr."}.get(
        s.correction, s.correction
    )
    return [
        "metric",
        "system",
        "n",
        f"mean [{level}]",
        f"Δ vs {comparison.baseline} [{level}]",
        "rel.",
        "d_z",
        "p",
        f"p ({correction})",
        "W/T/L",
    ]


def _direction(d: Difference) -> str:
    if not d.significant:
        return ""
    return " sig better" if d.difference > 0 else " sig worse"


def _summary(comparison: Comparison) -> str:
    header = _summary_header(comparison)
    head = "".join(
        f'<th scope="col"{" class=num" if i >= 2 else ""}>{_e(h)}</th>'
        for i, h in enumerate(header)
    )
    bodies = []
    for metric in comparison.metrics:
        rows = []
        for j, system in enumerate(comparison.systems):
            mean = comparison.mean(system, metric)
            cells = [
                f'<th scope="row" class="system">{_e(system)}</th>',
                f'<td class="num n">{mean.n}</td>',
                f'<td class="num mean">{num(mean.mean)} '
                f'<span class="ci">{interval(mean.low, mean.high)}</span></td>',
            ]
            if system == comparison.baseline:
                kind = "baseline"
                cells.append('<td class="muted" colspan="7">baseline</td>')
            else:
                d = comparison.difference(system, metric)
                kind = "system" + _direction(d)
                mark = (
                    '<span class="mark" title="significant after the correction">*</span>'
                    if d.significant
                    else ""
                )
                cells += [
                    f'<td class="num delta">{signed(d.difference)} '
                    f'<span class="ci">{interval(d.low, d.high, sign=True)}</span></td>',
                    f'<td class="num rel">{percent(d.relative)}</td>',
                    f'<td class="num dz">{num(d.effect_size, 2)}</td>',
                    f'<td class="num p">{pvalue(d.p_value)}</td>',
                    f'<td class="num pc">{pvalue(d.p_corrected)}{mark}</td>',
                    f'<td class="num wtl">{d.wins}/{d.ties}/{d.losses}</td>',
                ]
            first = (
                f'<th scope="rowgroup" rowspan="{len(comparison.systems)}" class="metric">'
                f"{_e(metric)}</th>"
                if j == 0
                else ""
            )
            rows.append(
                f'<tr class="{kind}" data-metric="{_e(metric)}" data-system="{_e(system)}">'
                f"{first}{''.join(cells)}</tr>"
            )
        bodies.append(f'<tbody data-metric="{_e(metric)}">\n' + "\n".join(rows) + "\n</tbody>")
    caption = (
        f"Mean of each metric over {comparison.n_queries} queries with its {_level(comparison)}; "
        f"every system against the baseline {comparison.baseline}, paired on the same queries."
    )
    return (
        '<section id="summary" aria-labelledby="summary-h">\n'
        '<h2 id="summary-h">Summary</h2>\n'
        f'<table class="summary">\n<caption>{_e(caption)}</caption>\n'
        f"<thead><tr>{head}</tr></thead>\n" + "\n".join(bodies) + "\n</table>\n"
        f'<p class="legend-text">{_e(legend(comparison))} Blue Δ and p: significantly better '
        "than the baseline; orange-red: significantly worse.</p>\n"
        "</section>"
    )


def _notes(comparison: Comparison) -> str:
    if not comparison.notes:
        return ""
    items = "\n".join(f"<li>{_e(n)}</li>" for n in comparison.notes)
    return (
        '<section id="notes" aria-labelledby="notes-h">\n'
        f'<h2 id="notes-h">Notes</h2>\n<ul class="notes">\n{items}\n</ul>\n</section>'
    )


def _swatches(comparison: Comparison, styles: _Styles) -> str:
    items = []
    for system in comparison.systems:
        role = " (baseline)" if system == comparison.baseline else ""
        items.append(
            f'<li><span class="swatch" style="background:{styles.color[system]}" '
            f'aria-hidden="true"></span>{_e(system)}{role}</li>'
        )
    return '<ul class="swatches" aria-label="Systems">' + "".join(items) + "</ul>"


def _plots(comparison: Comparison, styles: _Styles) -> str:
    parts = [
        '<section id="plots" aria-labelledby="plots-h">',
        '<h2 id="plots-h">Plots</h2>',
        _swatches(comparison, styles),
        '<h3 id="means">Means with their intervals</h3>',
        '<div class="plots">',
        *_mean_charts(comparison, styles),
        "</div>",
    ]
    differences = _difference_chart(comparison, styles)
    if differences:
        parts += [
            '<h3 id="differences">Per-query differences</h3>',
            '<div class="plots">',
            differences,
            "</div>",
        ]
    curves = _curve_charts(comparison, styles)
    if curves:
        parts += [
            '<h3 id="curves">Metric@k curves</h3>',
            '<div class="plots">',
            *curves,
            "</div>",
        ]
    parts.append("</section>")
    return "\n".join(parts)


def _figure(svg: str, caption: str, wide: bool = False) -> str:
    kind = ' class="wide"' if wide else ""
    return f"<figure{kind}>\n{svg}\n<figcaption>{_e(caption)}</figcaption>\n</figure>"


def _mean_charts(comparison: Comparison, styles: _Styles) -> list[str]:
    out = []
    level = _level(comparison)
    for i, metric in enumerate(comparison.metrics):
        bars = []
        described = []
        n = comparison.n_queries
        for system in comparison.systems:
            mean = comparison.mean(system, metric)
            n = mean.n
            text = f"{system}: {num(mean.mean)} {interval(mean.low, mean.high)}, n = {mean.n}"
            described.append(text)
            bars.append(
                _svg.Bar(
                    label=system,
                    value=mean.mean,
                    low=mean.low,
                    high=mean.high,
                    color=styles.color[system],
                    tooltip=f"{metric} of {text}",
                    caption=num(mean.mean),
                )
            )
        svg = _svg.bar_chart(
            ident=f"chart-means-{i}",
            title=f"Mean {metric} per system",
            desc=f"Mean {metric} of each system with its {level}: " + "; ".join(described),
            y_label=f"mean {metric}",
            bars=bars,
        )
        out.append(_figure(svg, f"Mean {metric} over n = {n} queries; whiskers: the {level}."))
    return out


def _difference_chart(comparison: Comparison, styles: _Styles) -> str:
    if not comparison.metrics or len(comparison.systems) < 2:
        return ""
    metric = comparison.metrics[0]
    by_system = comparison.scores.get(metric)
    if by_system is None or comparison.baseline not in by_system:
        return ""
    base = np.asarray(by_system[comparison.baseline], dtype=np.float64)
    n = len(base)
    series = []
    described = []
    for system in comparison.systems:
        if system == comparison.baseline or system not in by_system:
            continue
        diffs = np.asarray(by_system[system], dtype=np.float64) - base
        order = np.lexsort((np.arange(n), diffs))
        values = [float(diffs[k]) for k in order]
        d = comparison.difference(system, metric)
        wtl = f"{d.wins}/{d.ties}/{d.losses}"
        tips = (
            [f"{system}, {comparison.query_ids[k]}: {signed(float(diffs[k]))}" for k in order]
            if len(comparison.query_ids) == n
            else []
        )
        series.append(
            _svg.Series(
                name=f"{system} (W/T/L {wtl})",
                values=values,
                color=styles.color[system],
                dash=styles.dash[system],
                points=n <= MAX_POINTS,
                tooltips=tips,
            )
        )
        described.append(
            f"{system}: won {d.wins}, tied {d.ties}, lost {d.losses}; "
            f"from {signed(values[0]) if values else '–'} to "
            f"{signed(values[-1]) if values else '–'}"
        )
    if not series:
        return ""
    svg = _svg.line_chart(
        ident="chart-differences",
        kind="differences",
        title=f"Per-query {metric} differences against {comparison.baseline}, sorted",
        desc=f"For each system, its {n} per-query differences in {metric} from the baseline "
        f"{comparison.baseline}, sorted from the largest loss to the largest gain: "
        + "; ".join(described),
        x_label=f"queries, sorted by difference (n = {n})",
        y_label=f"Δ {metric} vs {comparison.baseline}",
        series=series,
        width=1160,
        height=400,
        zero_line=True,
    )
    return _figure(
        svg,
        f"Per-query difference in {metric} from the baseline {comparison.baseline}, each "
        f"system's {n} queries sorted from its largest loss to its largest gain; above the "
        "zero line the system beats the baseline. W/T/L: queries won, tied, lost.",
        wide=True,
    )


def _families(curves: Mapping[str, Any]) -> list[str]:
    known = [f for f in CURVE_FAMILIES if f in curves]
    return known + sorted(f for f in curves if f not in CURVE_FAMILIES)


def _curve_charts(comparison: Comparison, styles: _Styles) -> list[str]:
    out = []
    for i, family in enumerate(_families(comparison.curves)):
        by_system = comparison.curves[family]
        series = []
        described = []
        depth = 0
        for system in comparison.systems:
            if system not in by_system:
                continue
            values = [float(v) for v in by_system[system]]
            depth = max(depth, len(values))
            series.append(
                _svg.Series(
                    name=system, values=values, color=styles.color[system], dash=styles.dash[system]
                )
            )
            described.append(
                f"{system}: "
                + ", ".join(
                    f"{family}@{k} = {num(values[k - 1])}" for k in (1, 10, 100) if k <= len(values)
                )
            )
        if not series:
            continue
        svg = _svg.line_chart(
            ident=f"chart-curves-{i}",
            kind="curves",
            title=f"Mean {family}@k for k = 1 to {depth}",
            desc=f"Mean {family}@k of each system over {comparison.n_queries} queries for k = 1 "
            f"to {depth}: " + "; ".join(described),
            x_label="k (cutoff)",
            y_label=f"mean {family}@k",
            series=series,
            width=380,
            height=330,
            y_from_zero=True,
        )
        out.append(
            _figure(
                svg, f"Mean {family}@k, k = 1..{depth}, over n = {comparison.n_queries} queries."
            )
        )
    return out


def _segments(comparison: Comparison) -> str:
    head = '<section id="segments" aria-labelledby="segments-h">\n<h2 id="segments-h">Segments</h2>'
    if not comparison.segments:
        return head + '\n<p class="muted">No segments were given (--segments).</p>\n</section>'
    level = f"{comparison.settings.level:.0%} CI"
    header = [
        "segment",
        "n",
        "metric",
        "system",
        f"{comparison.baseline} mean",
        "system mean",
        f"Δ [{level}]",
        "p",
        "p (corr.)",
        "flag",
    ]
    numeric = {1, 4, 5, 6, 7, 8}
    th = "".join(
        f'<th scope="col"{" class=num" if i in numeric else ""}>{_e(h)}</th>'
        for i, h in enumerate(header)
    )
    rows = []
    for s in comparison.segments:
        kind = "flagged" if s.flagged else ("small" if s.small else "segment")
        flag = "WORSE" if s.flagged else ("small" if s.small else "")
        rows.append(
            f'<tr class="{kind}" data-segment="{_e(s.segment)}" data-system="{_e(s.system)}" '
            f'data-metric="{_e(s.metric)}">'
            f'<th scope="row">{_e(s.segment)}</th>'
            f'<td class="num n">{s.n}</td>'
            f"<td>{_e(s.metric)}</td>"
            f"<td>{_e(s.system)}</td>"
            f'<td class="num">{num(s.baseline_mean)}</td>'
            f'<td class="num">{num(s.system_mean)}</td>'
            f'<td class="num">{signed(s.difference)} '
            f'<span class="ci">{interval(s.low, s.high, sign=True)}</span></td>'
            f'<td class="num">{pvalue(s.p_value)}</td>'
            f'<td class="num">{pvalue(s.p_corrected)}</td>'
            f'<td class="flag">{flag}</td></tr>'
        )
    flagged = sum(s.flagged for s in comparison.segments)
    out = [
        head,
        f'<table class="segments">\n<caption>{flagged} of {len(comparison.segments)} rows '
        "flagged: the system is significantly worse than the baseline on that segment.</caption>",
        f"<thead><tr>{th}</tr></thead>",
        "<tbody>",
        *rows,
        "</tbody>",
        "</table>",
        '<p class="legend-text">WORSE (highlighted) = significantly worse than the baseline '
        "after the correction across segments; small = fewer than "
        f"{comparison.settings.min_segment} queries (shown, never flagged).</p>",
    ]
    if comparison.segment_means:
        mean_rows = "\n".join(
            f'<tr><th scope="row">{_e(m.segment)}</th><td>{_e(m.system)}</td>'
            f"<td>{_e(m.metric)}</td>"
            f'<td class="num n">{m.n}</td><td class="num">{num(m.mean)} '
            f'<span class="ci">{interval(m.low, m.high)}</span></td></tr>'
            for m in comparison.segment_means
        )
        out += [
            "<details>",
            "<summary>Every system's mean per segment</summary>",
            '<table class="segment-means">',
            '<thead><tr><th scope="col">segment</th><th scope="col">system</th>'
            '<th scope="col">metric</th><th scope="col" class="num">n</th>'
            f'<th scope="col" class="num">mean [{level}]</th></tr></thead>',
            f"<tbody>\n{mean_rows}\n</tbody>",
            "</table>",
            "</details>",
        ]
    out.append("</section>")
    return "\n".join(out)


def _query_list(ids: Sequence[str], texts: Mapping[str, str], what: str, css: str) -> str:
    if not ids:
        return f'<p class="{css}">{_e(what)}: none.</p>'
    items = "\n".join(
        f"<li><code>{_e(q)}</code>"
        + (f' <span class="qtext">{_e(texts[q])}</span>' if q in texts else "")
        + "</li>"
        for q in ids
    )
    opened = " open" if len(ids) <= 10 else ""
    return (
        f'<details class="{css}"{opened}><summary>{_e(what)}: {len(ids)} '
        f"quer{'y' if len(ids) == 1 else 'ies'}</summary>\n"
        f'<ul class="ids">\n{items}\n</ul>\n</details>'
    )


def _quantile_table(comparison: Comparison, failures: Sequence[Failures]) -> str:
    shown = [f for f in failures if f.system != comparison.baseline]
    if not shown:
        return ""
    names = list(shown[0].quantiles)
    th = "".join(f'<th scope="col" class="num">{_e(k)}</th>' for k in names)
    rows = "\n".join(
        f'<tr data-system="{_e(f.system)}"><th scope="row">{_e(f.system)}</th>'
        f'<td class="num n">{comparison.n_queries}</td>'
        + "".join(f'<td class="num">{signed(f.quantiles.get(k, math.nan))}</td>' for k in names)
        + "</tr>"
        for f in shown
    )
    metric = shown[0].metric
    return (
        f'<table class="quantiles">\n<caption>Spread of the per-query {_e(metric)} differences '
        f"from the baseline {_e(comparison.baseline)}.</caption>\n"
        f'<thead><tr><th scope="col">system</th><th scope="col" class="num">n</th>{th}</tr>'
        f"</thead>\n<tbody>\n{rows}\n</tbody>\n</table>"
    )


def _worst_table(
    comparison: Comparison, f: Failures, anchors: Mapping[tuple[str, str], str]
) -> str:
    if not f.worst:
        return f'<p class="worst">No query scored lower on {_e(f.metric)} than the baseline.</p>'
    rows = []
    for rank, w in enumerate(f.worst, 1):
        anchor = anchors.get((f.system, w.query))
        query = (
            f'<a class="explain" href="#{_e(anchor)}">{_e(w.query)}</a>'
            if anchor is not None
            else _e(w.query)
        )
        text = w.text if w.text is not None else comparison.queries.get(w.query, "")
        rows.append(
            f'<tr data-query="{_e(w.query)}"><td class="num">{rank}</td>'
            f'<th scope="row">{query}</th><td class="qtext">{_e(text)}</td>'
            f'<td class="num">{num(w.baseline)}</td><td class="num">{num(w.system)}</td>'
            f'<td class="num">{signed(w.difference)}</td></tr>'
        )
    linked = " Query ids link to their explanation." if anchors else ""
    return (
        f'<table class="worst">\n<caption>The {len(f.worst)} queries that lost most on '
        f"{_e(f.metric)}.{linked}</caption>\n"
        '<thead><tr><th scope="col" class="num">#</th><th scope="col">query</th>'
        f'<th scope="col">text</th><th scope="col" class="num">{_e(comparison.baseline)}</th>'
        f'<th scope="col" class="num">{_e(f.system)}</th><th scope="col" class="num">Δ</th>'
        "</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>"
    )


def _failures(comparison: Comparison, anchors: Mapping[tuple[str, str], str]) -> str:
    k = comparison.settings.cutoff
    texts = comparison.queries
    parts = [
        '<section id="failures" aria-labelledby="failures-h">',
        '<h2 id="failures-h">Failures</h2>',
        _quantile_table(comparison, comparison.failures),
    ]
    for i, f in enumerate(comparison.failures):
        role = " (baseline)" if f.system == comparison.baseline else ""
        parts.append(
            f'<section class="failure" id="failures-{i}" data-system="{_e(f.system)}">'
            f"<h3>{_e(f.system)}{role}</h3>"
        )
        if f.system != comparison.baseline:
            parts.append(_worst_table(comparison, f, anchors))
        parts.append(_query_list(f.no_results, texts, "Returned nothing", "no-results"))
        parts.append(
            _query_list(
                f.nothing_relevant, texts, f"Nothing relevant in the top {k}", "nothing-relevant"
            )
        )
        parts.append("</section>")
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _anchored(
    explanations: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[tuple[str, str], str], list[tuple[str, list[str]]]]:
    """Link targets of the explanations and their HTML, per system.

    An explanation's anchor names its query and metric, not its run, so two systems' explanations
    of the same query can share it; a later one gets an id of its own (``<anchor>-2``, ...) and
    its system's row links there, so that every id on the page is unique.
    """
    anchors: dict[tuple[str, str], str] = {}
    sections: list[tuple[str, list[str]]] = []
    used: set[str] = set()
    for system, by_query in explanations.items():
        fragments = []
        for query, explanation in by_query.items():
            anchor = str(explanation.anchor)
            fragment = str(explanation.to_html())
            if anchor in used:
                k = 2
                while f"{anchor}-{k}" in used:
                    k += 1
                own = f"{anchor}-{k}"
                given = f'id="{_e(anchor)}"'
                if given in fragment:
                    fragment = fragment.replace(given, f'id="{_e(own)}"', 1)
                else:
                    fragment = f'<div class="explanation" id="{_e(own)}">\n{fragment}\n</div>'
                anchor = own
            used.add(anchor)
            anchors[(system, query)] = anchor
            fragments.append(fragment)
        sections.append((system, fragments))
    return anchors, sections


def _explanations(sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    if not sections:
        return ""
    parts = [
        '<section id="explanations" class="explanations" aria-labelledby="explanations-h">',
        '<h2 id="explanations-h">Explanations</h2>',
    ]
    for system, fragments in sections:
        parts.append(f"<h3>{_e(system)}</h3>")
        parts += [f.rstrip("\n") for f in fragments]
    parts.append("</section>")
    return "\n".join(parts)
