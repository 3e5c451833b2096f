"""The HTTP side of :class:`~rankmeter.judgments.chat_labeler.ChatLabeler`: the endpoint and the
API key checked, the chat URL, the strict JSON of the wire, ``Retry-After`` read, and the total
deadline of one request (:class:`_Deadline`), which httpx's per-operation timeouts lack."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from rankmeter.errors import PolicyError

_MAX_RETRY_AFTER = 60.0
_RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
# The request bodies and cache keys are wire data, not a report: judgments (layer 4) cannot use
# report._json's writer, so this encoder keeps its guarantee itself (a NaN raises, never goes
# out as a bare NaN). ASCII only, so a key's bytes never depend on an encoding.
_STRICT_JSON = json.JSONEncoder(allow_nan=False)
# The user information of a URL (``user:password@``), which is never shown.
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def _redacted(url: str) -> str:
    """``url`` with its user information (``user:password@``), if any, shown as ``***@``."""
    return _USERINFO.sub(r"\1***@", url)


def _check_url(endpoint: str) -> None:
    """Refuse an endpoint that no request could be sent to (shown without credentials)."""
    import urllib.parse

    shown = _redacted(endpoint)
    if not re.match(r"https?://[^/\s]", endpoint):
        raise PolicyError(
            f"endpoint={shown!r} must be an http:// or https:// URL, such as http://localhost:8000"
        )
    try:
        parts = urllib.parse.urlsplit(endpoint)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as exc:
        raise PolicyError(f"endpoint={shown!r} is not a valid URL ({exc})") from None
    if not parts.hostname or any(c.isspace() or not c.isprintable() for c in endpoint):
        raise PolicyError(f"endpoint={shown!r} is not a valid URL (no host, or a space in it)")
    try:
        import httpx
    except ImportError:  # said on the first request, as for any endpoint
        return
    try:
        httpx.URL(endpoint)
    except (httpx.InvalidURL, ValueError):
        raise PolicyError(f"endpoint={shown!r} is not a valid URL") from None


def _check_api_key(key: str, where: str) -> None:
    """Refuse a key that an HTTP header cannot carry as it is, naming where it came from,
    never the key itself (nor any piece of it)."""
    for char in key:
        if "!" <= char <= "~":
            continue
        if char in "\r\n":
            kind = "a line break"
        elif char.isspace():
            kind = "whitespace"
        elif not char.isascii():
            kind = "a character that is not ASCII"
        else:
            kind = "a control character"
        raise PolicyError(
            f"the API key in {where} holds {kind}: an HTTP header cannot carry it (a key is "
            "printable ASCII without spaces; check how the value was set; it is not shown)"
        )


def _chat_url(endpoint: str) -> str:
    """``.../v1/chat/completions`` from an endpoint given with or without ``/v1`` (or whole)."""
    base = endpoint.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if not base.endswith("/v1"):
        base += "/v1"
    return base + "/chat/completions"


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), capped."""
    import email.utils
    from datetime import datetime, timezone

    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


class _Retry(Exception):
    """A request failed in a way that may pass: it is tried again."""


class _Deadline:
    """The total deadline of one request. httpx's timeouts are per operation (connecting,
    each read), so a server that sends a byte a second would hold a request for ever; at the
    deadline this watchdog shuts the request's socket down, which ends a read in progress.
    The socket is learnt from httpcore's trace of the connection (``connect_tcp``, then
    ``start_tls`` for https), which is why the client keeps no connection between requests."""

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._sockets: list[Any] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: Any) -> None:
    import contextlib
    import socket

    with contextlib.suppress(OSError):  # already closed, or detached by the TLS layer
        sock.shutdown(socket.SHUT_RDWR)
