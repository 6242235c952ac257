"""urinorm's Polars expressions give what the batch functions give."""

import polars as pl
import pytest

import urinorm
from conftest import ROOT, SAMPLE, polars_plugin_or_skip, read_lines

polars_plugin_or_skip()
import urinorm.polars as up  # noqa: E402 (once the plugin is known to be there)

RULES = ROOT / "testdata" / "rules"
BASE = "http://a.example/b/c"


@pytest.fixture(scope="module")
def lines():
    return [line for _, line in read_lines(SAMPLE)]


def frame(lines, chunks=1):
    """The lines as a frame `url`, in `chunks` chunks (Polars calls the
    plugin once a chunk, or once a morsel in the streaming engine)."""
    size = -(-len(lines) // chunks)
    parts = [pl.DataFrame({"url": lines[i : i + size]}) for i in range(0, len(lines), size)]
    return pl.concat(parts, rechunk=False)


OPTIONS = [
    {},
    {"preset": "aggressive"},
    {"rung": "syntax", "lenient": True},
    {"preset": "safe", "rules": RULES / "site.rules", "rules_clearurls": RULES / "clearurls.json"},
    {"base": BASE, "non_strict": True},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_each_expression_is_the_batch_function(lines, options):
    urls = frame(lines, chunks=3)
    assert urls["url"].n_chunks() == 3
    got = urls.select(up.normalize("url", **options))["url"].to_list()
    assert got == urinorm.normalize_batch(lines, **options)[0].to_pylist()
    assert got.count(None) > 0, "the sample has lines that are not URIs"
    for key in ["surt", "host", "domain"]:
        got = urls.select(up.normalize("url", key=key, **options))["url"].to_list()
        assert got == urinorm.normalize_batch(lines, key=key, **options)[0].to_pylist(), key
    got = urls.select(up.surt("url", **options))["url"].to_list()
    assert got == urinorm.normalize_batch(lines, key="surt", **options)[0].to_pylist()
    got = urls.select(up.fingerprint("url", **options))["url"].to_list()
    assert got == urinorm.fingerprint_batch(lines, **options).to_pylist()
    got = urls.select(up.reason("url", **options))["url"].to_list()
    assert got == urinorm.normalize_batch(lines, reasons=True, **options)[2].to_pylist()


@pytest.mark.parametrize("options", [{}, {"preset": "aggressive", "lenient": True}])
def test_resolve_is_resolve_batch(lines, options):
    # A base a row: the sample's lines are the bases of each other's links.
    bases = lines[1:] + lines[:1]
    links = pl.DataFrame({"page": bases, "href": lines})
    got = links.select(up.resolve("page", "href", **options))
    assert got.columns == ["href"]
    expected = urinorm.resolve_batch(bases, lines, **options)
    assert got["href"].to_list() == expected[0].to_pylist()
    assert expected[0].null_count < len(lines), "some rows resolve"
    # A literal base stands for every row.
    got = links.select(up.resolve(pl.lit(BASE), "href", **options))["href"].to_list()
    assert got == urinorm.resolve_batch([BASE] * len(lines), lines, **options)[0].to_pylist()
    got = links.select(up.reason("href", bases=pl.col("page"), **options))["href"].to_list()
    assert got == urinorm.resolve_batch(bases, lines, reasons=True, **options)[2].to_pylist()


def test_the_streaming_engine_and_the_namespace_agree(lines):
    many = lines * 40
    expected = urinorm.normalize_batch(many, preset="aggressive")[0].to_pylist()
    lazy = frame(many, chunks=7).lazy().select(pl.col("url").urinorm.normalize(preset="aggressive"))
    assert lazy.collect(engine="streaming")["url"].to_list() == expected
    assert lazy.collect()["url"].to_list() == expected


def test_nulls_literals_and_sentences():
    frame = pl.DataFrame({"page": [None, "rel", BASE, BASE], "href": ["x", "x", None, "x y"]})
    got = frame.select(
        up.resolve("page", "href").alias("key"),
        up.reason("href", bases=pl.col("page")).alias("why"),
    )
    assert got["key"].to_list() == [None, None, None, None]
    why = got["why"].to_list()
    assert why[0] is None and why[2] is None, "a null input has no reason"
    assert why[1].startswith("the base: ")
    assert "space" in why[3]
    assert pl.select(up.normalize(pl.lit(None, dtype=pl.String))).item() is None


def test_mistakes_fail_when_the_expression_is_made():
    with pytest.raises(ValueError, match="schem"):
        up.normalize("url", rung="schem")
    with pytest.raises(ValueError, match="key"):
        up.normalize("url", key="url")
    with pytest.raises(urinorm.InvalidUri, match="the base"):
        up.normalize("url", base="relative/base")
    with pytest.raises(urinorm.RulesError):
        up.normalize("url", rules_clearurls=RULES / "site.rules")
    with pytest.raises(OSError):
        up.normalize("url", rules="/nonexistent/site.rules")
    # A column that is not text is Polars' error, at collect.
    with pytest.raises(pl.exceptions.PolarsError):
        pl.DataFrame({"url": [1, 2]}).select(up.normalize("url"))


def test_a_different_length_of_bases_is_refused():
    frame = pl.DataFrame({"href": ["a", "b", "c"]})
    with pytest.raises(pl.exceptions.PolarsError):
        frame.select(up.resolve(pl.Series(["http://a/", "http://b/"]), "href"))
