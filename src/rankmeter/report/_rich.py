"""Untrusted text for rich renderables: as a ``Text`` (rich would read ``[markup]`` in a plain
string: a run named ``[link=...]`` would become a hyperlink, one with ``[/x]`` would crash the
table) with control characters shown as visible escapes (rankmeter._escape)."""

from __future__ import annotations

from typing import Any

from rankmeter._escape import visible


def shown(text: str, style: str = "") -> Any:
    """``text`` as a rich ``Text``, exactly as given but for visible control characters."""
    from rich.text import Text

    return Text(visible(text), style=style)
