"""The docs stay true: the metric reference is regenerated from the specs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rankmeter.metrics.docs import metric_rows
from rankmeter.report.metrics import render_markdown

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_metric_reference_is_up_to_date() -> None:
    expected = render_markdown(metric_rows())
    actual = (DOCS / "metrics.md").read_text(encoding="utf-8")
    assert actual == expected, (
        "docs/metrics.md is stale; regenerate with `rankmeter metrics --format markdown "
        "> docs/metrics.md`"
    )


def test_every_metric_is_documented() -> None:
    from rankmeter.metrics import SPECS

    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    for spec in SPECS:
        assert f"## {spec.name}" in text


def test_the_readme_python_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, item 22: the README's Python example is true: one run gives an EvalResult,
    several runs a mapping keyed by run name, and each line of it runs on files so named."""
    pytest.importorskip("pandas", reason="the example converts to pandas (the [pandas] extra)")
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    assert len(blocks) == 1
    qrels = "".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(1, 9) for d in range(1, 6))
    (tmp_path / "qrels.txt").write_text(qrels)
    for name, shift in (("run", 0), ("bm25", 1), ("dense", 2)):
        lines = [
            f"q{q} Q0 d{d} {r} {10 - r} {name}\n"
            for q in range(1, 9)
            for r, d in enumerate(sorted(range(1, 6), key=lambda d: (d * (q + shift)) % 7), 1)
        ]
        (tmp_path / ("run.txt" if name == "run" else f"{name}.run")).write_text("".join(lines))
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    results = scope["results"]
    assert list(results) == ["bm25", "dense"]  # type: ignore[call-overload]
    with pytest.raises(AttributeError, match=r"take one by name, e\.g\. results\['bm25'\]"):
        results.per_query  # type: ignore[attr-defined]  # noqa: B018
