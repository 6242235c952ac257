"""urinorm.scrapy.DupeFilter in a real Scrapy crawl of a small site served
on 127.0.0.1, whose pages link to each other in variant spellings."""

import json
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scrapy.exceptions import CloseSpider
from scrapy.http import Request

import urinorm
from conftest import ROOT
from urinorm.scrapy import DupeFilter

PAGES = ["/", "/a", "/b", "/c"]


class Site:
    """The site: every page links to every page, each link spelled several
    ways; every request is logged."""

    def __init__(self, ref_links: bool = False):
        self.fetched: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                site.fetched.append(self.path)
                base = f"http://127.0.0.1:{site.port}"
                links = []
                for page in PAGES:
                    links += [
                        f"{base}{page}",
                        f"HTTP://127.0.0.1:{site.port}{page}",  # scheme case
                        f"{base}{page}#section",  # a fragment
                        f"{base}{page}?utm_source=feed&utm_medium=rss",  # tracking
                        f"{base}/x/..{page}",  # a dot segment
                        page.replace("/a", "/%61"),  # an encoded letter, relative
                    ]
                    if ref_links:
                        links.append(f"{base}{page}?ref=nav")  # a site's own junk
                body = "".join(f'<a href="{link}">x</a>\n' for link in links)
                data = f"<html><body>{body}</body></html>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


SPIDER = textwrap.dedent(
    """
    import json
    import sys
    import scrapy
    from scrapy.crawler import CrawlerProcess

    class Site(scrapy.Spider):
        name = "site"

        async def start(self):
            # Filtered like any request: a second crawl fetches nothing.
            yield scrapy.Request(sys.argv[1], dont_filter=False)

        def parse(self, response):
            yield from response.follow_all(css="a")

    process = CrawlerProcess(settings={
        "DUPEFILTER_CLASS": "urinorm.scrapy.DupeFilter",
        "URINORM_PRESET": "safe",
        "JOBDIR": sys.argv[2],
        "LOG_LEVEL": "DEBUG",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        **json.loads(sys.argv[3]),
    })
    process.crawl(Site)
    process.start()
    # As `scrapy crawl` does: a crawl that could not start fails.
    sys.exit(1 if process.bootstrap_failed else 0)
    """
)


@pytest.fixture
def site():
    site = Site()
    yield site
    site.close()


def crawl(tmp_path, site, jobdir, settings=None, exit_code=0):
    script = tmp_path / "spider.py"
    script.write_text(SPIDER)
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            f"http://127.0.0.1:{site.port}/",
            str(jobdir),
            json.dumps(settings or {}),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == exit_code, done.stderr[-3000:]
    return done.stderr


def test_each_page_is_fetched_once_and_a_second_crawl_fetches_nothing(tmp_path, site):
    jobdir = tmp_path / "job"
    log = crawl(tmp_path, site, jobdir)
    assert sorted(site.fetched) == sorted(PAGES), site.fetched
    assert "Filtered duplicate request" in log
    assert "no more duplicates will be shown" in log
    assert (jobdir / "urinorm-seen" / "MANIFEST").exists()
    site.fetched.clear()
    crawl(tmp_path, site, jobdir)
    assert site.fetched == []


def test_a_crawl_with_site_rules_from_the_settings(tmp_path):
    """Links with `?ref=nav` are other pages to the safe preset; a rules
    file in URINORM_RULES makes them one with the page."""
    site = Site(ref_links=True)
    try:
        crawl(tmp_path, site, tmp_path / "job1")
        assert sorted(site.fetched) == sorted(PAGES + [p + "?ref=nav" for p in PAGES])
        rules = tmp_path / "site.rules"
        rules.write_text("=127.0.0.1  drop-params  ref\n")
        site.fetched.clear()
        crawl(tmp_path, site, tmp_path / "job2", {"URINORM_RULES": [str(rules)]})
        assert sorted(site.fetched) == sorted(PAGES)
    finally:
        site.close()


def test_keys():
    dupes = DupeFilter(preset="safe")
    get = Request("HTTP://Example.com:80/a/./b?utm_source=x#top")
    assert dupes.request_key(get) == b"http://example.com/a/b"
    assert dupes.request_key(Request("http://example.com/a/b", method="HEAD")) == b"http://example.com/a/b"
    post = Request("http://Example.com/form", method="POST", body=b"q=1")
    assert dupes.request_key(post) == b"POST http://example.com/form\nq=1"
    assert not dupes.request_seen(get)
    assert dupes.request_seen(Request("http://example.com/a/b"))
    assert not dupes.request_seen(post)
    assert not dupes.request_seen(Request("http://example.com/form", method="POST", body=b"q=2"))
    assert dupes.request_seen(Request("http://EXAMPLE.com/form", method="POST", body=b"q=1"))


def test_the_default_merges_what_scrapys_own_filter_merges():
    """No option given: a fragment and the order of query parameters never
    make two pages, as with Scrapy's default fingerprint."""
    from scrapy.utils.request import fingerprint

    dupes = DupeFilter()
    same = [
        ("http://Example.com:80/a?b=1#x", "http://example.com/a?b=1"),
        ("http://example.com/a?b=2&a=1", "http://example.com/a?a=1&b=2"),
        ("http://example.com/%7ea?q=%2f", "http://example.com/~a?q=%2F"),
    ]
    for one, other in same:
        assert dupes.request_key(Request(one)) == dupes.request_key(Request(other)), one
    # Scrapy's own filter merges the first two pairs too.
    assert fingerprint(Request(same[0][0].lower().replace(":80", ""))) == fingerprint(Request(same[0][1]))
    assert fingerprint(Request(same[1][0])) == fingerprint(Request(same[1][1]))
    assert not dupes.request_seen(Request(same[1][0]))
    assert dupes.request_seen(Request(same[1][1]))
    assert dupes.request_key(Request("http://example.com/a?b=1")) != dupes.request_key(Request("http://example.com/a?b=2"))


def test_site_rules_from_the_settings(tmp_path):
    from scrapy.utils.test import get_crawler

    rules = tmp_path / "site.rules"
    rules.write_text("example.com drop-params ref\n")
    clearurls = ROOT / "testdata" / "rules" / "clearurls.json"
    crawler = get_crawler(
        settings_dict={
            "URINORM_RULES": [str(rules)],
            "URINORM_RULES_CLEARURLS": [str(clearurls)],
            "URINORM_SEEN_DIR": str(tmp_path / "seen"),
        }
    )
    dupes = DupeFilter.from_crawler(crawler)
    get = Request("http://Example.com/a?ref=1&id=2#top")
    assert dupes.request_key(get) == b"http://example.com/a?id=2"
    store = Request("http://a.store.example/ref=abc/p?tag=1&k=2")
    assert dupes.request_key(store) == b"http://a.store.example/p?k=2"
    assert not dupes.request_seen(get)
    assert dupes.request_seen(Request("http://example.com/a?id=2&ref=3"))
    dupes.close("finished")
    # The store records the rules: the same ones open it, no rules do not.
    with urinorm.SeenSet(tmp_path / "seen", rules=rules, rules_clearurls=clearurls) as seen:
        assert seen.contains(["http://example.com/a?id=2"]) == [True]
    # The store opens with the filter (as Scrapy opens it: a refusal is
    # logged, and closes the spider once it is open), or at the first
    # request.
    refused = DupeFilter(tmp_path / "seen", preset="safe")
    refused.open()
    with pytest.raises(CloseSpider) as closed:
        refused._close_if_refused()
    assert closed.value.reason == "urinorm_seen_store_refused"
    with pytest.raises(urinorm.SeenStoreError, match="rules"):
        refused.request_seen(get)


def test_site_rules_as_arguments(tmp_path):
    rules = tmp_path / "site.rules"
    rules.write_text("example.com drop-params ref\n")
    dupes = DupeFilter(rules=[rules])
    assert dupes.request_key(Request("http://example.com/?ref=1")) == b"http://example.com/"
    assert DupeFilter(rules=rules).request_key(Request("http://example.com/?ref=1")) == (
        b"http://example.com/"
    )
    with pytest.raises(FileNotFoundError):
        DupeFilter(rules=[tmp_path / "missing.rules"])
    rules.write_text("example.com frobnicate\n")
    with pytest.raises(urinorm.RulesError, match="site.rules:1: unknown action"):
        DupeFilter(rules=[rules])


def test_a_recrawl_after_the_maximum_age(tmp_path, site):
    """URINORM_SEEN_MAX_AGE lets a crawl fetch again what was admitted
    longer ago (here, a store filled as if two hours before), once; a
    crawl within the age fetches nothing."""
    import time

    store = tmp_path / "seen"
    two_hours_ago = time.time() - 7200
    with urinorm.SeenSet(store, preset="safe", now=two_hours_ago) as seen:
        seen.add_keys([f"http://127.0.0.1:{site.port}{page}" for page in PAGES])
    settings = {"URINORM_SEEN_DIR": str(store), "URINORM_SEEN_MAX_AGE": "3h"}
    crawl(tmp_path, site, tmp_path / "job1", settings)
    assert site.fetched == []
    settings["URINORM_SEEN_MAX_AGE"] = "1h"
    crawl(tmp_path, site, tmp_path / "job2", settings)
    assert sorted(site.fetched) == sorted(PAGES), site.fetched
    site.fetched.clear()
    crawl(tmp_path, site, tmp_path / "job3", settings)
    assert site.fetched == []


def test_a_store_of_other_settings_closes_the_spider_with_one_error(tmp_path, site):
    jobdir = tmp_path / "job"
    crawl(tmp_path, site, jobdir)
    site.fetched.clear()
    log = crawl(tmp_path, site, jobdir, {"URINORM_PRESET": "aggressive"})
    assert site.fetched == []
    assert log.count("holds keys made with other settings") == 1, log[-3000:]
    assert "ERROR: urinorm: the seen store" in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert "'finish_reason': 'urinorm_seen_store_refused'" in log, log[-3000:]
