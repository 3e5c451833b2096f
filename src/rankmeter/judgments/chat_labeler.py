"""A labeler that asks a model behind an OpenAI-compatible chat endpoint (vLLM, llama.cpp's
server, Ollama, ...) to grade a document for a query.

:class:`ChatLabeler` is a labeler like any other, ``labeler(query_text, doc_text) -> grade``,
so :func:`~rankmeter.judgments.label_pool` takes it; :meth:`ChatLabeler.label_pool` does the
same with several requests in flight at once. The prompt (:data:`DEFAULT_PROMPT`) is written
in the style of UMBRELA (Upadhyay et al., 2024, the TREC RAG relevance assessor): a 0-3 scale
with each level described, the searcher's intent and the document's trustworthiness weighed,
and the grade asked for on a last line ``##final score: N``.

HTTP is spoken by httpx (the ``judge`` extra), imported on the first request. Its timeouts are
per operation, so each request also has a total deadline of its own (:class:`_Deadline`), and
a reply is read up to ``max_reply_bytes`` and no further. Query and document texts are
untrusted: they go into the prompt as quoted data between tagged markers that no text can
hold, never into the template's placeholders' syntax. The reply is untrusted: only its tail is
searched for a grade, and it is quoted (shortened, control characters escaped) when an error
shows it.

The class is here; the prompt (``_chat_prompt``), the HTTP side and the deadline
(``_chat_http``), reading a reply (``_chat_reply``) and the cache (``_chat_cache``) are modules
of their own, their public names importable from here.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rankmeter._escape import visible
from rankmeter._validate import integer, real
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.judgments._chat_cache import _Cache
from rankmeter.judgments._chat_http import (
    _RETRIED_STATUS,
    _STRICT_JSON,
    _USERINFO,
    _chat_url,
    _check_api_key,
    _check_url,
    _Deadline,
    _redacted,
    _Retry,
    _retry_after,
)
from rankmeter.judgments._chat_prompt import (
    _PLACEHOLDER,
    DEFAULT_PROMPT,
    DEFAULT_SCALE,
    DEFAULT_SYSTEM,
    _marker_tag,
)
from rankmeter.judgments._chat_reply import (
    _EXCERPT,
    _OBJECT_START,
    PARSED_TAIL,
    _excerpt,
    parse_grade,
)

__all__ = [
    "API_KEY_VARIABLES",
    "DEFAULT_PROMPT",
    "DEFAULT_SCALE",
    "DEFAULT_SYSTEM",
    "PARSED_TAIL",
    "ChatLabeler",
    "EndpointError",
    "parse_grade",
]

#: Where the API key is looked for when none is given, in this order.
API_KEY_VARIABLES = ("RANKMETER_API_KEY", "OPENAI_API_KEY")


class EndpointError(RankmeterError):
    """The endpoint could not be reached, refused the request, or replied without a grade."""


class ChatLabeler:
    """Grades a document for a query by asking a model behind an OpenAI-compatible endpoint.

    Each grade is one ``POST {endpoint}/v1/chat/completions`` with the JSON body ``{"model",
    "messages", "temperature"}``: a system message and :data:`DEFAULT_PROMPT` (or ``prompt``)
    with the query and the document filled in. The grade is read from the reply's last
    ``##final score: N`` line (or a reply that is only a number).

    Parameters
    ----------
    endpoint : str
        The server's base URL, with or without ``/v1``: ``http://localhost:8000`` (vLLM),
        ``http://localhost:8080`` (llama.cpp's ``llama-server``), ``http://localhost:11434``
        (Ollama). Checked here; credentials in it (``http://user:pw@host``) are shown as
        ``***`` in ``endpoint``, ``url`` and every message.
    model : str
        The model name the server knows (vLLM's ``--served-model-name``, Ollama's tag).
    api_key : str, optional
        Sent as ``Authorization: Bearer KEY``. Default: the ``RANKMETER_API_KEY`` environment
        variable, else ``OPENAI_API_KEY``, else no header (local servers need none). The key is
        checked here, before any request (printable ASCII without spaces, as a header carries
        it), and never shown: an error names where it came from.
    api_key_env : str, optional
        The environment variable that holds the key, instead of the default ones.
    prompt : str, optional
        The user message's template; must hold ``{query}`` and ``{document}`` (``{low}`` and
        ``{high}`` are the scale's ends). Default :data:`DEFAULT_PROMPT`, which describes the
        grades 0-3 only: another ``scale`` needs a prompt of one's own.
    system : str, optional
        The system message. Default :data:`DEFAULT_SYSTEM`.
    scale : str or (int, int)
        The grades the reply may give, ``"0-3"``.
    temperature : float
        Sent as is; 0 (the default) asks for the model's most likely answer.
    timeout : float
        Seconds one request may take in all: connecting, sending, and the whole reply (a
        server that sends a byte now and then is cut off at this deadline too). A request
        that runs out of time is tried again, as a connection error is.
    max_reply_bytes : int
        The largest reply read, in bytes: a bigger one stops the labelling with an error,
        so a model that runs on for megabytes costs no memory. A compressed reply (any
        ``Content-Encoding`` but identity, which the request asks for) is refused unread.
        Default 4,000,000 (a grade with its reasoning takes a few kilobytes).
    retries : int
        How many times a failed request is tried again: on a connection error, a timeout, an
        HTTP 429 or 5xx. The waits double from ``backoff`` seconds; a ``Retry-After`` header
        (capped at 60 s) is waited instead.
    backoff : float
        The first wait between tries, in seconds.
    cache : path, optional
        An SQLite file of the grades already given, keyed by a hash of the model name, the
        system message and prompt template, the query and document texts, the temperature
        and the scale: nothing is asked twice, also across runs. Created when missing.

    Examples
    --------
    >>> labeler = ChatLabeler("http://localhost:8000", "qwen2.5-7b-instruct")
    >>> labeler.url
    'http://localhost:8000/v1/chat/completions'
    >>> user = labeler.messages("wing flutter", "flutter of a swept wing")[1]["content"]
    >>> print(user[user.index("<<<QUERY"):user.index("End your answer")].strip())
    <<<QUERY 8f512f333659e99b
    wing flutter
    QUERY 8f512f333659e99b>>>
    <BLANKLINE>
    <<<PASSAGE 8f512f333659e99b
    flutter of a swept wing
    PASSAGE 8f512f333659e99b>>>
    """

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        prompt: str | None = None,
        system: str | None = None,
        scale: Any = "0-3",
        temperature: float = 0.0,
        timeout: float = 60.0,
        max_reply_bytes: int = 4_000_000,
        retries: int = 3,
        backoff: float = 1.0,
        cache: str | os.PathLike[str] | None = None,
    ) -> None:
        from rankmeter.data.labels import parse_scale

        if not isinstance(endpoint, str):
            raise PolicyError(f"endpoint must be an http:// or https:// URL, not {endpoint!r}")
        _check_url(endpoint)
        if not isinstance(model, str) or not model.strip():
            raise PolicyError(f"model={model!r} must be the name of a model the endpoint serves")
        # What is shown (repr, messages, summaries) has the URL's credentials left out; the
        # requests go to the URL as given.
        self.endpoint = _redacted(endpoint)
        self.url = _redacted(_chat_url(endpoint))
        self._request_url = _chat_url(endpoint)
        userinfo = _USERINFO.match(endpoint)
        self._secrets: list[str] = []
        if userinfo:
            import urllib.parse

            user = userinfo.group()[len(userinfo.group(1)) : -1]
            password = user.partition(":")[2]
            self._secrets += [user, password, urllib.parse.unquote(password)]
        self.model = model
        if api_key is not None:
            where = "api_key"
        elif api_key_env is not None:
            where = f"the environment variable {api_key_env}"
            api_key = os.environ.get(api_key_env)
            if not api_key:
                raise PolicyError(f"api_key_env={api_key_env!r}: that variable is not set")
        else:
            where = next((f"the environment variable {v}" for v in API_KEY_VARIABLES
                          if os.environ.get(v)), "")  # fmt: skip
            api_key = os.environ[where.rsplit(" ", 1)[-1]] if where else None
        if api_key:
            _check_api_key(api_key, where)
            self._secrets.append(api_key)
        self._api_key = api_key
        bounds = parse_scale(scale)
        if bounds is None:
            raise PolicyError("scale=None: give the grades the model may give, such as '0-3'")
        self.low, self.high = bounds
        if prompt is None and bounds != DEFAULT_SCALE:
            raise PolicyError(
                f"scale={self.low}-{self.high}: the default prompt describes the grades "
                f"{DEFAULT_SCALE[0]}-{DEFAULT_SCALE[1]} only; for another scale give a prompt "
                "of your own (prompt=...) that describes each of its grades"
            )
        self.prompt = DEFAULT_PROMPT if prompt is None else prompt
        for placeholder in ("{query}", "{document}"):
            if placeholder not in self.prompt:
                raise PolicyError(f"prompt must hold {placeholder}, where the text goes")
        self.system = DEFAULT_SYSTEM if system is None else system
        self.temperature = real("temperature", temperature, low=0.0, high=2.0)
        self.timeout = real(
            "timeout", timeout, low=0.0, open_low=True, what="seconds a request may take in all"
        )
        self.max_reply_bytes = integer(
            "max_reply_bytes", max_reply_bytes, low=1, what="bytes a reply may hold"
        )
        self.retries = integer("retries", retries, low=0, high=100)
        self.backoff = real("backoff", backoff, low=0.0, what="the first wait between tries")
        self._cache = None if cache is None else _Cache(os.fspath(cache))
        self._memo: dict[str, int] = {}
        self._lock = threading.Lock()
        self._client: Any = None
        #: HTTP requests sent and grades served from the cache so far (for a summary).
        self.requests = 0
        self.cached = 0

    def __repr__(self) -> str:
        return f"ChatLabeler({self.endpoint!r}, {self.model!r})"

    def _scrub(self, text: str) -> str:
        """``text`` (from httpx, a server) with the key and the URL's credentials as ***."""
        # Longest first, so a password is not replaced inside the user:password it is part
        # of; a piece shorter than 4 characters would blank out ordinary words.
        for secret in sorted(self._secrets, key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def messages(self, query_text: str, doc_text: str) -> list[dict[str, str]]:
        """The chat messages sent for one (query, document) pair."""
        values = {
            "query": query_text,
            "document": doc_text,
            "low": str(self.low),
            "high": str(self.high),
            "tag": _marker_tag(query_text, doc_text),
        }
        # One pass over the template: text from a query or document is never searched for
        # placeholders, so a document holding "{query}" stays as it is.
        user = _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.prompt)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def _key(self, query_text: str, doc_text: str) -> str:
        parts = [
            self.model,
            self.system,
            self.prompt,
            query_text,
            doc_text,
            repr(self.temperature),
            f"{self.low}-{self.high}",
        ]
        return hashlib.sha256(_STRICT_JSON.encode(parts).encode("ascii")).hexdigest()

    def __call__(self, query_text: str, doc_text: str) -> int:
        """The grade of ``doc_text`` for ``query_text``: from the cache, else asked.

        Raises
        ------
        EndpointError
            The endpoint cannot be reached after the retries, refuses the request, or replies
            without a grade on the scale (the reply quoted, short and escaped).
        """
        key = self._key(query_text, doc_text)
        with self._lock:
            known = self._memo.get(key)
        if known is not None:
            return known
        if self._cache is not None:
            known = self._cache.get(key, self.low, self.high)
            if known is not None:
                with self._lock:
                    self._memo[key] = known
                    self.cached += 1
                return known
        reply = self._ask(self.messages(query_text, doc_text))
        grade = parse_grade(reply, self.low, self.high)
        if grade is None:
            searched = (
                f"; only its last {PARSED_TAIL} characters are searched"
                if len(reply.rstrip()) > PARSED_TAIL
                else ""
            )
            raise EndpointError(
                f"model {self.model!r} at {self.url}: the reply gives no grade on the scale "
                f"{self.low}-{self.high} (the prompt asks for a last line '##final score: N'"
                f"{searched}): {_excerpt(reply)}"
            )
        with self._lock:
            self._memo[key] = grade
        if self._cache is not None:
            self._cache.put(key, grade, self.model, reply)
        return grade

    def _ask(self, messages: list[dict[str, str]]) -> str:
        """The reply's text, trying again on errors that may pass."""
        body = _STRICT_JSON.encode(
            {"model": self.model, "messages": messages, "temperature": self.temperature}
        ).encode("ascii")
        # Uncompressed: a compressed chunk could unpack to far more than the cap in one step.
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": "identity",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        where = f"model {self.model!r} at {self.url}"
        problem = ""
        retry_after: float | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                wait = self.backoff * 2 ** (attempt - 1)
                time.sleep(wait if retry_after is None else retry_after)
            retry_after = None
            with self._lock:
                self.requests += 1
            try:
                status, reason, reply_headers, raw = self._post(body, headers, where)
            except _Retry as exc:
                problem = self._scrub(str(exc))
                continue
            if status >= 400:
                detail = self._scrub(bytes(raw[:2000]).decode("utf-8", "replace"))
                problem = f"HTTP {status} {visible(self._scrub(reason))}: {_excerpt(detail)}"
                if status in _RETRIED_STATUS:
                    retry_after = _retry_after(reply_headers.get("Retry-After"))
                    continue
                raise EndpointError(f"{where}: {problem}")
            return self._content(raw, where)
        tries = self.retries + 1
        raise EndpointError(
            f"{where}: gave up after {tries} {'try' if tries == 1 else 'tries'}: {visible(problem)}"
        )

    def _http(self) -> Any:
        """The one httpx client of this labeler (thread-safe, shared by the workers)."""
        with self._lock:
            if self._client is None:
                try:
                    import httpx
                except ImportError as exc:
                    raise PolicyError(
                        f"--endpoint needs the 'httpx' package: pip install 'rankmeter[judge]' "
                        f"({exc})"
                    ) from None
                # No connection is kept between requests: each request's socket is then
                # known from its connection (see _Deadline), and a model's answer takes
                # seconds, a connection to it a millisecond.
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout),
                    limits=httpx.Limits(max_keepalive_connections=0),
                    follow_redirects=False,
                )
            return self._client

    def _post(
        self, body: bytes, headers: dict[str, str], where: str
    ) -> tuple[int, str, Any, bytearray]:
        """One POST, within the total deadline ``timeout`` and at most ``max_reply_bytes`` of
        reply: (status, reason, headers, body; an error's body cut at 2000 bytes). A failure
        that may pass raises _Retry; a reply over the cap, EndpointError."""
        import httpx

        client = self._http()
        deadline = _Deadline(self.timeout)
        try:
            with client.stream(
                "POST", self._request_url, content=body, headers=headers,
                extensions={"trace": deadline.trace},
            ) as response:  # fmt: skip
                limit = 2000 if response.status_code >= 400 else self.max_reply_bytes
                encoding = response.headers.get("Content-Encoding", "").strip().lower()
                if encoding not in ("", "identity"):
                    raise EndpointError(
                        f"{where}: the reply is compressed (Content-Encoding: "
                        f"{visible(encoding[:40])}) though the request asked for identity; not "
                        "read (a compressed reply can unpack to far more than max_reply_bytes)"
                    )
                declared = response.headers.get("Content-Length", "")
                if response.status_code < 400 and declared.isdigit() and int(declared) > limit:
                    raise EndpointError(f"{where}: {self._too_large(int(declared))}")
                # One buffer, never more than the cap (plus a chunk): the raw bytes, as no
                # Content-Encoding is accepted.
                data = bytearray()
                for chunk in response.iter_raw():
                    data += chunk
                    if len(data) > limit:
                        if response.status_code >= 400:
                            break
                        raise EndpointError(f"{where}: {self._too_large(len(data), read=True)}")
                if deadline.expired:  # a body that ends at the connection's close, cut short
                    raise _Retry(f"no answer within {self.timeout:g} s")
                return response.status_code, response.reason_phrase, response.headers, data
        except httpx.HTTPError as exc:
            if deadline.expired or isinstance(exc, httpx.TimeoutException):
                raise _Retry(f"no answer within {self.timeout:g} s") from None
            raise _Retry(self._scrub(f"{type(exc).__name__}: {exc}")) from None
        finally:
            deadline.cancel()

    def _too_large(self, size: int, *, read: bool = False) -> str:
        said = "" if read else f" ({size:,} bytes, it says)"
        return (
            f"the reply is larger than max_reply_bytes={self.max_reply_bytes:,}{said}; not "
            "read further (a grade fits in a few kilobytes: is the model repeating itself?)"
        )

    def _content(self, raw: bytearray, where: str) -> str:
        """``choices[0].message.content`` of a chat-completions reply. The bytes are decoded
        once (strict UTF-8, which JSON is); a reply that is not JSON is quoted from its first
        few hundred bytes only, so junk costs no more memory than a good reply."""
        content = None
        # Not decoded at all unless it can be a JSON object: a strict decode that fails keeps
        # a copy of the bytes in its error, on top of the string it began.
        if _OBJECT_START.match(raw):
            try:
                content = json.loads(raw.decode("utf-8"))["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                content = None
        if not isinstance(content, str):
            start = bytes(raw[: _EXCERPT * 4]).decode("utf-8", "replace")
            raise EndpointError(
                f"{where}: the reply is not a chat completion (choices[0].message.content): "
                f"{_excerpt(self._scrub(start))}"
            )
        return content

    def close(self) -> None:
        """Close the HTTP client and the cache file."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        if self._cache is not None:
            self._cache.close()

    def label_pool(
        self,
        pool: Any,
        queries: Any,
        corpus: Any,
        *,
        workers: int = 4,
        progress: Callable[[str], None] | None = None,
        source: str | None = None,
    ) -> Any:
        """:func:`~rankmeter.judgments.label_pool` with this labeler, ``workers`` requests at
        a time; an error names the pool item it stopped at.

        Every text is looked up first (as ``label_pool`` does, with its errors), then the
        distinct (query, document) pairs are asked in a thread pool.

        Returns
        -------
        Qrels
            One judgment per pool item, in the pool's order.
        """
        import concurrent.futures

        # What the requests import, imported once here before the threads start: two threads
        # importing one module at the same moment can see it half-initialised.
        import datetime  # noqa: F401
        import email.utils  # noqa: F401
        import socket  # noqa: F401

        from rankmeter.data import Qrels
        from rankmeter.io import read_pool
        from rankmeter.judgments.labelers import label_pool

        workers = integer("workers", workers, low=1, high=256, what="requests at a time")
        self._http()  # httpx imported (or its absence said) before the threads start
        items: Sequence[Any] = (
            read_pool(pool) if isinstance(pool, (str, os.PathLike)) else tuple(pool)
        )
        if source is None:
            source = os.fspath(pool) if isinstance(pool, (str, os.PathLike)) else "<pool>"
        # label_pool checks every text (and names what is missing) before the first call;
        # this pass only collects the texts, in the pool's order.
        texts: list[tuple[str, str]] = []

        def collect(query_text: str, doc_text: str) -> int:
            texts.append((query_text, doc_text))
            return self.low

        label_pool(items, queries, corpus, collect, scale=(self.low, self.high), source=source)
        grades: dict[int, int] = {}
        failures: dict[int, BaseException] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as executor:
            futures = {
                executor.submit(self, query_text, doc_text): index
                for index, (query_text, doc_text) in enumerate(texts)
            }
            try:
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    if future.cancelled():
                        continue
                    error = future.exception()
                    if error is not None:
                        # Its frames would keep the failed reply (up to max_reply_bytes, per
                        # worker) alive to the end: only the message is needed.
                        error.__traceback__ = None
                        failures[index] = error
                        # Stop asking: what is queued is dropped, what is in flight ends.
                        for pending in futures:
                            pending.cancel()
                        continue
                    grades[index] = future.result()
                    if progress is not None:
                        item = items[index]
                        progress(f"labelling query {item.query_id}")
            except BaseException:
                for pending in futures:
                    pending.cancel()
                raise
        if failures:
            first = min(failures)
            item = items[first]
            error = failures[first]
            message = self._scrub(
                str(error)
                if isinstance(error, RankmeterError)
                else (f"{type(error).__name__}: {error}")
            )
            raise EndpointError(
                f"{source}: query {item.query_id!r}, doc {item.doc_id!r}: {message}"
            ) from error
        return Qrels.from_columns(
            [i.query_id for i in items],
            [i.doc_id for i in items],
            [grades[index] for index in range(len(items))],
            origin=source,
        )
