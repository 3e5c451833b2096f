"""`rankmeter diff QRELS A B`: options in, one library call, one renderer per format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rankmeter.comparison import diff_runs

from ._cli_support import CLI


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    docs = {"a": "Alpha", "b": "Beta <b>", "e": "Echo", "x": "X-ray", "y": "Yankee", "z": "Z"}
    path.write_text(
        "".join(
            json.dumps({"_id": d, "title": t, "text": f"text {d}"}) + "\n" for d, t in docs.items()
        )
    )
    return path


def test_json_is_what_the_library_gives(cli: CLI, files: dict[str, Path]) -> None:
    done = cli("diff", files["qrels"], files["a"], files["b"], "-f", "json", "-m", "P@1")
    assert done.code == 0, done.err
    payload = json.loads(done.out)
    expected = diff_runs(files["qrels"], files["a"], files["b"], metric="P@1").to_dict()
    assert payload == json.loads(json.dumps(expected))
    deltas = [q["delta"] for q in payload["queries"]]
    assert deltas == sorted(deltas)


def test_text_and_markdown_show_moves_without_texts(
    cli: CLI, files: dict[str, Path], corpus: Path
) -> None:
    text = cli("diff", files["qrels"], files["a"], files["b"], "--corpus", corpus, "--depth", "2")
    assert text.code == 0, text.err
    assert "rankmeter diff: dense (B) against bm25 (A) on nDCG@10" in text.out
    assert "new" in text.out and "▼" in text.out
    assert "text a" not in text.out
    markdown = cli("diff", files["qrels"], files["a"], files["b"], "-f", "markdown")
    assert markdown.code == 0, markdown.err
    assert markdown.out.startswith("# dense against bm25 on nDCG@10")
    assert "| `007` |" in markdown.out


def test_html_to_a_file(cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "diff.html"
    done = cli(
        "diff", files["qrels"], files["a"], files["b"], "--corpus", corpus, "-f", "html", "-o", out
    )
    assert done.code == 0, done.err
    assert done.out == ""
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "Beta &lt;b&gt;" in page and "Beta <b>" not in page
    assert 'id="q-007"' in page


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--depth", "0"], "depth=0 must be an integer >= 1"),
        (["-m", "nope"], "unknown metric 'nope'"),
        (["--corpus", "missing.jsonl"], "missing.jsonl"),
        (["--queries", "missing.tsv"], "missing.tsv"),
    ],
)
def test_bad_input_is_one_line(
    cli: CLI, files: dict[str, Path], extra: list[str], message: str
) -> None:
    done = cli("diff", files["qrels"], files["a"], files["b"], *extra)
    assert done.code in (1, 2)
    assert message in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err


def test_help_names_the_formats(cli: CLI) -> None:
    done = cli("diff", "--help")
    assert done.code == 0
    for name in ("text", "markdown", "json", "html", "--corpus", "--depth"):
        assert name in done.out


def test_compare_with_a_corpus_writes_the_diff_page_beside_the_report(
    cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    from rankmeter.report.diff import query_anchor

    report = tmp_path / "report.html"
    done = cli(
        "compare",
        files["qrels"],
        files["a"],
        files["b"],
        "--corpus",
        corpus,
        "--resamples",
        "200",
        "-f",
        "html",
        "-o",
        report,
        "--quiet",
    )
    assert done.code == 0, done.err
    beside = tmp_path / "report.diff.html"
    assert sorted(p.name for p in tmp_path.glob("report*")) == ["report.diff.html", "report.html"]
    page = report.read_text(encoding="utf-8")
    diff_page = beside.read_text(encoding="utf-8")
    links = re.findall(r'<a class="diff" href="([^"]+)">', page)
    assert links, "the worst queries link to the diff page"
    for link in links:
        name, anchor = link.split("#")
        assert name == "report.diff.html" and f'id="{anchor}"' in diff_page
    assert {link.split("#")[1] for link in links} <= {query_anchor(q) for q in ("1", "2", "007")}
    assert "Beta &lt;b&gt;" in diff_page


def test_compare_with_a_corpus_to_stdout_says_where_the_pages_go(
    cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    done = cli(
        "compare",
        files["qrels"],
        files["a"],
        files["b"],
        "--corpus",
        corpus,
        "--resamples",
        "200",
        "-f",
        "html",
    )
    assert done.code == 0
    assert "written beside a report file: give -o REPORT.html" in done.err
    assert "diff-hint" in done.out and 'class="diff"' not in done.out
    table = cli(
        "compare",
        files["qrels"],
        files["a"],
        files["b"],
        "--corpus",
        corpus,
        "--resamples",
        "200",
        "-o",
        tmp_path / "table.txt",
    )
    assert table.code == 0, table.err
    assert sorted(p.name for p in tmp_path.glob("*.html")) == []


@pytest.mark.parametrize("target", ["a", "b", "qrels", "corpus", "corpus folder"])
def test_an_output_that_is_an_input_is_refused_before_any_work(
    cli: CLI, files: dict[str, Path], corpus: Path, target: str
) -> None:
    """-o naming one of the inputs would replace it with the page (the run read, then lost)."""
    path = {"corpus": corpus, "corpus folder": corpus}.get(target) or files[target]
    given = corpus.parent if target == "corpus folder" else corpus
    before = path.read_bytes()
    done = cli(
        "diff", files["qrels"], files["a"], files["b"], "--corpus", given, "-f", "html", "-o", path
    )
    assert done.code == 2, done.err
    assert "is also an input" in done.err and str(path) in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err
    assert path.read_bytes() == before


def test_compare_refuses_an_output_that_is_a_run(cli: CLI, files: dict[str, Path]) -> None:
    before = files["b"].read_bytes()
    done = cli("compare", files["qrels"], files["a"], f"new={files['b']}", "-o", files["b"])
    assert done.code == 2, done.err
    assert f"-o {files['b']} is also an input" in done.err
    assert files["b"].read_bytes() == before


def test_the_same_run_twice_names_each_side_once(cli: CLI, files: dict[str, Path]) -> None:
    done = cli("diff", files["qrels"], files["a"], files["a"])
    assert done.code == 0, done.err
    first = done.out.splitlines()[0]
    assert first == "rankmeter diff: bm25 (B) against bm25 (A) on nDCG@10", first


def test_a_second_metric_is_refused_not_dropped(cli: CLI, files: dict[str, Path]) -> None:
    """Other commands take several -m; diff orders by one, so a second is an error, never
    silently the one used."""
    done = cli("diff", files["qrels"], files["a"], files["b"], "-m", "nDCG@10", "-m", "AP")
    assert done.code == 2, done.out
    assert "--metric" in done.err and "given 2: 'nDCG@10', 'AP'; give it once" in done.err
    assert done.err.count("\n") == 1
    one = cli("diff", files["qrels"], files["a"], files["b"], "-m", "AP")
    assert one.code == 0 and one.out.startswith("rankmeter diff: dense (B) against bm25 (A) on AP")


def test_compare_into_a_fifo_writes_no_diff_page_beside_it(
    cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    """A FIFO (or /dev/stdout, a device) is a stream, not a report file: nothing can be beside
    it (-o /dev/stdout wrote /dev/stdout.diff.html into /dev); the note says so, as for
    stdout."""
    import os
    import threading

    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    done = cli(
        "compare", files["qrels"], files["a"], files["b"], "--corpus", corpus,
        "--resamples", "200", "-f", "html", "-o", fifo,
    )  # fmt: skip
    reader.join(timeout=30)
    assert done.code == 0, done.err
    assert received and received[0].startswith(b"<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.run", "b.run", "corpus.jsonl",
                                                         "qrels.txt", "report.fifo"]  # fmt: skip
    assert "written beside a report file: give -o REPORT.html" in done.err


def test_compare_checks_every_diff_page_before_writing_one(
    cli: CLI, files: dict[str, Path], corpus: Path, tmp_path: Path
) -> None:
    """With two systems, a second page that cannot be written left the first one written and
    no report: now nothing is written."""
    (tmp_path / "report.diff-2.html").mkdir()
    done = cli(
        "compare", files["qrels"], files["a"], files["b"], f"c={files['b']}", "--corpus", corpus,
        "--resamples", "200", "-f", "html", "-o", tmp_path / "report.html", "--quiet",
    )  # fmt: skip
    assert done.code == 1
    assert "report.diff-2.html: is a directory" in done.err
    assert not (tmp_path / "report.diff-1.html").exists()
    assert not (tmp_path / "report.html").exists()
