"""Looking documents up in a large BEIR corpus: ``read_documents`` against ``read_corpus``.

``rankmeter explain --corpus`` needs the texts of one query's documents (its ranked and judged
ones: tens to a few thousand) from a corpus that may hold millions. ``read_documents(path, ids)``
reads the corpus in one streaming pass that keeps only those; ``read_corpus`` holds all of it.
Each case runs in a fresh process (``run.measure``: wall time and peak RSS of its own):

- import: ``import rankmeter.io.beir`` alone, the floor of the peak;
- read_documents: ``--ids`` documents spread over the corpus;
- read_corpus: the whole corpus into memory (what a lookup would cost without it).

The goal: read_documents' peak stays near the import's whatever the corpus's size (the
documents kept and one block of the file above it), while its wall time is the pass over the
file (every line is checked). Ratios are to read_corpus: the machine is shared, so the ratios
matter, not the seconds.

    python benchmarks/corpus_bench.py                     # 200,000 documents, about 170 MB
    python benchmarks/corpus_bench.py --docs 1000000 --ids 5000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))

import generate  # noqa: E402
from run import fmt_mb, fmt_ratio, fmt_seconds, log, measure, table  # noqa: E402

SRC = HERE.parent / "src"

CODE = {
    "import": """
import json, sys
import rankmeter.io.beir
print(json.dumps({"documents": 0}))
""",
    "read_documents": """
import json, sys
from rankmeter.io.beir import read_documents
n, k = int(sys.argv[2]), int(sys.argv[3])
found = read_documents(sys.argv[1], [f"d{i}" for i in range(0, n, max(1, n // k))][:k])
print(json.dumps({"documents": len(found)}))
""",
    "read_corpus": """
import json, sys
from rankmeter.io.beir import read_corpus
print(json.dumps({"documents": len(read_corpus(sys.argv[1]))}))
""",
}
CASES = list(CODE)
WORDS = [
    "the",
    "of",
    "a",
    "in",
    "flow",
    "wing",
    "heat",
    "model",
    "tumbling",
    "atmosphere",
    "cone",
    "vehicle",
    "panel",
    "supersonic",
    "boundary",
    "layer",
    "pressure",
    "shock",
    "flutter",
    "buckling",
    "plate",
    "shell",
    "thermal",
    "stress",
    "mach",
    "number",
]


def corpus(docs: int, folder: Path) -> Path:
    """A seeded BEIR corpus of ``docs`` documents (a title of 8 words, a text of 110)."""
    path = folder / f"corpus-{docs}.jsonl"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(docs)
    partial = path.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as out:
        for i in range(docs):
            title = " ".join(rng.choices(WORDS, k=8))
            text = " ".join(rng.choices(WORDS, k=110))
            out.write(json.dumps({"_id": f"d{i}", "title": title, "text": text}) + "\n")
    partial.rename(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Documents by id from a large BEIR corpus.")
    parser.add_argument("--docs", type=int, default=200_000, help="documents in the corpus")
    parser.add_argument("--ids", type=int, default=1_000, help="documents looked up")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=CASES, choices=CASES)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--data-dir", type=Path, default=generate.DEFAULT_DATA_DIR)
    parser.add_argument("--src", type=Path, default=SRC, help="rankmeter sources to measure")
    args = parser.parse_args(argv)

    path = corpus(args.docs, args.data_dir)
    log(f"{path}: {path.stat().st_size / 2**20:,.0f} MB, {args.docs:,} documents")
    env = {**os.environ, "PYTHONPATH": str(args.src)}
    results: dict[str, list[tuple[float, float, int]]] = {case: [] for case in args.cases}
    for _ in range(args.repeat):
        for case in args.cases:  # rotating through the cases spreads the machine's noise
            command = [sys.executable, "-c", CODE[case], str(path), str(args.docs), str(args.ids)]
            m = measure(command, env=env, timeout=args.timeout)
            if not m.ok:
                log(f"{case}: {m.error}")
                continue
            results[case].append((m.wall, m.rss, int(m.output["documents"])))
            log(f"{case}: {results[case][-1]}")

    whole = results.get("read_corpus") or []
    base = (
        (statistics.median(r[0] for r in whole), statistics.median(r[1] for r in whole))
        if whole
        else None
    )
    rows = []
    for case in args.cases:
        if not results[case]:
            rows.append([case, "failed", "", "", "", ""])
            continue
        wall = statistics.median(r[0] for r in results[case])
        rss = statistics.median(r[1] for r in results[case])
        rows.append(
            [
                case,
                fmt_seconds(wall),
                fmt_mb(rss),
                fmt_ratio(wall / base[0]) if base else "",
                fmt_ratio(rss / base[1]) if base else "",
                f"{results[case][0][2]:,}",
            ]
        )
    header = ["case", "wall s", "peak MB", "wall / read_corpus", "peak / read_corpus", "documents"]
    print("\n".join(table(header, rows, align="lrrrrr")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
