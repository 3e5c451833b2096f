"""`rankmeter compare`: the same numbers as the library, every format, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankmeter import compare

from ._cli_support import CLI


def write_collection(folder: Path, n: int = 40, seed: int = 1) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    qrels, base, new = [], [], []
    for q in range(n):
        grades = rng.choice([0, 1, 2], size=8)
        for i, g in enumerate(grades):
            qrels.append(f"{q} 0 d{i} {g}")
        noise_base = grades + rng.normal(0, 1.5, 8)
        noise_new = grades + rng.normal(0, 0.5, 8)
        order_base = np.argsort(-noise_base)
        order_new = np.argsort(-noise_new)
        for rank, i in enumerate(order_base):
            base.append(f"{q} Q0 d{i} {rank + 1} {noise_base[i]:.6f} bm25")
        if q != 0:  # the new system has nothing for query 0
            for rank, i in enumerate(order_new):
                new.append(f"{q} Q0 d{i} {rank + 1} {noise_new[i]:.6f} dense")
    paths = {
        "qrels": folder / "qrels.txt",
        "base": folder / "bm25.run",
        "new": folder / "dense.run",
        "queries": folder / "queries.tsv",
        "segments": folder / "segments.tsv",
    }
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    paths["base"].write_text("\n".join(base) + "\n")
    paths["new"].write_text("\n".join(new) + "\n")
    paths["queries"].write_text("".join(f"{q}\tquery number {q}\n" for q in range(n)))
    rows = ["query_id\tfreq"] + [f"{q}\t{'head' if q < n // 2 else 'tail'}" for q in range(n)]
    paths["segments"].write_text("\n".join(rows) + "\n")
    return paths


@pytest.fixture
def collection(tmp_path: Path) -> dict[str, Path]:
    return write_collection(tmp_path)


def test_json_equals_the_library(cli: CLI, collection: dict[str, Path]) -> None:
    args = ["-m", "nDCG@10", "-m", "P@5", "--seed", "3", "--resamples", "500"]
    result = cli(
        "compare",
        collection["qrels"],
        collection["base"],
        collection["new"],
        *args,
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    library = compare(
        collection["qrels"],
        [collection["base"], collection["new"]],
        ["nDCG@10", "P@5"],
        seed=3,
        resamples=500,
    )
    assert payload["systems"] == ["bm25", "dense"]
    assert payload["differences"] == json.loads(
        json.dumps([d.to_dict() for d in library.differences])
    )
    assert payload["failures"][1]["no_results"] == ["0"]


def test_table_markdown_latex(cli: CLI, collection: dict[str, Path]) -> None:
    files = [collection["qrels"], collection["base"], collection["new"]]
    table = cli("compare", *files, "--resamples", "200", "--queries", collection["queries"])
    # The one thing on stderr: the "new" run has no results for query 0 (issue 16's warning).
    assert table.code == 0 and table.err.count("\n") == 1, table.err
    assert table.err.startswith("rankmeter: warning: run 'dense'") and "query only" not in table.err
    assert "Means over 40 queries" in table.out and "Against bm25" in table.out
    assert "query number" in table.out  # the worst queries come with their text
    markdown = cli("compare", *files, "--resamples", "200", "-f", "markdown")
    # A pull-request comment (issue 16): the verdict first, no heading.
    assert markdown.out.startswith("**Verdict:** dense ") and "| dense | nDCG@10 |" in markdown.out
    latex = cli("compare", *files, "--resamples", "200", "-f", "latex")
    assert "\\begin{tabular}" in latex.out and "\\toprule" in latex.out


def test_segments_and_output_file(cli: CLI, collection: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    result = cli(
        "compare",
        collection["qrels"],
        collection["base"],
        collection["new"],
        "--segments",
        collection["segments"],
        "--min-segment",
        "10",
        "--resamples",
        "200",
        "-f",
        "json",
        "-o",
        out,
    )
    assert result.code == 0 and result.out == ""
    segments = {s["segment"] for s in json.loads(out.read_text())["segments"]}
    assert segments == {"freq=head", "freq=tail"}


def test_baseline_by_name_or_file(cli: CLI, collection: dict[str, Path]) -> None:
    files = [collection["qrels"], collection["base"], collection["new"]]
    for baseline in ("dense", str(collection["new"])):
        result = cli("compare", *files, "--baseline", baseline, "--resamples", "100", "-f", "json")
        assert json.loads(result.out)["systems"] == ["dense", "bm25"]
    bad = cli("compare", *files, "--baseline", "nope")
    message = bad.assert_one_error_line(2)
    assert "--baseline 'nope' is neither a run name nor a run file; runs: bm25, dense" in message


def test_goal_adds_its_metrics(cli: CLI, collection: dict[str, Path]) -> None:
    files = [collection["qrels"], collection["base"], collection["new"]]
    result = cli(
        "compare", *files, "-m", "AP", "--goal", "single-answer", "--resamples", "100", "-f", "json"
    )
    assert json.loads(result.out)["metrics"][0] == "AP"
    assert "RR@10" in json.loads(result.out)["metrics"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--test", "z"], 2, "Invalid value for '--test'"),
        (["--alpha", "2"], 2, "alpha=2.0 must be a number strictly between 0 and 1"),
        (["--seed", "-3"], 2, "seed=-3 must be an integer >= 0"),
        (["--segments", "missing.tsv"], 1, "missing.tsv"),
    ],
)
def test_errors_are_one_line(
    cli: CLI, collection: dict[str, Path], args: list[str], code: int, message: str
) -> None:
    result = cli("compare", collection["qrels"], collection["base"], collection["new"], *args)
    assert message in result.assert_one_error_line(code)


def test_one_run_is_a_usage_error(cli: CLI, collection: dict[str, Path]) -> None:
    result = cli("compare", collection["qrels"], collection["base"])
    assert "compare needs two runs or more" in result.assert_one_error_line(2)


def test_one_query_where_b_loses_is_counted(cli: CLI, tmp_path: Path) -> None:
    qrels, base, new = tmp_path / "qrels", tmp_path / "a.run", tmp_path / "b.run"
    qrels.write_text("1 0 x 1\n")
    base.write_text("1 Q0 x 1 2.0 A\n1 Q0 n 2 1.0 A\n")
    new.write_text("1 Q0 n 1 2.0 B\n1 Q0 x 2 1.0 B\n")
    table = cli("compare", qrels, base, new, "-m", "RR", "--resamples", "50")
    assert table.code == 0, table.err
    assert "0/0/1" in table.out and "0/0/0" not in table.out
    markdown = cli("compare", qrels, base, new, "-m", "RR", "--resamples", "50", "-f", "markdown")
    assert "| 0/0/1 |" in markdown.out
    payload = json.loads(cli("compare", qrels, base, new, "-m", "RR", "-f", "json").out)
    (difference,) = payload["differences"]
    assert (difference["wins"], difference["ties"], difference["losses"]) == (0, 0, 1)
    assert difference["p_value"] is None  # not computable from one query


def test_query_set_and_simultaneous_options(cli: CLI, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 a 1\nq{i} 0 b 0\n" for i in range(1, 9)))
    runs = []
    for name, queries in (("one", range(1, 5)), ("two", range(1, 7))):
        path = tmp_path / f"{name}.run"
        path.write_text(
            "".join(f"q{i} Q0 a 1 2.0 {name}\nq{i} Q0 b 2 1.0 {name}\n" for i in queries)
        )
        runs.append(path)
    default = cli("compare", qrels, *runs, "-m", "P@1", "-f", "json")
    assert json.loads(default.out)["n_queries"] == 8
    answered = cli(
        "compare", qrels, *runs, "-m", "P@1", "-f", "json", "--answered-only", "--simultaneous"
    )
    payload = json.loads(answered.out)
    assert payload["n_queries"] == 6 and payload["filled"] == {"one": 2, "two": 0}
    assert payload["settings"]["simultaneous"] is True
