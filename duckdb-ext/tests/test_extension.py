"""The loadable extension's urinorm_normalize gives what
urinorm.normalize_batch gives: on the sample (every line, with NULLs and
invalid values mixed in) and on 1,000,000 rows of it.

    URINORM_DUCKDB_EXTENSION=/path/urinorm.duckdb_extension \
        .venv/bin/python -m pytest duckdb-ext/tests
"""

import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import urinorm

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "testdata" / "sample" / "urls.txt"
EXTENSION = os.environ.get(
    "URINORM_DUCKDB_EXTENSION",
    str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "urinorm.duckdb_extension"),
)

# Values that are not URI references, or are edge cases of DuckDB's
# strings (inlined up to 12 bytes, empty, non-ASCII).
ODD = [
    None, "", "a", "http://a", "HTTP://A/%7e", "http://exa mple/", "http://[::1", "%zz",
    "http://ünïcode.example/päth", "http://xn--nicode-2ya2c.example/", "\x7f", "x" * 12, "y" * 13,
    "mailto:A@B.C", "http://a/b/../c/./d?q#f", "//host/path", "?q", "#f", None,
]


def sample_lines():
    text = SAMPLE.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    return [line.removesuffix("\r") for line in text.split("\n") if line.removesuffix("\r")]


def connect(threads=2):
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": threads})
    con.execute(f"LOAD '{EXTENSION}'")
    return con


def values(rows=None):
    """The sample with the odd values and a NULL every 7th row mixed in."""
    lines = sample_lines()
    mixed = []
    for n, line in enumerate(lines):
        mixed.append(None if n % 7 == 3 else line)
        if n % 50 == 0:
            mixed.append(ODD[(n // 50) % len(ODD)])
    mixed += ODD
    if rows is not None:
        mixed = (mixed * (rows // len(mixed) + 1))[:rows]
    return pa.array(mixed, pa.string())


def through_duckdb(con, array, call):
    con.register("src", pa.table({"i": pa.array(range(len(array)), pa.int64()), "url": array}))
    con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM src")
    con.unregister("src")
    return con.sql(f"SELECT {call} AS k FROM t ORDER BY i").to_arrow_table().column("k").combine_chunks()


@pytest.mark.parametrize("rows", [None, 1_000_000])
@pytest.mark.parametrize("threads", [1, 2])
def test_default_is_normalize_batch(rows, threads):
    array = values(rows)
    expected = urinorm.normalize_batch(array)[0]
    got = through_duckdb(connect(threads), array, "urinorm_normalize(url)")
    assert got.null_count == expected.null_count
    assert got.null_count > array.null_count, "some values are not URI references"
    assert got.equals(expected.cast(got.type))


@pytest.mark.parametrize(
    "options, kwargs",
    [
        ("preset=aggressive", {"preset": "aggressive"}),
        ("rung=syntax; lenient=true", {"rung": "syntax", "lenient": True}),
        ("key=surt; preset=safe; with=sort-query", {"key": "surt", "preset": "safe", "with_": ["sort-query"]}),
        ("", {}),
    ],
)
def test_options_are_normalize_batch_options(options, kwargs):
    array = values()
    expected = urinorm.normalize_batch(array, **kwargs)[0]
    got = through_duckdb(connect(), array, f"urinorm_normalize(url, '{options}')")
    assert got.equals(expected.cast(got.type))


def test_a_misspelt_option_fails_the_query():
    con = connect()
    with pytest.raises(duckdb.Error, match="preset"):
        con.sql("SELECT urinorm_normalize('http://a/', 'preset=agressive')").fetchall()
    with pytest.raises(duckdb.Error, match="constant"):
        con.sql("SELECT urinorm_normalize('http://a/', o) FROM (VALUES ('preset=aggressive')) v(o)").fetchall()


def test_load_needs_allow_unsigned_extensions():
    con = duckdb.connect()
    with pytest.raises(duckdb.Error) as refused:
        con.execute(f"LOAD '{EXTENSION}'")
    print(refused.value)
