"""Render power analyses (:class:`rankmeter.stats.PowerAnalysis`, one per metric) of one
system against a baseline: a terminal table (rich), Markdown and strict JSON.

Every format says the same things: the settings (test, alpha and the level each test runs at
under the correction, the target power), one row per metric (the queries at hand, the
difference and spread planned for, the power at n, the queries needed, the detectable
difference), one sentence per metric ("with 225 queries a difference of 0.031 nDCG@10 is
detectable at 80% power"), what each number means, and for the randomization test how it was
simulated and its Monte-Carlo error. Run names and metric labels are untrusted text: rich
``Text``, the one Markdown table writer and escaper, and strict JSON.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rankmeter._escape import markdown_text
from rankmeter.report._json import json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, signed
from rankmeter.stats import PowerAnalysis, correction_phrase, paired_test_label, power_sentence

if TYPE_CHECKING:
    from rankmeter.comparison import RunsPower

__all__ = ["PowerReport", "payload", "render_json", "render_markdown", "render_table"]

HEADER = (
    "metric",
    "queries",
    "Δ planned",
    "sd",
    "d_z",
    "power at n",
    "queries needed",
    "detectable Δ",
)
_ALIGN: tuple[Align, ...] = (None, "right", "right", "right", "right", "right", "right", "right")


def payload(
    analyses: Mapping[str, PowerAnalysis],
    *,
    baseline: str,
    system: str,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The JSON document: who is compared, the shared settings, every metric's analysis (its
    ``to_dict()``), the sentences and the notes."""
    first = _first(analyses)
    return {
        "baseline": baseline,
        "system": system,
        "test": first.test,
        "alpha": first.alpha,
        "correction": first.correction,
        "comparisons": first.comparisons,
        "alpha_per_test": first.alpha_per_test,
        "power": first.target_power,
        "metrics": {label: analysis.to_dict() for label, analysis in analyses.items()},
        "sentences": {label: _sentence(label, a) for label, a in analyses.items()},
        "notes": [*notes, *_method(first), *_unreachable(analyses)],
    }


def render_json(
    analyses: Mapping[str, PowerAnalysis],
    *,
    baseline: str,
    system: str,
    notes: Sequence[str] = (),
) -> str:
    """:func:`payload` as strict JSON (``inf`` and NaN are null)."""
    return json_text(payload(analyses, baseline=baseline, system=system, notes=notes))


def headline(analyses: Mapping[str, PowerAnalysis], *, baseline: str, system: str) -> str:
    """``dense vs bm25: paired t-test, alpha 0.05 (Holm correction over 2 metrics: 0.025 per
    test), target power 80%``."""
    first = _first(analyses)
    label = paired_test_label(
        first.test,
        resamples=first.resamples if first.test == "randomization" else None,
        seed=first.seed,
    )
    if first.correction == "none" or first.comparisons == 1:
        level = f"alpha {first.alpha:g}"
    else:
        metrics = "metric" if first.comparisons == 1 else "metrics"
        level = (
            f"alpha {first.alpha:g} ({correction_phrase(first.correction)} over "
            f"{first.comparisons} {metrics}: {first.alpha_per_test:.3g} per test)"
        )
    return f"{system} vs {baseline}: {label}, {level}, target power {first.target_power:.0%}"


def _first(analyses: Mapping[str, PowerAnalysis]) -> PowerAnalysis:
    if not analyses:
        raise ValueError("no power analysis to render")
    return next(iter(analyses.values()))


def _sentence(label: str, analysis: PowerAnalysis) -> str:
    return power_sentence(analysis.n, analysis.detectable_difference, label, analysis.target_power)


def _power_cell(analysis: PowerAnalysis) -> str:
    # A power is below 1: 0.9996 is not shown as a certain 1.000.
    nearly_one = 0.9995 <= analysis.power_at_n < 1
    shown_power = ">0.999" if nearly_one else num(analysis.power_at_n, 3)
    if analysis.power_error is None or analysis.simulations is None:
        return shown_power
    if analysis.power_error == 0:  # every simulated set, or none: a binomial error of 0 says
        significant = round(analysis.power_at_n * analysis.simulations)  # too little
        return f"{shown_power} ({significant:,} of {analysis.simulations:,})"
    return f"{shown_power} ± {num(analysis.power_error, 3)}"


def _needed_cell(analysis: PowerAnalysis) -> str:
    if analysis.queries_needed is not None:
        return f"{analysis.queries_needed:,}"
    if analysis.effect == 0:
        return "never (Δ = 0)"
    return f"> {analysis.max_queries:,}" if analysis.max_queries else "–"


def _rows(analyses: Mapping[str, PowerAnalysis]) -> Iterator[tuple[str, ...]]:
    for label, a in analyses.items():
        yield (
            label,
            f"{a.n:,}",
            signed(a.effect),
            num(a.sd),
            signed(a.effect_size, 3),
            _power_cell(a),
            _needed_cell(a),
            "none" if math.isinf(a.detectable_difference) else num(a.detectable_difference),
        )


def _legend(first: PowerAnalysis) -> list[str]:
    """What each number means."""
    planned = (
        "here the observed mean of system minus baseline and its standard deviation"
        if first.source == "observed"
        else f"here from {first.source}"
    )
    return [
        "Δ planned, sd: the true difference the analysis plans for and the spread of the "
        f"per-query differences ({planned}); d_z = Δ / sd",
        "power at n: the chance that the test calls Δ significant with the queries at hand "
        "(at Δ = the observed difference it says no more than the p-value does)",
        f"queries needed: the fewest queries with at least {first.target_power:.0%} power "
        "for Δ, queries like these",
        f"detectable Δ: the smallest true difference found with {first.target_power:.0%} "
        "power at the current number of queries (minimum detectable difference)",
    ]


def _unreachable(analyses: Mapping[str, PowerAnalysis]) -> list[str]:
    """Why a detectable Δ reads "none": the test cannot reach its level on so few queries."""
    if not any(math.isinf(a.detectable_difference) for a in analyses.values()):
        return []
    first = _first(analyses)
    return [
        f"detectable Δ none: with {first.n:,} queries the test never gives a p-value below "
        f"{first.alpha_per_test:.3g}, whatever the difference (the exact randomization "
        f"test's smallest is 2/2^n); more queries are needed"
    ]


def _method(first: PowerAnalysis) -> list[str]:
    """How the numbers were made: the t-test's formula, or the simulation and its error."""
    lines = []
    if first.test == "t":
        lines.append(
            f"{paired_test_label('t')}: analytic (noncentral t, as statsmodels' TTestPower, "
            "two-sided)"
        )
    else:
        drawn = (
            "resampled from the observed differences (centred, scaled to sd, shifted to Δ)"
            if first.source.startswith("observed")
            else "drawn from a normal distribution with mean Δ and standard deviation sd"
        )
        test = paired_test_label("randomization", resamples=first.resamples, seed=first.seed)
        lines.append(
            f"{test}: simulated, {first.simulations:,} query sets {drawn}, each tested as "
            f"compare tests; the ± after the power at n is its Monte-Carlo standard error, "
            f"±{first.monte_carlo_error or 0:.3f} at {first.target_power:.0%} power, where the "
            "queries needed and the detectable Δ are read"
        )
    if first.correction != "none" and first.comparisons > 1:
        lines.append(
            f"{correction_phrase(first.correction)}: each test at alpha / {first.comparisons} "
            "(Bonferroni's level, the first step of Holm and BH): for Holm and BH a lower "
            "bound of the power, an upper bound of the queries needed"
        )
    return lines


def render_table(
    analyses: Mapping[str, PowerAnalysis],
    *,
    baseline: str,
    system: str,
    notes: Sequence[str] = (),
) -> Any:
    """A rich renderable: the headline, the table, a sentence per metric, the legend, notes."""
    from rich.console import Group

    first = _first(analyses)
    table = FittedTable(title="power and sample size", title_justify="left")
    for index, header in enumerate(HEADER):
        if index == 0:
            table.add_column(header, text=True)
        else:
            table.add_column(header, justify="right")
    for row in _rows(analyses):
        table.add_row(shown(row[0]), *row[1:])
    parts: list[Any] = [shown(headline(analyses, baseline=baseline, system=system), "bold")]
    parts.append(table)
    parts += [shown(_sentence(label, a)) for label, a in analyses.items()]
    parts += [
        shown(line, "dim")
        for line in [*_legend(first), *_method(first), *_unreachable(analyses), *notes]
    ]
    return Group(*parts)


def render_markdown(
    analyses: Mapping[str, PowerAnalysis],
    *,
    baseline: str,
    system: str,
    notes: Sequence[str] = (),
) -> str:
    """The same as Markdown: every cell and line escaped."""
    first = _first(analyses)
    lines = [f"**{markdown_text(headline(analyses, baseline=baseline, system=system))}**", ""]
    lines += markdown_table(HEADER, _rows(analyses), _ALIGN)
    lines.append("")
    lines += [f"- {markdown_text(_sentence(label, a))}" for label, a in analyses.items()]
    lines.append("")
    lines += [
        f"- {markdown_text(line)}"
        for line in [*_legend(first), *_method(first), *_unreachable(analyses), *notes]
    ]
    return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class PowerReport:
    """What the power report shows: one analysis per metric (``analyses``) of ``system``
    against ``baseline``, and notes on the data; rendered by :func:`rankmeter.report.render`
    as ``table``, ``json`` or ``markdown``."""

    analyses: Mapping[str, PowerAnalysis]
    baseline: str
    system: str
    notes: Sequence[str] = ()


@renders(PowerReport, "json")
def _json(report: PowerReport) -> str:
    return render_json(
        report.analyses, baseline=report.baseline, system=report.system, notes=report.notes
    )


@renders(PowerReport, "markdown")
def _markdown(report: PowerReport) -> str:
    return render_markdown(
        report.analyses, baseline=report.baseline, system=report.system, notes=report.notes
    )


@renders(PowerReport, "table")
def _table(report: PowerReport) -> Any:
    return render_table(
        report.analyses, baseline=report.baseline, system=report.system, notes=report.notes
    )


# compare_power's result (rankmeter.comparison.RunsPower), rendered as its PowerReport is.


def _of_runs(result: RunsPower) -> PowerReport:
    return PowerReport(
        result.analyses, baseline=result.baseline, system=result.system, notes=result.notes
    )


@renders("rankmeter.comparison.RunsPower", "json")
def _runs_json(result: RunsPower) -> str:
    return _json(_of_runs(result))


@renders("rankmeter.comparison.RunsPower", "markdown")
def _runs_markdown(result: RunsPower) -> str:
    return _markdown(_of_runs(result))


@renders("rankmeter.comparison.RunsPower", "table")
def _runs_table(result: RunsPower) -> Any:
    return _table(_of_runs(result))
