"""`rankmeter bm25`, `rankmeter fuse` and `rankmeter two-stage`; a hybrid through `compare`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankmeter import Run, evaluate
from rankmeter.io import read_run, write_trec_run
from rankmeter.vector.fusion import fuse

from ._cli_support import CLI, evaluate_json

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 5.0, "y": 4.0}}
B = {"q1": {"b": 0.9, "d": 0.5}}
QRELS = "q1 0 a 1\nq1 0 b 2\nq1 0 d 1\nq2 0 y 1\n"


@pytest.fixture
def bm25s_installed() -> None:
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    write_trec_run(Run.from_dict(A, name="lexical"), a)
    write_trec_run(Run.from_dict(B, name="dense"), b)
    return a, b


def tiny_beir(root: Path) -> Path:
    corpus = {
        "d1": ("Flutter", "wing flutter at supersonic speeds"),
        "d2": ("Boundary layers", "transition on a flat plate"),
        "d3": ("Heat", "heat transfer in hypersonic flow"),
    }
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, (t, x) in corpus.items()
        )
    )
    (root / "queries.jsonl").write_text(
        '{"_id": "1", "text": "wing flutter"}\n{"_id": "2", "text": "hypersonic heat"}\n'
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t2\n2\td3\t1\n")
    return root


# -- bm25 -------------------------------------------------------------------------------------
@pytest.mark.usefixtures("bm25s_installed")
def test_bm25_json_is_the_evaluate_shape_and_the_run_is_written(
    cli: CLI, cranfield: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bm25.run"
    result = cli(
        "bm25", cranfield, "-m", "nDCG@10", "-m", "R@100", "-m", "RR@10",
        "--run-out", out, "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    # Issue 14: what ran on what and how queries count, beside evaluate's "metrics".
    assert list(payload) == [
        "run", "model", "collection", "n_queries", "queries", "unanswered", "empty_queries",
        "metrics",
    ]  # fmt: skip
    assert payload["n_queries"] == 225 and payload["unanswered"] == []
    assert list(payload["metrics"]) == ["nDCG@10", "R@100", "RR@10"]
    run = read_run(out)
    assert run.name == "bm25" and run.n_queries == 225
    expected = evaluate(
        cranfield / "qrels.trec", out, ["nDCG@10", "R@100", "RR@10"], include_missing=True
    )
    assert payload["metrics"] == expected.to_dict()["metrics"]
    assert payload["metrics"]["nDCG@10"] > 0.3
    # The same command on `rankmeter evaluate` gives the same metrics.
    again = cli(
        "evaluate", cranfield / "qrels.trec", out, "-m", "nDCG@10", "-m", "R@100",
        "-m", "RR@10", "-f", "json", "--judged-below", "0", "--include-missing",
    )  # fmt: skip
    assert evaluate_json(again.out) == {"metrics": payload["metrics"]}


@pytest.mark.usefixtures("bm25s_installed")
def test_bm25_table_and_options(cli: CLI, tmp_path: Path) -> None:
    root = tiny_beir(tmp_path / "tiny")
    result = cli("bm25", root, "-k", "1", "--k1", "0.9", "--b", "0.4", "-m", "P@1", "--quiet")
    assert result.code == 0, result.err
    assert "bm25" in result.out and "P@1" in result.out and "1.0000" in result.out
    out = tmp_path / "run.txt"
    cli("bm25", root, "-k", "1", "--name", "lexical", "--run-out", out, "-f", "json")
    first = out.read_text().splitlines()[0].split()
    assert first[:4] == ["1", "Q0", "d1", "1"] and first[5] == "lexical"


@pytest.mark.usefixtures("bm25s_installed")
def test_bm25_errors_are_one_line(cli: CLI, tmp_path: Path) -> None:
    missing = cli("bm25", tmp_path / "nowhere")
    assert "not a folder" in missing.assert_one_error_line(1)
    root = tiny_beir(tmp_path / "tiny")
    bad = cli("bm25", root, "--b", "2")
    assert "b=2.0 must be a number from 0 to 1" in bad.assert_one_error_line(2)
    no_stemmer = cli("bm25", root, "--stemmer", "klingon")
    assert "'klingon'" in no_stemmer.assert_one_error_line(2 if _has_pystemmer() else 1)


@pytest.mark.usefixtures("bm25s_installed")
def test_a_stemmer_without_pystemmer_is_one_line_for_the_shell(tmp_path: Path) -> None:
    """Issue 22, item 21: without PyStemmer (its import blocked in the child), `--stemmer
    english` says which extra brings it and how to do without, in the shell's words."""
    import subprocess
    import sys

    root = tiny_beir(tmp_path / "tiny")
    blocked = "import sys; sys.modules['Stemmer'] = None; from rankmeter.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", blocked, "bm25", str(root), "--stemmer", "english"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr == (
        "rankmeter: error: the stemmer 'english' needs the PyStemmer package, which is not "
        "installed: pip install 'rankmeter[bm25]' (it brings PyStemmer); or leave out "
        "--stemmer (stemmer=None in Python) for no stemming\n"
    )


def test_the_bm25_extra_brings_pystemmer() -> None:
    """The message above says 'rankmeter[bm25]' brings PyStemmer: the extra must list it."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    extra = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    names = [r.split(">")[0].split("=")[0].strip() for r in extra["optional-dependencies"]["bm25"]]
    assert names == ["bm25s", "PyStemmer"]


def _has_pystemmer() -> bool:
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return False
    return True


# -- fuse -------------------------------------------------------------------------------------
def test_fuse_writes_the_fused_trec_run(
    cli: CLI, two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two_runs
    out = tmp_path / "hybrid.run"
    result = cli("fuse", a, b, "--method", "rrf", "--name", "hybrid", "-o", out)
    assert result.code == 0 and result.out == ""
    # The sample runs differ in depth (3 results a query against 2): fuse says so, then
    # (issue 22, item 22) says what it wrote, both on stderr: stdout stays empty.
    first, wrote = result.err.splitlines()
    assert first.startswith("rankmeter: warning: fusing runs of different depths")
    assert wrote == (
        f"rankmeter: wrote the fused run 'hybrid' to {out}: 2 queries, 6 results (rrf of 2 runs)"
    )
    fused = read_run(out)
    expected = fuse([read_run(a), read_run(b)], "rrf", name="hybrid")
    assert fused.name == "hybrid"
    assert fused.to_dict() == expected.to_dict()
    assert fused.ranking("q1") == ["b", "a", "d", "c"]


def test_fuse_reports_the_tag_it_wrote(
    cli: CLI, two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """Issue 22 trial, item 5: `fuse 'a b=bm25.run' stem.run -o fused.run` said it wrote
    'rrf(a b+stem)' where the file's tag is rrf(a_b+stem) (TREC splits fields on spaces)."""
    a, b = two_runs
    out = tmp_path / "fused.run"
    result = cli("fuse", f"a b={a}", b, "-o", out)
    assert result.code == 0, result.err
    wrote = result.err.splitlines()[-1]
    tags = {line.split()[5] for line in out.read_text().splitlines()}
    assert len(tags) == 1
    (tag,) = tags
    assert tag.startswith("rrf(a_b+")
    assert wrote.startswith(f"rankmeter: wrote the fused run '{tag}' to {out}: ")
    named = cli("fuse", a, b, "--name", "my\thybrid run", "-o", out)
    assert named.code == 0, named.err
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"my_hybrid_run"}
    assert "wrote the fused run 'my_hybrid_run'" in named.err


def test_fuse_to_stdout_with_weights_and_depth(cli: CLI, two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    result = cli("fuse", a, b, "--method", "minmax", "--weights", "0.7,0.3", "--depth", "2")
    assert result.code == 0, result.err
    lines = [line.split() for line in result.out.splitlines()]
    # A's top 2: a 1, b 0; B: b 1, d 0 -> a 0.7, b 0.3, d 0 (depth 2 keeps a and b).
    assert [(q, d, r) for q, _, d, r, _, _ in lines] == [
        ("q1", "a", "1"),
        ("q1", "b", "2"),
        ("q2", "x", "1"),
        ("q2", "y", "2"),
    ]
    assert lines[0][5] == "minmax(lexical+dense)"
    assert float(lines[1][4]) == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("args", "code", "match"),
    [
        (
            ["--weights", "0.7,x"],
            2,
            "--weights: item 2, 'x', is not a number; give numbers "
            "separated by commas, e.g. 0.7,0.3",
        ),
        # An empty item is an error, never dropped (0.7,,0.3 is not the weights 0.7, 0.3).
        (["--weights", "0.7,,0.3"], 2, "--weights: item 2 is empty in '0.7,,0.3'; give numbers"),
        (["--weights", "0.7,"], 2, "--weights: item 2 is empty in '0.7,'"),
        (["--weights", "1,nan"], 2, "--weights: item 2, 'nan', is not a finite number"),
        (["--weights", "inf,1"], 2, "--weights: item 1, 'inf', is not a finite number"),
        (["--weights", ""], 2, "--weights: none given"),
        (["--weights", "1"], 2, "1 weights given for 2 runs"),
        (["--method", "borda"], 2, "Invalid value for '--method'"),
        (["--k", "-1"], 2, "k=-1.0 must be a number >= 0 (RRF's rank constant)"),
    ],
)
def test_fuse_errors(
    cli: CLI, two_runs: tuple[Path, Path], args: list[str], code: int, match: str
) -> None:
    result = cli("fuse", *two_runs, *args)
    assert match in result.assert_one_error_line(code)


def test_fuse_needs_two_runs(cli: CLI, two_runs: tuple[Path, Path]) -> None:
    result = cli("fuse", two_runs[0])
    assert "fuse needs two runs or more; got 1" in result.assert_one_error_line(2)


# -- two-stage --------------------------------------------------------------------------------
def test_two_stage_json_and_table(cli: CLI, two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    from rankmeter.vector.pipeline import two_stage

    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    retriever, reranked = two_runs
    result = cli(
        "two-stage", qrels, retriever, reranked, "--pool", "2", "-m", "nDCG@2", "-f", "json"
    )
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    expected = two_stage(qrels, retriever, reranked, pool=2, metrics=["nDCG@2"]).to_dict()
    assert payload == expected
    assert list(payload["stages"]["retriever"]["metrics"]) == ["R@2", "nDCG@2"]
    assert payload["unscored"] == 1 + 2  # a (q1) and q2's pool are not in the reranked run
    table = cli("two-stage", qrels, retriever, reranked, "--pool", "2")
    assert table.code == 0, table.err
    for word in ("retriever", "reranked", "ceiling", "R@2", "nDCG@10", "top 2 per query"):
        assert word in table.out


def test_two_stage_notes_a_cutoff_deeper_than_the_pool(
    cli: CLI, two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    args = ["two-stage", qrels, *two_runs, "--pool", "2", "-m", "R@100", "-m", "P@1"]
    note = (
        "R@100 looks deeper than the pool: every stage ranks only the pool's 2 results per "
        "query, so its cutoff acts as 2"
    )
    payload = json.loads(cli(*args, "-f", "json").out)
    assert payload["notes"] == [note]
    table = cli(*args, "-o", tmp_path / "table.txt")
    assert table.code == 0, table.err
    assert note in " ".join((tmp_path / "table.txt").read_text().split())


def test_two_stage_errors(cli: CLI, two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    bad_pool = cli("two-stage", qrels, *two_runs, "--pool", "0")
    assert "pool=0 must be an integer >= 1" in bad_pool.assert_one_error_line(2)
    missing = cli("two-stage", qrels, two_runs[0], tmp_path / "nothing.run")
    assert "nothing.run" in missing.assert_one_error_line(1)


# -- a hybrid through compare -----------------------------------------------------------------
@pytest.mark.usefixtures("bm25s_installed")
def test_hybrid_of_two_bm25_runs_through_compare(cli: CLI, cranfield: Path, tmp_path: Path) -> None:
    from rankmeter.io.beir import load_beir
    from rankmeter.vector import bm25_run

    first, second, hybrid = tmp_path / "bm25.run", tmp_path / "bm25b.run", tmp_path / "hy.run"
    assert cli("bm25", cranfield, "--run-out", first, "-f", "json").code == 0
    # A second lexical run without a neural model: BM25 with other parameters, no stopwords.
    other = bm25_run(load_beir(cranfield), k1=0.9, b=0.4, stopwords=None, name="bm25-b")
    write_trec_run(other, second)
    assert cli("fuse", first, second, "--name", "hybrid", "-o", hybrid).code == 0
    result = cli(
        "compare", cranfield / "qrels.trec", first, second, hybrid, "-m", "nDCG@10",
        "--resamples", "999", "-f", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert '"hybrid"' in result.out and '"bm25-b"' in result.out
