"""The rating app: raters judge a pool in their browser, one document at a time.

:func:`create_app` builds the ASGI application (Starlette) over a judgments database
(:mod:`rankmeter.judgments.app.store`). Each rater has a secret link, ``/r/TOKEN``: it shows the
guidelines, the rater's progress, the query and the next document without a label, and buttons
for the grades of the scale and "can't judge" (grades typed on the keyboard, ``x``; ``b`` or
Backspace goes back). A grade is posted, stored, and answered with a redirect to the next
item (POST/redirect/GET), so reloading a page never posts twice. ``/r/TOKEN/N`` shows the
rater's N-th item with its label, which a new post replaces.

A post names the item it grades (its position, in its URL) and the label its page showed (the
form's ``version``); a post made over a label that has changed since (a second key pressed
before the next page came, another tab) is not stored: it is answered with the next item, so
a quick second key never grades the same item twice. A grade is an ASCII whole number on the
scale written as the scale writes it (not ``01``, not ``-0``), or ``x``; anything else, or a
form that sends a field twice, is a 400 page. The seconds spent on an item are measured here,
from the server's showing of the page to the post: nothing the browser sends counts.

A token reaches its own rater's items and labels only: the item a form posts to is looked up
among that rater's assignments, and an unknown token or position is a 404 page.

The pages themselves are made by the caller's :class:`Pages` (the report layer renders:
:func:`rankmeter.report.judging.pages`), so that this package decides what a rater sees and the
report layer how it looks; Starlette is imported when an app is built.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rankmeter.errors import RankmeterError
from rankmeter.judgments.app.store import MAX_POSITION, Assignment, StaleLabel, Store

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["DoneView", "ItemView", "Pages", "Store", "create_app"]

#: The key that marks "can't judge" in a form and on the keyboard.
CANT_JUDGE = "x"

#: A grade as a form sends it: an ASCII whole number (the scale is checked next).
_GRADE = re.compile(r"-?[0-9]{1,18}")
#: A label's version as a page shows it: ``labelled_at`` as ``repr`` writes it, 0 for none.
_VERSION = re.compile(r"[0-9]{1,20}(\.[0-9]{1,20})?")

#: Sent with every response: nothing but this server's own stylesheet and script, no framing,
#: and no Referer (the rater's token is in the URL).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src data:; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class ItemView:
    """What a rater's page shows: one of the rater's items and their label of it."""

    rater: str
    base: str  # the rater's link, "/r/TOKEN"
    assignment: Assignment
    judged: int  # items the rater has labelled
    grades: tuple[int, ...]
    cant_judge_key: str
    guidelines: str

    @property
    def version(self) -> str:
        """The label this page shows, as its form posts it back (``expected`` of
        :meth:`Store.record`): ``labelled_at`` exactly, or 0 for no label."""
        return repr(self.assignment.labelled_at or 0.0)

    @property
    def position(self) -> int:
        return self.assignment.position

    @property
    def total(self) -> int:
        return self.assignment.total

    @property
    def back(self) -> str | None:
        return f"{self.base}/{self.position - 1}" if self.position > 1 else None

    @property
    def action(self) -> str:
        return f"{self.base}/{self.position}"


@dataclass(frozen=True)
class DoneView:
    """The page a rater sees once every item has a label."""

    rater: str
    base: str
    total: int
    judged: int
    guidelines: str

    @property
    def back(self) -> str | None:
        return f"{self.base}/{self.total}" if self.total else None


class Pages(Protocol):
    """What renders the app's pages (``rankmeter.report.judging.pages()``)."""

    def item(self, view: ItemView) -> str: ...

    def done(self, view: DoneView) -> str: ...

    def error(self, status: int, message: str) -> str: ...

    def stylesheet(self) -> str: ...

    def script(self) -> str: ...


def create_app(
    db_path: str | os.PathLike[str],
    *,
    pages: Pages,
    clock: Callable[[], float] = time.monotonic,
) -> Starlette:
    """The rating app over the judgments database at ``db_path`` (made by
    :meth:`Store.create`), its pages rendered by ``pages``; ``clock`` (seconds, monotonic)
    measures the time from showing an item to its label.

    Raises
    ------
    FormatError
        ``db_path`` is not a rankmeter judgments database.
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    store = Store(db_path)
    low, high = store.scale
    grades = tuple(range(low, high + 1))
    stylesheet = pages.stylesheet()
    script = pages.script()

    def html(text: str, status: int = 200) -> Response:
        return HTMLResponse(text, status_code=status, headers=SECURITY_HEADERS)

    def not_found() -> HTTPException:
        return HTTPException(404, "no such page: check the link you were given")

    def rater_of(request: Request) -> tuple[str, str]:
        token = str(request.path_params["token"])
        rater = store.rater_of(token)
        if rater is None:
            raise not_found()
        return rater, f"/r/{token}"

    def done_judging(rater: str) -> int:
        return next(p.judged for p in store.progress() if p.rater == rater)

    # When each (rater, position) page was last shown, by this server's clock: the seconds a
    # label took are measured from it. One entry per assignment at most.
    shown: dict[tuple[str, int], float] = {}
    shown_lock = threading.Lock()

    def item_page(rater: str, base: str, found: Assignment) -> Response:
        view = ItemView(
            rater, base, found, done_judging(rater), grades, CANT_JUDGE, store.guidelines
        )
        page = html(pages.item(view))
        with shown_lock:
            shown[(rater, found.position)] = clock()
        return page

    def next_page(request: Request) -> Response:
        rater, base = rater_of(request)
        position = store.next_unjudged(rater)
        if position is None:
            total = next(p.assigned for p in store.progress() if p.rater == rater)
            view = DoneView(rater, base, total, done_judging(rater), store.guidelines)
            return html(pages.done(view))
        found = store.assignment(rater, position)
        assert found is not None  # the position came from the rater's own assignments
        return item_page(rater, base, found)

    def position_of(request: Request) -> int:
        position = int(request.path_params["position"])
        if not 1 <= position <= MAX_POSITION:
            raise not_found()
        return position

    def shown_page(request: Request) -> Response:
        rater, base = rater_of(request)
        found = store.assignment(rater, position_of(request))
        if found is None:
            raise not_found()
        return item_page(rater, base, found)

    def save(request: Request, form: dict[str, str]) -> Response:
        rater, base = rater_of(request)
        position = position_of(request)
        if store.assignment(rater, position) is None:
            raise not_found()
        given = form.get("grade", "")
        grade: int | None
        if given == CANT_JUDGE:
            grade = None
        elif _GRADE.fullmatch(given) and int(given) in grades and given == str(int(given)):
            # written as the scale writes it: not "-0", not "01"
            grade = int(given)
        else:
            raise HTTPException(400, f"grade {given!r} is not on the scale {low}-{high}")
        version = form.get("version", "")
        if not _VERSION.fullmatch(version):
            raise HTTPException(
                400, "the form does not say which label it replaces: reload the page"
            )
        with shown_lock:
            since = shown.get((rater, position))
        seconds = clock() - since if since is not None else 0.0
        try:
            stored = store.record(rater, position, grade, seconds=seconds, expected=float(version))
        except StaleLabel:  # a second post from the same page: the next item instead
            return RedirectResponse(base, status_code=303, headers=SECURITY_HEADERS)
        if not stored:
            raise not_found()
        with shown_lock:
            shown.pop((rater, position), None)
        return RedirectResponse(base, status_code=303, headers=SECURITY_HEADERS)

    async def show_next(request: Request) -> Response:
        return await run_in_threadpool(next_page, request)

    async def show(request: Request) -> Response:
        return await run_in_threadpool(shown_page, request)

    async def grade(request: Request) -> Response:
        try:
            async with request.form(max_files=0, max_fields=8) as form:
                pairs = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
        except ClientDisconnect:  # gone before the whole form came (closed as too slow)
            return Response(status_code=400, headers=SECURITY_HEADERS)  # sent to nobody
        fields = dict(pairs)
        if len(fields) != len(pairs):  # grade=1&grade=2: which one did the rater mean?
            twice = next(k for k, _ in pairs if [n for n, _ in pairs].count(k) > 1)
            raise HTTPException(400, f"the form sends {twice!r} twice: reload the page")
        return await run_in_threadpool(save, request, fields)

    async def css(request: Request) -> Response:
        return Response(stylesheet, media_type="text/css", headers=SECURITY_HEADERS)

    async def js(request: Request) -> Response:
        return Response(script, media_type="text/javascript", headers=SECURITY_HEADERS)

    async def error(request: Request, exc: Any) -> Response:
        status = int(getattr(exc, "status_code", 500))
        detail = str(getattr(exc, "detail", "")) or "error"
        return html(pages.error(status, detail), status)

    async def failure(request: Request, exc: Exception) -> Response:
        # The database cannot be used (damaged, a full disk): one line, never a traceback.
        return html(pages.error(500, str(exc)), 500)

    async def bug(request: Request, exc: Exception) -> Response:
        return html(pages.error(500, "internal error: this is a bug in rankmeter"), 500)

    routes = [
        Route("/static/judge.css", css),
        Route("/static/judge.js", js),
        Route("/r/{token}", show_next, methods=["GET"]),
        Route("/r/{token}/{position:int}", show, methods=["GET"]),
        Route("/r/{token}/{position:int}", grade, methods=["POST"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: error, RankmeterError: failure, Exception: bug},
    )
