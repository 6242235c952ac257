"""urinorm.scrapy.DupeFilter in a real Scrapy crawl of a small site served
on 127.0.0.1, whose pages link to each other in variant spellings."""

import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scrapy.http import Request

from urinorm.scrapy import DupeFilter

PAGES = ["/", "/a", "/b", "/c"]


class Site:
    """The site: every page links to every page, each link spelled several
    ways; every request is logged."""

    def __init__(self):
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
    })
    process.crawl(Site)
    process.start()
    """
)


@pytest.fixture
def site():
    site = Site()
    yield site
    site.close()


def crawl(tmp_path, site, jobdir):
    script = tmp_path / "spider.py"
    script.write_text(SPIDER)
    done = subprocess.run(
        [sys.executable, str(script), f"http://127.0.0.1:{site.port}/", str(jobdir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
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
