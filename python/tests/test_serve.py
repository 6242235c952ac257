"""urinorm.SeenClient and the Scrapy filter against a real `urinorm serve`
on 127.0.0.1 (an ephemeral port)."""

import subprocess

import pyarrow as pa
import pytest
from scrapy.http import Request

import urinorm
from urinorm.scrapy import DupeFilter


class Service:
    """`urinorm serve` on a store of its own, stopped with SIGTERM."""

    def __init__(self, cli, store, *args):
        self.process = subprocess.Popen(
            [str(cli), "serve", "--seen", str(store), "--listen", "127.0.0.1:0", *args],
            stderr=subprocess.PIPE,
            text=True,
        )
        said = []
        for line in self.process.stderr:
            if line.startswith("urinorm: listening on "):
                self.url = "http://" + line.split()[-1]
                return
            said.append(line)
        raise AssertionError(f"the service stopped before listening: {''.join(said)}")

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(timeout=60)


@pytest.fixture
def service(cli, tmp_path):
    service = Service(cli, tmp_path / "store", "--preset", "safe")
    yield service
    service.stop()


def test_add_and_check_lists_and_arrays(service, sample):
    with urinorm.SeenClient(service.url) as client:
        assert client.check(["http://a/x"]) == [False]
        answers = client.add(["HTTP://A:80/x?utm_source=feed", "http://a/x", None, "not a uri", "http://b/\nx"])
        assert answers == [True, False, None, None, None]
        assert client.add(["http://a/x#top"]) == [False]
        assert client.check(["http://A/x", "http://c/", "http://c/"]) == [True, False, False]
        array = pa.array(["http://b/", None, "http://b/", "http://a/x"], pa.large_string())
        added = client.add(array)
        assert isinstance(added, pa.BooleanArray)
        assert added.to_pylist() == [True, None, False, False]
        chunked = pa.chunked_array([["http://d/"], ["http://b/"]])
        assert client.check(chunked).to_pylist() == [False, True]
        # The sample, in one request: an answer for every line.
        lines = [line for _, line in sample]
        answers = client.add(lines)
        assert len(answers) == len(lines)
        assert answers.count(None) == sum(not valid(line) for line in lines)
        assert client.check(lines) == [None if a is None else True for a in answers]
        assert client.stats()["service"]["lines"]["new"] >= sum(1 for a in answers if a)


def test_verdicts_give_the_services_words_and_forget_forgets(service):
    with urinorm.SeenClient(service.url) as client:
        words = client.verdicts(["http://v/a", "http://V/a", None, "../rel", "", "http://v/a"])
        assert words == ["new", "dup", None, "rejected", "blank", "dup"]
        assert client.verdicts(["http://v/a", "http://v/b"], admit=False) == ["seen", "new"]
        assert client.verdicts(["http://v/a"]) == ["seen"]
        assert client.forget(["http://v/a", "http://v/b", None]) == [True, False, None]
        assert client.verdicts(["http://v/a"]) == ["new"]
        forgotten = client.forget(pa.array(["http://v/a"]))
        assert forgotten.to_pylist() == [True]


def valid(line: str) -> bool:
    """Whether a frontier takes `line`: a URI of a scheme a crawler fetches."""
    try:
        canonical = urinorm.normalize(line, preset="safe")
    except urinorm.InvalidUri:
        return False
    return canonical.split(":", 1)[0] in ("http", "https", "ftp", "ftps", "ws", "wss")


def test_errors_are_clear(cli, tmp_path):
    token = tmp_path / "token"
    token.write_text("0123456789abcdef0123456789abcdef\n")
    service = Service(cli, tmp_path / "store", "--token-file", str(token))
    try:
        with pytest.raises(urinorm.SeenServiceError, match="401"):
            urinorm.SeenClient(service.url).add(["http://a/"])
        with pytest.raises(urinorm.SeenServiceError, match="401"):
            urinorm.SeenClient(service.url, token="wrong").add(["http://a/"])
        client = urinorm.SeenClient(service.url, token="0123456789abcdef0123456789abcdef")
        assert client.add(["http://a/"]) == [True]
    finally:
        assert service.stop() == 0
    # Stopped: the same client says the service is not answering.
    with pytest.raises(urinorm.SeenServiceError, match="not answering"):
        client.add(["http://b/"])
    with pytest.raises(ValueError, match="http://"):
        urinorm.SeenClient("https://example.com:7878")


def test_two_scrapy_filters_on_one_service_see_each_others_requests(service):
    first = DupeFilter(seen_url=service.url)
    second = DupeFilter(seen_url=service.url)
    assert not first.request_seen(Request("http://example.com/a?utm_source=x"))
    # The other process: one page, by the service's options.
    assert second.request_seen(Request("HTTP://Example.com:80/a#top"))
    assert not second.request_seen(Request("http://example.com/b"))
    assert first.request_seen(Request("http://example.com/b"))
    # A POST is keyed, and filtered, within its process.
    post = Request("http://example.com/form", method="POST", body=b"q=1")
    assert not first.request_seen(post)
    assert first.request_seen(post)
    assert not second.request_seen(post)
    first.close("finished")
    second.close("finished")
    with pytest.raises(ValueError, match="not both"):
        DupeFilter("some/dir", seen_url=service.url)


def test_the_settings_name_the_service(service, tmp_path):
    from scrapy.utils.test import get_crawler

    jobdir = tmp_path / "job"
    crawler = get_crawler(settings_dict={"URINORM_SEEN_URL": service.url, "JOBDIR": str(jobdir)})
    dupes = DupeFilter.from_crawler(crawler)
    assert not dupes.request_seen(Request("http://settings.example/"))
    assert urinorm.SeenClient(service.url).check(["http://settings.example/"]) == [True]
    dupes.close("finished")
    # The service is the crawl's memory: no store of its own in the job.
    assert not (jobdir / "urinorm-seen").exists()
