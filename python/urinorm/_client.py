"""The client of ``urinorm serve``: one seen set shared by every process of
a crawl, over HTTP (the standard library's ``http.client``, one kept-alive
connection per client)."""

from __future__ import annotations

import http.client
import urllib.parse

__all__ = ["SeenClient", "SeenServiceError"]


class SeenServiceError(Exception):
    """``urinorm serve`` could not be reached, or refused a request (the
    message says which, with the service's own words)."""


# What each verdict says of a key, for add (is it new?) and for check (is
# it held?); lines that are no key (rejected, blank, filtered) are None. A
# `dup` repeats a key whose first line in the request was new or expired
# (a repeat of a held one is `seen`): not new the second time, not held.
_NEW = {"new": True, "expired": True, "seen": False, "dup": False}
_HELD = {"new": False, "expired": False, "seen": True, "dup": False}
_FORGOTTEN = {"forgotten": True, "absent": False, "dup": False}


class SeenClient:
    """A seen set served by ``urinorm serve --seen DIR``: every process of a
    crawl that asks the same service shares one set, each key answered new
    once across all of them.

    ``add(values)`` answers, for each value, whether its key is new (and
    admits it); ``check(values)`` whether it is held, admitting nothing;
    ``verdicts(values)`` the service's own words, admitting as ``add``
    does; ``forget(values)`` forgets their keys (the next ``add`` answers
    them new), answering whether each was held.
    Both take a list of ``str`` (``None`` for a missing value) or a pyarrow
    string array, and send one request a call over a connection kept open
    between calls. The keys are the service's: its options (rung, preset,
    key) decide what is one page. The answers are ``add`` and ``contains``
    of :class:`SeenSet`: ``None`` where a value is ``None`` or not a URI
    reference.

    ``url`` is the service's address (``http://host:port``: TLS belongs in a
    proxy in front of it); ``token`` is the content of its ``--token-file``.
    A service that is down, or that refuses (401 for a wrong token, 413 for
    a body past ``--max-body``, 503 while it stops), raises
    :class:`SeenServiceError`.
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(
                f"SeenClient takes the service's http:// address, not {url!r}"
                " (put TLS in a proxy in front of urinorm serve)"
            )
        self._host = parts.hostname
        self._port = parts.port or 80
        self._base = parts.path.rstrip("/")
        self._timeout = timeout
        self._headers = {"Content-Type": "text/plain; charset=utf-8"}
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._conn: http.client.HTTPConnection | None = None

    def add(self, values):
        """For each value, whether its key is new, admitting it (a key
        repeated within ``values`` is new only the first time)."""
        return self._ask("/v1/add", values, _NEW)

    def check(self, values):
        """For each value, whether the service holds its key (committed, or
        admitted by any client since), admitting nothing."""
        return self._ask("/v1/check", values, _HELD)

    def verdicts(self, values, admit: bool = True) -> list:
        """For each value, the service's verdict word, admitting new keys
        (with ``admit=False``, as ``check`` asks): ``"new"`` (admitted now),
        ``"expired"`` (held, older than ``--seen-max-age``: admitted again),
        ``"seen"`` (held: committed, or admitted by any client since),
        ``"dup"`` (a repeat, within ``values``, of a key new or expired
        here), ``"rejected"`` (not a URI the service takes: a relative
        reference, a ``mailto:``, ...), ``"blank"``, ``"filtered"``, and
        ``None`` for a missing value. ``add`` is ``verdicts`` read as "is
        it new?" (``new``, ``expired``: True; ``seen``, ``dup``: False);
        ``check`` as "is it held?" (``seen``: True; ``new``, ``expired``,
        ``dup``: False)."""
        path = "/v1/add" if admit else "/v1/check"
        items, _, words = self._verdict_words(path, values)
        return [None if v is None else w for v, w in zip(items, words)]

    def forget(self, values) -> list:
        """Forgets each value's key (made as the service makes keys): the
        next ``add`` answers it new, for every client. For each value,
        whether the service held its key; ``None`` for a value that is no
        key (missing, rejected, blank)."""
        return self._ask("/v1/forget", values, _FORGOTTEN)

    def stats(self) -> dict:
        """The service's ``/v1/stats``: the store's figures and its own."""
        import json

        return json.loads(self._request("GET", "/v1/stats", None))

    def close(self) -> None:
        """Closes the connection (the next call opens another)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> SeenClient:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SeenClient('http://{self._host}:{self._port}{self._base}')"

    def _ask(self, path: str, values, meaning: dict):
        items, arrow, words = self._verdict_words(path, values)
        answers = [meaning.get(word) for word in words]
        if arrow:
            import pyarrow as pa

            return pa.array(answers, type=pa.bool_())
        return answers

    def _verdict_words(self, path: str, values):
        """The values as a list, whether they came as Arrow, and the
        service's verdict word for each."""
        arrow = hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__")
        items = values.to_pylist() if arrow else list(values)
        # A value with a line break is no URI reference, and would be two
        # lines: it is sent as a blank line, answered None.
        lines = ["" if v is None or "\n" in v or "\r" in v else v for v in items]
        body = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
        text = self._request("POST", path, body).decode("utf-8", "replace")
        verdicts = text.split("\n")[:-1]
        if len(verdicts) != len(items):
            raise SeenServiceError(
                f"urinorm serve gave {len(verdicts)} answers for {len(items)} values"
            )
        return items, arrow, [line.partition("\t")[0] for line in verdicts]

    def _request(self, method: str, path: str, body: bytes | None) -> bytes:
        where = f"http://{self._host}:{self._port}"
        for attempt in (0, 1):
            fresh = self._conn is None
            if fresh:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            try:
                self._conn.request(method, self._base + path, body, self._headers)
                response = self._conn.getresponse()
                data = response.read()
            except OSError as error:
                self.close()
                # A kept-alive connection the service closed meanwhile
                # (idle past its timeout): once more, on a new one.
                stale = isinstance(error, (ConnectionResetError, BrokenPipeError))
                if stale and not fresh and attempt == 0:
                    continue
                raise SeenServiceError(f"urinorm serve at {where} is not answering: {error}") from error
            if response.status != 200:
                said = data.decode("utf-8", "replace").strip()
                raise SeenServiceError(
                    f"urinorm serve at {where} refused the request"
                    f" ({response.status} {response.reason}): {said}"
                )
            return data
        raise AssertionError("unreachable")

