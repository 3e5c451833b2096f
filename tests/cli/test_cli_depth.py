"""Runs cut at different depths (issue 22, item 18): every command that compares runs warns,
naming each run's depth and only the metrics asked for that read past the shallower one; the
commands that make runs share one default depth.

The new team's case on Cranfield: BM25 at the default depth (1,000 results a query) against a
second BM25 cut at 100, as embed-eval's old default cut MiniLM."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from ._cli_support import CLI

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"
QRELS = CRANFIELD / "qrels" / "test.tsv"

pytestmark = pytest.mark.skipif(
    not CRANFIELD.is_dir(), reason="needs ../shared/data/cranfield (the shared collections)"
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """BM25 at the default depth, a second BM25 cut at 100, a third cut at 50."""
    pytest.importorskip("bm25s", reason="BM25 needs the [bm25] extra (bm25s)")
    from rankmeter.io import write_trec_run
    from rankmeter.io.beir import load_beir
    from rankmeter.vector.bm25 import bm25_run

    folder = tmp_path_factory.mktemp("depth")
    collection = load_beir(str(CRANFIELD))
    out = {"bm25": folder / "bm25.run", "shallow": folder / "shallow.run"}
    write_trec_run(bm25_run(collection, name="bm25"), out["bm25"])
    shallow = bm25_run(collection, k=100, k1=0.9, b=0.4, name="shallow")
    write_trec_run(shallow, out["shallow"])
    out["third"] = folder / "third.run"
    write_trec_run(bm25_run(collection, k=50, k1=1.2, b=0.5, name="third"), out["third"])
    return out


def _depth_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "differ in depth" in line]


def test_compare_warns_naming_each_depth_and_only_the_affected_metrics(
    cli: CLI, runs: dict[str, Path]
) -> None:
    args = ["compare", QRELS, runs["bm25"], runs["shallow"], "--resamples", "1000"]
    done = cli(*args, "-m", "nDCG@10", "-m", "AP", "-m", "R@1000", "-m", "P@100")
    assert done.code == 0, done.err
    [line] = _depth_lines(done.err)
    assert "'bm25' 1,000, 'shallow' 100" in line
    assert "AP, R@1000 read past rank 100" in line
    assert "nDCG@10" not in line and "P@100" not in line
    # Metrics that stay within the shallower depth compare fairly: no warning.
    fair = cli(*args, "-m", "nDCG@10", "-m", "R@100")
    assert fair.code == 0 and not _depth_lines(fair.err)


def test_compare_documents_carry_the_depth_warning(cli: CLI, runs: dict[str, Path]) -> None:
    args = ["compare", QRELS, runs["bm25"], runs["shallow"], "-m", "AP", "--resamples", "500"]
    document = json.loads(cli(*args, "-f", "json").out)
    assert document["depths"] == {"bm25": 1000, "shallow": 100}
    [warning] = [w for w in document["data_warnings"] if w["kind"] == "depth"]
    assert warning["run"] == "shallow" and warning["detail"]["metrics"] == ["AP"]
    assert "differ in depth" in warning["message"]
    assert "differ in depth" in cli(*args, "-f", "markdown").out
    assert "differ in depth" in cli(*args, "-f", "html").out


def test_the_regression_gate_warns_too(cli: CLI, runs: dict[str, Path]) -> None:
    done = cli(
        "compare", QRELS, runs["bm25"], runs["shallow"], "-m", "AP", "--resamples", "500",
        "--fail-on", "regression", "-f", "json",
    )  # fmt: skip
    assert done.code in (0, 3), done.err
    assert _depth_lines(done.err)


def test_all_pairs_warns(cli: CLI, runs: dict[str, Path]) -> None:
    done = cli("all-pairs", QRELS, runs["bm25"], runs["shallow"], runs["third"], "-m", "AP")
    assert done.code == 0, done.err
    [line] = _depth_lines(done.err)
    assert "'bm25' 1,000, 'shallow' 100, 'third' 50" in line and "AP reads past rank 50" in line


def test_check_warns_whatever_the_metrics(cli: CLI, runs: dict[str, Path]) -> None:
    done = cli("check", QRELS, runs["bm25"], runs["shallow"], "-f", "json")
    assert done.code == 0, done.err
    document = json.loads(done.out)
    assert [r["depth"] for r in document["runs"]] == [1000, 100]
    table = cli("check", QRELS, runs["bm25"], runs["shallow"])
    assert "differ in depth" in " ".join(table.out.split())
    assert "AP, R-Prec, Bpref" in " ".join(table.out.split())


def test_fuse_warns_unless_depth_evens_them(
    cli: CLI, runs: dict[str, Path], tmp_path: Path
) -> None:
    done = cli("fuse", runs["bm25"], runs["shallow"], "-o", tmp_path / "fused.run")
    assert done.code == 0, done.err
    assert "fusing runs of different depths" in done.err and "'shallow' 100" in done.err
    even = cli("fuse", runs["bm25"], runs["shallow"], "--depth", "100", "-o", tmp_path / "f.run")
    assert even.code == 0 and "different depths" not in even.err


def test_every_run_maker_shares_one_default_depth() -> None:
    from rankmeter.cli.embed import embed_eval
    from rankmeter.cli.retrieval import bm25, fuse
    from rankmeter.vector import RUN_DEPTH
    from rankmeter.vector.bm25 import bm25_run
    from rankmeter.vector.embed import evaluate_model, retrieve_model
    from rankmeter.vector.fusion import fuse as fuse_runs

    assert RUN_DEPTH == 1000
    for function, name in [
        (bm25_run, "k"),
        (evaluate_model, "k"),
        (retrieve_model, "k"),
        (fuse_runs, "depth"),
        (bm25, "k"),
        (fuse, "depth"),
    ]:
        assert inspect.signature(function).parameters[name].default == RUN_DEPTH, function
    # embed-eval's -k is None until chosen: its help says the shared default.
    assert "Default: 1000" in str(inspect.signature(embed_eval).parameters["k"].annotation)


# -- the hostile trial of the fixes (issue 22, trial items 2 to 6) ---------------------------


def test_check_json_carries_the_depth_warning(cli: CLI, runs: dict[str, Path]) -> None:
    """The table and Markdown print it; the JSON document carries it too, with every other
    finding, in its top-level "warnings"."""
    done = cli("check", QRELS, runs["bm25"], runs["shallow"], "-f", "json")
    assert done.code == 0, done.err
    document = json.loads(done.out)
    [warning] = [w for w in document["warnings"] if w["kind"] == "depth"]
    assert warning["detail"]["depths"] == {"bm25": 1000, "shallow": 100}
    assert document["ok"] is True


def test_check_with_metrics_names_only_the_affected_ones(cli: CLI, runs: dict[str, Path]) -> None:
    """With -m, check words the depth warning as compare does: only the metrics asked for
    that favour the deeper run, and none at all when no metric asked for is affected."""
    fair = cli("check", QRELS, runs["bm25"], runs["shallow"], "-m", "nDCG@10")
    assert fair.code == 0, fair.err
    assert "differ in depth" not in _flat(fair.out) and "R-Prec" not in _flat(fair.out)
    both = _flat(
        cli("check", QRELS, runs["bm25"], runs["shallow"], "-m", "nDCG@10", "-m", "AP").out
    )
    assert "AP reads past rank 100" in both and "R-Prec" not in both


@pytest.mark.parametrize("fmt", ["markdown", "html", "latex", "json"])
def test_all_pairs_documents_carry_the_depth_warning(
    cli: CLI, runs: dict[str, Path], fmt: str, tmp_path: Path
) -> None:
    out = tmp_path / f"pairs.{fmt}"
    done = cli(
        "all-pairs", QRELS, runs["bm25"], runs["shallow"], runs["third"], "-m", "AP",
        "-f", fmt, "-o", out,
    )  # fmt: skip
    assert done.code == 0, done.err
    text = out.read_text(encoding="utf-8")
    assert "differ in depth" in text and "50" in text
    if fmt == "json":
        [warning] = json.loads(text)["data_warnings"]
        assert warning["kind"] == "depth" and warning["detail"]["metrics"] == ["AP"]


def test_evaluate_of_several_runs_warns(cli: CLI, runs: dict[str, Path]) -> None:
    """evaluate shows the runs' AP side by side: the same line as compare, naming only the
    affected metrics asked for."""
    done = cli("evaluate", QRELS, runs["bm25"], runs["shallow"], "-m", "AP", "-m", "nDCG@10")
    assert done.code == 0, done.err
    [line] = _depth_lines(done.err)
    assert "'bm25' 1,000, 'shallow' 100" in line and "AP reads past rank 100" in line
    assert "nDCG@10" not in line
    fair = cli("evaluate", QRELS, runs["bm25"], runs["shallow"], "-m", "nDCG@10")
    assert fair.code == 0 and not _depth_lines(fair.err)
    alone = cli("evaluate", QRELS, runs["shallow"], "-m", "AP")
    assert alone.code == 0 and not _depth_lines(alone.err)


def test_compare_names_only_the_metrics_that_favour_the_deeper_run(
    cli: CLI, runs: dict[str, Path]
) -> None:
    """P without a cutoff favours the shallower run, num_ret is a count: not named."""
    done = cli(
        "compare", QRELS, runs["bm25"], runs["shallow"], "-m", "P", "-m", "num_ret", "-m", "AP",
        "--resamples", "200",
    )  # fmt: skip
    assert done.code == 0, done.err
    [line] = _depth_lines(done.err)
    assert "; AP reads past rank 100" in line and "num_ret" not in line


def test_which_metrics_favour_the_deeper_run() -> None:
    from rankmeter.metrics import parse_metrics
    from rankmeter.results import depth_gap

    asked = ["P", "num_ret", "Judged", "Judged@1000", "NumRel", "P@10", "P@1000", "AP", "RR",
             "Success", "num_rel_ret", "R-Prec", "Bpref", "nDCG", "R@1000"]  # fmt: skip
    gap = depth_gap({"deep": 1000, "shallow": 100}, parse_metrics(asked))
    assert gap is not None
    assert gap.metrics == (
        "P@1000", "AP", "RR", "Success", "num_rel_ret", "R-Prec", "Bpref", "nDCG", "R@1000",
    )  # fmt: skip


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_gate_says_a_regression_may_be_the_cut(cli: CLI, runs: dict[str, Path]) -> None:
    """The shallower run loses on AP only because it is cut at 100: the gate still fails (the
    exit code is the gate's), and its line says the runs differ in depth."""
    done = cli(
        "compare", QRELS, runs["bm25"], runs["shallow"], "-m", "AP", "--resamples", "500",
        "--fail-on", "regression",
    )  # fmt: skip
    assert done.code == 3, done.err
    [line] = [line for line in done.err.splitlines() if "regression:" in line]
    assert "but the runs differ in depth (shallow 100, bm25 1,000: see the warning)" in line
    assert "the cut alone can make this gap" in line
