"""urinorm's DuckDB functions, from the extension and from the Python UDFs,
give what the batch functions give: on the sample with NULLs and values
that are not URIs mixed in, with sets of options; the extension's own
options argument; a misspelt option and a panic become the query's error."""

import duckdb
import pyarrow as pa
import pytest

import urinorm
import urinorm.duckdb
from conftest import ROOT, SAMPLE, read_lines

RULES = ROOT / "testdata" / "rules"

# Values that are not URI references, or are edge cases of DuckDB's
# strings (inlined up to 12 bytes, empty, non-ASCII).
ODD = [
    None, "", "a", "http://a", "HTTP://A/%7e", "http://exa mple/", "http://[::1", "%zz",
    "http://ünïcode.example/päth", "http://xn--nicode-2ya2c.example/", "\x7f", "x" * 12, "y" * 13,
    "mailto:A@B.C", "http://a/b/../c/./d?q#f", "//host/path", "?q", "#f", "../up", None,
    "http://www.amazon.com/dp/1?ref=x&pf_rd_p=2&id=3", "http://news.example/amp/a/b",
    "http://WWW.Example.COM/a?utm_source=x&b=2&a=1#frag", "http://a/%C3%A9?q=%2f",
]

# Bases: absolute, relative (not a base), NULL, not a URI.
BASES = ["http://a.example/b/c?q", "https://b.example/", None, "rel/ative", "http://x y/", "http:g"]


def mixed_values(rows=None):
    """The sample with the odd values, and a NULL every 7th row, mixed in."""
    mixed = []
    for n, (_, line) in enumerate(read_lines(SAMPLE)):
        mixed.append(None if n % 7 == 3 else line)
        if n % 50 == 0:
            mixed.append(ODD[(n // 50) % len(ODD)])
    mixed += ODD
    if rows is not None:
        mixed = (mixed * (rows // len(mixed) + 1))[:rows]
    return mixed


@pytest.fixture(scope="module")
def data():
    urls = mixed_values()
    bases = [BASES[i % len(BASES)] for i in range(len(urls))]
    return pa.array(urls, pa.string()), pa.array(bases, pa.string())


def table(con, urls, bases):
    n = len(urls)
    con.register("src", pa.table({"i": pa.array(range(n), pa.int64()), "url": urls, "base": bases}))
    con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM src")
    con.unregister("src")


def column(con, call):
    result = con.sql(f"SELECT {call} AS k FROM t ORDER BY i").to_arrow_table()
    return result.column("k").combine_chunks()


def same(got, expected):
    """Equal as Arrow arrays, the batch's type cast to DuckDB's."""
    expected = expected.cast(got.type)
    assert got.null_count == expected.null_count
    assert got.equals(expected), [
        (n, a, b) for n, (a, b) in enumerate(zip(got.to_pylist(), expected.to_pylist())) if a != b
    ][:5]


def connection(route, threads=2):
    if route == "extension":
        return urinorm.duckdb.connect(config={"threads": threads})
    return duckdb.connect(config={"threads": threads})


OPTION_SETS = [
    {},
    {"preset": "aggressive"},
    {"rung": "syntax", "lenient": True},
    {"preset": "safe", "with_": ["sort-query", "drop-fragment"], "without": "strip-www"},
    {"tracking_params": ["b", "ref"], "with_": "drop-tracking-params"},
    {"rules": str(RULES / "site.rules"), "rules_clearurls": [RULES / "clearurls.json"]},
]


def test_the_extension_is_shipped():
    assert urinorm.duckdb.extension_path() is not None, "scripts/python-env builds it"
    con = urinorm.duckdb.connect()
    assert urinorm.duckdb.extension_loaded(con)
    assert not urinorm.duckdb.extension_loaded(duckdb.connect())


@pytest.mark.parametrize("route", ["extension", "udf"])
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o) or "default")
def test_each_function_is_the_batch_functions(route, options, data):
    urls, bases = data
    con = connection(route)
    table(con, urls, bases)
    assert urinorm.duckdb.register(con, **options, extension=route == "extension") == route
    if route == "extension" and options:
        macros = con.execute(
            "SELECT count(DISTINCT function_name) FROM duckdb_functions()"
            " WHERE function_type = 'macro' AND function_name LIKE 'urinorm_%'"
        ).fetchall()
        assert macros == [(4,)]
    same(column(con, "urinorm_normalize(url)"), urinorm.normalize_batch(urls, **options)[0])
    assert column(con, "urinorm_normalize(url)").null_count > urls.null_count
    same(column(con, "urinorm_surt(url)"), urinorm.normalize_batch(urls, key="surt", **options)[0])
    same(column(con, "urinorm_fingerprint(url)"), urinorm.fingerprint_batch(urls, **options))
    same(column(con, "urinorm_resolve(base, url)"), urinorm.resolve_batch(bases, urls, **options)[0])
    # A constant base: DuckDB hands the function a flattened vector.
    constant = pa.array([BASES[0]] * len(urls))
    same(column(con, f"urinorm_resolve('{BASES[0]}', url)"), urinorm.resolve_batch(constant, urls, **options)[0])


@pytest.mark.parametrize("route", ["extension", "udf"])
def test_prefixes_and_a_second_set_of_options(route):
    con = connection(route)
    extension = route == "extension"
    assert urinorm.duckdb.register(con, extension=extension) == route
    assert urinorm.duckdb.register(con, preset="aggressive", prefix="agg_", extension=extension) == route
    row = con.sql(
        "SELECT urinorm_normalize(NULL), urinorm_normalize('http://a b/'),"
        " urinorm_resolve(NULL, 'x'), urinorm_resolve('rel', 'x'),"
        " urinorm_normalize('http://www.a.example/?utm_source=x'),"
        " agg_normalize('http://www.a.example/?utm_source=x'), agg_surt('http://www.a.example/b'),"
        " octet_length(agg_fingerprint('http://a/')), agg_resolve('http://www.a.example/b/', 'c?utm_source=1')"
    ).fetchall()[0]
    assert row == (
        None, None, None, None, "http://www.a.example/?utm_source=x", "https://a.example/",
        "example,a)/b", 16, "https://a.example/b/c",
    )


def test_options_for_the_extension_own_names_and_back():
    con = urinorm.duckdb.connect()
    url = "'http://www.a.example/?utm_source=x'"
    assert urinorm.duckdb.register(con, preset="aggressive") == "extension"
    assert con.execute(f"SELECT urinorm_normalize({url})").fetchall()[0] == ("https://a.example/",)
    # The macro keeps the options argument: given, it is the call's.
    assert con.execute(f"SELECT urinorm_normalize({url}, 'rung=scheme')").fetchall()[0] == (
        "http://www.a.example/?utm_source=x",
    )
    assert urinorm.duckdb.register(con) == "extension"
    assert con.execute(f"SELECT urinorm_normalize({url})").fetchall()[0] == (
        "http://www.a.example/?utm_source=x",
    )


@pytest.mark.parametrize(
    "options, kwargs",
    [
        ("", {}),
        ("preset=aggressive", {"preset": "aggressive"}),
        ("rung=syntax; lenient=true", {"rung": "syntax", "lenient": True}),
        ("key=surt; preset=safe; with=sort-query", {"key": "surt", "preset": "safe", "with_": ["sort-query"]}),
        ("key=host", {"key": "host"}),
        ("key=domain; lenient=1", {"key": "domain", "lenient": True}),
        (" with_ = sort-query , drop-fragment ; without=drop-fragment ", {"with_": ["sort-query", "drop-fragment"], "without": ["drop-fragment"]}),
        ("tracking_params=; with=drop-tracking-params", {"tracking_params": [], "with_": ["drop-tracking-params"]}),
        (f"rules={RULES / 'site.rules'}", {"rules": RULES / "site.rules"}),
    ],
)
def test_the_options_argument_is_the_batch_options(options, kwargs, data):
    urls, bases = data
    con = connection("extension")
    table(con, urls, bases)
    literal = options.replace("'", "''")
    same(column(con, f"urinorm_normalize(url, '{literal}')"), urinorm.normalize_batch(urls, **kwargs)[0])
    same(column(con, f"urinorm_fingerprint(url, '{literal}')"), urinorm.fingerprint_batch(urls, **kwargs))
    same(
        column(con, f"urinorm_resolve(base, url, '{literal}')"),
        urinorm.resolve_batch(bases, urls, **kwargs)[0],
    )
    if "key" not in kwargs:
        same(
            column(con, f"urinorm_surt(url, '{literal}')"),
            urinorm.normalize_batch(urls, key="surt", **kwargs)[0],
        )


def test_non_strict_and_options_from_a_column(data):
    urls, bases = data
    con = connection("extension")
    table(con, urls, bases)
    same(
        column(con, "urinorm_resolve(base, url, 'non_strict=true')"),
        urinorm.resolve_batch(bases, urls, non_strict=True)[0],
    )
    # Options that are no constant: read where they change (here, row by
    # row: every third row aggressive, NULL the defaults).
    got = column(
        con,
        "urinorm_normalize(url, CASE WHEN i % 3 = 0 THEN 'preset=aggressive'"
        " WHEN i % 3 = 1 THEN NULL ELSE 'rung=scheme' END)",
    )
    variants = [
        urinorm.normalize_batch(urls, preset="aggressive")[0].to_pylist(),
        urinorm.normalize_batch(urls)[0].to_pylist(),
        urinorm.normalize_batch(urls, rung="scheme")[0].to_pylist(),
    ]
    assert got.to_pylist() == [variants[i % 3][i] for i in range(len(urls))]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_million_rows(threads):
    urls = pa.array(mixed_values(1_000_000), pa.string())
    con = connection("extension", threads)
    table(con, urls, pa.nulls(len(urls), pa.string()))
    same(column(con, "urinorm_normalize(url)"), urinorm.normalize_batch(urls)[0])


def test_a_misspelt_option_fails_the_query():
    con = urinorm.duckdb.connect()
    with pytest.raises(duckdb.Error, match="preset"):
        con.sql("SELECT urinorm_normalize('http://a/', 'preset=agressive')").fetchall()
    with pytest.raises(duckdb.Error, match="unknown option 'colour'"):
        con.sql("SELECT urinorm_fingerprint('http://a/', 'colour=red')").fetchall()
    with pytest.raises(duckdb.Error, match="takes no key option"):
        con.sql("SELECT urinorm_surt('http://a/', 'key=host')").fetchall()
    with pytest.raises(duckdb.Error, match="non_strict is urinorm_resolve's option"):
        con.sql("SELECT urinorm_normalize('http://a/', 'non_strict=true')").fetchall()
    with pytest.raises(duckdb.Error, match="no-such.rules"):
        con.sql("SELECT urinorm_normalize('http://a/', 'rules=/no-such.rules')").fetchall()
    with pytest.raises(duckdb.Error, match="lenient is true or false"):
        con.sql("SELECT urinorm_normalize(url, o) FROM (VALUES ('http://a/', 'lenient=yes')) v(url, o)").fetchall()
    # The connection goes on.
    assert con.execute("SELECT urinorm_normalize('HTTP://A')").fetchall()[0] == ("http://a/",)


def test_register_checks_its_options_and_tells_its_route(tmp_path):
    with pytest.raises(ValueError, match="schem"):
        urinorm.duckdb.register(urinorm.duckdb.connect(), rung="schem")
    # No unsigned extensions: the UDFs, or an error when the extension is insisted on.
    assert urinorm.duckdb.register(duckdb.connect()) == "udf"
    with pytest.raises(RuntimeError, match="allow unsigned extensions"):
        urinorm.duckdb.register(duckdb.connect(), extension=True)
    # The options' text form carries any value (percent-encoded).
    con = urinorm.duckdb.connect()
    assert urinorm.duckdb.register(con, tracking_params=["a;b"], prefix="odd_") == "extension"
    got = con.sql("SELECT odd_normalize('http://h.example/?a;b=1&c=2')").fetchall()
    assert got == [(urinorm.normalize("http://h.example/?a;b=1&c=2", tracking_params=["a;b"]),)]


def test_a_panic_is_the_query_error(monkeypatch):
    monkeypatch.setenv("URINORM_DUCKDB_TEST_PANIC", "1")
    con = urinorm.duckdb.connect()
    with pytest.raises(duckdb.Error, match="panic.*test_panic=bind"):
        con.sql("SELECT urinorm_normalize('http://a/', 'test_panic=bind')").fetchall()
    with pytest.raises(duckdb.Error, match="panic.*test_panic=row"):
        con.sql("SELECT urinorm_normalize('http://a/', 'test_panic=row')").fetchall()
    with pytest.raises(duckdb.Error, match="panic.*test_panic=row"):
        con.sql("SELECT urinorm_normalize(url, o) FROM (VALUES ('http://a/', 'test_panic=row')) v(url, o)").fetchall()
    assert con.execute("SELECT urinorm_normalize('HTTP://A')").fetchall()[0] == ("http://a/",)
    monkeypatch.delenv("URINORM_DUCKDB_TEST_PANIC")
    con = urinorm.duckdb.connect()
    with pytest.raises(duckdb.Error, match="unknown option 'test_panic'"):
        con.sql("SELECT urinorm_normalize('http://a/', 'test_panic=bind')").fetchall()
