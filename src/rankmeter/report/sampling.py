"""Write a drawn evaluation query set (:class:`rankmeter.online.QuerySample`): CSV, TSV or JSON
lines, one row per query (query_id, count, stratum, and split with a holdout), and the one-line
summary a person reads on stderr; and render an evaluation set's mix against traffic
(:class:`rankmeter.online.QueryMix`): a terminal table, Markdown and strict JSON.

The rows are data: ids are written byte-exact (CSV quoting where a field needs it), never
escaped for a terminal here (the CLI does that when stdout is one).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rankmeter._escape import markdown_text
from rankmeter.report._json import json_line, json_text
from rankmeter.report._markdown import Align, markdown_table
from rankmeter.report._registry import renders
from rankmeter.report._rich import FittedTable, shown
from rankmeter.report._text import num, pvalue
from rankmeter.stats import paired_test_label

if TYPE_CHECKING:
    from rankmeter.online import QueryMix, QuerySample

__all__ = [
    "MIX_HEADER",
    "mix_payload",
    "render_csv",
    "render_jsonl",
    "render_mix_json",
    "render_mix_markdown",
    "render_mix_table",
    "summary",
]


def render_csv(sample: QuerySample, *, delimiter: str = ",") -> str:
    """A header and one row per drawn query (``delimiter="\\t"`` for TSV)."""
    rows = sample.rows()
    header = ["query_id", "count", "stratum"] + (["split"] if sample.splits is not None else [])
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([row[name] for name in header])
    return buffer.getvalue()


@renders("rankmeter.online.QuerySample", "csv")
def _csv(sample: QuerySample) -> str:
    return render_csv(sample)


@renders("rankmeter.online.QuerySample", "tsv")
def _tsv(sample: QuerySample) -> str:
    return render_csv(sample, delimiter="\t")


@renders("rankmeter.online.QuerySample", "jsonl")
def render_jsonl(sample: QuerySample) -> str:
    """One JSON object per drawn query."""
    return "".join(json_line(row) for row in sample.rows())


def summary(sample: QuerySample) -> str:
    """``drew 200 of 5,321 queries (traffic-weighted; seed 0): head 67 (33.4% of traffic),
    ...; holdout: 40 test, 160 tuning``."""
    how = "traffic-weighted" if sample.weighting == "traffic" else "uniform"
    parts = []
    for s in sample.strata:
        share = s.traffic_share if sample.weighting == "traffic" else s.query_share
        of = "of traffic" if sample.weighting == "traffic" else "of queries"
        parts.append(f"{s.name} {s.drawn:,} ({share:.1%} {of})")
    text = (
        f"drew {sample.n:,} of {sample.population:,} queries ({how}; seed {sample.seed}): "
        + ", ".join(parts)
    )
    if sample.splits is not None:
        test = sum(s.test for s in sample.strata)
        text += f"; holdout: {test:,} test, {sample.n - test:,} tuning"
    return text


# --- the evaluation set's mix against traffic ---------------------------------------------------

MIX_HEADER = (
    "stratum",
    "share of traffic",
    "eval queries",
    "eval share",
    "expected",
    "detectable Δ",
)
_MIX_ALIGN: tuple[Align, ...] = (None, "right", "right", "right", "right", "right")


def _mix_header(mix: QueryMix) -> tuple[str, ...]:
    share = "share of traffic" if mix.weighting == "traffic" else "share of queries"
    return (MIX_HEADER[0], share, *MIX_HEADER[2:])


def mix_rows(mix: QueryMix) -> Iterator[tuple[str, ...]]:
    """One row per stratum."""
    for s in mix.strata:
        yield (
            s.name,
            f"{s.traffic_share:.1%}",
            f"{s.eval_n:,}",
            f"{s.eval_share:.1%}",
            f"{s.expected_n:,.1f}",
            num(s.detectable_difference, 3),
        )


def mix_headline(mix: QueryMix) -> str:
    """``the evaluation set against traffic: chi-square 12.80, 1 df, p 0.0003 (the mix differs
    at alpha 0.05)``."""
    if mix.dof == 0:
        verdict = "one stratum only: no test"
        return f"the evaluation set against traffic: {verdict}"
    differs = "differs" if mix.p_value < mix.alpha else "does not differ detectably"
    return (
        f"the evaluation set against traffic: chi-square {mix.chi_square:.2f}, {mix.dof} df, "
        f"p {pvalue(mix.p_value)} (the mix {differs} at alpha {mix.alpha:g})"
    )


def mix_legend(mix: QueryMix) -> list[str]:
    """What each column means, and what was left out."""
    what = "traffic (requests)" if mix.weighting == "traffic" else "distinct queries"
    strata = (
        "head, torso, tail: the most frequent queries making the first third of the traffic, "
        "the next third, the rest"
        if mix.stratify == "bucket"
        else f"strata: the values of the segment column {mix.stratify!r}"
    )
    unit = "in units of the per-query spread (d_z)" if mix.sd == 1.0 else f"with sd {mix.sd:g}"
    lines = [
        strata,
        f"share: each stratum's share of the {what}; expected: the evaluation queries it would "
        f"have in that proportion ({mix.n_matched:,} found in the log)",
        "chi-square: scipy.stats.chisquare of the evaluation counts against the expected ones",
        f"detectable Δ: the smallest true mean difference a {paired_test_label('t')} finds with "
        f"{mix.power:.0%} power at alpha {mix.alpha:g} on the stratum's queries alone, {unit}",
    ]
    untested = [s.name for s in mix.strata if not math.isfinite(s.detectable_difference)]
    if untested:
        lines.append(
            "– (detectable Δ): fewer than 2 evaluation queries in the stratum "
            f"({', '.join(untested)}): a paired test needs two"
        )
    # Cochran's rule: the chi-square distribution approximates the statistic's poorly when an
    # expected count is below 5, so the p-value above can be far off there.
    rough = [s for s in mix.strata if 0 < s.expected_n < 5]
    if mix.dof > 0 and rough:
        lines.append(
            f"expected counts below 5 in {len(rough)} of {len(mix.strata)} strata: the "
            "chi-square test's p-value is a rough approximation there ("
            + ", ".join(f"{s.name} {s.expected_n:.1f}" for s in rough)
            + ")"
        )
    if mix.no_traffic:
        empty = [s.name for s in mix.strata if s.traffic_share == 0 and s.eval_n]
        lines.append(
            f"{mix.no_traffic:,} of the {mix.n_matched:,} evaluation queries are in strata "
            f"without traffic ({', '.join(empty)}): left out of the test and of the expected "
            "counts"
        )
    if mix.missing:
        lines.append(
            f"{mix.missing:,} of the {mix.n_eval:,} evaluation queries are not in the log: "
            "left out of the shares and the test"
        )
    return lines


def mix_payload(mix: QueryMix) -> dict[str, Any]:
    """The JSON document: every field of the result, the headline and the legend."""
    return {**mix.to_dict(), "headline": mix_headline(mix), "legend": mix_legend(mix)}


@renders("rankmeter.online.QueryMix", "json")
def render_mix_json(mix: QueryMix) -> str:
    """:func:`mix_payload` as strict JSON (NaN is null)."""
    return json_text(mix_payload(mix))


@renders("rankmeter.online.QueryMix", "table")
def render_mix_table(mix: QueryMix) -> Any:
    """A rich renderable: the headline, the table, the legend."""
    from rich.console import Group

    table = FittedTable(title="the evaluation set's mix", title_justify="left")
    for index, header in enumerate(_mix_header(mix)):
        if index == 0:
            table.add_column(header, text=True)
        else:
            table.add_column(header, justify="right")
    for row in mix_rows(mix):
        table.add_row(shown(row[0]), *row[1:])
    parts: list[Any] = [shown(mix_headline(mix), "bold"), table]
    parts += [shown(line, "dim") for line in mix_legend(mix)]
    return Group(*parts)


@renders("rankmeter.online.QueryMix", "markdown")
def render_mix_markdown(mix: QueryMix) -> str:
    """The same as Markdown, every cell and line escaped."""
    lines = [f"**{markdown_text(mix_headline(mix))}**", ""]
    lines += markdown_table(_mix_header(mix), mix_rows(mix), _MIX_ALIGN)
    lines.append("")
    lines += [f"- {markdown_text(line)}" for line in mix_legend(mix)]
    return "\n".join(lines) + "\n"
