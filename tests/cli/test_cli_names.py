"""Results answer in the user's names (issue 9, section 2): every output is keyed by the name a
metric was asked for (``MRR@10`` stays ``MRR@10``), lookups accept any name of a metric, and
two names of one metric asked together are one column under the first name given."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rankmeter
from rankmeter.metrics import parse_metric, parse_metrics

from ._cli_support import CLI

ASKED = ["-m", "MRR@10", "-m", "ndcg_cut.10", "-m", "RR@10", "-m", "P.5,10"]
LABELS = ["MRR@10", "ndcg_cut.10", "P.5", "P.10"]


def test_labels_are_the_names_written_and_aliases_are_one_metric() -> None:
    measures = parse_metrics(
        ["MRR@10", "ndcg_cut.10", "RR@10", "P.5,10", "P@5", " map ", "nDCG ( gain = exp ) @\x1c3"]
    )
    assert [m.label for m in measures] == [*LABELS, "map", "nDCG(gain=exp)@3"]
    assert [str(m) for m in measures] == [
        "RR@10",
        "nDCG@10",
        "P@5",
        "P@10",
        "AP",
        "nDCG(gain=exp)@3",
    ]
    assert parse_metric("MRR@10") == parse_metric("RR@10")
    assert hash(parse_metric("MRR@10")) == hash(parse_metric("RR@10"))


def test_two_metrics_under_one_label_are_refused() -> None:
    with pytest.raises(rankmeter.MetricError, match=r"two different metrics are labelled 'x'"):
        parse_metrics([parse_metric("P@5").labelled("x"), parse_metric("P@10").labelled("x")])


@pytest.mark.parametrize("stream", [False, True])
def test_evaluate_results_are_keyed_by_the_names_asked(
    files: dict[str, Path], stream: bool
) -> None:
    result = rankmeter.evaluate(
        files["qrels"], files["a"], ["MRR@10", "ndcg_cut.10", "RR@10"], stream=stream
    )
    assert list(result.metrics) == ["MRR@10", "ndcg_cut.10"]
    # Any name of a metric finds it: the one asked, the canonical one, a trec_eval name.
    for name in ("MRR@10", "RR@10", "ndcg_cut.10", "nDCG@10", "NDCG@10", parse_metric("RR@10")):
        assert name in result.metrics
        assert result.metrics[name] == result[name]
        assert result.per_query[name] is result.per_query.values[name]
    assert result.metrics["RR@10"] == result.metrics["MRR@10"]
    assert "P@10" not in result.metrics
    with pytest.raises(KeyError, match=r"'P@10' was not evaluated; evaluated metrics: MRR@10"):
        result.metrics["P@10"]
    with pytest.raises(KeyError, match=r"'nonsense' was not evaluated \(unknown metric"):
        result.metrics["nonsense"]
    assert set(result.per_query.to_dict()["1"]) == {"MRR@10", "ndcg_cut.10"}
    assert result.per_query.to_arrow().column_names == ["query_id", "MRR@10", "ndcg_cut.10"]
    assert result.to_dict()["metrics"].keys() == {"MRR@10", "ndcg_cut.10"}


def test_evaluate_cli_json_tsv_and_table_use_the_names_asked(
    cli: CLI, files: dict[str, Path]
) -> None:
    out = cli("evaluate", files["qrels"], files["a"], *ASKED, "-f", "json", "-q")
    assert out.code == 0, out.err
    payload = json.loads(out.out)
    assert list(payload["metrics"]) == LABELS
    assert all(list(row) == LABELS for row in payload["per_query"].values())

    tsv = cli("evaluate", files["qrels"], files["a"], *ASKED, "-f", "tsv", "-q")
    assert tsv.out.splitlines()[0].split("\t") == ["run", "query_id", *LABELS]

    table = cli("evaluate", files["qrels"], files["a"], files["b"], *ASKED, "-q")
    assert table.code == 0, table.err
    for label in LABELS:
        assert label in table.out
    assert "RR@10" not in table.out.replace("MRR@10", "")


def test_trec_format_keeps_trec_eval_names_and_labels_the_rest(
    cli: CLI, files: dict[str, Path]
) -> None:
    # trec_eval's own layout names a measure as trec_eval prints it (so outputs diff against
    # trec_eval); a metric trec_eval lacks is named as asked.
    out = cli(
        "evaluate", files["qrels"], files["a"], "-m", "MRR@10", "-m", "ndcg_cut.10", "-f", "trec"
    )
    names = {line.split("\t")[0].strip() for line in out.out.splitlines()}
    assert names == {"MRR@10", "ndcg_cut_10", "runid", "num_q"}


def test_compare_is_keyed_by_the_names_asked(cli: CLI, files: dict[str, Path]) -> None:
    comparison = rankmeter.compare(
        files["qrels"], [files["a"], files["b"]], ["MRR@10", "ndcg_cut.10", "RR@10"], resamples=200
    )
    assert comparison.metrics == ("MRR@10", "ndcg_cut.10")
    assert comparison.difference("dense", "RR@10") is comparison.difference("dense", "MRR@10")
    assert comparison.mean("bm25", "nDCG@10").metric == "ndcg_cut.10"
    assert list(comparison.scores) == ["MRR@10", "ndcg_cut.10"]
    assert comparison.scores["RR@10"] is comparison.scores["MRR@10"]
    assert comparison.failures[0].metric == "MRR@10"
    explained = next(iter(comparison.explanations.values()))
    assert all(e.metric == "MRR@10" for e in explained.values())

    out = cli("compare", files["qrels"], files["a"], files["b"], "-m", "MRR@10", "-m", "ndcg_cut.10",
              "--resamples", "200", "-f", "json", "--per-query")  # fmt: skip
    payload = json.loads(out.out)
    assert payload["metrics"] == ["MRR@10", "ndcg_cut.10"]
    assert {d["metric"] for d in payload["differences"]} == {"MRR@10", "ndcg_cut.10"}
    assert list(payload["per_query"]) == ["MRR@10", "ndcg_cut.10"]
    for fmt in ("table", "markdown", "latex"):
        shown = cli("compare", files["qrels"], files["a"], files["b"], "-m", "MRR@10",
                    "--resamples", "200", "-f", fmt)  # fmt: skip
        assert shown.code == 0, shown.err
        assert "MRR@10" in shown.out, fmt
        assert "RR@10" not in shown.out.replace("MRR@10", ""), fmt


def test_explain_is_keyed_by_the_names_asked(cli: CLI, files: dict[str, Path]) -> None:
    text = cli("explain", files["qrels"], files["a"], "--query", "1", "-m", "MRR@10")
    assert text.code == 0, text.err
    assert text.out.startswith("MRR@10 for query '1'")
    out = cli("explain", files["qrels"], files["a"], "--query", "1", "-m", "MRR@10",
              "-m", "RR@10", "-m", "ndcg_cut.10", "-f", "json")  # fmt: skip
    payload = json.loads(out.out)
    assert list(payload["metrics"]) == ["MRR@10", "ndcg_cut.10"]
    assert payload["metrics"]["MRR@10"]["metric"] == "MRR@10"


def test_evaluate_goal_reasons_name_the_metrics_as_asked(cli: CLI, files: dict[str, Path]) -> None:
    # The goal's nDCG@10 and P@10 were asked as ndcg_cut.10 and P.10: the columns say so, and
    # the reasons under them must too.
    result = cli(
        "evaluate", files["qrels"], files["a"], "-m", "ndcg_cut.10", "-m", "P.10",
        "--goal", "top-results",
    )  # fmt: skip
    assert result.code == 0, result.err
    reasons = result.out[result.out.index("Goal top-results") :]
    assert re.search(r"^ndcg_cut\.10\s+Uses the grades", reasons, re.M), reasons
    assert re.search(r"^P\.10\s+Share of the top 10", reasons, re.M), reasons
    assert "nDCG@10" not in result.out and "P@10" not in result.out


@pytest.mark.parametrize("asked", ["recall.3", "Recall@3", "recall_3"])
def test_two_stage_names_the_pool_recall_as_asked(
    cli: CLI, files: dict[str, Path], asked: str
) -> None:
    # The pool's recall (R@pool) comes first in every stage; asked under another name, it is
    # shown under that name (dedup kept the prepended R@3).
    args = ["two-stage", files["qrels"], files["a"], files["b"], "--pool", "3", "-m", asked]
    payload = json.loads(cli(*args, "-m", "P@2", "-f", "json").out)
    for stage in payload["stages"].values():
        assert list(stage["metrics"]) == [asked, "P@2"]
    table = cli(*args)
    assert table.code == 0, table.err
    assert asked in table.out and "R@3" not in table.out
