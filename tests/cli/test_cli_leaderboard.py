"""Issue 14, "models x datasets in one command": `embed-eval` with several collections, models
and baselines storing one result per (model, dataset), and `rankmeter leaderboard` reading
them back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rankmeter.vector import embed

from ._cli_support import CLI
from .test_cli_embed import StubEncoder


class ShiftedEncoder(StubEncoder):
    """Another model: the stub's buckets rotated, so it ranks differently."""

    def encode(self, sentences: list[str], **options: object) -> object:
        import numpy as np

        return np.roll(super().encode(sentences), 7, axis=1) + 0.5


def _load(folder: Path) -> StubEncoder:
    return ShiftedEncoder() if folder.name == "shifted" else StubEncoder()


@pytest.fixture(autouse=True)
def stub_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RANKMETER_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.setattr(embed, "_load_folder", _load)
    StubEncoder.calls = 0


def _model(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(name.encode())
    return folder


def _collection(root: Path, name: str, docs: dict[str, str], queries: dict[str, str]) -> Path:
    folder = root / name
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    lines = "".join(f"{q}\td{q}\t1\n" for q in queries)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + lines)
    return folder


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    words = ["wing flutter", "heat slab", "shock wedge", "boundary layer", "jet noise"]
    docs = {f"d{i}": f"{w} study number {i}" for i, w in enumerate(words)}
    queries = {str(i): w for i, w in enumerate(words)}
    other_docs = {f"d{i}": f"{w} measured" for i, w in enumerate(reversed(words))}
    return {
        "aero": _collection(tmp_path, "aero", docs, queries),
        "heat": _collection(tmp_path, "heat", other_docs, queries),
        "plain": _model(tmp_path, "plain"),
        "shifted": _model(tmp_path, "shifted"),
        "results": tmp_path / "results",
    }


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_results_accumulate_across_invocations_and_read_back(
    cli: CLI, setup: dict[str, Path]
) -> None:
    results = setup["results"]
    first = cli(
        "embed-eval", setup["aero"], setup["heat"], "--model", setup["plain"],
        "--results-dir", results, "-f", "json", "--quiet",
    )  # fmt: skip
    assert first.code == 0, first.err
    assert len(_files(results)) == 2
    board = json.loads(first.out)  # several results: this run's leaderboard
    assert [m["model"] for m in board["models"]] == ["plain"]
    stored = json.loads((results / sorted(_files(results))[0]).read_text())
    assert stored["model"] == "plain" and stored["dataset"] == "aero"
    assert set(stored["per_query"]) == {"0", "1", "2", "3", "4"}
    info = stored["info"]
    assert info["model"]["fingerprint"] and info["model"]["source"] == "folder"
    assert info["dimension"] == 64 and info["settings"]["k"] == 1000  # RUN_DEPTH
    assert info["rankmeter"] and info["created"].endswith("+00:00")
    assert set(info["seconds"]) == {"embedding", "search"}

    second = cli(
        "embed-eval", setup["aero"], setup["heat"], "--model", setup["shifted"],
        "--retriever", "bm25", "--results-dir", results, "--quiet",
    )  # fmt: skip
    assert second.code == 0, second.err
    after = _files(results)
    assert len(after) == 6
    # The first invocation's files are untouched.
    assert all(after[name] == data for name, data in _files(results).items())
    # A rerun of one (model, dataset) replaces its own file only.
    plain_heat = next(n for n in after if n.startswith("plain__heat"))
    again = cli(
        "embed-eval", setup["heat"], "--model", setup["plain"], "--results-dir", results,
    )  # fmt: skip
    assert again.code == 0, again.err
    assert again.err.endswith(f"stored 1 result in {results}\n")
    now = _files(results)
    assert sorted(now) == sorted(after)
    assert [n for n in now if now[n] != after[n]] == [plain_heat]

    read = cli("leaderboard", results, "-f", "json")
    assert read.code == 0, read.err
    payload = json.loads(read.out)
    assert payload["metric"] == "nDCG@10" and payload["datasets"] == ["aero", "heat"]
    rows = {m["model"]: m for m in payload["models"]}
    assert set(rows) == {"plain", "shifted", "BM25"}
    ranks = [m["mean_rank"] for m in payload["models"]]
    assert ranks == sorted(ranks)
    for dataset in ("aero", "heat"):
        cells = {m: rows[m]["scores"][dataset] for m in rows}
        top = max(c["score"] for c in cells.values())
        assert all(c["best"] == (c["score"] == top) for c in cells.values())
        tested = [c for c in cells.values() if "pvalue" in c]
        assert len(tested) == 2  # every model but the dataset's (first) best
        assert all(c["n"] == 5 and c["adjusted"] >= c["pvalue"] for c in tested)
    for fmt, needle in (
        ("table", "mean rank"),
        ("markdown", "| model | mean rank |"),
        ("html", "<table"),
    ):
        shown = cli("leaderboard", results, "-f", fmt)
        assert shown.code == 0, shown.err
        assert needle in shown.out and "significantly worse" in shown.out


def test_one_model_on_one_collection_prints_what_it_printed(
    cli: CLI, setup: dict[str, Path]
) -> None:
    args = ["embed-eval", setup["aero"], "--model", setup["plain"], "-f", "json", "--quiet"]
    plain = cli(*args)
    stored = cli(*args, "--results-dir", setup["results"])
    assert plain.code == stored.code == 0
    assert stored.out == plain.out
    assert "model" in json.loads(plain.out) and len(_files(setup["results"])) == 1


def test_a_foreign_or_corrupt_file_is_one_error_line_naming_it(
    cli: CLI, setup: dict[str, Path]
) -> None:
    results = setup["results"]
    done = cli("embed-eval", setup["aero"], "--model", setup["plain"], "--results-dir", results)
    assert done.code == 0, done.err
    (results / "notes.json").write_text('{"format": "something else"}')
    foreign = cli("leaderboard", results)
    message = foreign.assert_one_error_line(1)
    assert re.search(r"notes\.json: not a leaderboard result \(no \"format\"", message)
    (results / "notes.json").write_text("{not json")
    corrupt = cli("leaderboard", results)
    assert re.search(
        r"notes\.json: not a leaderboard result \(not JSON", corrupt.assert_one_error_line(1)
    )
    (results / "notes.json").unlink()
    name = next(iter(_files(results)))
    (results / name).write_text((results / name).read_text()[:50])  # cut short
    cut = cli("leaderboard", results)
    assert name in cut.assert_one_error_line(1)


@pytest.mark.parametrize(
    ("extra", "code", "match"),
    [
        (["--model", "{plain}", "--model", "{shifted}", "--name", "x"], 2, r"--name names one run"),
        (["{heat}", "--run-out", "{tmp}/x.run"], 2, r"--run-out names one run"),
        (["{heat}", "--per-query"], 2, r"--per-query shows one run's queries"),
        (["--model", "{plain}", "--model", "{tmp}/nowhere"], 1, r"model '.*nowhere' is not a folder"),
        (["{heat}", "--results-dir", "{aero}/corpus.jsonl"], 1, r"corpus.jsonl: is not a folder"),
        (["--model", "{plain}", "--model", "{plain}"], 2, r"two models are named 'plain'"),
    ],
)  # fmt: skip
def test_mistakes_fail_before_any_embedding(
    cli: CLI, setup: dict[str, Path], tmp_path: Path, extra: list[str], code: int, match: str
) -> None:
    filled = [a.format(tmp=tmp_path, **setup) for a in extra]
    if "--model" not in filled:
        filled += ["--model", str(setup["plain"])]
    result = cli("embed-eval", setup["aero"], *filled)
    assert re.search(match, result.assert_one_error_line(code))
    assert StubEncoder.calls == 0


def test_leaderboard_errors(cli: CLI, tmp_path: Path) -> None:
    absent = cli("leaderboard", tmp_path / "none")
    assert re.search(r"none: no such folder", absent.assert_one_error_line(1))
    (tmp_path / "empty").mkdir()
    empty = cli("leaderboard", tmp_path / "empty")
    assert re.search(r"empty: holds no results", empty.assert_one_error_line(1))


def test_hybrid_is_rrf_of_bm25_and_each_model(cli: CLI, setup: dict[str, Path]) -> None:
    from rankmeter.io.beir import load_beir
    from rankmeter.vector.bm25 import bm25_run
    from rankmeter.vector.fusion import fuse
    from rankmeter.vector.retrieval import evaluate_retrieval

    results = setup["results"]
    done = cli(
        "embed-eval", setup["heat"], "--model", setup["plain"], "--model", setup["shifted"],
        "--retriever", "hybrid", "--results-dir", results, "-m", "nDCG@10", "-m", "RR", "--quiet",
    )  # fmt: skip
    assert done.code == 0, done.err
    stored = {
        json.loads(p.read_text())["model"]: json.loads(p.read_text()) for p in results.iterdir()
    }
    assert set(stored) == {"plain", "shifted", "BM25 + plain (RRF)", "BM25 + shifted (RRF)"}
    loaded = load_beir(setup["heat"])
    dense = embed.retrieve_model(loaded, setup["plain"], cache=False).run
    fused = fuse([bm25_run(loaded, k=100), dense], "rrf", k=60, depth=100)
    expected = evaluate_retrieval(loaded.qrels, fused, ["nDCG@10", "RR"], model="x", collection="c")
    hybrid = stored["BM25 + plain (RRF)"]
    assert hybrid["per_query"] == expected.to_dict(per_query=True)["per_query"]
    assert hybrid["info"]["retriever"] == "hybrid" and "reciprocal-rank" in hybrid["info"]["fusion"]


def test_a_result_its_own_queries_contradict_is_one_error_line(cli: CLI, tmp_path: Path) -> None:
    """Issue 22, item 13: a model averaging 0.26 per query but claiming 0.99 is not ranked
    first: the file is refused, named, in one line (and so is nDCG@10 = 7)."""
    results = tmp_path / "results"
    results.mkdir()

    def store(model: str, mean: float, values: list[float]) -> Path:
        path = results / f"{model}.json"
        path.write_text(
            json.dumps(
                {
                    "format": "rankmeter leaderboard entry",
                    "version": 1,
                    "model": model,
                    "dataset": "d",
                    "metrics": {"nDCG@10": mean},
                    "info": {},
                    "per_query": {f"q{i}": {"nDCG@10": v} for i, v in enumerate(values)},
                }
            )
        )
        return path

    store("honest", 0.5, [0.4, 0.6])
    liar = store("liar", 0.99, [0.26, 0.26])
    message = cli("leaderboard", results).assert_one_error_line(1)
    assert message.startswith(
        f'{liar}: "metrics" says nDCG@10 = 0.99, but the mean of its 2 per-query values is 0.26'
    )
    store("liar", 7.0, [7.0, 7.0])
    message = cli("leaderboard", results).assert_one_error_line(1)
    assert message.startswith(f'{liar}: nDCG@10 = 7 in "metrics", outside its range [0, 1]')


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[" * 100_000 + "]" * 100_000, r"JSON nested too deeply"),
        (
            '{"format": "rankmeter leaderboard entry", "version": 1, "metrics": {"nDCG@10": 1'
            + "0" * 5000
            + "}}",
            r"an integer of 5001 digits",
        ),
        (
            '{"format": "rankmeter leaderboard entry", "version": 1, "model": "m \\ud800", '
            '"dataset": "d", "metrics": {"nDCG@10": 1}, "per_query": {"q": {"nDCG@10": 1}}}',
            r"a lone surrogate \(\\ud800\)",
        ),
    ],
    ids=["deep", "5001-digits", "lone-surrogate"],
)
def test_hostile_stored_files_are_bad_data_not_internal_errors(
    cli: CLI, tmp_path: Path, text: str, match: str
) -> None:
    """Issue 22 trial, item 2: these were "internal error" (exit 70)."""
    (tmp_path / "bad.json").write_text(text)
    message = cli("leaderboard", tmp_path).assert_one_error_line(1)
    assert message.startswith(f"{tmp_path / 'bad.json'}: not a leaderboard result")
    assert re.search(match, message)


def test_a_file_name_s_newline_shows_as_backslash_n(cli: CLI, tmp_path: Path) -> None:
    """Issue 22 trial, item 6: the newline became a space ("x y")."""
    (tmp_path / "x\ny").write_text("{}")
    message = cli("leaderboard", tmp_path).assert_one_error_line(1)
    assert message.startswith(f"{tmp_path}/x\\ny: not a leaderboard result")


def test_output_inside_the_results_folder_is_refused(
    cli: CLI, setup: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 22 trial, item 6: `leaderboard res -f json -o res/board.json` wrote the board
    into the folder, and the next `leaderboard res` refused the folder. Refused instead (exit
    2), writing nothing; elsewhere it is written."""
    results = setup["results"]
    done = cli("embed-eval", setup["aero"], "--model", setup["plain"], "--results-dir", results)
    assert done.code == 0, done.err
    before = sorted(p.name for p in results.iterdir())
    inside = cli("leaderboard", results, "-f", "json", "-o", results / "board.json")
    message = inside.assert_one_error_line(2)
    assert "board.json is inside the results folder" in message
    assert sorted(p.name for p in results.iterdir()) == before
    assert cli("leaderboard", results).code == 0
    elsewhere = cli("leaderboard", results, "-f", "json", "-o", tmp_path / "board.json")
    assert elsewhere.code == 0, elsewhere.err
    assert json.loads((tmp_path / "board.json").read_text())["metric"] == "nDCG@10"


# -- issue 24: rank intervals and groups ---------------------------------------------------------
def _stored_board(folder: Path) -> Path:
    """Four models on two datasets, stored as embed-eval stores them: one far ahead, three
    close together."""
    import numpy as np

    from rankmeter.report.leaderboard import save_entry
    from rankmeter.vector.leaderboard import LeaderboardEntry

    rng = np.random.default_rng(24)
    for dataset in ("aero", "heat"):
        hardness = rng.uniform(0.2, 0.5, 40)
        for model, shift in (("far", 0.45), ("x", 0.02), ("y", 0.01), ("z", 0.0)):
            values = np.clip(hardness + shift + rng.normal(0, 0.1, 40), 0, 1)
            per_query = {f"q{i}": {"nDCG@10": float(v)} for i, v in enumerate(values)}
            mean = {"nDCG@10": float(np.mean(values))}
            save_entry(LeaderboardEntry(model, dataset, mean, per_query), folder)
    return folder


def test_rank_intervals_and_groups_in_every_format(cli: CLI, tmp_path: Path) -> None:
    results = _stored_board(tmp_path / "results")
    first = cli("leaderboard", results, "-f", "json", "--seed", "3", "--resamples", "300")
    assert first.code == 0, first.err
    again = cli("leaderboard", results, "-f", "json", "--seed", "3", "--resamples", "300")
    assert again.out == first.out  # the same seed, the same intervals
    payload = json.loads(first.out)
    assert payload["rank_intervals"]["seed"] == 3
    assert payload["rank_intervals"]["resamples"] == 300
    rows = {row["model"]: row for row in payload["models"]}
    assert rows["far"]["rank_interval"] == [1, 1] and rows["far"]["group"] == 1
    assert {rows[m]["group"] for m in "xyz"} == {2}  # three close models: one group
    for fmt, needles in (
        ("table", ["rank 95% CI", "group", "1-1"]),
        ("markdown", ["| model | mean rank | rank 95% CI | group | aero | heat |", "| 1-1 | 1 |"]),
        ("html", [">rank 95% CI</th>", ">group</th>", ">1-1</td>"]),
    ):
        shown = cli("leaderboard", results, "-f", fmt, "--level", "0.95")
        assert shown.code == 0, shown.err
        assert all(needle in shown.out for needle in needles), (fmt, shown.out)
    ninety = cli("leaderboard", results, "-f", "markdown", "--level", "0.9")
    assert "rank 90% CI" in ninety.out and "5% to 95% percentiles" in ninety.out


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--resamples", "5"], "resamples=5 must be an integer from 100 to 10,000,000"),
        (["--seed", "-1"], "seed=-1 must be an integer >= 0"),
        (["--level", "95"], "level=95.0 must be a number strictly between 0 and 1"),
    ],
)
def test_rank_interval_settings_are_one_error_line(
    cli: CLI, tmp_path: Path, option: list[str], message: str
) -> None:
    results = _stored_board(tmp_path / "results")
    assert message in cli("leaderboard", results, *option).assert_one_error_line(2)
