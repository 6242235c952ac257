"""urinorm's SQL functions in DuckDB give what the batch functions give."""

import duckdb
import pyarrow as pa
import pytest

import urinorm
import urinorm.duckdb
from conftest import SAMPLE, read_lines


@pytest.fixture
def table():
    """The sample as a table `t(i, url)`, and its lines."""
    lines = [line for _, line in read_lines(SAMPLE)]
    con = duckdb.connect()
    links = pa.table({"i": list(range(len(lines))), "url": lines})
    con.register("links", links)
    con.sql("CREATE TABLE t AS SELECT * FROM links")
    return con, lines


def column(con, sql):
    return [row[0] for row in con.sql(sql).fetchall()]


@pytest.mark.parametrize(
    "options", [{}, {"preset": "aggressive"}, {"rung": "syntax", "lenient": True}]
)
def test_each_function_is_the_batch_functions(table, options):
    con, lines = table
    urinorm.duckdb.register(con, **options)
    lenient = options.pop("lenient", False)
    got = column(con, "SELECT urinorm_normalize(url) FROM t ORDER BY i")
    assert got == urinorm.normalize_batch(lines, lenient=lenient, **options)[0].to_pylist()
    assert got.count(None) > 0, "the sample has lines that are not URIs"
    got = column(con, "SELECT urinorm_surt(url) FROM t ORDER BY i")
    assert got == urinorm.normalize_batch(lines, key="surt", lenient=lenient, **options)[0].to_pylist()
    got = column(con, "SELECT urinorm_fingerprint(url) FROM t ORDER BY i")
    prints = urinorm.fingerprint_batch(lines, lenient=lenient, **options).to_pylist()
    assert got == prints
    bases = ["http://a.example/b/c"] * len(lines)
    got = column(con, "SELECT urinorm_resolve('http://a.example/b/c', url) FROM t ORDER BY i")
    expected = urinorm.resolve_batch(bases, lines, lenient=lenient, **options)[0].to_pylist()
    assert got == expected


def test_nulls_and_a_second_set_of_options():
    con = duckdb.connect()
    urinorm.duckdb.register(con)
    urinorm.duckdb.register(con, preset="aggressive", prefix="agg_")
    row = con.sql(
        "SELECT urinorm_normalize(NULL), urinorm_normalize('http://a b/'),"
        " urinorm_resolve(NULL, 'x'), urinorm_resolve('rel', 'x'),"
        " urinorm_normalize('http://www.a.example/?utm_source=x'),"
        " agg_normalize('http://www.a.example/?utm_source=x')"
    ).fetchall()[0]
    assert row == (None, None, None, None, "http://www.a.example/?utm_source=x", "https://a.example/")


def test_a_misspelt_option_fails_at_once():
    with pytest.raises(ValueError, match="schem"):
        urinorm.duckdb.register(duckdb.connect(), rung="schem")
