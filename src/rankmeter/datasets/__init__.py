"""Small collections shipped inside the package; ``rankmeter demo`` runs on them.

Each collection is a folder of plain files (TREC qrels and runs, a TSV of queries, JSON lines of
documents), so the same files work with the command line (``rankmeter evaluate``), the library
and any other tool.

Examples
--------
>>> from rankmeter import datasets
>>> demo = datasets.recruiting()
>>> sorted(demo.runs)
['keyword', 'tuned']
>>> demo.load_queries()["q01"]
'Senior Python backend engineer, Berlin, PostgreSQL, Kubernetes'
>>> import rankmeter
>>> result = rankmeter.evaluate(demo.load_qrels(), demo.load_runs(), ["nDCG@10"])
>>> result["tuned"].metrics["nDCG@10"] > result["keyword"].metrics["nDCG@10"]
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankmeter.data import Qrels, Run

__all__ = ["Collection", "recruiting"]

_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Collection:
    """A shipped collection: where its files are, and helpers to load them.

    Attributes
    ----------
    name : str
        Short name of the collection (``"recruiting"``).
    description : str
        One line saying what the collection is.
    root : Path
        The folder holding the files.
    qrels : Path
        Graded judgments in TREC format (``query_id 0 doc_id grade``).
    queries : Path
        ``query_id<TAB>text``, one query per line.
    docs : Path
        JSON lines ``{"doc_id", "title", "text"}``.
    runs : Mapping[str, Path]
        System name -> run file in TREC format (``query_id Q0 doc_id rank score tag``).
    """

    name: str
    description: str
    root: Path
    qrels: Path
    queries: Path
    docs: Path
    runs: Mapping[str, Path]

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", MappingProxyType(dict(self.runs)))

    def load_qrels(self) -> Qrels:
        """The judgments as :class:`~rankmeter.Qrels`."""
        from rankmeter.io import read_qrels

        return read_qrels(self.qrels)

    def load_run(self, name: str) -> Run:
        """One system's run as :class:`~rankmeter.Run`, named after the system.

        Raises
        ------
        KeyError
            If the collection has no run of that name (the message lists the names).
        """
        if name not in self.runs:
            raise KeyError(
                f"the {self.name} collection has no run {name!r}; runs: {', '.join(self.runs)}"
            )
        from rankmeter.io import read_run

        return read_run(self.runs[name], name=name)

    def load_runs(self) -> dict[str, Run]:
        """Every system's run, keyed by name (ready for ``rankmeter.evaluate``)."""
        return {name: self.load_run(name) for name in self.runs}

    def load_queries(self) -> dict[str, str]:
        """Query id -> query text, in file order."""
        queries: dict[str, str] = {}
        with self.queries.open(encoding="utf-8") as handle:
            for line in handle:
                query_id, _, text = line.rstrip("\n").partition("\t")
                queries[query_id] = text
        return queries

    def load_docs(self) -> dict[str, dict[str, str]]:
        """Doc id -> ``{"title": ..., "text": ...}``, in file order."""
        docs: dict[str, dict[str, str]] = {}
        with self.docs.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    docs[record["doc_id"]] = {"title": record["title"], "text": record["text"]}
        return docs


def recruiting() -> Collection:
    """The synthetic recruiting collection: job openings, candidate profiles, two systems.

    17 job openings are the queries and 278 candidate profiles the documents. Labels are
    graded 0-3 (3 strong match, 2 good, 1 partial, 0 judged not a fit) and come from the hidden
    ground truth used to generate the profiles, not from the systems. Judgments are pooled, so
    some retrieved profiles are unjudged. Two runs return the top 100 profiles per opening:
    ``keyword`` (BM25 over the profile text) and ``tuned`` (BM25 over normalised text plus
    role, seniority and location features). ``scripts/build_recruiting_demo.py`` regenerates
    every file.

    Returns
    -------
    Collection
        Paths to the files and loaders for them.

    Examples
    --------
    >>> demo = recruiting()
    >>> demo.qrels.name, demo.runs["keyword"].name
    ('qrels.txt', 'keyword.txt')
    >>> demo.load_qrels().n_queries
    17
    """
    root = _HERE / "recruiting"
    return Collection(
        name="recruiting",
        description="synthetic job openings and candidate profiles",
        root=root,
        qrels=root / "qrels.txt",
        queries=root / "queries.tsv",
        docs=root / "docs.jsonl",
        runs={"keyword": root / "runs" / "keyword.txt", "tuned": root / "runs" / "tuned.txt"},
    )
