"""`rankmeter label` end to end on files (issue 11, item 4: a labeler from any Python callable),
and the whole loop on Cranfield: pool, label, audit-labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter import evaluate
from rankmeter.io import read_pool, read_qrels
from rankmeter.judgments import agreement

from ._cli_support import CLI
from .test_cli_pool import cranfield_runs

POOL = [
    {
        "query_id": "q1",
        "doc_id": "d1",
        "runs": {"r": 1},
        "best_rank": 1,
        "inclusion_probability": 1.0,
    },
    {
        "query_id": "q1",
        "doc_id": "d2",
        "runs": {"r": 2},
        "best_rank": 2,
        "inclusion_probability": 1.0,
    },
    {
        "query_id": "q2",
        "doc_id": "d2",
        "runs": {"r": 1},
        "best_rank": 1,
        "inclusion_probability": 1.0,
    },
]
LABELER = """
STOP = {"the", "of", "a", "in", "and", "to", "is", "for", "on", "what", "are", "with", "by", "an"}


def grade(query, doc):
    words = set(query.lower().split()) - STOP
    share = len(words & set(doc.lower().split())) / max(len(words), 1)
    return 3 if share >= 0.6 else 2 if share >= 0.4 else 1 if share >= 0.2 else 0


def too_high(query, doc):
    return 7


def broken(query, doc):
    raise RuntimeError("the model is down")
"""


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    paths = {
        "pool": tmp_path / "pool.jsonl",
        "queries": tmp_path / "queries.jsonl",
        "corpus": tmp_path / "corpus.jsonl",
    }
    paths["pool"].write_text("".join(json.dumps(item) + "\n" for item in POOL))
    paths["queries"].write_text(
        json.dumps({"_id": "q1", "text": "wing flutter"}) + "\n"
        + json.dumps({"_id": "q2", "text": "heat transfer"}) + "\n"
    )  # fmt: skip
    paths["corpus"].write_text(
        json.dumps({"_id": "d1", "title": "", "text": "flutter of a swept wing"}) + "\n"
        + json.dumps({"_id": "d2", "title": "", "text": "heat transfer"}) + "\n"
    )  # fmt: skip
    (tmp_path / "audit_labeler_mod.py").write_text(LABELER)
    monkeypatch.chdir(tmp_path)
    return paths


def _args(inputs: dict[str, Path], labeler: str = "audit_labeler_mod:grade") -> list[str]:
    return [
        "label", "--pool", str(inputs["pool"]), "--queries", str(inputs["queries"]),
        "--corpus", str(inputs["corpus"]), "--labeler", labeler,
    ]  # fmt: skip


def test_label_writes_trec_qrels(cli: CLI, inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "model.qrels"
    done = cli(*_args(inputs), "-o", out)
    assert done.code == 0, done.err
    assert done.out == "3 items of 2 queries labelled by audit_labeler_mod:grade\n"
    assert out.read_text() == "q1 0 d1 3\nq1 0 d2 0\nq2 0 d2 3\n"
    assert read_qrels(out).to_dict() == {"q1": {"d1": 3, "d2": 0}, "q2": {"d2": 3}}


def test_label_to_stdout_keeps_the_summary_off_it(cli: CLI, inputs: dict[str, Path]) -> None:
    done = cli(*_args(inputs), "-o", "-")
    assert done.code == 0, done.err
    assert done.out == "q1 0 d1 3\nq1 0 d2 0\nq2 0 d2 3\n"
    assert "3 items of 2 queries" in done.err


@pytest.mark.parametrize(
    ("labeler", "code", "message"),
    [
        ("audit_labeler_mod", 2, "--labeler 'audit_labeler_mod' must be module:function"),
        ("no_such_mod_q:f", 2, "--labeler 'no_such_mod_q:f': cannot import 'no_such_mod_q'"),
        ("audit_labeler_mod:nothing", 2, "module 'audit_labeler_mod' has no 'nothing'"),
        ("audit_labeler_mod:STOP", 2, "is a set, not a callable"),
        (
            "audit_labeler_mod:too_high",
            1,
            "gave query 'q1', doc 'd1' the grade 7, not a whole number on the scale 0-3",
        ),
        (
            "audit_labeler_mod:broken",
            1,
            "labeler broken failed on query 'q1', doc 'd1': RuntimeError: the model is down",
        ),
    ],
)
def test_bad_labelers_are_one_line(
    cli: CLI, inputs: dict[str, Path], tmp_path: Path, labeler: str, code: int, message: str
) -> None:
    out = tmp_path / "model.qrels"
    done = cli(*_args(inputs, labeler), "-o", out, "--quiet")
    error = done.assert_one_error_line(code)
    assert message in error
    if "the grade 7" in message:  # the file the pool came from is named
        assert error.startswith(f"{inputs['pool']}: ")
    assert not out.exists()


def test_missing_texts_and_bad_scale_are_one_line(
    cli: CLI, inputs: dict[str, Path], tmp_path: Path
) -> None:
    inputs["corpus"].write_text(json.dumps({"_id": "d1", "text": "x"}) + "\n")
    out = tmp_path / "model.qrels"
    done = cli(*_args(inputs), "-o", out)
    assert "doc 'd2' (query 'q1') of the pool" in done.assert_one_error_line(1)
    assert "is not in the corpus" in done.err
    scale = cli(*_args(inputs), "-o", out, "--scale", "high")
    assert "scale='high' must be LOW-HIGH" in scale.assert_one_error_line(2)
    no_out = cli(*_args(inputs))
    assert "--output" in no_out.assert_one_error_line(2)
    assert not out.exists()


def test_on_cranfield_pool_label_audit(cli: CLI, cranfield: Path, tmp_path: Path) -> None:
    """The whole loop on real human labels: a depth-10 pool of two runs, labelled by a word
    overlap rule, audited against Cranfield's judgments; the numbers are agreement's and
    evaluate's."""
    runs = cranfield_runs(cranfield, tmp_path)
    pool = tmp_path / "pool.jsonl"
    assert cli("pool", *runs, "--depth", "10", "-o", pool).code == 0
    (tmp_path / "audit_labeler_mod.py").write_text(LABELER)
    model = tmp_path / "model.qrels"
    labelled = cli(
        "label", "--pool", pool, "--queries", cranfield / "queries.jsonl",
        "--corpus", cranfield / "corpus.jsonl", "--labeler", "audit_labeler_mod:grade",
        "-o", model,
    )  # fmt: skip
    assert labelled.code == 0, labelled.err
    assert len(read_qrels(model)) == len(read_pool(pool))
    human = cranfield / "qrels" / "test.tsv"
    done = cli(
        "audit-labels", "--human", human, "--model", model, *runs,
        "-m", "nDCG@10", "-m", "P@10", "--resamples", "1000", "-f", "json",
    )  # fmt: skip
    assert done.code == 0, done.err
    document = json.loads(done.out)
    direct = agreement({"human": human, "model": model})
    assert document["shared_items"] == direct.pairs[0].n_shared > 100
    assert document["agreement"]["cohen_kappa"] == pytest.approx(direct.pairs[0].kappa)
    assert document["leniency"]["confusion"] == [list(r) for r in direct.pairs[0].confusion]
    model_rater = next(r for r in direct.leniency if r.rater == "model")
    assert document["leniency"]["mean_difference"] == pytest.approx(model_rater.mean_difference)
    assert document["systems"] == ["overlap", "dice"] and document["queries"] == 225
    for ordering in document["orderings"]:
        metric = ordering["metric"]
        for name, path in zip(document["systems"], runs, strict=True):
            assert ordering["human_means"][name] == pytest.approx(
                evaluate(human, path, [metric])[metric]
            )
            assert ordering["model_means"][name] == pytest.approx(
                evaluate(model, path, [metric])[metric]
            )
    assert len(document["significance"]["pairs"]) == 2
