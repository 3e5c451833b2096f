"""The rating app's storage: one SQLite file in WAL mode.

Tables: ``meta`` (what the file is: the application id, the scale, the guidelines), ``items``
(the pool: query and document ids and texts), ``raters`` (name and secret token),
``assignments`` (which rater judges which item, in which order) and ``labels`` (one row per
item and rater: the grade or "can't judge", when, and the seconds spent on it).

Durability: ``journal_mode=WAL`` (readers never block the writer) and ``synchronous=FULL``
(a label is on disk when the request that wrote it is answered, so a label the server
acknowledged survives a SIGKILL of the server). A label is keyed by (item, rater): resubmitting
a form writes the same row again, never a second one.

A file is a rankmeter judgments database when its SQLite header's ``application_id`` says so.
The header is read as bytes before SQLite opens the file, so any other file (another SQLite
database, a text file, a FIFO) is refused with one line and left exactly as it was; a database
SQLite cannot read (a damaged file) is one line naming the file too. ``Store(path,
read_only=True)`` writes nothing (``PRAGMA query_only``; on a read-only file or folder SQLite's
``mode=ro``, then ``immutable=1``): what ``judge status`` and ``judge export`` use, so that they
read a database on a read-only file.

A label is written only over the label its page showed (:meth:`Store.record`'s ``expected``):
a second post made from the same page (a second key pressed before the next page came) finds
the label changed and is refused with :class:`StaleLabel`, so it never grades an item twice.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.data.labels import parse_scale as read_scale
from rankmeter.errors import FormatError, PolicyError

__all__ = [
    "APPLICATION_ID",
    "Assignment",
    "Item",
    "Label",
    "Progress",
    "StaleLabel",
    "Store",
    "assign",
    "check_rater",
    "check_scale",
    "parse_scale",
]

#: ``PRAGMA application_id`` of a rankmeter judgments database ("RKMJ").
APPLICATION_ID = 0x524B4D4A
SCHEMA_VERSION = 1
#: The longest time counted for one label: a rater who left the page open for lunch.
MAX_SECONDS = 3600.0
#: The largest position SQLite can hold (a signed 64-bit integer); anything above is no item.
MAX_POSITION = 2**63 - 1
#: The most grades a scale may have: 0-100 (a percentage) is the finest scale a rater can use
#: (every grade is a button on the page; a wider scale made pages of hundreds of megabytes).
MAX_GRADES = 101
#: The largest grade, either side of 0, a scale may have.
MAX_GRADE = 10**6
#: The first bytes of every SQLite database file, and where its header keeps the application id.
_SQLITE_MAGIC = b"SQLite format 3\x00"
_APPLICATION_ID_AT = 68
_FILE_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}

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
    #: When the rater's label was written (None: no label): the version a new label replaces.
    labelled_at: float | None = None

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


def check_scale(scale: Any) -> tuple[int, int]:
    """``scale`` if it is a scale the app can offer: a scale
    (:func:`rankmeter.data.labels.parse_scale`: whole numbers ``low < high``) with each grade
    within :data:`MAX_GRADE` of 0, and at most :data:`MAX_GRADES` grades; else
    :class:`PolicyError`."""
    low, high = read_scale(scale, required=True)
    if not -MAX_GRADE <= low < high <= MAX_GRADE:
        raise PolicyError(
            f"scale {low}-{high}: a grade must lie between {-MAX_GRADE} and {MAX_GRADE}"
        )
    if high - low + 1 > MAX_GRADES:
        raise PolicyError(
            f"scale {low}-{high} has {high - low + 1} grades: at most {MAX_GRADES} (such as "
            "0-100), one button each"
        )
    return low, high


def parse_scale(text: str) -> tuple[int, int]:
    """The scale written ``LOW-HIGH`` (``"0-3"``, ``"-2-2"``, ``"-5--1"``; ASCII digits), as
    ``--scale`` takes it and the database stores it (the writer writes ``f"{low}-{high}"``):
    read by :func:`rankmeter.data.labels.parse_scale`, then held to the app's bounds by
    :func:`check_scale`; else :class:`PolicyError`.

    >>> parse_scale("-5--1")
    (-5, -1)
    """
    return check_scale(text)


def check_rater(name: str) -> str:
    """``name`` if it can name a rater: an identifier, printed at the start of a ``NAME URL``
    line, so not empty and without whitespace or control characters; else
    :class:`PolicyError`."""
    if not name or not name.isprintable() or any(c.isspace() for c in name):
        raise PolicyError(
            f"rater name {name!r} holds whitespace or control characters: a rater's name is an "
            "identifier (letters, digits, punctuation), such as alice or rater-1"
        )
    return name


class StaleLabel(PolicyError):
    """A label posted over one that is no longer there: the item was labelled again since the
    page that posted it was shown (a second key pressed on the same page, another tab)."""


def _check_file(path: Path) -> None:
    """Refuse, with one line and without letting SQLite open it, a file that is not a rankmeter
    judgments database: missing, not a regular file, not SQLite, another program's SQLite."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FormatError(
            str(path), "no such database: `rankmeter judge serve --db` creates it"
        ) from None
    except OSError as exc:
        raise FormatError(str(path), f"cannot read the database: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise FormatError(
            str(path),
            f"not a rankmeter judgments database ({kind}): give the SQLite file that "
            "`rankmeter judge serve` made, or a new file name",
        )
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as exc:
        raise FormatError(str(path), f"cannot read the database: {exc.strerror or exc}") from None
    if not header:
        raise FormatError(
            str(path),
            "an empty file, not a rankmeter judgments database: remove it, or give a new file "
            "name (`rankmeter judge serve` makes the database)",
        )
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise FormatError(
            str(path),
            "not a rankmeter judgments database (not an SQLite file): give the --db that "
            "`rankmeter judge serve` made, or a new file name",
        )
    application = int.from_bytes(header[_APPLICATION_ID_AT : _APPLICATION_ID_AT + 4], "big")
    if application != APPLICATION_ID:
        raise FormatError(
            str(path),
            "not a rankmeter judgments database (an SQLite file made by something else): "
            "give the --db that `rankmeter judge serve` made, or a new file name",
        )


class Store:
    """A rankmeter judgments database (see the module's docstring).

    Each method opens its own connection, so that one store serves many threads (the web
    server answers requests in a thread pool) and nothing outlives a request. With
    ``read_only=True`` the file is opened read-only and nothing in it changes.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        _check_file(self.path)
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
        every label and every rater's token, when it holds the same items (with the same
        texts), raters, scale, overlap and seed; otherwise it is an error saying what differs
        (a new pool, new texts or new raters need a new database).
        """
        target = Path(path)
        if not items:
            raise PolicyError("the pool is empty: there is nothing to judge")
        if not raters:
            raise PolicyError("no raters: give at least one name, e.g. --raters alice,bob")
        for name in raters:
            check_rater(name)
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
        scale = check_scale(scale)
        seed = _validate.seed(seed)
        if os.path.lexists(target):  # an empty file too: it is not a database we made
            store = cls(target)
            store.quick_check()
            store._check_same(items, raters, scale, overlap=overlap, seed=seed)
            return store
        # Made whole in a temporary file beside it, then linked in under its name (which fails,
        # leaving the other one, if a concurrent `judge serve` made it first): a failure half
        # way leaves no file behind. One transaction in the rollback journal, then WAL.
        try:
            fd, name = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".tmp", dir=target.parent.absolute()
            )
        except OSError as exc:
            raise FormatError(
                str(target), f"cannot make the database: {exc.strerror or exc}"
            ) from None
        os.close(fd)
        temporary = Path(name)
        try:
            cls._fill(temporary, items, raters, scale, overlap=overlap, seed=seed)
            try:
                os.link(temporary, target)
            except FileExistsError:
                pass  # made meanwhile by another `judge serve`: checked below like any other
            except OSError:  # a file system without hard links
                if not os.path.lexists(target):
                    os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)
        store = cls(target)
        store._check_same(items, raters, scale, overlap=overlap, seed=seed)
        return store

    @classmethod
    def _fill(
        cls,
        target: Path,
        items: Sequence[Item],
        raters: Sequence[str],
        scale: tuple[int, int],
        *,
        overlap: float,
        seed: int,
    ) -> None:
        """Make the database in the new, empty file ``target``."""
        with cls._connect(target, fresh=True) as db:
            db.executescript(f"BEGIN IMMEDIATE; PRAGMA application_id = {APPLICATION_ID};{_SCHEMA}")
            try:
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
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode=WAL")

    def _check_same(
        self,
        items: Sequence[Item],
        raters: Sequence[str],
        scale: tuple[int, int],
        *,
        overlap: float,
        seed: int,
    ) -> None:
        """Refuse to serve a database made with other inputs or options than those given now,
        saying what differs: its assignments and texts are what the raters judge."""
        with self._connection() as db:
            stored = db.execute(
                "SELECT query_id, doc_id, query_text, doc_title, doc_text FROM items ORDER BY id"
            ).fetchall()
            names = {r for (r,) in db.execute("SELECT name FROM raters")}
        if [row[:2] for row in stored] != [(it.query_id, it.doc_id) for it in items]:
            raise PolicyError(
                f"{self.path} holds the labels of another pool ({len(stored)} items): give a "
                "new --db for a new pool"
            )
        fields = (
            ("query_text", "the text of query", "--queries"),
            ("doc_title", "the title of document", "--corpus"),
            ("doc_text", "the text of document", "--corpus"),
        )
        for row, item in zip(stored, items, strict=True):
            for index, (field, what, option) in enumerate(fields, start=2):
                if row[index] != getattr(item, field):
                    name = item.query_id if field == "query_text" else item.doc_id
                    raise PolicyError(
                        f"{self.path} was made from other texts: {what} {name!r} in {option} "
                        "differs from the one the raters were shown; give the same "
                        f"{option}, or a new --db for the new texts"
                    )
        if names != set(raters):
            raise PolicyError(
                f"{self.path} was made for the raters {', '.join(sorted(names))}: give the "
                "same --raters, or a new --db"
            )
        if self.scale != scale:
            low, high = self.scale
            raise PolicyError(f"{self.path} was made with --scale {low}-{high}: give that scale")
        made = self._meta("overlap")
        if _number(made) != float(overlap):
            raise PolicyError(
                f"{self.path} was made with --overlap {made}, not {overlap!r}: its items were "
                f"assigned with it; give --overlap {made}, or a new --db"
            )
        made = self._meta("seed")
        if _number(made) != seed:
            raise PolicyError(
                f"{self.path} was made with --seed {made}, not {seed}: its items were assigned "
                f"with it; give --seed {made}, or a new --db"
            )

    # -- connections --------------------------------------------------------------------------

    @staticmethod
    @contextmanager
    def _connect(
        path: Path, *, read_only: bool = False, fresh: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """A connection to the database at ``path`` (WAL, full sync); ``read_only``: opened
        with SQLite's ``mode=ro``, changing nothing; ``fresh``: a new file, left in SQLite's
        default journal until :meth:`create` fills it. Any SQLite error while it is open (a
        damaged file, a disk that fails) is a :class:`FormatError` naming the file."""
        try:
            with closing(_open(path, read_only)) as db:
                if not read_only:
                    db.execute("PRAGMA synchronous=FULL")
                    if not fresh:
                        db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA foreign_keys=ON")
                yield db
        except sqlite3.DatabaseError as exc:
            raise FormatError(
                str(path),
                f"cannot use the judgments database (SQLite says: {exc}): is it damaged? "
                "Restore it from a copy, or give a new --db",
            ) from None

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._connect(self.path, read_only=self.read_only) as db:
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
        stored = self._meta("scale")
        try:
            return parse_scale(stored)  # the parser --scale goes through too
        except PolicyError as exc:
            raise FormatError(
                str(self.path),
                f"the stored scale {stored!r} is not a scale ({exc}): is it damaged?",
            ) from None

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
        if not 1 <= position <= MAX_POSITION:
            return None
        with self._connection() as db:
            total = db.execute(
                "SELECT COUNT(*) FROM assignments WHERE rater = ?", (rater,)
            ).fetchone()[0]
            row = db.execute(
                "SELECT i.query_id, i.doc_id, i.query_text, i.doc_title, i.doc_text, "
                "l.grade, l.cant_judge, l.labelled_at FROM assignments a "
                "JOIN items i ON i.id = a.item "
                "LEFT JOIN labels l ON l.item = a.item AND l.rater = a.rater "
                "WHERE a.rater = ? AND a.position = ?",
                (rater, position),
            ).fetchone()
        if row is None:
            return None
        self._check_row(row[:5], row[5], row[7], self.scale)
        return Assignment(position, total, Item(*row[:5]), row[5], bool(row[6]), row[7])

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
        scale = self.scale
        for q, d, r, g, t, _ in rows:
            self._check_row((q, d, r), g, t, scale)
        return [Label(q, d, r, g, t, s) for q, d, r, g, t, s in rows]

    def _check_row(
        self,
        texts: Sequence[object],
        grade: object,
        labelled_at: object,
        scale: tuple[int, int],
    ) -> None:
        """A row read back is checked as if typed: texts, a grade on the scale or none, a time."""
        low, high = scale
        if not all(isinstance(text, str) for text in texts):
            wrong = next(text for text in texts if not isinstance(text, str))
            raise FormatError(
                str(self.path), f"a stored id or text is not text ({wrong!r}): is it damaged?"
            )
        if grade is not None and not (type(grade) is int and low <= grade <= high):
            raise FormatError(
                str(self.path),
                f"a stored grade ({grade!r}) is not on the scale {low}-{high}: is it damaged?",
            )
        if labelled_at is not None and not isinstance(labelled_at, float | int):
            raise FormatError(
                str(self.path), f"a stored time ({labelled_at!r}) is not a number: is it damaged?"
            )

    # -- writing ------------------------------------------------------------------------------

    def record(
        self,
        rater: str,
        position: int,
        grade: int | None,
        *,
        seconds: float = 0.0,
        expected: float | None = None,
    ) -> bool:
        """Store the rater's label of their ``position``-th item (``grade`` None: "can't
        judge"), replacing the one given before. False when the rater has no such item.

        ``expected``: the label this one replaces, as the page showed it: its ``labelled_at``
        (:attr:`Assignment.labelled_at`), or 0 when the page showed no label. When the stored
        label is another one (the item was labelled since), nothing is written and
        :class:`StaleLabel` is raised; None replaces whatever is stored. The grade must be on
        the scale (checked here, whatever the caller checked); ``seconds`` is kept between 0
        and :data:`MAX_SECONDS` (a value that is not a number counts 0).
        """
        low, high = self.scale
        if grade is not None and not low <= grade <= high:
            raise PolicyError(f"grade={grade!r} must be on the scale {low}-{high}")
        spent = float(seconds)
        spent = min(max(spent, 0.0), MAX_SECONDS) if spent == spent else 0.0
        if not 1 <= position <= MAX_POSITION:
            return False
        with self._writing() as db:
            row = db.execute(
                "SELECT a.item, l.labelled_at FROM assignments a LEFT JOIN labels l "
                "ON l.item = a.item AND l.rater = a.rater WHERE a.rater = ? AND a.position = ?",
                (rater, position),
            ).fetchone()
            if row is None:
                return False
            if expected is not None and (row[1] or 0.0) != expected:
                raise StaleLabel(
                    f"item {position} of {rater!r} was labelled again since this page was shown: "
                    "the label is kept as it is"
                )
            db.execute(
                "INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (item, rater) DO "
                "UPDATE SET grade = excluded.grade, cant_judge = excluded.cant_judge, "
                "labelled_at = excluded.labelled_at, seconds = excluded.seconds",
                (row[0], rater, grade, int(grade is None), time.time(), spent),
            )
        return True

    def quick_check(self) -> None:
        """Raise :class:`FormatError` naming the file when SQLite's ``quick_check`` finds the
        database damaged (pages that do not hold what they should)."""
        with self._connection() as db:
            found = [str(row[0]) for row in db.execute("PRAGMA quick_check(5)")]
        if found != ["ok"]:
            raise FormatError(
                str(self.path),
                f"cannot use the judgments database (SQLite says: {found[0]}): it is damaged; "
                "restore it from a copy, or give a new --db",
            )

    def journal_mode(self) -> str:
        """The database's journal mode (``"wal"``)."""
        with self._connection() as db:
            return str(db.execute("PRAGMA journal_mode").fetchone()[0])


def _open(path: Path, read_only: bool) -> sqlite3.Connection:
    """SQLite's connection to ``path``. Read-only: ``PRAGMA query_only`` on an ordinary
    connection (which, closing, tidies the WAL's side files away as usual); where SQLite cannot
    open the file so (a read-only file or folder), ``mode=ro``, then ``immutable=1`` (where
    SQLite cannot make the WAL's side files beside the file either)."""
    # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE for writes), so that
    # two writers queue on the lock instead of failing to upgrade a read lock.
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    if not read_only:
        return db
    uri = f"file:{urllib.parse.quote(os.fspath(path.absolute()))}"
    for fallback in (None, f"{uri}?mode=ro", f"{uri}?mode=ro&immutable=1"):
        if fallback is not None:
            db = sqlite3.connect(fallback, uri=True, timeout=30.0, isolation_level=None)
        try:
            db.execute("PRAGMA query_only=ON")
            db.execute("PRAGMA schema_version").fetchone()
        except sqlite3.OperationalError:
            db.close()
            continue
        return db
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)


def _number(text: str) -> float:
    """A number stored in ``meta`` (NaN where it is not one: equal to nothing)."""
    try:
        return float(text)
    except ValueError:
        return float("nan")
