"""A Scrapy duplicate filter on urinorm's canonical URLs.

In a project's settings::

    DUPEFILTER_CLASS = "urinorm.scrapy.DupeFilter"
    URINORM_PRESET = "safe"          # or URINORM_RUNG, URINORM_WITH, ...

A GET or HEAD request without a body is keyed on the canonical form of its
URL (the key ``urinorm dedup`` gives it, with the same options), so
``HTTP://Example.com:80/a#top`` and ``http://example.com/a`` are one page;
with no option given, the ``safe`` preset with ``sort-query-pairs`` (the
fragment, tracking and session parameters dropped: ``with_`` starts from
``safe``): at least what Scrapy's own request fingerprint
merges (a fragment, the order of query parameters, case, percent-encoding
case), and more (default ports, dot segments, unreserved characters
percent-encoded), short of one thing it does: ``+`` and ``%20`` in a query
stay apart;
any other request on its method, canonical URL and body, so two POSTs with
different bodies stay apart. With ``JOBDIR`` set (or
``URINORM_SEEN_DIR``), the keys go to a :class:`urinorm.SeenSet` (in
``JOBDIR/urinorm-seen``): a crawl resumed, or run again, does not fetch
again what an earlier one fetched, and the store is the one the command
line's ``dedup --seen`` reads (one made with other settings is refused: the
reason is logged as an error, and the spider closes at once, finish reason
``urinorm_seen_store_refused``). Keys admitted are committed at least every
``URINORM_COMMIT_EVERY`` seconds (default 1) and when the spider closes.
With ``URINORM_SEEN_MAX_AGE`` (seconds, or ``"7d"`` as the command line's
``--seen-max-age`` takes it), a request whose key was admitted longer ago
is let through again (a recrawl), and its key admitted with the new time.
With ``URINORM_BUDGET_PER_HOST`` (or ``URINORM_BUDGET_PER_DOMAIN``) N, at
most N keys of each host (registrable domain) are in the store, across
crawls: a new request past it is filtered, and the store's count of the
site's keys decides (as ``--budget-per-host`` does).

With ``URINORM_SEEN_URL`` (and ``URINORM_SEEN_TOKEN`` if the service has
one), the filter asks ``urinorm serve`` (a :class:`urinorm.SeenClient`)
instead: every process of a Scrapy cluster that names the same service
shares one seen set, and a URL one process fetched is filtered in all the
others. The service's options (rung, preset, key, max age) decide what is
one page; the filter's own apply only to requests it keys itself: one
that is not a GET or HEAD without a body (its key, method, URL and body,
is no line a service takes), and a URL the service rejects. Those are
filtered within the process only.

Settings: ``URINORM_RUNG``, ``URINORM_PRESET``, ``URINORM_WITH``,
``URINORM_WITHOUT`` (lists of transform names), ``URINORM_TRACKING_PARAMS``
(a list of parameter names), ``URINORM_RULES`` and
``URINORM_RULES_CLEARURLS`` (lists of site rules files: urinorm's line
format and ClearURLs' ``data.min.json``, as ``--rules`` and
``--rules-clearurls`` take them; read once, when the filter is made),
``URINORM_SEEN_DIR``, ``URINORM_COMMIT_EVERY``, ``URINORM_SEEN_MAX_AGE``,
``URINORM_BUDGET_PER_HOST``, ``URINORM_BUDGET_PER_DOMAIN``,
``URINORM_SEEN_URL``, ``URINORM_SEEN_TOKEN``;
``DUPEFILTER_DEBUG`` logs
every duplicate, as Scrapy's own filter does.
"""

from __future__ import annotations

import logging
import os
import time

from scrapy import signals
from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import CloseSpider
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

from . import InvalidUri, SeenClient, SeenSet, SeenStoreError
from ._options import FRONTIER_WITH, normalizer, paths

__all__ = ["DupeFilter", "SCRAPY_DEFAULT"]

#: The transforms the filter's keys add to the ``safe`` preset when no
#: option names any: a frontier's default (``urinorm serve``,
#: :class:`urinorm.SeenSet`), which merges at least what Scrapy's default
#: request fingerprint merges.
SCRAPY_DEFAULT = FRONTIER_WITH


class DupeFilter(BaseDupeFilter):
    """Filters out requests whose canonical key was seen (see the module)."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        debug: bool = False,
        *,
        rung: str | None = None,
        preset: str | None = None,
        with_=(),
        without=(),
        tracking_params=None,
        rules=None,
        rules_clearurls=None,
        commit_every: float = 1.0,
        max_age=None,
        seen_url: str | None = None,
        seen_token: str | None = None,
        budget_per_host: int | None = None,
        budget_per_domain: int | None = None,
    ) -> None:
        if path and seen_url:
            raise ValueError(
                "the filter takes a seen store (URINORM_SEEN_DIR) or a seen service"
                " (URINORM_SEEN_URL), not both"
            )
        options = {
            "rung": rung,
            "preset": preset,
            "with_": tuple(with_),
            "without": tuple(without),
            "tracking_params": tuple(tracking_params) if tracking_params else None,
            "rules": paths(rules) or None,
            "rules_clearurls": paths(rules_clearurls) or None,
            # With no option, a frontier's default, which merges at least
            # what Scrapy's own does.
            "frontier": True,
        }
        # The rules are read once: the keys of a crawl, and those its store
        # records the settings of, are made under the same rules.
        self._normalizer = normalizer(**options)
        # The store is opened with the filter (``open``, once Scrapy's
        # engine is ready to close what it opened), so that a store the
        # filter cannot use (other key settings, say) closes the spider with
        # one error logged, not tracebacks from an engine half made.
        self._store: SeenSet | None = None
        self._opening = (path, max_age, budget_per_host, budget_per_domain) if path else None
        self._refused = False
        self._client = SeenClient(seen_url, seen_token) if seen_url else None
        self._keys: set[bytes] = set()
        self._commit_every = commit_every
        self._committed_at = time.monotonic()
        self.debug = debug
        self.logdupes = True
        self.logger = logging.getLogger(__name__)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        path = settings.get("URINORM_SEEN_DIR")
        url = settings.get("URINORM_SEEN_URL")
        jobdir = job_dir(settings)
        # A shared service is the crawl's memory: the job directory keeps
        # only Scrapy's own state.
        if not path and not url and jobdir:
            path = os.path.join(jobdir, "urinorm-seen")
        dupefilter = cls(
            path,
            settings.getbool("DUPEFILTER_DEBUG"),
            rung=settings.get("URINORM_RUNG"),
            preset=settings.get("URINORM_PRESET"),
            with_=settings.getlist("URINORM_WITH"),
            without=settings.getlist("URINORM_WITHOUT"),
            tracking_params=settings.getlist("URINORM_TRACKING_PARAMS") or None,
            rules=settings.getlist("URINORM_RULES"),
            rules_clearurls=settings.getlist("URINORM_RULES_CLEARURLS"),
            commit_every=settings.getfloat("URINORM_COMMIT_EVERY", 1.0),
            max_age=settings.get("URINORM_SEEN_MAX_AGE"),
            budget_per_host=settings.getint("URINORM_BUDGET_PER_HOST") or None,
            budget_per_domain=settings.getint("URINORM_BUDGET_PER_DOMAIN") or None,
            seen_url=url,
            seen_token=settings.get("URINORM_SEEN_TOKEN"),
        )
        crawler.signals.connect(dupefilter._close_if_refused, signal=signals.spider_opened)
        return dupefilter

    def request_key(self, request) -> bytes:
        """The key a request is filtered on: the canonical URL for a GET or
        HEAD without a body, else method, canonical URL and body. A URL
        that is not a URI reference is its own key, as written."""
        try:
            url = self._normalizer.normalize(request.url)
        except InvalidUri:
            url = request.url
        if request.method in ("GET", "HEAD") and not request.body:
            return url.encode()
        # A space and a newline appear in no URL: these keys never meet a
        # page's.
        return request.method.encode() + b" " + url.encode() + b"\n" + request.body

    def open(self) -> None:
        """Opens the seen store, if there is one: Scrapy calls it as the
        spider opens. A store it cannot use is logged as an error, and
        closes the spider once it is open (finish reason
        ``urinorm_seen_store_refused``): Scrapy cannot close a spider
        cleanly before then."""
        try:
            self._open_store()
        except SeenStoreError as error:
            self.logger.error("urinorm: %s", error)
            self._refused = True

    def _close_if_refused(self) -> None:
        if self._refused:
            raise CloseSpider("urinorm_seen_store_refused")

    def _open_store(self) -> None:
        if self._opening is not None and self._store is None:
            path, max_age, per_host, per_domain = self._opening
            self._store = SeenSet._with_normalizer(
                path, self._normalizer, max_age, per_host, per_domain
            )

    def request_seen(self, request) -> bool:
        if self._client is not None and request.method in ("GET", "HEAD") and not request.body:
            (new,) = self._client.add([request.url])
            if new is not None:
                return not new
        key = self.request_key(request)
        self._open_store()
        if self._store is None:
            new = key not in self._keys
            self._keys.add(key)
            return not new
        (new,) = self._store.add_keys([key])
        if time.monotonic() - self._committed_at >= self._commit_every:
            self._store.commit()
            self._committed_at = time.monotonic()
        return not new

    def close(self, reason: str) -> None:
        if self._store is not None:
            self._store.close()
        if self._client is not None:
            self._client.close()

    def log(self, request, spider) -> None:
        if self.debug:
            msg = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
            args = {"request": request, "referer": referer_str(request)}
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            msg = (
                "Filtered duplicate request: %(request)s"
                " - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)"
            )
            self.logger.debug(msg, {"request": request}, extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered")
