"""The rating app's storage: one SQLite file in WAL mode.

Tables: ``meta`` (what the file is: the application id, the scale, the guidelines), ``items``
(the pool: query and document ids and texts), ``raters`` (name and secret token),
``assignments`` (which rater judges which item, in which order) and ``labels`` (one row per
item and rater: the grade or "can't judge", when, and the seconds spent on it).

Durability: ``journal_mode=WAL`` (readers never block the writer) and ``synchronous=FULL``
(a label is on disk when the request that wrote it is answered, so a label the server
acknowledged survives a SIGKILL of the server). A label is keyed by (item, rater): resubmitting
a form writes the same row again, never a second one.

A file is a rankmeter judgments database when its SQLite ``application_id`` says so; any other
file (another SQLite database, a text file) is refused with one line.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rankmeter.errors import FormatError, PolicyError

__all__ = [
    "APPLICATION_ID",
    "Assignment",
    "Item",
    "Label",
    "Progress",
    "Store",
    "assign",
]

#: ``PRAGMA application_id`` of a rankmeter judgments database ("RKMJ").
APPLICATION_ID = 0x524B4D4A
SCHEMA_VERSION = 1
#: The longest time counted for one label: a rater who left the page open for lunch.
MAX_SECONDS = 3600.0

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    query_text TEXT NOT NULL,
    doc_title TEXT NOT NULL,
    doc_text TEXT NOT NULL,
    UNIQUE (query_id, doc_id)
);
CREATE TABLE raters (name TEXT PRIMARY KEY, token TEXT NOT NULL UNIQUE);
CREATE TABLE assignments (
    rater TEXT NOT NULL REFERENCES raters (name),
    item INTEGER NOT NULL REFERENCES items (id),
    position INTEGER NOT NULL,
    PRIMARY KEY (rater, item),
    UNIQUE (rater, position)
);
CREATE TABLE labels (
    item INTEGER NOT NULL REFERENCES items (id),
    rater TEXT NOT NULL REFERENCES raters (name),
    grade INTEGER,
    cant_judge INTEGER NOT NULL,
    labelled_at REAL NOT NULL,
    seconds REAL NOT NULL,
    PRIMARY KEY (item, rater)
);
"""


@dataclass(frozen=True)
class Item:
    """One (query, document) pair with the texts a rater reads."""

    query_id: str
    doc_id: str
    query_text: str
    doc_title: str
    doc_text: str


@dataclass(frozen=True)
class Assignment:
    """An item as one rater sees it: its place in the rater's list and the rater's label."""

    position: int  # 1-based
    total: int
    item: Item
    grade: int | None
    cant_judge: bool

    @property
    def judged(self) -> bool:
        return self.grade is not None or self.cant_judge


@dataclass(frozen=True)
class Label:
    """One rater's label of one item (``grade`` None when the rater could not judge)."""

    query_id: str
    doc_id: str
    rater: str
    grade: int | None
    labelled_at: float
    seconds: float


@dataclass(frozen=True)
class Progress:
    """How far one rater is: labels given (``cant_judge`` of them "can't judge") of ``assigned``."""

    rater: str
    assigned: int
    judged: int
    cant_judge: int
    seconds: float


def assign(
    n_items: int, raters: Sequence[str], *, overlap: float, seed: int
) -> list[tuple[str, int]]:
    """Who judges what: ``(rater, item index)`` pairs.

    Every item goes to one rater, the raters taking turns over the items in a seeded random
    order (so each gets a fair share of every query). A share ``overlap`` of the items, drawn
    with the same seed, goes to a second rater too (the next one in turn), for agreement.

    >>> assign(4, ["ann", "bob"], overlap=0.5, seed=1)
    [('ann', 0), ('bob', 0), ('bob', 1), ('ann', 2), ('bob', 3), ('ann', 3)]
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_items)
    first = {int(item): i % len(raters) for i, item in enumerate(order)}
    n_shared = round(overlap * n_items) if len(raters) > 1 else 0
    shared = {int(i) for i in rng.choice(n_items, size=n_shared, replace=False)}
    pairs = []
    for item in range(n_items):
        pairs.append((raters[first[item]], item))
        if item in shared:
            pairs.append((raters[(first[item] + 1) % len(raters)], item))
    return pairs


class Store:
    """A rankmeter judgments database (see the module's docstring).

    Each method opens its own connection, so that one store serves many threads (the web
    server answers requests in a thread pool) and nothing outlives a request.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FormatError(
                str(self.path),
                "no such database: `rankmeter judge serve --db` creates it",
            )
        with self._connection() as db:
            self._check(db)

    # -- creating -----------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        items: Sequence[Item],
        raters: Sequence[str],
        *,
        scale: tuple[int, int] = (0, 3),
        overlap: float = 0.0,
        seed: int = 0,
    ) -> Store:
        """The database at ``path``, filled with ``items`` and ``raters`` if it is new.

        A database filled before (by an earlier ``judge serve``) is opened as it is, keeping
        every label and every rater's token, when it holds the same items, raters and scale;
        otherwise it is an error (a new pool or new raters need a new database).
        """
        target = Path(path)
        if not items:
            raise PolicyError("the pool is empty: there is nothing to judge")
        if not raters:
            raise PolicyError("no raters: give at least one name, e.g. --raters alice,bob")
        if len(set(raters)) != len(raters):
            twice = next(r for r in raters if list(raters).count(r) > 1)
            raise PolicyError(f"rater {twice!r} is named twice in --raters")
        if not 0.0 <= overlap <= 1.0:
            raise PolicyError(
                f"overlap={overlap!r} must be a share between 0 and 1 (0.2: a fifth of the "
                "items get a second rater)"
            )
        if overlap > 0 and len(raters) < 2:
            raise PolicyError("overlap needs two raters or more: give --raters a,b or --overlap 0")
        if target.exists() and target.stat().st_size > 0:
            store = cls(target)
            store._check_same(items, raters, scale)
            return store
        with cls._connect(target) as db:
            with db:
                db.executescript(_SCHEMA)
            with db:
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ("version", str(SCHEMA_VERSION)),
                        ("scale", f"{scale[0]}-{scale[1]}"),
                        ("overlap", repr(overlap)),
                        ("seed", str(seed)),
                        ("guidelines", ""),
                    ],
                )
                db.executemany(
                    "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (i, it.query_id, it.doc_id, it.query_text, it.doc_title, it.doc_text)
                        for i, it in enumerate(items)
                    ],
                )
                db.executemany(
                    "INSERT INTO raters VALUES (?, ?)",
                    [(name, secrets.token_urlsafe(24)) for name in raters],
                )
                pairs = assign(len(items), raters, overlap=overlap, seed=seed)
                positions: dict[str, int] = {}
                rows = []
                for rater, item in pairs:  # items in pool order: a rater's list keeps it
                    positions[rater] = positions.get(rater, 0) + 1
                    rows.append((rater, item, positions[rater]))
                db.executemany("INSERT INTO assignments VALUES (?, ?, ?)", rows)
        return cls(target)

    def _check_same(
        self, items: Sequence[Item], raters: Sequence[str], scale: tuple[int, int]
    ) -> None:
        with self._connection() as db:
            stored = db.execute("SELECT query_id, doc_id FROM items ORDER BY id").fetchall()
            names = {r for (r,) in db.execute("SELECT name FROM raters")}
        if stored != [(it.query_id, it.doc_id) for it in items]:
            raise PolicyError(
                f"{self.path} holds the labels of another pool ({len(stored)} items): give a "
                "new --db for a new pool"
            )
        if names != set(raters):
            raise PolicyError(
                f"{self.path} was made for the raters {', '.join(sorted(names))}: give the "
                "same --raters, or a new --db"
            )
        if self.scale != scale:
            low, high = self.scale
            raise PolicyError(f"{self.path} was made with --scale {low}-{high}: give that scale")

    # -- connections --------------------------------------------------------------------------

    @staticmethod
    @contextmanager
    def _connect(path: Path) -> Iterator[sqlite3.Connection]:
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE for writes), so
        # that two writers queue on the lock instead of failing to upgrade a read lock.
        with closing(sqlite3.connect(path, timeout=30.0, isolation_level=None)) as db:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.execute("PRAGMA foreign_keys=ON")
            except sqlite3.DatabaseError as exc:
                raise FormatError(
                    str(path), f"not a rankmeter judgments database (SQLite says: {exc})"
                ) from None
            yield db

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._connect(self.path) as db:
            yield db

    def _check(self, db: sqlite3.Connection) -> None:
        (application,) = db.execute("PRAGMA application_id").fetchone()
        if application != APPLICATION_ID:
            raise FormatError(
                str(self.path),
                "not a rankmeter judgments database (an SQLite file made by something else): "
                "give the --db that `rankmeter judge serve` made, or a new file name",
            )

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- reading ------------------------------------------------------------------------------

    def _meta(self, key: str) -> str:
        with self._connection() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return "" if row is None else str(row[0])

    @property
    def scale(self) -> tuple[int, int]:
        """The grades raters may give, ``(low, high)``."""
        low, _, high = self._meta("scale").rpartition("-")  # "0-3"; "-2-2" for negative lows
        return int(low), int(high)

    @property
    def guidelines(self) -> str:
        """The guidelines raters read (Markdown, shown as text)."""
        return self._meta("guidelines")

    def set_guidelines(self, text: str) -> None:
        """Store the guidelines raters read (Markdown, shown as text)."""
        with self._writing() as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'guidelines'", (text,))

    def raters(self) -> dict[str, str]:
        """``{name: token}`` in the order the raters were given."""
        with self._connection() as db:
            return dict(db.execute("SELECT name, token FROM raters ORDER BY rowid").fetchall())

    def rater_of(self, token: str) -> str | None:
        """The rater holding ``token``, or None."""
        with self._connection() as db:
            row = db.execute("SELECT name FROM raters WHERE token = ?", (token,)).fetchone()
        return None if row is None else str(row[0])

    def assignment(self, rater: str, position: int) -> Assignment | None:
        """The rater's ``position``-th item (1-based) with the rater's own label, or None."""
        with self._connection() as db:
            total = db.execute(
                "SELECT COUNT(*) FROM assignments WHERE rater = ?", (rater,)
            ).fetchone()[0]
            row = db.execute(
                "SELECT i.query_id, i.doc_id, i.query_text, i.doc_title, i.doc_text, "
                "l.grade, l.cant_judge FROM assignments a JOIN items i ON i.id = a.item "
                "LEFT JOIN labels l ON l.item = a.item AND l.rater = a.rater "
                "WHERE a.rater = ? AND a.position = ?",
                (rater, position),
            ).fetchone()
        if row is None:
            return None
        return Assignment(position, total, Item(*row[:5]), row[5], bool(row[6]))

    def next_unjudged(self, rater: str) -> int | None:
        """The position of the rater's first item without a label, or None when all have one."""
        with self._connection() as db:
            row = db.execute(
                "SELECT MIN(a.position) FROM assignments a LEFT JOIN labels l "
                "ON l.item = a.item AND l.rater = a.rater WHERE a.rater = ? AND l.item IS NULL",
                (rater,),
            ).fetchone()
        return None if row[0] is None else int(row[0])

    def progress(self) -> list[Progress]:
        """Every rater's progress, in the order the raters were given."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT r.name, "
                "(SELECT COUNT(*) FROM assignments a WHERE a.rater = r.name), "
                "(SELECT COUNT(*) FROM labels l WHERE l.rater = r.name), "
                "(SELECT COUNT(*) FROM labels l WHERE l.rater = r.name AND l.cant_judge), "
                "(SELECT COALESCE(SUM(seconds), 0) FROM labels l WHERE l.rater = r.name) "
                "FROM raters r ORDER BY r.rowid"
            ).fetchall()
        return [Progress(name, int(n), int(j), int(c), float(s)) for name, n, j, c, s in rows]

    def labels(self) -> list[Label]:
        """Every label, items in pool order, raters in the order given."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT i.query_id, i.doc_id, l.rater, l.grade, l.labelled_at, l.seconds "
                "FROM labels l JOIN items i ON i.id = l.item JOIN raters r ON r.name = l.rater "
                "ORDER BY l.item, r.rowid"
            ).fetchall()
        return [Label(q, d, r, g, t, s) for q, d, r, g, t, s in rows]

    # -- writing ------------------------------------------------------------------------------

    def record(self, rater: str, position: int, grade: int | None, *, seconds: float = 0.0) -> bool:
        """Store the rater's label of their ``position``-th item (``grade`` None: "can't
        judge"), replacing the one given before. False when the rater has no such item.

        The grade must be on the scale (checked here, whatever the caller checked).
        """
        low, high = self.scale
        if grade is not None and not low <= grade <= high:
            raise PolicyError(f"grade={grade!r} must be on the scale {low}-{high}")
        spent = min(max(float(seconds), 0.0), MAX_SECONDS)
        with self._writing() as db:
            row = db.execute(
                "SELECT item FROM assignments WHERE rater = ? AND position = ?",
                (rater, position),
            ).fetchone()
            if row is None:
                return False
            db.execute(
                "INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (item, rater) DO "
                "UPDATE SET grade = excluded.grade, cant_judge = excluded.cant_judge, "
                "labelled_at = excluded.labelled_at, seconds = excluded.seconds",
                (row[0], rater, grade, int(grade is None), time.time(), spent),
            )
        return True

    def journal_mode(self) -> str:
        """The database's journal mode (``"wal"``)."""
        with self._connection() as db:
            return str(db.execute("PRAGMA journal_mode").fetchone()[0])
