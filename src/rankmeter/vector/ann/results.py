"""ANN benchmark results that accumulate: the per-setting JSON files that
:func:`rankmeter.report.ann.write_results` writes (``rankmeter ann-recall --results-dir``), read
back by :func:`load_results` as one :class:`~rankmeter.vector.ann.bench.AnnBenchmark`, their
quality p-values corrected again over every setting read."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rankmeter.errors import FormatError, RankmeterError
from rankmeter.io import lone_surrogate
from rankmeter.vector.ann.bench import (
    QUALITY_ALPHA,
    RESULT_SCHEMA,
    AnnBenchmark,
    AnnPoint,
    QualityLoss,
    _with_quality,
)
from rankmeter.vector.ann.spec import IndexSpec, parse_index_spec

__all__ = ["load_results"]


def load_results(folder: str | os.PathLike[str], dataset: str | None = None) -> AnnBenchmark:
    """Read back the per-setting results files of a folder (``*.json`` written by
    ``rankmeter ann-recall --results-dir``) as one :class:`AnnBenchmark`.

    The files must be of one dataset (the corpus they name, and the metric: ``corpus [ip]``);
    where several are in the folder, ``dataset`` picks one (its name, or a part of it that
    names only one, e.g. ``medline`` or ``[l2]``).
    The points come ordered by index, then by the values of their parameters.
    """
    root = Path(folder)
    if not root.is_dir():
        raise RankmeterError(f"{os.fspath(folder)}: not a folder of ann-recall results")
    records = []
    for path in sorted(root.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FormatError(str(path), f"not a JSON results file ({exc})") from None
        if (lone := lone_surrogate(path.read_bytes(), record, "the file")) is not None:
            raise FormatError(str(path), f"not a JSON results file ({lone})")
        if not isinstance(record, dict) or record.get("schema") != RESULT_SCHEMA:
            raise FormatError(
                str(path), f'not an ann-recall results file (no "schema": "{RESULT_SCHEMA}")'
            )
        records.append((path, record))
    if not records:
        raise RankmeterError(f"{root}: no ann-recall results files (*.json) in this folder")
    by_dataset: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path, record in records:
        try:
            # Recall depends on the metric too: the same vectors under ip and l2 are two
            # measurements, never one chart.
            name = f"{record['dataset']['corpus']} [{record['metric']}]"
        except (KeyError, TypeError):
            raise FormatError(str(path), "no dataset.corpus or metric") from None
        by_dataset.setdefault(name, []).append((path, record))
    if dataset is not None:
        chosen = [name for name in by_dataset if name == dataset] or [
            name for name in by_dataset if dataset in name
        ]
        if len(chosen) != 1:
            raise RankmeterError(
                f"{root}: dataset {dataset!r} names {len(chosen)} of the datasets in the "
                f"folder; they are: {'; '.join(by_dataset)}"
            )
        picked = by_dataset[chosen[0]]
    elif len(by_dataset) > 1:
        raise RankmeterError(
            f"{root} holds results of {len(by_dataset)} datasets; pick one with --dataset: "
            f"{'; '.join(by_dataset)}"
        )
    else:
        picked = next(iter(by_dataset.values()))
    return _from_records(picked)


def _from_records(records: list[tuple[Path, dict[str, Any]]]) -> AnnBenchmark:
    points = []
    ks: set[int] = set()
    for path, record in records:
        try:
            points.append(_point(record["measured"]))
            ks.update(int(k) for k in record["k"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise FormatError(str(path), f"a field is missing or malformed ({exc!r})") from None
    points.sort(key=_order)
    points, family = _recorrected(points)
    path, first = records[0]
    common = [k for k in sorted(ks) if all(k in p.recall and k in p.qps for p in points)]
    if not common:
        raise FormatError(str(path), "the files share no k: measure them with a common -k")
    try:
        dataset = first["dataset"]
        threads = {r["threads"] for _, r in records}
        versions = sorted({str(r["rankmeter_version"]) for _, r in records})
        return AnnBenchmark(
            corpus=str(dataset["corpus"]),
            queries=str(dataset["queries"]),
            metric=str(first["metric"]),
            k=tuple(common),
            points=tuple(points),
            n_corpus=int(dataset["n_corpus"]),
            n_queries=int(dataset["n_queries"]),
            dim=int(dataset["dim"]),
            seed=int(first["seed"]),
            threads=first["threads"] if len(threads) == 1 else None,
            exact_s=float(first["exact_s"]),
            version=", ".join(versions),
            quality_note=re.sub(
                r"over the \d+ comparisons",
                f"over the {family} comparisons",
                str(first.get("quality_note", "")),
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(str(path), f"a field is missing or malformed ({exc!r})") from None


def _recorrected(points: list[AnnPoint]) -> tuple[list[AnnPoint], int]:
    """The points with their quality p-values Holm-corrected over every setting and metric
    read back (and that family's size): each file was corrected over its own run, and a
    setting measured again in a smaller run would otherwise carry a milder correction than
    its neighbours. The raw p-values do not depend on the family (the same sign flips, from
    the same seed), so this is what one run of all the settings gives."""
    from dataclasses import replace

    from rankmeter.stats import correct

    raw = [loss.p_value for point in points for loss in point.quality]
    if not raw:
        return points, 0
    corrected = correct(np.array(raw, dtype=np.float64), "holm", alpha=QUALITY_ALPHA)
    adjusted = iter(zip(corrected.adjusted.tolist(), corrected.significant.tolist(), strict=True))
    out = []
    for point in points:
        losses = []
        for loss in point.quality:
            p_corrected, significant = next(adjusted)
            losses.append(replace(loss, p_corrected=p_corrected, significant=bool(significant)))
        out.append(_with_quality(point, tuple(losses)))
    return out, len(raw)


def _order(point: AnnPoint) -> tuple[str, tuple[int, ...], tuple[int, ...], str]:
    index = parse_index_spec(point.index)
    return (index.kind, tuple(index.params.values()), tuple(point.params.values()), point.backend)


def _family(setting: IndexSpec) -> str:
    """The index a setting belongs to, read back: its build-time parameters, the search-time
    ones at their defaults. One built index measured at other search-time values in another
    run (a sweep, then ``hnsw(M=16,efSearch=32)`` alone) is then one family, one line on the
    chart, however each run's ``--index`` spelled it."""
    built = setting.build_params
    body = ",".join(f"{name}={value}" for name, value in built.items())
    return str(parse_index_spec(f"{setting.kind}({body})" if body else setting.kind))


def _point(data: Mapping[str, Any]) -> AnnPoint:
    latency = data["latency_s"]
    setting = parse_index_spec(str(data["setting"]))
    return AnnPoint(
        index=_family(setting),
        setting=str(setting),
        backend=str(data["backend"]),
        params={str(n): int(v) for n, v in data["params"].items()},
        recall={int(k): float(v) for k, v in data["recall"].items()},
        qps={int(k): float(v) for k, v in data["qps"].items()},
        latency_k=int(data["latency_k"]),
        p50_s=float(latency["p50"]),
        p95_s=float(latency["p95"]),
        p99_s=float(latency["p99"]),
        build_s=float(data["build_s"]),
        build_threads=int(data["build_threads"]),
        nbytes=int(data["nbytes"]),
        quality=tuple(
            QualityLoss(
                metric=str(q["metric"]),
                exact=float(q["exact"]),
                ann=float(q["ann"]),
                difference=float(q["difference"]),
                low=float(q["low"]),
                high=float(q["high"]),
                p_value=float(q["p_value"]),
                p_corrected=float(q["p_corrected"]),
                significant=bool(q["significant"]),
            )
            for q in data.get("quality", [])
        ),
    )
