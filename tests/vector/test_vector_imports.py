"""vector/ produces runs and measurements; it never renders them: no module under
rankmeter.vector imports rankmeter.report or rankmeter.cli (report imports vector, never the
reverse), and results hold data only."""

from __future__ import annotations

import ast
from pathlib import Path

import rankmeter.vector

VECTOR = Path(rankmeter.vector.__file__).parent


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_vector_never_imports_report_or_cli() -> None:
    found = {
        f"{path.relative_to(VECTOR.parent)} imports {name}"
        for path in sorted(VECTOR.rglob("*.py"))
        for name in _imported(path)
        if name.startswith(("rankmeter.report", "rankmeter.cli"))
    }
    assert not found


def test_ann_results_hold_data_and_do_not_render() -> None:
    from rankmeter.vector.ann import AnnRecall, AnnRow

    for cls in (AnnRecall, AnnRow):
        assert hasattr(cls, "to_dict")
        rendering = {"to_html", "to_markdown", "table", "describe"} & set(dir(cls))
        assert not rendering, f"{cls.__name__} renders: {sorted(rendering)}"
