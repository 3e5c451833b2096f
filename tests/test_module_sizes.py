"""No module of rankmeter holds more than one room's worth of code (docs/architecture.md).

A module past :data:`MOST_LINES` lines has grown several concepts; split it by concept (as
``vector/embed.py``, ``online/logs.py``, ``online/abtest.py``, ``engines/spark.py`` and
``results.py`` were split) rather than raise the limit.
"""

from __future__ import annotations

from pathlib import Path

import rankmeter

SRC = Path(rankmeter.__file__).parent

#: The most lines a module of src/rankmeter may have.
MOST_LINES = 800


def _too_long(root: Path, most: int) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > most:
            found.append(f"{path.relative_to(root.parent)}: {lines} lines")
    return found


def test_no_module_is_over_the_limit() -> None:
    too_long = _too_long(SRC, MOST_LINES)
    assert not too_long, "split by concept:\n" + "\n".join(too_long)


def test_the_check_finds_a_long_module(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * 10)
    (package / "long.py").write_text("x = 1\n" * 11)
    assert _too_long(package, 10) == ["pkg/long.py: 11 lines"]
