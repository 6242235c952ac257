"""One options model: the same options give the same keys from the command
line, the batch functions, the Polars plugin and DuckDB (its extension and
its Python UDFs, through register() and through the options text), on the
sample; and what a data engineer's trial found the front ends disagreeing
on now agrees."""

import importlib
import subprocess

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import urinorm
import urinorm.duckdb
from conftest import ROOT, polars_plugin_or_skip

RULES = str(ROOT / "testdata" / "rules" / "site.rules")
CLEARURLS = str(ROOT / "testdata" / "rules" / "clearurls.json")

#: Each set of options as Python's keyword arguments and as flags.
OPTIONS = [
    ({}, []),
    ({"rung": "syntax"}, ["--rung", "syntax"]),
    (
        {"preset": "aggressive", "without": ["strip-www"], "key": "surt"},
        ["--preset", "aggressive", "--without", "strip-www", "--key", "surt"],
    ),
    (
        {"preset": "safe", "with_": ["sort-query-pairs"], "lenient": True, "key": "domain"},
        ["--preset", "safe", "--with", "sort-query-pairs", "--lenient", "--key", "domain"],
    ),
    (
        {"rules": [RULES], "rules_clearurls": [CLEARURLS], "key": "host"},
        ["--rules", RULES, "--rules-clearurls", CLEARURLS, "--key", "host"],
    ),
]


@pytest.fixture(scope="module")
def up():
    """urinorm.polars, once its plugin (a package of its own) is known to be
    installed."""
    polars_plugin_or_skip()
    return importlib.import_module("urinorm.polars")


@pytest.fixture(scope="module")
def values(sample):
    return [line for _, line in sample]


def cli_keys(cli, flags, values):
    """`urinorm normalize --aligned`: one line a value, empty where it has no key."""
    run = subprocess.run(
        [str(cli), "normalize", "--quiet", "--aligned", *flags],
        input="".join(v + "\n" for v in values).encode(),
        capture_output=True,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr.decode()
    return [line or None for line in run.stdout.decode().split("\n")[:-1]]


def duckdb_keys(con, function, values):
    con.register("sample", pa.table({"i": range(len(values)), "url": values}))
    rows = con.sql(f"SELECT {function} FROM sample ORDER BY i").fetchall()
    return [row[0] for row in rows]


@pytest.mark.parametrize(("kwargs", "flags"), OPTIONS)
def test_every_front_end_gives_the_command_line_keys(cli, values, kwargs, flags):
    expected = cli_keys(cli, flags, values)
    assert len(expected) == len(values)
    # A key for most lines (the sample holds 500 URIs without a host).
    assert sum(k is None for k in expected) < len(values) // 5
    assert urinorm.normalize_batch(values, **kwargs)[0].to_pylist() == expected
    for extension in (True, False):
        con = urinorm.duckdb.connect() if extension else duckdb.connect()
        assert urinorm.duckdb.register(con, prefix="p_", extension=extension, **kwargs) == (
            "extension" if extension else "udf"
        )
        assert duckdb_keys(con, "p_normalize(url)", values) == expected, extension
        # The options text the macros pass, given by hand.
        text = urinorm.Normalizer(**kwargs).options_text()
        assert duckdb_keys(con, f"p_normalize(url, '{text}')", values) == expected, text


@pytest.mark.parametrize(("kwargs", "flags"), OPTIONS)
def test_the_polars_plugin_gives_the_command_line_keys(cli, values, kwargs, flags, up):
    frame = pl.DataFrame({"url": values})
    got = frame.select(up.normalize("url", **kwargs))["url"].to_list()
    assert got == cli_keys(cli, flags, values)


#: A page of a real link dataset whose URL holds brackets: a base the
#: lenient reading repairs (about 1.6 % of one dataset's rows).
BRACKETED = "http://t.example/a?title=[x]y"


def test_a_lenient_base_is_repaired_by_every_batch_as_by_resolve():
    expected = urinorm.normalize(urinorm.resolve(BRACKETED, "z", lenient=True))
    assert expected == "http://t.example/z"
    assert urinorm.resolve_batch([BRACKETED], ["z"], lenient=True)[0].to_pylist() == [expected]
    assert urinorm.normalize_batch(["z"], base=BRACKETED, lenient=True)[0].to_pylist() == [expected]
    # Strict, the base is refused, naming it.
    with pytest.raises(urinorm.InvalidUri, match="^the base: "):
        urinorm.normalize_batch(["z"], base=BRACKETED)
    assert urinorm.resolve_batch([BRACKETED], ["z"])[0].to_pylist() == [None]


def test_a_lenient_base_is_repaired_by_the_polars_plugin_as_by_resolve(up):
    expected = "http://t.example/z"
    links = pl.DataFrame({"page": [BRACKETED], "href": ["z"]})
    assert links.select(up.resolve("page", "href", lenient=True))["href"].to_list() == [expected]
    assert links.select(up.normalize("href", base=BRACKETED, lenient=True))["href"].to_list() == [expected]


@pytest.mark.parametrize("dtype", [pl.Categorical, pl.Enum(["http://A/", "x y"])])
def test_a_categorical_column_is_read_as_strings_by_every_expression(dtype, up):
    frame = pl.DataFrame({"url": pl.Series(["http://A/", "x y"], dtype=dtype)})
    for expression, expected in (
        (up.normalize("url"), ["http://a/", None]),
        (up.surt("url"), ["a)/", None]),
        (up.reason("url"), [None, "space is not allowed in a URI at byte 1"]),
        (up.resolve(pl.lit("http://b/"), "url"), ["http://a/", None]),
    ):
        assert frame.select(expression).to_series().to_list() == expected
    prints = frame.select(up.fingerprint("url")).to_series().to_list()
    assert prints[0] == urinorm.fingerprint("http://A/") and prints[1] is None


def test_a_column_of_another_type_is_a_polars_error_not_an_abort(up):
    frame = pl.DataFrame({"url": [1, 2]})
    for expression in (up.normalize("url"), up.fingerprint("url"), up.reason("url")):
        with pytest.raises(pl.exceptions.PolarsError):
            frame.select(expression)


def test_the_udf_route_takes_the_options_text_and_a_domain_key():
    con = duckdb.connect()
    assert urinorm.duckdb.register(con, key="domain") == "udf"
    got = con.sql(
        "SELECT urinorm_normalize('http://www.news.bbc.co.uk/a'),"
        " urinorm_normalize('http://www.news.bbc.co.uk/a', 'key=host'),"
        " urinorm_normalize('http://www.news.bbc.co.uk/a', ''),"
        " urinorm_resolve('http://a.example/b/c', '../d', 'lenient=true; key=surt')"
    ).fetchall()
    assert got == [("bbc.co.uk", "www.news.bbc.co.uk", "http://www.news.bbc.co.uk/a", "example,a)/d")]
    with pytest.raises(duckdb.Error, match="takes no key option"):
        con.sql("SELECT urinorm_surt('http://a/', 'key=host')").fetchall()
    with pytest.raises(duckdb.Error, match="unknown option 'colour'"):
        con.sql("SELECT urinorm_normalize('http://a/', 'colour=red')").fetchall()
    # Options that vary from row to row.
    rows = con.sql(
        "SELECT urinorm_normalize(u, o) FROM (VALUES (1, 'http://www.a.example/x', 'key=domain'),"
        " (2, 'http://www.a.example/x', 'key=host'), (3, 'HTTP://A/', NULL)) v(i, u, o) ORDER BY i"
    ).fetchall()
    assert rows == [("a.example",), ("www.a.example",), ("http://a/",)]
