"""Segments and query texts: reading them, and how their query ids meet the compared queries."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from rankmeter.errors import FormatError, PolicyError


def load_texts(queries: Any) -> dict[str, str]:
    """Query texts from a path (TSV or BEIR JSONL) or a dict ``{query: text}``; none for None."""
    if queries is None:
        return {}
    if isinstance(queries, Mapping):
        return {str(k): str(v) for k, v in queries.items()}
    if isinstance(queries, (str, os.PathLike)):
        from rankmeter.io.annotations import read_queries

        return read_queries(queries)
    raise PolicyError(
        f"queries must be a path or a dict {{query: text}}, not {type(queries).__name__}"
    )


def load_segments(segments: Any) -> dict[str, dict[str, str]]:
    """Segments from a path (a table ``query id -> tag columns``) or ``{column: {query: value}}``."""
    if segments is None:
        return {}
    if isinstance(segments, (str, os.PathLike)):
        from rankmeter.io.annotations import read_segments

        return read_segments(segments)
    if isinstance(segments, Mapping) and all(isinstance(v, Mapping) for v in segments.values()):
        return {str(c): {str(q): str(v) for q, v in m.items()} for c, m in segments.items()}
    raise PolicyError(
        "segments must be a path or a dict {column: {query: value}}, not "
        f"{type(segments).__name__}"
    )


def _is_path(given: Any) -> bool:
    return isinstance(given, (str, os.PathLike))


def _input_name(given: Any, label: str) -> str:
    """How errors name a segments or query-texts input: its path, or ``<label>`` for a dict."""
    if _is_path(given):
        path = os.fspath(given)
        return "<stdin>" if path == "-" else path
    return f"<{label}>"


def _examples(ids: Iterable[str], count: int = 3) -> str:
    listed = list(ids)
    shown = ", ".join(repr(q) for q in listed[:count])
    return shown + (", ..." if len(listed) > count else "")


def _none_compared(known: list[str], query_ids: tuple[str, ...]) -> str:
    return (
        f"none of its {len(known)} query {'id' if len(known) == 1 else 'ids'} is among the "
        f"{len(query_ids)} compared queries (its ids start {_examples(known)}; the compared "
        f"queries start {_examples(query_ids)})"
    )


def segment_coverage(
    segments: Mapping[str, Mapping[str, str]], query_ids: tuple[str, ...], given: Any
) -> list[str]:
    """A note on how the segments' query ids meet the compared queries (none when they are
    exactly the compared queries); an error when they meet none of them."""
    if not segments:
        return []
    known = list(dict.fromkeys(q for values in segments.values() for q in values))
    compared = set(query_ids)
    covered = sum(1 for q in known if q in compared)
    if covered == 0:
        kind = "file" if _is_path(given) else "segments"
        raise FormatError(
            _input_name(given, "segments"),
            f"{_none_compared(known, query_ids)}; check that the {kind} belongs to these qrels "
            "and runs",
        )
    strangers = [q for q in known if q not in compared]
    if covered == len(query_ids) and not strangers:
        return []
    if _is_path(given):
        label, place = f"segments file {_input_name(given, 'segments')}", "in the file"
    else:
        label, place = "segments", "in the segments"
    note = f"{label}: {covered} of {len(query_ids)} compared queries have a segment"
    if len(strangers) == 1:
        note += f"; 1 id {place} matches no compared query (e.g. {_examples(strangers)})"
    elif strangers:
        note += (
            f"; {len(strangers)} ids {place} match no compared query (e.g. {_examples(strangers)})"
        )
    return [note]


def text_coverage(texts: Mapping[str, str], query_ids: tuple[str, ...], given: Any) -> list[str]:
    """Texts are decoration: a note only when none of them belongs to a compared query."""
    if not texts or any(q in texts for q in query_ids):
        return []
    label = (
        f"query texts file {_input_name(given, 'queries')}" if _is_path(given) else ("query texts")
    )
    return [f"{label}: {_none_compared(list(texts), query_ids)}, so no texts are shown"]
