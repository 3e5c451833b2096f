"""rankmeter.vector.ann: sweeps read as typed (parse_sweep) and a collection embedded for an
index (collection_vectors), every setting checked before anything is embedded."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter.errors import PolicyError
from rankmeter.vector import embed
from rankmeter.vector.ann import (
    IndexSpecError,
    collection_vectors,
    parse_index_spec,
    parse_sweep,
)


def test_parse_sweep_reads_each_parameter_and_names_each_mistake() -> None:
    assert parse_sweep([]) == {}
    assert parse_sweep(["efSearch=16, 32 ,64", "nprobe=4"]) == {
        "efSearch": [16, 32, 64],
        "nprobe": [4],
    }
    mistakes = {
        "efSearch": "'efSearch': expected NAME=V1,V2,...",
        "=4": "'=4': expected NAME=V1,V2,...",
        "efSearch=": "'efSearch=': no values;",
        "efSearch=8,,16": "'efSearch=8,,16': item 2 is empty;",
        "efSearch=8,x": "'efSearch=8,x': item 2, 'x', is not a whole number;",
        "efSearch=8,\u00b2": "item 2, '\u00b2', is not a whole number;",
    }
    for text, message in mistakes.items():
        with pytest.raises(IndexSpecError, match=re.escape(message)):
            parse_sweep([text])
    with pytest.raises(IndexSpecError, match="efSearch is swept twice"):
        parse_sweep(["efSearch=8", "efSearch=9"])


class Words:
    def __init__(self) -> None:
        self.calls = 0

    def encode(self, sentences: list[str], **_: Any) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(sentences), 16), dtype=np.float32)
        for row, text in enumerate(sentences):
            for word in re.findall(r"\w+", text.lower()):
                out[row, hashlib.md5(word.encode()).digest()[0] % 16] += 1.0
        return out


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Words:
    """A model folder (of 16 dimensions, by its configuration) that loads as the stub."""
    words = Words()
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(embed, "_load_folder", lambda folder: words)
    return words


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "stub-model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 16}')
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    docs = ["flutter of swept wings", "heat conduction", "shell buckling", "shock waves"]
    (folder / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(docs)
        )
    )
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "wing flutter"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "buckling"})
        + "\n"
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\nq2\td2\t1\n")
    return folder


def test_a_collection_is_embedded_and_named(
    stub: Words, model: Path, collection: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(collection.parent)
    embedded = collection_vectors("tiny", str(model), ks=(1, 4))
    assert embedded.corpus.shape == (4, 16) and embedded.queries.shape == (2, 16)
    assert embedded.corpus.dtype == np.float32
    where = os.path.abspath("tiny")
    assert embedded.names == (
        f"{where} (documents, embedded by {model})",
        f"{where} (queries, embedded by {model})",
    )
    judged = embedded.judged()
    assert judged["query_ids"] == ["q1", "q2"] and judged["doc_ids"] == ["d0", "d1", "d2", "d3"]
    assert judged["qrels"].n_queries == 2
    calls = stub.calls
    collection_vectors(collection, str(model))  # from the cache: nothing embedded again
    assert stub.calls == calls


def test_settings_and_k_are_checked_before_anything_is_embedded(
    stub: Words, model: Path, collection: Path
) -> None:
    with pytest.raises(PolicyError, match=r"k=5 is more than the corpus has \(4 documents"):
        collection_vectors(collection, str(model), ks=(1, 5))
    too_many_lists = parse_index_spec("ivf(nlist=64)")
    with pytest.raises(IndexSpecError, match="corpus"):
        collection_vectors(collection, str(model), settings=[too_many_lists])
    not_dividing = parse_index_spec("pq(m=5)")
    with pytest.raises(IndexSpecError):
        collection_vectors(collection, str(model), settings=[not_dividing])
    assert stub.calls == 0
