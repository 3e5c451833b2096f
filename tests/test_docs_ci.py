"""docs/ci.md stays true: its CI files are valid YAML, and every rankmeter command line in them
runs, against tiny files at the paths they name, with the exit status the page documents."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from rankmeter.cli import main

PAGE = Path(__file__).resolve().parents[1] / "docs" / "ci.md"
N = 24


def blocks(language: str) -> list[str]:
    """The page's fenced code blocks whose info string is ``language`` ("" for none)."""
    found: list[str] = []
    current: list[str] | None = None
    info = ""
    for line in PAGE.read_text("utf-8").splitlines():
        if current is None and line.startswith("```"):
            current, info = [], line[3:].strip()
        elif current is not None and line == "```":
            if info == language:
                found.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return found


def commands(shell: str) -> list[str]:
    """The rankmeter command lines of a shell script (backslash continuations joined)."""
    joined = re.sub(r"\\\n\s*", " ", shell)
    return [
        " ".join(line.split())
        for line in joined.splitlines()
        if line.strip().startswith("rankmeter ")
    ]


def workflows() -> tuple[dict[Any, Any], dict[str, Any]]:
    yaml = pytest.importorskip("yaml", reason="the YAML of docs/ci.md is read with PyYAML")
    github, gitlab = (yaml.safe_load(text) for text in blocks("yaml"))
    return github, gitlab


def ci_commands() -> list[str]:
    github, gitlab = workflows()
    found = [c for step in github["jobs"]["gate"]["steps"] for c in commands(step.get("run", ""))]
    found += [c for line in gitlab["search-quality"]["script"] for c in commands(line)]
    return found


def test_the_ci_files_are_valid_yaml() -> None:
    github, gitlab = workflows()
    # PyYAML reads the key `on` as True (YAML 1.1); GitHub reads it as "on".
    assert "pull_request" in github.get("on", github.get(True))
    steps = github["jobs"]["gate"]["steps"]
    post = steps[-1]
    assert post["if"].startswith("always()") and "--body-file summary.md" in post["run"]
    assert github["permissions"]["pull-requests"] == "write"
    job = gitlab["search-quality"]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    (after,) = job["after_script"]
    assert "body@summary.md" in after and after.startswith("if [ -f summary.md ]; then curl ")
    assert job["artifacts"]["when"] == "always"


def test_every_command_line_is_one_gate() -> None:
    found = ci_commands()
    assert len(found) == 2 and found[0] == found[1]  # GitHub and GitLab run the same gate
    (shown,) = [c for text in blocks("") for c in commands(text)]  # the page's first example
    assert shown == found[0]


def _write(folder: Path, *, worse: bool) -> None:
    (folder / "eval").mkdir()
    qrels, base, new, segments = [], [], [], ["query_id\tfreq"]
    for q in range(N):
        qrels += [f"{q} 0 r{q} 1", f"{q} 0 n{q} 0"]
        # One tag in both runs, as one eval/make_run.py writes them: the names come from the
        # command line (the summary must not call them eval/new.run and eval/baseline.run).
        base += [f"{q} Q0 r{q} 1 2.0 ranker", f"{q} Q0 n{q} 2 1.0 ranker"]
        first, second = (f"n{q}", f"r{q}") if worse else (f"r{q}", f"n{q}")
        new += [f"{q} Q0 {first} 1 2.0 ranker", f"{q} Q0 {second} 2 1.0 ranker"]
        segments.append(f"{q}\t{'head' if q % 2 else 'tail'}")
    for name, lines in (
        ("qrels.txt", qrels),
        ("baseline.run", base),
        ("new.run", new),
        ("segments.tsv", segments),
    ):
        (folder / "eval" / name).write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("worse", "status"), [(False, 0), (True, 3)])
def test_the_command_lines_run(
    worse: bool,
    status: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _write(tmp_path, worse=worse)
    monkeypatch.chdir(tmp_path)
    for line in ci_commands():
        args = shlex.split(line)
        assert args[0] == "rankmeter"
        (tmp_path / "summary.md").unlink(missing_ok=True)
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main([os.fspath(a) for a in args[1:]])
        err = capsys.readouterr().err
        assert done.value.code == status, err
        summary = (tmp_path / "summary.md").read_text("utf-8")
        assert summary.startswith("**Verdict:** new ")
        assert "eval/" not in summary and "eval/" not in err
        if worse:
            assert err.startswith("rankmeter: regression: new is worse than baseline on nDCG@10")
        else:
            assert err.startswith("rankmeter: gate passed")
