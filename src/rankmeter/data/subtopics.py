"""Subtopic judgments: what diversity metrics read beside a Qrels.

A diversity qrels file (TREC Web track, as ndeval reads it) judges each document once per
subtopic of its query: ``qid subtopic docid grade``, a document relevant to several subtopics
on several lines. The Qrels built from it keeps one judgment per (query, doc), whose grade is
the largest of its subtopic grades (ndeval's convention: a document relevant to any subtopic is
relevant), so every other metric reads it as ordinary qrels; the subtopic grades of each
judgment row are kept here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter.data.arrays import FloatArray, IntArray, readonly

__all__ = ["Subtopics"]


class Subtopics:
    """For each judgment row of a Qrels, the subtopics it was judged for and their grades.

    The pairs of row ``r`` are ``offsets[r]:offsets[r+1]`` of ``codes`` (positions in
    ``vocabulary``, the subtopic ids in natural order) and ``grades``. ``given`` is False for
    the table :meth:`single` makes of ordinary qrels: one subtopic per query, so the diversity
    metrics there are not diversity numbers.
    """

    __slots__ = ("codes", "given", "grades", "offsets", "vocabulary")

    def __init__(
        self,
        offsets: IntArray,
        codes: IntArray,
        grades: FloatArray,
        vocabulary: Any,
        *,
        given: bool,
    ) -> None:
        self.offsets = readonly(np.asarray(offsets, dtype=np.int64))
        self.codes = readonly(np.asarray(codes, dtype=np.int64))
        self.grades = readonly(np.asarray(grades, dtype=np.float64))
        self.vocabulary = vocabulary
        self.given = given

    @classmethod
    def single(cls, grades: FloatArray) -> Subtopics:
        """Every judgment row judged for one subtopic, ``"0"``, with its grade."""
        import pyarrow as pa

        n = len(grades)
        return cls(
            np.arange(n + 1, dtype=np.int64),
            np.zeros(n, dtype=np.int64),
            grades,
            pa.array(["0"], type=pa.string()),
            given=False,
        )

    def names(self, codes: IntArray) -> list[str]:
        """The subtopic ids of these codes."""
        return [str(s) for s in self.vocabulary.take(np.asarray(codes, dtype=np.int64)).to_pylist()]

    def __len__(self) -> int:
        return len(self.codes)
