"""No command writes over one of its inputs (issue 24, the hostile trial's data loss):
``rankmeter evaluate QRELS a.run -o a.run`` replaced the run with the table. Every command that
writes a file refuses, before any work, an output that is one of the files it reads: the same
path, a symbolic link to it, a hard link to it, a file a BEIR or results folder holds. The
check is :func:`rankmeter.io.check_outputs`' ``inputs``, called through ``keep_inputs``."""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rankmeter.cli import NO_FAST_START, _app

from ._cli_support import CLI, QRELS, RUN_A, RUN_B

# Each case: the command line, where IN is the input that is also given as the output (its
# file, "in.txt", or the folder "beir" holding "beir/queries.jsonl"), and the output's option.
EVALUATING = {
    "evaluate": "evaluate QRELS IN -o IN",
    "evaluate (named run)": "evaluate QRELS a=IN -o IN",
    "evaluate (qrels)": "evaluate IN A -o IN",
    "check": "check QRELS IN -o IN",
    "compare": "compare QRELS A new=IN -o IN",
    "all-pairs": "all-pairs QRELS A B IN -o IN",
    "power": "power QRELS A IN -o IN",
    "stability": "stability QRELS A IN -o IN",
    "two-stage": "two-stage QRELS A IN -o IN",
    "fuse": "fuse A IN -o IN",
}
JUDGING = {
    "pool": "pool A IN -o IN",
    "pool (qrels)": "pool A --qrels IN -o IN",
    "agree": "agree IN -o IN",
    "label": "label --pool IN --queries QUERIES --corpus CORPUS --labeler module:f -o IN",
    "audit-labels": "audit-labels --human IN --model QRELS A -o IN",
    "judge serve": "judge serve IN --queries QUERIES --corpus CORPUS --db IN --raters r1",
    "judge status": "judge status --db IN -o IN",
    "judge export": "judge export --db IN -o IN",
    "judge export --labels": "judge export --db IN -o out.txt --labels IN",
}
ONLINE = {
    "ab": "ab IN -o IN",
    "online-vs-offline": "online-vs-offline QRELS A B IN -o IN",
    "interleave": "interleave LOG --run-a A --run-b IN -o IN",
    "logs check": "logs check IN -o IN",
    "logs simulate": "logs simulate QRELS A IN -o IN",
    "logs simulate --pre-period": "logs simulate QRELS A LOG -o out.jsonl --pre-period LOG",
    "clicks fit": "clicks fit IN -o IN",
    "clicks labels": "clicks labels IN -o IN",
    "sample-queries": "sample-queries IN --n 2 -o IN",
    "query-mix": "query-mix QUERIES IN -o IN",
}
VECTORS = {
    "bm25 -o": "bm25 beir -o beir/queries.jsonl",
    "bm25 --run-out": "bm25 beir --run-out beir/corpus.jsonl",
    "bm25 qrels": "bm25 beir --run-out beir/qrels/test.tsv",
    "embed-eval --run-out": "embed-eval beir --run-out beir/queries.jsonl",
    "embed-eval --qrels": "embed-eval --qrels IN --queries QUERIES --corpus CORPUS -o IN",
    "ann-recall": "ann-recall CORPUS IN -o IN",
    "ann-results": "ann-results results -o results/flat.json",
    "leaderboard": "leaderboard results -o results/minilm.json",
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "in.txt").write_text(RUN_B)
    (tmp_path / "queries.tsv").write_text("1\tfirst\n")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n')
    (tmp_path / "log.jsonl").write_text("{}\n")
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        (tmp_path / "beir" / name).write_text("kept\n")
    (tmp_path / "results").mkdir()
    for name in ("flat.json", "minilm.json"):
        (tmp_path / "results" / name).write_text("{}\n")
    return tmp_path


def refused(cli: CLI, folder: Path, line: str) -> None:
    """The command line refused with one line naming the output and the input, every file in
    ``folder`` as it was."""
    names = {"QRELS": "qrels.txt", "A": "a.run", "B": "b.run", "IN": "in.txt"}
    names |= {"QUERIES": "queries.tsv", "CORPUS": "corpus.jsonl", "LOG": "log.jsonl"}
    args = [names.get(word, word).replace("IN", "in.txt") for word in line.split()]
    args = [a.replace("=IN", "=in.txt") for a in args]
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    done = cli(*args)
    assert done.code == 2, done.err
    assert "is also an input" in done.err and "give the output another name" in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err, done.err
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("line", EVALUATING.values(), ids=EVALUATING)
def test_the_evaluating_commands_keep_their_inputs(cli: CLI, folder: Path, line: str) -> None:
    refused(cli, folder, line)


@pytest.mark.parametrize("line", JUDGING.values(), ids=JUDGING)
def test_the_judging_commands_keep_their_inputs(cli: CLI, folder: Path, line: str) -> None:
    refused(cli, folder, line)


@pytest.mark.parametrize("line", ONLINE.values(), ids=ONLINE)
def test_the_log_commands_keep_their_inputs(cli: CLI, folder: Path, line: str) -> None:
    refused(cli, folder, line)


@pytest.mark.parametrize("line", VECTORS.values(), ids=VECTORS)
def test_the_retrieval_commands_keep_their_inputs(cli: CLI, folder: Path, line: str) -> None:
    refused(cli, folder, line)


@pytest.mark.parametrize("link", ["symlink", "hard link", "dot-dot"])
@pytest.mark.parametrize("fast", [True, False], ids=["fast start", "typer"])
def test_an_output_that_is_a_link_to_an_input_is_refused(
    cli: CLI, folder: Path, monkeypatch: pytest.MonkeyPatch, link: str, fast: bool
) -> None:
    """One file under another name is the same file: ``evaluate`` read by the fast start and
    by Typer refuse it alike."""
    if not fast:
        monkeypatch.setenv(NO_FAST_START, "1")
    (folder / "sub").mkdir()
    target = {"symlink": "out.txt", "hard link": "out.txt", "dot-dot": "sub/../in.txt"}[link]
    if link == "symlink":
        os.symlink("in.txt", "out.txt")
    elif link == "hard link":
        os.link("in.txt", "out.txt")
    before = Path("in.txt").read_bytes()
    done = cli("evaluate", "qrels.txt", "in.txt", "-o", target)
    assert done.code == 2, done.err
    assert f"-o {target} is also an input (RUNS in.txt)" in done.err
    assert Path("in.txt").read_bytes() == before


def test_another_file_is_written(cli: CLI, folder: Path) -> None:
    """The check does not refuse what is not an input: a new file, a run beside a BEIR folder's
    files."""
    done = cli("evaluate", "qrels.txt", "a.run", "-o", "beir/old.run", "-f", "trec")
    assert done.code == 0, done.err
    assert Path("beir/old.run").read_text()


def test_the_library_refuses_an_output_that_is_an_input(folder: Path) -> None:
    """The Python entry point that writes files checks its inputs too."""
    from rankmeter.errors import PolicyError
    from rankmeter.online import simulate_log_files

    Path("b.jsonl").write_bytes(RUN_B.encode())  # a run whose name is also a log's
    with pytest.raises(PolicyError, match=r"output b.jsonl is also an input \(treatment"):
        simulate_log_files("qrels.txt", "a.run", "b.jsonl", output="b.jsonl")
    assert Path("b.jsonl").read_bytes() == RUN_B.encode()


def test_the_model_evaluation_keeps_the_collection(folder: Path) -> None:
    """``evaluate_model(..., run_out=)`` refuses a file of the collection before any embedding
    (the model is not even looked up)."""
    from rankmeter.errors import PolicyError
    from rankmeter.vector import evaluate_model

    with pytest.raises(PolicyError, match=r"^run_out beir/qrels/test.tsv is also an input"):
        evaluate_model("beir", "no-such-model", run_out="beir/qrels/test.tsv")
    assert Path("beir/qrels/test.tsv").read_text() == "kept\n"


# The commands that write a file by an option other than one whose callback checks it.
WRITES_BY_OTHER_OPTIONS = {"serve": ("db",)}
# Commands that write a file but read none the user names (the demo reads the package's data).
READS_NO_FILE = {"demo"}


def _commands(app: Any, group: Any) -> Iterator[tuple[str, Callable[..., Any], Any]]:
    """Each command's name, function and Click command (with its parameters as parsed)."""
    for info in app.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        yield name, info.callback, group.commands[name]
    for sub in app.registered_groups:
        name = sub.name or sub.typer_instance.info.name
        yield from _commands(sub.typer_instance, group.commands[name])


def _keep_inputs_names(function: Callable[..., Any]) -> set[str] | None:
    """The names the function's ``keep_inputs(...)`` call passes, None without the call."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "keep_inputs":
            return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return None


def test_every_command_that_writes_a_file_keeps_its_inputs() -> None:
    """Walk the app: a command with an output option (``check_output`` its callback) calls
    ``keep_inputs`` with every output and every positional argument it reads."""
    from typer.main import get_command

    writers = {"check_output", "check_optional_output"}
    missing: dict[str, Any] = {}
    seen = 0
    for name, function, click_command in _commands(_app(), get_command(_app())):
        params = click_command.params
        outputs = {p.name for p in params if getattr(p.callback, "__name__", None) in writers}
        outputs |= set(WRITES_BY_OTHER_OPTIONS.get(function.__name__, ()))
        if not outputs or name in READS_NO_FILE:
            continue
        seen += 1
        passed = _keep_inputs_names(function)
        if passed is None:
            missing[name] = "no keep_inputs call"
            continue
        arguments = {p.name for p in params if p.param_type_name == "argument"}
        needed = (outputs | arguments) - {"output"}
        if lacking := needed - passed:
            missing[name] = sorted(lacking)
    assert missing == {}
    assert seen >= 30  # the walk found the commands


def test_the_walk_is_not_blind() -> None:
    def without(output: str | None, run: str) -> None:
        """No check."""

    def partial(output: str | None, run: str, run_out: str | None) -> None:
        """A check that leaves --run-out out."""
        keep_inputs(output, {"RUN": run})  # noqa: F821

    assert _keep_inputs_names(without) is None
    assert _keep_inputs_names(partial) == {"keep_inputs", "output", "run"}


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "QRELS", "RUN", "-m", "statAP", "--pool", "POOL", "-o", "POOL"],
        ["evaluate", "QRELS", "RUN", "-m", "statAP", "--pool", "POOL", "-o", "POOL", "-q"],
        ["compare", "QRELS", "RUN", "RUN2", "-m", "statAP", "--pool", "POOL", "-o", "POOL"],
        [
            "explain",
            "QRELS",
            "RUN",
            "--query",
            "q1",
            "-m",
            "statAP",
            "--pool",
            "POOL",
            "-o",
            "POOL",
        ],
        ["diff", "QRELS", "RUN", "RUN2", "-m", "statAP", "--pool", "POOL", "-o", "POOL"],
    ],
    ids=["evaluate-fast", "evaluate", "compare", "explain", "diff"],
)
def test_the_pool_file_is_an_input_too(tmp_path: Path, command: list[str]) -> None:
    import subprocess
    import sys

    files = {
        "QRELS": "q1 0 d1 1\nq1 0 d2 0\n",
        "RUN": "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n",
        "RUN2": "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n",
        "POOL": '{"query_id": "q1", "doc_id": "d1", "runs": {"a": 1}, "best_rank": 1, '
        '"inclusion_probability": 0.5}\n',
    }
    paths = {}
    for name, text in files.items():
        path = tmp_path / f"{name.lower()}.txt"
        path.write_text(text, encoding="utf-8")
        paths[name] = str(path)
    args = [paths.get(a, a) for a in command]
    done = subprocess.run(
        [sys.executable, "-m", "rankmeter", *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "--pool" in done.stderr and "is also an input" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert Path(paths["POOL"]).read_text(encoding="utf-8") == files["POOL"]
