"""The grades a :class:`~rankmeter.judgments.chat_labeler.ChatLabeler` was given already, kept
in an SQLite file (``cache=``), so nothing is asked twice, also across runs."""

from __future__ import annotations

import threading
import time

from rankmeter.errors import FormatError
from rankmeter.judgments._chat_reply import _excerpt


class _Cache:
    """Grades already given, in an SQLite file: one row per (model, prompt, texts, settings)
    key. Each answer is committed as it comes, so an interrupted run keeps what it paid for."""

    def __init__(self, path: str) -> None:
        import sqlite3

        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS rankmeter_chat_grades "
                "(key TEXT PRIMARY KEY, grade INTEGER NOT NULL, model TEXT NOT NULL, "
                "reply TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._db.commit()
        except sqlite3.Error as exc:
            raise FormatError(
                path, f"cannot be used as the labels cache (an SQLite file): {exc}"
            ) from None

    def get(self, key: str, low: int, high: int) -> int | None:
        """The grade cached for ``key``, checked as a reply's grade is: a whole number (stored
        as an SQLite integer) on the scale ``low``-``high``. A file changed by hand or by
        another program is an error naming the file and the row, never a grade."""
        import sqlite3

        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT rowid, grade FROM rankmeter_chat_grades WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise FormatError(
                self.path, f"cannot be read as the labels cache (an SQLite file): {exc}"
            ) from None
        if row is None:
            return None
        rowid, grade = row
        if isinstance(grade, int) and not isinstance(grade, bool) and low <= grade <= high:
            return grade
        shown = str(grade) if isinstance(grade, (int, float)) else _excerpt(str(grade))
        raise FormatError(
            self.path,
            f"row {rowid} of the labels cache gives the grade {shown}, not a whole number on "
            f"the scale {low}-{high} (the file was changed after rankmeter wrote it: delete "
            "that row, or the file, to ask the model again)",
            line=rowid,
        )

    def put(self, key: str, grade: int, model: str, reply: str) -> None:
        import sqlite3

        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO rankmeter_chat_grades "
                    "(key, grade, model, reply, created) VALUES (?, ?, ?, ?, ?)",
                    (key, grade, model, reply, time.time()),
                )
                self._db.commit()
        except sqlite3.Error as exc:
            raise FormatError(
                self.path, f"cannot be written as the labels cache (an SQLite file): {exc}"
            ) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()
