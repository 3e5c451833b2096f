"""`rankmeter compare` on RBP_resid, where lower is better (issue 24): the run with the lower
residual is the better one in every format and in the regression gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._cli_support import CLI

REGRESSION = 3
N = 30


def write_case(folder: Path) -> dict[str, Path]:
    """Every query judges d0..d9; ``judged`` ranks those ten, ``shallow`` puts 1 to 5 unjudged
    documents on top of the judged ones (a larger residual: worse)."""
    qrels, judged, shallow = [], [], []
    for q in range(N):
        qrels += [f"{q} 0 d{j} {(q + j) % 3}" for j in range(10)]
        judged += [f"{q} Q0 d{j} {j + 1} {10 - j} judged" for j in range(10)]
        unjudged = 1 + q % 5
        docs = [f"u{j}" for j in range(unjudged)] + [f"d{j}" for j in range(10 - unjudged)]
        shallow += [f"{q} Q0 {d} {r + 1} {20 - r} shallow" for r, d in enumerate(docs)]
    paths = {name: folder / f"{name}.txt" for name in ("qrels", "judged", "shallow")}
    for name, lines in (("qrels", qrels), ("judged", judged), ("shallow", shallow)):
        paths[name].write_text("\n".join(lines) + "\n")
    return paths


def run(cli: CLI, case: dict[str, Path], base: str, new: str, *args: str) -> tuple[int, str, str]:
    result = cli(
        "compare", case["qrels"], case[base], case[new], "-m", "RBP_resid", "--resamples", "1000",
        *args,
    )  # fmt: skip
    return result.code, result.out, result.err


def test_the_lower_residual_wins_in_json(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path)
    code, out, err = run(cli, case, "shallow", "judged", "-f", "json")
    assert code == 0, err
    (d,) = json.loads(out)["differences"]
    assert d["better"] == "lower" and d["difference"] < 0 and d["significant"]
    assert (d["wins"], d["ties"], d["losses"]) == (N, 0, 0)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_the_lower_residual_wins_in_text(cli: CLI, tmp_path: Path, fmt: str) -> None:
    case = write_case(tmp_path)
    code, out, err = run(cli, case, "shallow", "judged", "-f", fmt)
    assert code == 0, err
    assert f"{N}/0/0" in out
    words = " ".join(out.replace("\\", "").split())  # Markdown escapes the underscore
    assert "lower is better on RBP_resid" in words
    if fmt == "markdown":
        assert "judged beats shallow on RBP_resid" in words


def test_the_lower_residual_is_better_in_html(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path)
    page = tmp_path / "report.html"
    code, _, err = run(cli, case, "shallow", "judged", "-f", "html", "-o", str(page))
    assert code == 0, err
    text = page.read_text()
    assert "sig better" in text and "sig worse" not in text
    assert "below the zero line the system beats the baseline (lower is better)" in text
    code, _, err = run(cli, case, "judged", "shallow", "-f", "html", "-o", str(page))
    assert "sig worse" in page.read_text() and "sig better" not in page.read_text()


def test_the_gate_follows_the_direction(cli: CLI, tmp_path: Path) -> None:
    case = write_case(tmp_path)
    code, _, err = run(cli, case, "shallow", "judged", "--fail-on", "regression")
    assert code == 0, err
    assert "gate passed" in err
    code, _, err = run(cli, case, "judged", "shallow", "--fail-on", "regression")
    assert code == REGRESSION
    assert "regression: shallow is worse than judged on RBP_resid" in err
