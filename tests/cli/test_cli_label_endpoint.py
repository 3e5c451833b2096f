"""`rankmeter label --endpoint URL --model NAME` end to end (issue 11, item 4: a client for an
OpenAI-compatible chat endpoint), against a local fake server (tests/_chat_server.py): a pool
file and a tiny BEIR folder in, qrels out, then audit-labels on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _chat_server import Canned, completion

from rankmeter.io import read_qrels

from ._cli_support import CLI

POOL = [
    {
        "query_id": q,
        "doc_id": d,
        "runs": {"r": rank},
        "best_rank": rank,
        "inclusion_probability": 1.0,
    }
    for q, d, rank in [("q1", "d1", 1), ("q1", "d2", 2), ("q2", "d2", 1), ("q2", "d3", 2)]
]


@pytest.fixture
def beir(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "wing flutter speed"}) + "\n"
        + json.dumps({"_id": "q2", "text": "heat transfer tube"}) + "\n"
    )  # fmt: skip
    (folder / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "Flutter", "text": "wing flutter at speed"}) + "\n"
        + json.dumps({"_id": "d2", "title": "", "text": "heat transfer in a tube"}) + "\n"
        + json.dumps({"_id": "d3", "title": "", "text": "boundary layers"}) + "\n"
    )  # fmt: skip
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t3\nq1\td2\t0\nq2\td2\t2\nq2\td3\t0\n"
    )
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(item) + "\n" for item in POOL))
    return {
        "pool": pool,
        "queries": folder / "queries.jsonl",
        "corpus": folder / "corpus.jsonl",
        "human": folder / "qrels" / "test.tsv",
    }


def _args(beir: dict[str, Path], *more: Any) -> list[Any]:
    return [
        "label", "--pool", beir["pool"], "--queries", beir["queries"], "--corpus",
        beir["corpus"], *more,
    ]  # fmt: skip


def test_label_with_an_endpoint_then_audit(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    out, cache = tmp_path / "model.qrels", tmp_path / "grades.sqlite"
    more = ("--endpoint", chat_server.url, "--model", "tiny", "--cache", cache, "-o", out)
    done = cli(*_args(beir, *more))
    assert done.code == 0, done.err
    assert done.out == (
        f"4 items of 2 queries labelled by tiny at {chat_server.url}/v1/chat/completions "
        "(4 requests, 0 from the cache)\n"
    )
    # Title and text reach the model together (the labelers' rule): "Flutter wing flutter at speed".
    assert read_qrels(out).to_dict() == {"q1": {"d1": 3, "d2": 0}, "q2": {"d2": 3, "d3": 0}}
    assert {r["body"]["model"] for r in chat_server.requests} == {"tiny"}
    again = cli(*_args(beir, *more))
    assert again.code == 0 and "(0 requests, 4 from the cache)" in again.out
    assert chat_server.calls == 4
    audit = cli("audit-labels", "--human", beir["human"], "--model", out, "-f", "json")
    assert audit.code == 0, audit.err
    document = json.loads(audit.out)
    assert document["shared_items"] == 4
    assert document["agreement"]["raw_agreement"] == 0.75


def test_the_api_key_from_the_named_variable(
    cli: CLI, beir: dict[str, Path], chat_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "k-123")
    more = ("--endpoint", chat_server.url, "--model", "m", "--api-key-env", "MY_LLM_KEY")
    done = cli(*_args(beir, *more, "--workers", "1", "-o", "-"))
    assert done.code == 0, done.err
    assert done.out.startswith("q1 0 d1 3\n")
    assert {r["headers"]["Authorization"] for r in chat_server.requests} == {"Bearer k-123"}
    missing = cli(*_args(beir, "--endpoint", chat_server.url, "--model", "m", "-o", "-",
                         "--api-key-env", "NO_SUCH_VARIABLE_X"))  # fmt: skip
    assert "--api-key-env NO_SUCH_VARIABLE_X: that environment variable is not set" in (
        missing.assert_one_error_line(2)
    )


def test_show_prompt(cli: CLI) -> None:
    done = cli("label", "--show-prompt")
    assert done.code == 0, done.err
    assert done.out.startswith("[system]\n") and "##final score: N" in done.out
    assert "{query}" in done.out and "{document}" in done.out


@pytest.mark.parametrize(
    ("more", "message"),
    [
        ((), "give exactly one of --labeler module:function and --endpoint URL"),
        (
            ("--labeler", "operator:eq", "--endpoint", "http://127.0.0.1:9"),
            "give exactly one of --labeler module:function and --endpoint URL",
        ),
        (("--endpoint", "http://127.0.0.1:9"), "--endpoint needs --model NAME"),
        (("--endpoint", "127.0.0.1:9", "--model", "m"), "endpoint='127.0.0.1:9' must be an"),
        (("--endpoint", "http://127.0.0.1:9", "--model", "m", "--workers", "0"), "workers=0"),
    ],
)
def test_usage_errors_are_one_line(
    cli: CLI, beir: dict[str, Path], tmp_path: Path, more: tuple[str, ...], message: str
) -> None:
    out = tmp_path / "model.qrels"
    done = cli(*_args(beir, *more, "-o", out))
    assert message in done.assert_one_error_line(2)
    assert not out.exists()


def test_an_endpoint_failing_is_one_line_and_writes_nothing(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    chat_server.script = [Canned(200, completion("<b>relevant</b>\x1b[2J"))]
    out = tmp_path / "model.qrels"
    more = ("--endpoint", chat_server.url, "--model", "m", "--workers", "1", "-o", out)
    error = cli(*_args(beir, *more)).assert_one_error_line(1)
    assert error.startswith(f"{beir['pool']}: query 'q1', doc 'd1': model 'm' at ")
    assert error.endswith("'<b>relevant</b>\\x1b[2J'")
    assert not out.exists()


def test_a_tampered_cache_is_one_line_and_writes_nothing(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    """Issue 22, item 2: a cached grade off --scale (99, or -5 that would become "judged,
    unjudged") stops the command with one line naming the cache file and the row."""
    import sqlite3

    out, cache = tmp_path / "model.qrels", tmp_path / "grades.sqlite"
    more = ("--endpoint", chat_server.url, "--model", "m", "--cache", cache, "--workers", "1")
    assert cli(*_args(beir, *more, "-o", out)).code == 0
    out.unlink()
    for tampered in (99, -5):
        with sqlite3.connect(cache) as db:
            db.execute("UPDATE rankmeter_chat_grades SET grade = ? WHERE rowid = 3", (tampered,))
        error = cli(*_args(beir, *more, "-o", out)).assert_one_error_line(1)
        assert error.startswith(f"{beir['pool']}: query ")
        assert (
            f"{cache}:3: row 3 of the labels cache gives the grade {tampered}, not a whole "
            "number on the scale 0-3"
        ) in error
        assert not out.exists()
    assert chat_server.calls == 4


def test_timeout_is_a_total_deadline_per_request(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    """Issue 22, item 3: --timeout bounds a whole request; a server dribbling its answer a
    byte every 0.1 s (half a minute in all) is cut off after 1 s and asked again."""
    chat_server.script = [Canned(200, completion("##final score: 3"), dribble=0.1)]
    out = tmp_path / "model.qrels"
    more = ("--endpoint", chat_server.url, "--model", "m", "--workers", "1", "--timeout", "1")
    done = cli(*_args(beir, *more, "-o", out))
    assert done.code == 0, done.err
    assert "(5 requests, 0 from the cache)" in done.out
    assert read_qrels(out).to_dict() == {"q1": {"d1": 3, "d2": 0}, "q2": {"d2": 3, "d3": 0}}
    error = cli(*_args(beir, *more[:-1], "0", "-o", out)).assert_one_error_line(2)
    assert "timeout=0.0 must be a number > 0 (seconds a request may take in all)" in error


def test_a_huge_reply_is_one_line_and_writes_nothing(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    chat_server.script = [Canned(200, flood=64_000_000)]
    out = tmp_path / "model.qrels"
    more = ("--endpoint", chat_server.url, "--model", "m", "--workers", "1", "-o", out)
    error = cli(*_args(beir, *more)).assert_one_error_line(1)
    assert error.startswith(f"{beir['pool']}: query 'q1', doc 'd1': model 'm' at ")
    assert "the reply is larger than max_reply_bytes=4,000,000; not read further" in error
    assert not out.exists()


def test_an_id_with_whitespace_is_refused_before_any_request(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    """Issue 22 (label trial), item 5: a doc id "a b" (in the corpus, so its text is found)
    is bad data named with the pool file before anything is asked, not a usage error after
    the paid requests."""
    with open(beir["corpus"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"_id": "a b", "title": "", "text": "wing"}) + "\n")
    spaced = {**POOL[0], "doc_id": "a b"}
    beir["pool"].write_text("".join(json.dumps(item) + "\n" for item in [*POOL, spaced]))
    out = tmp_path / "model.qrels"
    more = ("--endpoint", chat_server.url, "--model", "m", "-o", out)
    error = cli(*_args(beir, *more)).assert_one_error_line(1)
    assert error.startswith(f"{beir['pool']}: doc id 'a b' (query 'q1') cannot be written as TREC")
    assert chat_server.calls == 0
    assert not out.exists()


@pytest.mark.parametrize("key", ["sk-SECRET123\r\nX-Evil: 1", "sk-S\u00c9CRET123"])
def test_a_bad_key_is_one_line_naming_the_variable_never_the_key(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, key: str,
) -> None:  # fmt: skip
    """Issue 22 (label trial), item 1: exit 2 before any request or retry; the key unseen."""
    out = tmp_path / "model.qrels"
    more = ("--endpoint", chat_server.url, "--model", "m", "-o", out)
    monkeypatch.setenv("RANKMETER_API_KEY", key)
    done = cli(*_args(beir, *more))
    error = done.assert_one_error_line(2)
    assert "the API key in the environment variable RANKMETER_API_KEY holds" in error
    monkeypatch.setenv("MY_LLM_KEY", key)
    other = cli(*_args(beir, *more, "--api-key-env", "MY_LLM_KEY"))
    assert "the API key in the environment variable MY_LLM_KEY holds" in (
        other.assert_one_error_line(2)
    )
    for result in (done, other):
        assert "SECRET" not in result.out + result.err and "CRET" not in result.err
    assert chat_server.calls == 0
    assert not out.exists()


def test_credentials_in_the_endpoint_are_never_echoed(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    """Issue 22 (label trial), item 2: user:password@ shown as ***@, in the summary and in
    errors; a URL no request could reach is refused up front with exit 2."""
    out = tmp_path / "model.qrels"
    endpoint = chat_server.url.replace("http://", "http://user:pw-SECRET@") + "/v1"
    more = ("--endpoint", endpoint, "--model", "m", "--workers", "1", "--quiet")
    done = cli(*_args(beir, *more, "-o", out))
    assert done.code == 0, done.err
    shown = chat_server.url.replace("http://", "http://***@")
    assert f"labelled by m at {shown}/v1/chat/completions (4 requests" in done.out
    chat_server.script = [Canned(404, {"error": "no such model"})]
    failed = cli(*_args(beir, *more, "-o", "-"))
    error = failed.assert_one_error_line(1)
    assert f"model 'm' at {shown}/v1/chat/completions: HTTP 404" in error
    for result in (done, failed):
        assert "SECRET" not in result.out + result.err
    bad = cli(*_args(beir, "--endpoint", "http://u:SECRET@[::1", "--model", "m", "-o", out))
    assert bad.assert_one_error_line(2).endswith(
        "endpoint='http://***@[::1' is not a valid URL (Invalid IPv6 URL)"
    )
    assert "SECRET" not in bad.err


def test_show_prompt_fills_in_and_checks_the_scale(cli: CLI) -> None:
    """Issue 22 (label trial), item 4: the prompt describes the grades 0-3; --show-prompt
    fills in the scale ({low}/{high} are never shown) and refuses another one, in either
    order of the options."""
    done = cli("label", "--show-prompt", "--scale", "0-3")
    assert done.code == 0, done.err
    assert "on a scale from 0 to 3:" in done.out and "a whole number from 0 to 3." in done.out
    assert "{low}" not in done.out and "{high}" not in done.out
    assert cli("label", "--show-prompt").out == done.out
    for args in (("--show-prompt", "--scale", "1-5"), ("--scale", "1-5", "--show-prompt")):
        error = cli("label", *args).assert_one_error_line(2)
        assert error.endswith(
            "--scale 1-5: the prompt sent to --endpoint models describes the grades 0-3 only "
            "(give --scale 0-3; for another scale, rankmeter.judgments.ChatLabeler takes a "
            "prompt of your own in Python)"
        )
    assert "scale='banana' must be LOW-HIGH" in cli(
        "label", "--show-prompt", "--scale", "banana"
    ).assert_one_error_line(2)


def test_a_scale_the_prompt_does_not_describe_is_refused_before_any_request(
    cli: CLI, beir: dict[str, Path], chat_server: Any, tmp_path: Path
) -> None:
    out = tmp_path / "model.qrels"
    more = ("--endpoint", chat_server.url, "--model", "m", "--scale", "1-5", "-o", out)
    error = cli(*_args(beir, *more)).assert_one_error_line(2)
    assert "--scale 1-5: the prompt sent to --endpoint models describes the grades 0-3" in error
    assert chat_server.calls == 0
    assert not out.exists()
