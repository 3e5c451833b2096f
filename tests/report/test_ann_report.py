"""The renderings of an ANN recall measurement (rankmeter.report.ann): the trade-off table,
the terminal table, Markdown and the HTML page."""

from __future__ import annotations

import io

import numpy as np
import pytest

from rankmeter.report.ann import (
    describe,
    render_html,
    render_markdown,
    render_table,
    tradeoff_table,
)
from rankmeter.vector.ann import AnnRecall, AnnRow, ann_recall

pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")


def _measured(sweep: bool) -> AnnRecall:
    """A hand-made result: two settings (or one) at k = 1 and 10, with fixed timings."""
    settings = ["efSearch=16", "efSearch=64"] if sweep else ["efSearch=64"]
    rows = []
    for i, value in enumerate(settings):
        ef = int(value.split("=")[1])
        spec = f"hnsw(M=16,efConstruction=200,efSearch={ef})"
        params = {"M": 16, "efConstruction": 200, "efSearch": ef}
        for k in (1, 10):
            qps = 12345.6 / (i + 1) / k
            rows.append(AnnRow(spec, params, k, 0.9 + 0.01 * i + 0.001 * k, qps, 0.01, 0.5, 2**21))
    return AnnRecall(
        index="hnsw(M=16,efConstruction=200,efSearch=64)",
        backend="faiss",
        metric="ip",
        k=(1, 10),
        sweep={"efSearch": (16, 64)} if sweep else {},
        rows=tuple(rows),
        n_corpus=1400,
        n_queries=225,
        dim=384,
        seed=0,
        threads=1,
        exact_s=0.123,
        memory_method="faiss.serialize_index size",
    )


def test_tradeoff_table_and_description() -> None:
    header, body = tradeoff_table(_measured(sweep=True))
    assert header == ["setting", "build s", "memory", "recall@1", "QPS@1", "recall@10", "QPS@10"]
    assert body == [
        ["efSearch=16", "0.50", "2.0 MiB", "0.9010", "12,346", "0.9100", "1,235"],
        ["efSearch=64", "0.50", "2.0 MiB", "0.9110", "6,173", "0.9200", "617"],
    ]
    assert describe(_measured(sweep=False)) == (
        "hnsw(M=16,efConstruction=200,efSearch=64) (faiss, ip) on 1,400 corpus vectors x 384 "
        "dimensions, 225 queries; QPS: one batch, 1 thread(s), best of up to 5 runs; exact "
        "neighbours in 0.12 s; memory: faiss.serialize_index size"
    )


def test_markdown() -> None:
    markdown = render_markdown(_measured(sweep=True))
    assert markdown.startswith("## ANN recall: hnsw(M=16,efConstruction=200,efSearch=*)\n")
    assert "| efSearch=64 | 0.50 | 2.0 MiB | 0.9110 | 6,173 | 0.9200 | 617 |" in markdown
    # The one Markdown table writer spaces the delimiter row (the same table as |---|---:|).
    assert "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" in markdown
    assert markdown.endswith("so equal distances never cost recall.\n")


def test_terminal_table_moves_shared_columns_to_the_caption() -> None:
    from rich.console import Console

    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(render_table(_measured(sweep=False)))
    text = console.export_text()
    assert "Built in 0.50 s; index size 2.0 MiB." in text
    assert "build s" not in text and "setting" not in text  # one build, one setting
    assert "0.9110" not in text and "0.9010" in text and "12,346" in text


def test_html_page_of_a_measurement() -> None:
    rng = np.random.default_rng(0)
    corpus = rng.normal(size=(200, 8)).astype("float32")
    single = ann_recall(corpus, corpus[:10], "flat", k=1)
    page = render_html(single)
    assert page.count("<svg") == 1 and page.count('<circle class="point"') == 1
    assert "<h1>ANN recall: flat</h1>" in page
    assert "(the fastest of up to 5 runs)" in page
