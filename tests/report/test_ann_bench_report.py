"""The renderings of several indexes measured together (rankmeter.report.ann): the settings
table with the frontier in text, the quality-lost table, Markdown, the terminal and the HTML
page with the recall-vs-QPS chart (log scale) and the frontier drawn over it."""

from __future__ import annotations

import io
import re

from rankmeter.report.ann import (
    benchmark_table,
    family_label,
    frontier_line,
    quality_table,
    render_benchmark_html,
    render_benchmark_json,
    render_benchmark_markdown,
    render_benchmark_table,
    result_file_name,
)
from rankmeter.vector.ann import AnnBenchmark, AnnPoint, QualityLoss

HNSW = "hnsw(M=16,efConstruction=200,efSearch=64)"
IVF = "ivf(nlist=64,nprobe=8)"


def _loss(metric: str, ann: float, p: float) -> QualityLoss:
    exact = 0.4 if metric == "nDCG@10" else 0.8
    d = ann - exact
    return QualityLoss(metric, exact, ann, d, d - 0.01, d + 0.01, p / 2, p, p < 0.05)


def _point(setting: str, index: str, recall: float, qps: float, ndcg: float, p: float) -> AnnPoint:
    kind, body = setting.rstrip(")").split("(")
    params = {n: int(v) for n, v in (part.split("=") for part in body.split(","))}
    return AnnPoint(
        index=index,
        setting=setting,
        backend="faiss",
        params=params,
        recall={10: recall},
        qps={10: qps},
        latency_k=10,
        p50_s=0.0001,
        p95_s=0.0002,
        p99_s=0.0015,
        build_s=0.25 if kind == "hnsw" else 0.05,
        build_threads=1 if kind == "hnsw" else 2,
        nbytes=2**21,
        quality=(_loss("nDCG@10", ndcg, p), _loss("R@100", 0.8, 1.0)),
    )


def _bench() -> AnnBenchmark:
    points = (
        _point("hnsw(M=16,efConstruction=200,efSearch=8)", HNSW, 0.80, 90_000, 0.35, 0.001),
        _point("hnsw(M=16,efConstruction=200,efSearch=64)", HNSW, 0.99, 20_000, 0.4, 1.0),
        _point("ivf(nlist=64,nprobe=1)", IVF, 0.60, 200_000, 0.30, 0.0002),
        _point("ivf(nlist=64,nprobe=8)", IVF, 0.95, 15_000, 0.399, 0.8),
    )
    return AnnBenchmark(
        corpus="cranfield (documents, embedded by all-MiniLM-L6-v2)",
        queries="cranfield (queries, embedded by all-MiniLM-L6-v2)",
        metric="ip",
        k=(10,),
        points=points,
        n_corpus=1400,
        n_queries=225,
        dim=384,
        seed=0,
        threads=2,
        exact_s=0.01,
        version="0.1.0",
        quality_note="how it was measured",
    )


def test_settings_table_marks_the_frontier() -> None:
    header, body = benchmark_table(_bench())
    assert header == [
        "setting", "build s (threads)", "memory", "recall@10", "QPS@10",
        "p50 ms@10", "p95 ms@10", "p99 ms@10", "Pareto",
    ]  # fmt: skip
    assert body[0] == [
        "hnsw(M=16,efConstruction=200,efSearch=8)", "0.25 (1)", "2.0 MiB", "0.8000",
        "90,000", "0.100", "0.200", "1.500", "yes",
    ]  # fmt: skip
    # ivf nprobe=8 is beaten by hnsw efSearch=64 (higher recall and QPS).
    assert [cells[-1] for cells in body] == ["yes", "yes", "yes", ""]
    assert body[2][1] == "0.05 (2)"
    assert frontier_line(_bench()) == (
        "Pareto frontier of recall@10 and QPS@10, fastest first: ivf(nlist=64,nprobe=1) "
        "(0.6000, 200,000/s) -> hnsw(M=16,efConstruction=200,efSearch=8) (0.8000, 90,000/s) "
        "-> hnsw(M=16,efConstruction=200,efSearch=64) (0.9900, 20,000/s)"
    )
    assert family_label(_bench(), HNSW) == "hnsw(M=16,efConstruction=200,efSearch=*)"


def test_quality_table_and_the_pick() -> None:
    header, body = quality_table(_bench())
    assert header == [
        "setting", "nDCG@10", "ΔnDCG@10 [95% CI]", "p (Holm)", "R@100", "ΔR@100 [95% CI]",
        "p (Holm)", "QPS@10", "quality lost",
    ]  # fmt: skip
    assert body[0] == [
        "hnsw(M=16,efConstruction=200,efSearch=8)", "0.3500", "-0.0500 [-0.0600, -0.0400]",
        "0.0010", "0.8000", "+0.0000 [-0.0100, +0.0100]", "1.0000", "90,000", "nDCG@10",
    ]  # fmt: skip
    assert [cells[-1] for cells in body] == ["nDCG@10", "none", "nDCG@10", "none"]
    markdown = render_benchmark_markdown(_bench())
    assert "### Quality lost against exact search" in markdown
    assert "Exact search: nDCG@10 0.4000, R@100 0.8000." in markdown
    # The fastest setting with no significant loss: hnsw efSearch=64 (20,000 > 15,000).
    assert (
        "Fastest setting that loses no significant quality: "
        "hnsw(M=16,efConstruction=200,efSearch=64) (20,000 queries/s at k=10); the lower "
        "ends of its intervals: nDCG@10 -0.0100, R@100 -0.0100." in markdown
    )
    assert markdown.startswith(
        "## ANN benchmark: hnsw(M=16,efConstruction=200,efSearch=*), ivf(nlist=64,nprobe=*)\n"
    )


def test_without_judgments_there_is_no_quality_section() -> None:
    from dataclasses import replace

    bench = _bench()
    bare = replace(bench, points=tuple(replace(p, quality=()) for p in bench.points))
    assert quality_table(bare) == ([], [])
    assert "Quality lost" not in render_benchmark_markdown(bare)
    assert "Quality lost" not in render_benchmark_html(bare)


def test_terminal() -> None:
    from rich.console import Console

    console = Console(width=220, file=io.StringIO(), record=True)
    console.print(render_benchmark_table(_bench()))
    text = console.export_text()
    assert "ANN benchmark" in text and "Quality lost against exact search" in text
    assert "p99 ms@10" in text and "Pareto frontier of recall@10 and QPS@10" in text


def test_html_chart_on_a_log_scale_with_the_frontier() -> None:
    page = render_benchmark_html(_bench())
    (svg,) = re.findall(r"<svg.*?</svg>", page, re.S)
    assert 'data-plot="ann-benchmark"' in svg
    assert re.findall(r'data-series="([^"]+)"', svg) == [
        "hnsw(M=16,efConstruction=200,efSearch=*) (faiss)",
        "ivf(nlist=64,nprobe=*) (faiss)",
        "Pareto frontier",
    ]
    # 4 settings and 3 frontier points drawn again on the frontier's line.
    assert svg.count('<circle class="point"') == 7
    ticks = re.findall(r'<text class="tick" x="[0-9.]+" y="[0-9.]+" text-anchor="end" '
                       r'dominant-baseline="middle">([^<]+)</text>', svg)  # fmt: skip
    # 15,000 to 200,000 queries/s: two decades, ticked at 1, 2 and 5 times powers of ten.
    assert ticks == ["10k", "20k", "50k", "100k", "200k", "500k", "1M"]
    assert "(Pareto frontier)" in svg  # in the description a screen reader reads
    assert '<h2 id="quality-h">Quality lost against exact search</h2>' in page


def test_json_and_file_names() -> None:
    import json

    document = json.loads(render_benchmark_json(_bench()))
    assert [p["frontier"] for p in document["points"]] == [True, True, True, False]
    assert document["points"][0]["latency_s"] == {"p50": 0.0001, "p95": 0.0002, "p99": 0.0015}
    assert document["rankmeter_version"] == "0.1.0"
    bench = _bench()
    name = result_file_name(bench, bench.points[2])
    assert re.fullmatch(r"cranfield-ip-[0-9a-f]{10}__faiss__ivf_nlist=64_nprobe=1\.json", name)


def test_many_decades_are_ticked_at_powers_of_ten() -> None:
    from dataclasses import replace

    bench = _bench()
    slow, fast = (
        replace(bench.points[0], qps={10: 1_500.0}),
        replace(bench.points[2], qps={10: 2_000_000.0}),
    )
    svg = render_benchmark_html(replace(bench, points=(slow, fast)))
    ticks = re.findall(r'text-anchor="end" dominant-baseline="middle">([^<]+)</text>', svg)
    assert ticks == ["1k", "10k", "100k", "1M", "10M"]


def test_a_hostile_corpus_name_is_escaped_in_markdown_and_the_terminal() -> None:
    # The corpus name is a path from the command line or a results file: a folder named
    # <script>, with an ANSI clear-screen in it, reached the Markdown and the terminal raw.
    from dataclasses import replace

    from rich.console import Console

    name = "<script>x</script>\x1b[2J|med (documents, embedded by m)"
    bench = replace(_bench(), corpus=name)
    markdown = render_benchmark_markdown(bench)
    assert "\x1b" not in markdown and "<script>" not in markdown
    assert r"\<script\>x\</script\>\\x1b\[2J\|med" in markdown
    console = Console(width=220, file=io.StringIO(), record=True)
    console.print(render_benchmark_table(bench))
    text = console.export_text()
    assert "\x1b" not in text and r"<script>x</script>\x1b[2J|med" in text
